// `mneme search QUERY [--user U] [--limit N] [--include-inactive] [--mode M] [--json]`:
// recall over one user's sessions (SPEC §4), from a database file through a read-only
// connection or from a running daemon (GET /v1/search, which passes --mode on). A
// database file has no embedder: its search is full text, and an explicit `--mode
// vector` or `--mode hybrid` is refused (there is no query vector to search with). Prints one block per hit (session, kind,
// time, snippet with the match highlighted on a terminal) or, with --json, the
// recall_result document of the HTTP API.
#include <iostream>
#include <memory>
#include <optional>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/cli/text_output.hpp"
#include "apps/mneme/command_output.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/recall_grouping.hpp"
#include "store/recall_sources.hpp"

namespace mneme::cli {

namespace {

struct search_options {
  source_options source;
  std::string query;
  std::string user;     // empty = gateway.default_user
  int64_t limit = recall_default_sessions; // above the maximum: clamped, and said so
  bool include_inactive = false;
  std::string mode;     // empty = automatic (the daemon: hybrid when embeddings are on)
};

maybe_failure search_file(const search_options& opt, api::json& out) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return f;
  std::unique_ptr<read_source> reader;
  if (auto f = open_reader(cfg, reader))
    return f;
  recall_request req;
  req.user_id = opt.user.empty() ? cfg.gateway.default_user : opt.user;
  req.query = opt.query;
  const auto clamped = clamp_recall_limit(opt.limit, recall_max_sessions);
  req.max_sessions = clamped.sessions;
  req.include_inactive = opt.include_inactive;
  req.mode = recall_mode::fts; // no embedder here: run_search refused vector and hybrid
  // A recall reader of its own (store/recall_sources.hpp), on either backend.
  auto source = open_recall_source(cfg.database);
  if (!source)
    return failure_of(source.error(), "search failed");
  auto result = (*source)->search(req);
  if (!result)
    return failure_of(result.error(), "search failed");
  result->limit_clamped = clamped.clamped;
  out = api::to_json(*result);
  return std::nullopt;
}

maybe_failure search_daemon(const search_options& opt, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  std::vector<std::pair<std::string, std::string>> q{
    {"q", opt.query}, {"limit", std::to_string(opt.limit)},
    {"include_inactive", opt.include_inactive ? "true" : "false"}};
  if (!opt.mode.empty())
    q.emplace_back("mode", opt.mode);
  if (!opt.user.empty())
    q.emplace_back("user", opt.user);
  return client.get_json("/v1/search" + query_string(q), out);
}

std::string render_hits(const api::json& result, bool terminal) {
  const auto& hits = result.at("hits");
  std::string out;
  if (hits.empty())
    out += "no session matched\n";
  int n = 0;
  for (const auto& h : hits) {
    const auto& hit = h.at("hit");
    out += std::to_string(++n) + ". session " + h.value("session_id", std::string{}) + "  #"
           + std::to_string(hit.value("id", int64_t{0})) + "  "
           + h.value("kind", std::string{}) + "  " + hit.value("role", std::string{}) + "  "
           + format_time(hit.value("timestamp_ms", int64_t{0})) + "\n";
    out += "   " + render_snippet(one_line(h.value("snippet", std::string{}), 400), terminal)
           + "\n";
  }
  auto skipped = result.value("vector_skipped", std::string{"none"});
  if (skipped != "none" && skipped != "embeddings_off")
    out += "(searched by full text only: the query's embedding " + std::string{
             skipped == "timed_out" ? "timed out" : "failed"} + ")\n";
  if (result.value("query_truncated", false))
    out += "(the query was cut to the search's length limit)\n";
  if (result.value("limit_clamped", false))
    out += "(--limit was lowered to the maximum, "
           + std::to_string(recall_max_sessions) + " conversations)\n";
  return out;
}

int run_search(const search_options& opt) {
  if (opt.limit < 1)
    return report_failure("search", failure::input("--limit must be at least 1 (values above "
                                                   + std::to_string(recall_max_sessions)
                                                   + " are lowered to "
                                                   + std::to_string(recall_max_sessions) + ")"));
  auto mode = opt.mode.empty() ? std::optional<recall_mode>{recall_mode::automatic}
                               : parse_recall_mode(opt.mode);
  if (!mode)
    return report_failure("search", failure::input("--mode must be one of automatic, fts, vector,"
                                                   " hybrid (got '" + opt.mode + "')"));
  if (!opt.source.remote() && (*mode == recall_mode::vector || *mode == recall_mode::hybrid))
    return report_failure("search",
                          failure::input("--mode " + opt.mode + " needs the daemon's embedder:"
                                         " a database file is searched by full text only (use"
                                         " --server, or --mode fts)"));
  api::json result;
  auto f = opt.source.remote() ? search_daemon(opt, result) : search_file(opt, result);
  if (f)
    return report_failure("search", *f);
  return print_answer("search", result, opt.source.json, [](const api::json& d) {
    return render_hits(d, stdout_is_terminal());
  });
}

} // namespace

MNEME_COMMAND("search", "search a user's sessions (recall): snippet, session, time",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<search_options>();
                cmd.add_option("QUERY", opt->query, "what to look for")->required();
                cmd.add_option("--user", opt->user,
                               "whose sessions (default: gateway.default_user)");
                cmd.add_option("--limit", opt->limit, "at most N conversations (default 3; above 10: 10)");
                cmd.add_flag("--include-inactive", opt->include_inactive,
                             "also rolled-back rows");
                cmd.add_option("--mode", opt->mode,
                               "fts, vector or hybrid (default: hybrid when the daemon has"
                               " embeddings, else fts; a database file: fts only)");
                add_source_options(cmd, opt->source);
                return [opt] { return run_search(*opt); };
              });

} // namespace mneme::cli
