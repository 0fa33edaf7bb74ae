// `mneme compactions SESSION [--json]`: the compactions of one session (SESSION = its
// key or its id) with what the compaction log says of each: trigger, who wrote the
// summary, tokens before -> after, duration, what it cost and what it kept of the
// identifiers it replaced; then every logged attempt, the uncommitted ones included.
// From a database file (read-only) or a running daemon (GET /v1/sessions/{key}/compactions);
// --json prints that route's document either way (apps/common/api/compactions_json.hpp).
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "apps/common/api/compactions_json.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/cli/text_output.hpp"
#include "apps/mneme/command_output.hpp"
#include "apps/mneme/command_registry.hpp"
#include "store/compaction_log.hpp"

namespace mneme::cli {

namespace {

struct compactions_options {
  source_options source;
  std::string session;
  std::string user; // whose key SESSION is (empty: gateway.default_user; a token's own user)
};

maybe_failure compactions_file(const compactions_options& opt, api::json& out) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return f;
  std::unique_ptr<read_source> reader;
  if (auto f = open_reader(cfg, reader))
    return f;
  session_record rec;
  if (auto f = find_session(*reader, opt.session, opt.user, cfg.gateway.default_user,
                                rec))
    return f;
  auto log = reader->compaction_log(rec.id, compaction_log_max_rows);
  if (!log)
    return failure_of(log.error(), "cannot read the compaction log of " + rec.id);
  auto rows = reader->range(rec.id, 1, std::numeric_limits<int64_t>::max());
  if (!rows)
    return failure_of(rows.error(), "cannot read the rows of " + rec.id);
  out = api::compactions_to_json(rec.id, *rows, *log);
  return std::nullopt;
}

maybe_failure compactions_daemon(const compactions_options& opt, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  return client.get_json("/v1/sessions/" + url_encode(opt.session) + "/compactions" + user_query(opt.user), out);
}

std::string retention_text(const api::json& c) {
  if (!c.contains("retention") || c["retention"].is_null())
    return "-";
  return fmt::format("{}/{} ({:.0f}%)", c.value("identifiers_kept", int64_t{0}),
                     c.value("identifiers_in", int64_t{0}),
                     c["retention"].get<double>() * 100.0);
}

std::string render_compactions(const api::json& doc) {
  std::string out = fmt::format("session  {}\n", doc.at("session_id").get<std::string>());
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : doc.at("compactions")) {
    const bool logged = c.value("logged", false);
    rows.push_back(
      {"#" + std::to_string(c.value("id", int64_t{0})),
       fmt::format("#{}-#{}", c.value("replaced_first_id", int64_t{0}),
                   c.value("replaced_last_id", int64_t{0})),
       c.value("state", std::string{}),
       logged ? c.value("trigger", std::string{}) : "-",
       logged ? c.value("mode", std::string{}) : "-",
       logged ? fmt::format("{} -> {}", c.value("tokens_before", int64_t{0}),
                            c.value("tokens_after", int64_t{0}))
              : "-",
       logged ? fmt::format("{} ms", c.value("duration_ms", int64_t{0})) : "-",
       logged ? retention_text(c) : "-"});
  }
  out += "compactions\n";
  out += render_table({"SUMMARY", "REPLACED", "STATE", "TRIGGER", "MODE", "TOKENS", "TOOK",
                       "KEPT"},
                      rows);
  std::vector<std::vector<std::string>> attempts;
  for (const auto& a : doc.at("attempts"))
    attempts.push_back({format_time(a.value("at_ms", int64_t{0})),
                        a.value("outcome", std::string{}), a.value("mode", std::string{}),
                        a.value("trigger", std::string{}),
                        std::to_string(a.value("attempt", 1)),
                        one_line(a.value("detail", std::string{}), 60)});
  out += "attempts\n";
  out += render_table({"AT", "OUTCOME", "MODE", "TRIGGER", "TRY", "DETAIL"}, attempts);
  return out;
}

int run_compactions(const compactions_options& opt) {
  api::json doc;
  auto f = opt.source.remote() ? compactions_daemon(opt, doc) : compactions_file(opt, doc);
  if (f)
    return report_failure("compactions", *f);
  return print_answer("compactions", doc, opt.source.json,
                      [](const api::json& d) { return render_compactions(d); });
}

} // namespace

MNEME_COMMAND("compactions",
              "one session's compactions and every logged attempt (trigger, tokens, retention)",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<compactions_options>();
                cmd.add_option("SESSION", opt->session, "session key or session id")
                  ->required();
                cmd.add_option("--user", opt->user,
                               "whose key SESSION is (default: gateway.default_user)");
                add_source_options(cmd, opt->source);
                return [opt] { return run_compactions(*opt); };
              });

} // namespace mneme::cli
