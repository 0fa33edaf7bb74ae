// `mneme compact SESSION [--around ID] [--radius N] [--focus TEXT] [--json]`: a manual
// compaction of one session (SESSION = its key or the id of its current session):
// the whole session (T12, --focus steers the summary) or only the live rows within
// --radius of message ID (T13). On a database file it starts the runtime on the file
// with the configured summarizer (base_url builtin = the in-process fake LLM) and waits
// for the report; with --server it asks the daemon (POST /v1/sessions/{key}/compact).
// Prints what the compaction did, or with --json the compaction_report document.
//
// Decisions: --focus and --around together are refused (local compaction takes no
// focus); compacting an ended session is refused (its key names a newer session);
// "nothing to compact" is success (exit 0), a compaction that did not commit otherwise
// is a failure (exit 1). Do not compact a file a daemon is serving: use --server.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

namespace {

inline constexpr int64_t default_radius = 5;

struct compact_options {
  source_options source;
  std::string session;
  std::string user; // whose key SESSION is (empty: gateway.default_user; a token's own user)
  int64_t around_id = 0;   // 0 = the whole session
  int64_t radius = default_radius;
  std::string focus;
};

maybe_failure compact_file(const compact_options& opt, api::json& out) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return f;
  session_record rec;
  {
    std::unique_ptr<read_source> reader;  // closed before the writer opens the file
    if (auto f = open_reader(cfg, reader))
      return f;
    if (auto f = find_session(*reader, opt.session, opt.user, cfg.gateway.default_user,
                                rec))
      return f;
  }
  if (rec.ended_at_ms != 0)
    return failure::input(fmt::format("session {} ended ({}); compact the key's current "
                                      "session instead", rec.id, rec.end_reason));

  fakellm::fake_llm_server server;
  if (wants_builtin(cfg)) {
    auto port = server.start();
    if (!port)
      return failure_of(port.error(), "cannot start the built-in fake LLM");
    point_builtin_at(cfg, server.base_url());
  }
  auto rc = runtime_config_of(cfg);
  if (!rc)
    return failure_of(rc.error(), "LLM configuration");
  auto host = runtime_host::start(std::move(*rc));
  if (!host)
    return failure_of(host.error(), "cannot start the runtime on " + cfg.database.path);
  auto& sys = (*host)->system();
  auto& rt = (*host)->rt();
  maybe_failure result;
  {
    caf::scoped_actor self{sys};
    auto on_report = [&](compaction_report& r) { out = api::to_json(r); };
    auto on_error = [&](caf::error& e) { result = failure_of(e, "compaction of " + rec.id); };
    if (opt.around_id > 0)
      self->request(rt.gateway(), rt.turn_timeout(), gw_local_atom_v, rec.session_key,
                    opt.around_id, opt.radius)
        .receive(on_report, on_error);
    else
      self->request(rt.gateway(), rt.turn_timeout(), gw_command_atom_v, rec.session_key,
                    trigger::t12_manual_session, opt.focus)
        .receive(on_report, on_error);
  }
  rt.stop();
  return result;
}

maybe_failure compact_daemon(const compact_options& opt, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  // The API takes radius only together with around_id (local compaction).
  api::json body = api::json::object();
  if (opt.around_id > 0) {
    body["around_id"] = opt.around_id;
    body["radius"] = opt.radius;
  } else if (!opt.focus.empty()) {
    body["focus"] = opt.focus;
  }
  return client.post_json("/v1/sessions/" + url_encode(opt.session) + "/compact" + user_query(opt.user), body, out);
}

std::string render_report(const api::json& r) {
  auto by = r.value("trigger", std::string{});
  if (r.value("nothing_to_compact", false))
    return fmt::format("nothing to compact ({}): {} live messages\n", by,
                       r.value("messages_after", int64_t{0}));
  if (!r.value("committed", false))
    return fmt::format("not compacted ({}){}\n", by,
                       r.value("summary_failed", false) ? ": the summarizer failed" : "");
  return fmt::format("compacted ({}): {} rows archived into summary #{}{}; tokens {} -> {}; "
                     "{} live messages\n",
                     by, r.value("archived_rows", int64_t{0}), r.value("summary_id", int64_t{0}),
                     r.value("used_fallback", false) ? " (local fallback summary)" : "",
                     r.value("tokens_before", int64_t{0}), r.value("tokens_after", int64_t{0}),
                     r.value("messages_after", int64_t{0}));
}

int run_compact(const compact_options& opt) {
  if (opt.radius < 0)
    return report_failure("compact", failure::input("--radius must be >= 0"));
  if (opt.around_id < 0)
    return report_failure("compact", failure::input("--around must be a message id >= 1"));
  if (opt.around_id > 0 && !opt.focus.empty())
    return report_failure("compact", failure::input("--focus applies to whole-session "
                                                    "compaction only, not with --around"));
  api::json report;
  auto f = opt.source.remote() ? compact_daemon(opt, report) : compact_file(opt, report);
  if (f)
    return report_failure("compact", *f);
  if (!report.is_object())
    return report_failure("compact", failure::failed("the answer is not a report"));
  bool done = false;
  try {
    std::cout << (opt.source.json ? api::dump_json(report) + "\n" : render_report(report));
    done = report.value("committed", false) || report.value("nothing_to_compact", false);
  } catch (const api::json::exception& e) {
    return report_failure("compact", failure::failed(std::string{"unexpected answer: "}
                                                     + e.what()));
  }
  return done ? exit_ok : exit_failure;
}

} // namespace

MNEME_COMMAND("compact", "compact a session now: whole (T12) or around a message (T13)",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<compact_options>();
                cmd.add_option("SESSION", opt->session,
                               "session key or the id of its current session")
                  ->required();
                cmd.add_option("--user", opt->user,
                               "whose key SESSION is (default: gateway.default_user)");
                cmd.add_option("--around", opt->around_id,
                               "compact only the live rows around message ID (T13)");
                cmd.add_option("--radius", opt->radius,
                               "with --around: messages on each side (default 5)");
                cmd.add_option("--focus", opt->focus, "what the summary should keep");
                add_source_options(cmd, opt->source);
                return [opt] { return run_compact(*opt); };
              });

} // namespace mneme::cli
