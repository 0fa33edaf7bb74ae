// `mneme show SESSION [--json]`: one session (SESSION = its key or its id): the record,
// row counts by state, the persisted trigger state, checkpoints and the live rows.
// From a database file (read-only) or a running daemon (GET /v1/sessions/{key}).
// --json prints the HTTP API's document: the session_snapshot plus "live" and
// "checkpoints" (from a file also "stats", the row counts by state).
//
// Decision: from a file the snapshot's live_messages / live_tokens are the stored live
// rows and their estimate, threshold_tokens and context_window come from the
// configuration (--config, else defaults), compactions_by_trigger is empty (the store
// does not keep the trigger of a compaction) and compaction_in_flight is false; no
// turn runs in a file, so attempts.used is 0 and attempts.max is the configured
// compression.max_attempts. A daemon's answer without "attempts" omits that line.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/common/cli/text_output.hpp"
#include "apps/mneme/command_output.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/threshold.hpp"

namespace mneme::cli {

namespace {

inline constexpr size_t preview_columns = 100;

struct show_options {
  source_options source;
  std::string session;
  std::string user; // whose key SESSION is (empty: gateway.default_user; a token's own user)
};

maybe_failure show_file(const show_options& opt, api::json& out) {
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
  auto stats = reader->stats(rec.id);
  if (!stats)
    return failure_of(stats.error(), "cannot count the rows of " + rec.id);
  auto live = reader->live_context(rec.id);
  if (!live)
    return failure_of(live.error(), "cannot read the live rows of " + rec.id);
  auto checkpoints = reader->checkpoints(rec.id);
  if (!checkpoints)
    return failure_of(checkpoints.error(), "cannot read the checkpoints of " + rec.id);
  session_snapshot snap;
  snap.record = rec;
  snap.live_messages = stats->live_rows;
  snap.live_tokens = stats->live_token_estimate;
  snap.threshold_tokens = compute_threshold(cfg.compression, cfg.model).threshold;
  snap.context_window = cfg.model.context_length;
  snap.max_attempts = cfg.compression.max_attempts;
  out = api::to_json(snap);
  out["live"] = api::to_json(*live);
  auto cps = api::json::array();
  for (auto& c : *checkpoints)
    cps.push_back(api::to_json(c));
  out["checkpoints"] = std::move(cps);
  out["stats"] = api::to_json(*stats);
  return std::nullopt;
}

maybe_failure show_daemon(const show_options& opt, api::json& out) {
  daemon_client client{opt.source.server, opt.source.token};
  return client.get_json("/v1/sessions/" + url_encode(opt.session) + user_query(opt.user), out);
}

std::string until(int64_t t) {
  return t == 0 ? std::string{"-"} : format_time(t);
}

std::string render_session(const api::json& doc) {
  const auto& s = doc.at("session");
  const auto& t = s.at("triggers");
  std::string out;
  auto ended = s.value("ended_at_ms", int64_t{0});
  out += fmt::format("session      {}\n", s.value("id", std::string{}));
  out += fmt::format("user         {}\n", s.value("user_id", std::string{}));
  out += fmt::format("key          {}\n", s.value("session_key", std::string{}));
  if (!s.value("parent_id", std::string{}).empty())
    out += fmt::format("parent       {}\n", s.value("parent_id", std::string{}));
  out += fmt::format("model        {}\n", s.value("model", std::string{}));
  out += fmt::format("started      {}\n", format_time(s.value("started_at_ms", int64_t{0})));
  out += fmt::format("ended        {}\n",
                     ended == 0 ? std::string{"open"}
                                : format_time(ended) + " (" + s.value("end_reason", std::string{})
                                    + ")");
  out += fmt::format("live         {} messages, {} tokens (threshold {}, window {})\n",
                     doc.value("live_messages", int64_t{0}), doc.value("live_tokens", int64_t{0}),
                     doc.value("threshold_tokens", int64_t{0}),
                     doc.value("context_window", int64_t{0}));
  if (doc.contains("stats")) {
    const auto& st = doc["stats"];
    out += fmt::format("rows         {} live, {} archived, {} rolled back, {} summaries\n",
                       st.value("live_rows", int64_t{0}), st.value("archived_rows", int64_t{0}),
                       st.value("rolled_back_rows", int64_t{0}),
                       st.value("summary_rows", int64_t{0}));
  }
  out += fmt::format("compactions  {}\n", t.value("compaction_count", int64_t{0}));
  auto reason = t.value("cooldown_reason", std::string{});
  out += fmt::format("cooldown     until {}{}\n", until(t.value("cooldown_until_ms", int64_t{0})),
                     reason.empty() ? std::string{} : " (" + reason + ")");
  out += fmt::format("anti-thrash  {} strikes, locked until {}{}\n",
                     t.value("anti_thrash_strikes", int64_t{0}),
                     until(t.value("lock_until_ms", int64_t{0})),
                     t.value("probe_pending", false) ? ", probe pending" : "");
  out += fmt::format("fallbacks    {} in a row\n", t.value("fallback_streak", int64_t{0}));
  if (doc.contains("attempts")) {
    const auto& a = doc["attempts"];
    out += fmt::format("attempts     {} of {} spent (current or last turn)\n",
                       a.value("used", int64_t{0}), a.value("max", int64_t{0}));
  }
  if (doc.contains("checkpoints") && !doc["checkpoints"].empty()) {
    out += "checkpoints\n";
    for (const auto& c : doc["checkpoints"])
      out += fmt::format("  {}  after #{}  {}\n", c.value("name", std::string{}),
                         c.value("last_message_id", int64_t{0}),
                         format_time(c.value("created_at_ms", int64_t{0})));
  }
  if (doc.contains("live")) {
    out += "live rows\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& m : doc["live"]) {
      std::string what = m.value("role", std::string{});
      if (m.value("is_summary", false))
        what += fmt::format(" summary #{}-#{}", m.value("replaced_first_id", int64_t{0}),
                            m.value("replaced_last_id", int64_t{0}));
      rows.push_back({"#" + std::to_string(m.value("id", int64_t{0})), what,
                      std::to_string(m.value("token_estimate", int64_t{0})),
                      one_line(m.value("content", std::string{}), preview_columns)});
    }
    out += render_table({"ID", "ROLE", "TOKENS", "TEXT"}, rows);
  }
  return out;
}

int run_show(const show_options& opt) {
  api::json doc;
  auto f = opt.source.remote() ? show_daemon(opt, doc) : show_file(opt, doc);
  if (f)
    return report_failure("show", *f);
  return print_answer("show", doc, opt.source.json,
                      [](const api::json& d) { return render_session(d); });
}

} // namespace

MNEME_COMMAND("show", "one session: record, row counts, trigger state, live rows",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<show_options>();
                cmd.add_option("SESSION", opt->session, "session key or session id")
                  ->required();
                cmd.add_option("--user", opt->user,
                               "whose key SESSION is (default: gateway.default_user)");
                add_source_options(cmd, opt->source);
                return [opt] { return run_show(*opt); };
              });

} // namespace mneme::cli
