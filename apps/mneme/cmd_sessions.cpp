// `mneme sessions [--user U] [--key K] [--open] [--limit N] [--json]`: the stored
// sessions, newest first, from a database file (read-only) or a running daemon
// (GET /v1/sessions). A table of id, user, key, start, end and compactions, or with
// --json the {"sessions":[session_record...]} document of the HTTP API.
#include <iostream>
#include <memory>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/cli/text_output.hpp"
#include "apps/mneme/command_output.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"

namespace mneme::cli {

namespace {

inline constexpr int64_t default_session_limit = 100;
inline constexpr int64_t max_session_limit = 100000;  // session_filter's bound

struct sessions_options {
  source_options source;
  session_filter filter;
};

maybe_failure sessions_file(const sessions_options& opt, api::json& out) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return f;
  std::unique_ptr<read_source> reader;
  if (auto f = open_reader(cfg, reader))
    return f;
  auto filter = opt.filter;
  if (!filter.session_key.empty()) { // the key of the user named (else the default user's)
    if (auto why = key_refusal(filter.session_key, session_key_max_bytes); !why.empty())
      return failure::input(why);
    filter.session_key = stored_key(
      filter.user_id.empty() ? cfg.gateway.default_user : filter.user_id, filter.session_key);
  }
  auto listed = reader->sessions(filter);
  if (listed && listed->empty() && !opt.filter.session_key.empty()) // a key stored without
    listed = reader->sessions(opt.filter);                         // a namespace (no user)
  if (!listed)
    return failure_of(listed.error(), "cannot list sessions");
  auto rows = api::json::array();
  for (auto& s : *listed)
    rows.push_back(api::to_json(s));
  out = {{"sessions", std::move(rows)}};
  return std::nullopt;
}

maybe_failure sessions_daemon(const sessions_options& opt, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  std::vector<std::pair<std::string, std::string>> q{
    {"limit", std::to_string(opt.filter.limit)}};
  if (!opt.filter.user_id.empty())
    q.emplace_back("user", opt.filter.user_id);
  if (!opt.filter.session_key.empty())
    q.emplace_back("key", opt.filter.session_key);
  if (opt.filter.open_only)
    q.emplace_back("open_only", "true");
  return client.get_json("/v1/sessions" + query_string(q), out);
}

std::string render_sessions(const api::json& doc) {
  const auto& sessions = doc.at("sessions");
  if (sessions.empty())
    return "no sessions\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : sessions) {
    auto ended = s.value("ended_at_ms", int64_t{0});
    rows.push_back({s.value("id", std::string{}), s.value("user_id", std::string{}),
                    one_line(s.value("session_key", std::string{}), 40),
                    format_time(s.value("started_at_ms", int64_t{0})),
                    ended == 0 ? std::string{"open"}
                               : format_time(ended) + " "
                                   + s.value("end_reason", std::string{}),
                    std::to_string(s.at("triggers").value("compaction_count", int64_t{0}))});
  }
  return render_table({"SESSION", "USER", "KEY", "STARTED", "ENDED", "COMPACTIONS"}, rows)
         + std::to_string(sessions.size()) + (sessions.size() == 1 ? " session\n" : " sessions\n");
}

int run_sessions(const sessions_options& opt) {
  if (opt.filter.limit < 1 || opt.filter.limit > max_session_limit)
    return report_failure("sessions", failure::input("--limit must be 1.."
                                                     + std::to_string(max_session_limit)));
  api::json doc;
  auto f = opt.source.remote() ? sessions_daemon(opt, doc) : sessions_file(opt, doc);
  if (f)
    return report_failure("sessions", *f);
  return print_answer("sessions", doc, opt.source.json,
                      [](const api::json& d) { return render_sessions(d); });
}

} // namespace

MNEME_COMMAND("sessions", "list stored sessions, newest first",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<sessions_options>();
                opt->filter.limit = default_session_limit;
                cmd.add_option("--user", opt->filter.user_id, "only this user's sessions");
                cmd.add_option("--key", opt->filter.session_key,
                               "only this key of --user (default: gateway.default_user)");
                cmd.add_flag("--open", opt->filter.open_only, "only sessions not ended");
                cmd.add_option("--limit", opt->filter.limit, "at most N sessions (default 100)");
                add_source_options(cmd, opt->source);
                return [opt] { return run_sessions(*opt); };
              });

} // namespace mneme::cli
