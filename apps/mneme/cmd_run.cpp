// `mneme run [--config FILE]`: a shorter demo beside `mneme soak` (the main job, with
// scenarios, fault windows, invariants and a report). Starts the runtime (storage, chat
// and summarizer pools, supervisor, gateway, sessions) on the configuration — embedded
// defaults unless --config — against the in-process fake LLM server, drives simulated
// users through the gateway (every session its turns in order, all sessions at once),
// with a summarizer outage for a share of the summary calls, and prints a short report:
// sessions, messages, compactions by trigger, the largest live context, and the checks
// (every turn answered, every message stored, compaction once a context reached the
// threshold, live context bounded). Exit 0 only when every check holds.
//
// Decisions: so that a run of under a minute compacts at all, the demo caps the
// threshold at --threshold-tokens (default 6,000; 0 keeps the configured one) and stores
// its database in a fresh temporary directory unless --db names a file. A load too small
// to bring any context past the threshold with a middle to summarize (more messages
// than the system prompt, head and tail) owes no compaction: the compaction check asks
// only that one ran once one was due, and the report says when none was.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "actors/runtime.hpp"
#include "apps/common/config/app_config.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/key_namespace.hpp"
#include "policies/threshold.hpp"

namespace mneme::cli {

namespace {

struct run_options {
  std::string config_file;   // empty = embedded defaults
  std::string db;            // empty = a temporary file
  int sessions = 300;
  int turns = 30;
  int64_t threshold_tokens = 6000;
  int64_t user_chars = 800;  // size of each simulated user message
  double summary_outage = 0.25; // share of summary calls the fake LLM answers with 503
};

std::string user_text(int session, int turn, int64_t chars) {
  std::string s = fmt::format("user {} turn {}: ", session, turn);
  while (static_cast<int64_t>(s.size()) < chars)
    s += "please keep track of the deployment plan for service-" + std::to_string(session)
         + " and the open questions. ";
  s.resize(static_cast<size_t>(chars));
  return s;
}

struct run_totals {
  int64_t answered = 0;
  int64_t failed = 0;
  int64_t resets = 0;
  int64_t max_live_tokens = 0;
  int64_t max_live_messages = 0;
  std::map<trigger, int64_t> compactions;
  int64_t fallback_compactions = 0;
};

int run_runtime(const run_options& opt) {
  auto loaded = config_or_defaults(opt.config_file, std::cerr);
  if (!loaded)
    return exit_usage;
  auto& cfg = *loaded;
  if (opt.threshold_tokens > 0)
    cfg.compression.threshold_tokens = opt.threshold_tokens;

  fakellm::fake_llm_server server;
  auto port = server.start();
  if (!port) {
    std::cerr << "fake LLM server: " << render_error(port.error()) << "\n";
    return exit_failure;
  }
  if (opt.summary_outage > 0) {
    fakellm::scenario s;
    fakellm::fault_rule r;
    r.kind = fakellm::fault_kind::unavailable;
    r.purpose = fakellm::purpose_filter::summary;
    r.fraction = opt.summary_outage;
    s.plan.rules.push_back(r);
    if (auto err = server.set_scenario(s)) {
      std::cerr << "fake LLM scenario: " << render_error(err) << "\n";
      return exit_failure;
    }
  }
  cfg.model.base_url = server.base_url();
  if (cfg.summarizer.base_url.empty() || cfg.summarizer.base_url == "builtin")
    cfg.summarizer.base_url = server.base_url();
  if (cfg.embeddings.base_url == "builtin")
    cfg.embeddings.base_url = server.base_url();
  auto made = runtime_config_of(cfg);
  if (!made) {
    std::cerr << render_error(made.error()) << "\n";
    return exit_usage;
  }
  auto& rc = *made;

  std::string tmp_dir;
  if (opt.db.empty()) {
    char tmpl[] = "/tmp/mneme-run-XXXXXX";
    if (!mkdtemp(tmpl)) {
      std::cerr << "cannot create a temporary directory\n";
      return exit_failure;
    }
    tmp_dir = tmpl;
    rc.database.path = tmp_dir + "/mneme.db";
    rc.database.synchronous_full = false;
  } else {
    rc.database.path = opt.db;
  }

  auto th = compute_threshold(rc.compression, rc.model);
  std::cout << "mneme run: the runtime against the in-process fake LLM (" << server.base_url()
            << ")\n";
  std::cout << fmt::format("config      {}\n", opt.config_file.empty()
                                                  ? "embedded defaults" : opt.config_file);
  std::cout << fmt::format("threshold   {}\n", describe(th));
  std::cout << fmt::format("load        {} sessions x {} turns, {:.0f}% of summary calls fail\n",
                           opt.sessions, opt.turns, opt.summary_outage * 100);

  int rc_exit = exit_ok;
  {
    auto host = runtime_host::start(rc);
    if (!host) {
      std::cerr << "runtime: " << render_error(host.error()) << "\n";
      return exit_failure;
    }
    auto& sys = (*host)->system();
    auto& rt = (*host)->rt();
    run_totals totals;
    auto begin = std::chrono::steady_clock::now();
    caf::scoped_actor self{sys};
    // Round-robin waves: all sessions have one turn in flight at a time.
    for (int t = 0; t < opt.turns; ++t) {
      for (int s = 0; s < opt.sessions; ++s) {
        auto user = "u" + std::to_string(s % 7);
        auto key = stored_key(user, "user-" + std::to_string(s)); // in its user's namespace
        self->send(rt.gateway(), gw_message_atom_v, key, user, user_text(s, t, opt.user_chars));
      }
      for (int s = 0; s < opt.sessions; ++s)
        self->receive(
          [&](turn_reply& r) {
            ++totals.answered;
            if (!r.notice.empty())
              ++totals.resets;
            totals.max_live_tokens = std::max(totals.max_live_tokens, r.live_tokens);
            totals.max_live_messages = std::max(totals.max_live_messages, r.live_messages);
            for (const auto& c : r.compactions) {
              if (!c.committed)
                continue;
              ++totals.compactions[c.by];
              totals.fallback_compactions += c.used_fallback ? 1 : 0;
            }
          },
          [&](caf::error& err) {
            ++totals.failed;
            if (turn_reply_of(err)) // exhausted: reset, the message not answered
              ++totals.resets;
            std::cerr << "turn failed: " << render_error(err) << "\n";
          },
          caf::after(rt.turn_timeout()) >> [&] { ++totals.failed; });
    }
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin);

    // Nothing lost: every user message of every session is in the store.
    int64_t stored_user_rows = 0;
    int64_t checked_sessions = 0;
    session_filter all;
    all.limit = 100000;
    self->request(rt.storage(), std::chrono::seconds(60), st_list_atom_v, all)
      .receive(
        [&](std::vector<session_record>& sessions) {
          for (const auto& rec : sessions) {
            ++checked_sessions;
            self->request(rt.storage(), std::chrono::seconds(60), st_range_atom_v, rec.id,
                          int64_t{1}, std::numeric_limits<int64_t>::max())
              .receive(
                [&](std::vector<message>& rows) {
                  for (const auto& m : rows)
                    if (m.role == msg_role::user && !m.is_summary
                        && m.content.rfind("user ", 0) == 0)
                      ++stored_user_rows;
                },
                [&](caf::error& err) {
                  std::cerr << "range: " << render_error(err) << "\n";
                });
          }
        },
        [&](caf::error& err) { std::cerr << "list: " << render_error(err) << "\n"; });

    int64_t sent = static_cast<int64_t>(opt.sessions) * opt.turns;
    int64_t total_compactions = 0;
    std::string by_trigger;
    for (const auto& [t, n] : totals.compactions) {
      total_compactions += n;
      by_trigger += fmt::format(" {}={}", to_string(t), n);
    }
    // Bound: a compaction leaves head + summary + tail; between two checks a session
    // grows by at most one turn. Twice the threshold covers both with room to spare.
    int64_t live_bound = 2 * th.threshold;
    std::cout << fmt::format("turns       {} answered, {} failed, {} resets in {:.1f} s "
                             "({:.0f} turns/s)\n",
                             totals.answered, totals.failed, totals.resets, elapsed.count(),
                             static_cast<double>(totals.answered) / elapsed.count());
    std::cout << fmt::format("compactions {} committed ({} with the local fallback):{}\n",
                             total_compactions, totals.fallback_compactions, by_trigger);
    std::cout << fmt::format("live        largest context {} tokens / {} messages "
                             "(bound {} tokens)\n",
                             totals.max_live_tokens, totals.max_live_messages, live_bound);
    std::cout << fmt::format("store       {} sessions, {} of {} user messages stored\n",
                             checked_sessions, stored_user_rows, sent);
    bool ok = true;
    auto check = [&](bool holds, const std::string& what) {
      std::cout << fmt::format("check       {:<4} {}\n", holds ? "ok" : "FAIL", what);
      ok = ok && holds;
    };
    check(totals.answered + totals.failed == sent && totals.failed == 0,
          "every turn was answered");
    check(stored_user_rows == sent, "nothing lost: every user message is stored");
    // Without a working compaction a context that reaches the threshold keeps growing
    // past it, so the largest reported context shows a compaction that was due, once
    // the context holds a middle between head and tail (else it is a no-op, SPEC §3).
    auto head_and_tail = 1 + rc.compression.protect_first_n + rc.compression.protect_last_n;
    bool compaction_due = totals.max_live_tokens >= th.threshold
                          && totals.max_live_messages > head_and_tail;
    if (total_compactions == 0 && !compaction_due)
      std::cout << fmt::format("note        no compaction was due: the largest context had {} "
                               "tokens (threshold {}) and {} messages (head and tail hold {}); "
                               "more --turns or a larger --user-chars make the demo compact\n",
                               totals.max_live_tokens, th.threshold, totals.max_live_messages,
                               head_and_tail);
    check(total_compactions > 0 || !compaction_due,
          "compaction ran once a context reached the threshold");
    check(totals.max_live_tokens <= live_bound, "live context bounded");
    rc_exit = ok ? exit_ok : exit_failure;
    rt.stop();
  }
  server.stop();
  if (!tmp_dir.empty())
    std::filesystem::remove_all(tmp_dir);
  return rc_exit;
}

command_action setup_run(CLI::App& cmd) {
  auto opt = std::make_shared<run_options>();
  cmd.add_option("--config", opt->config_file, "YAML configuration (default: embedded defaults)");
  cmd.add_option("--db", opt->db, "database file (default: a temporary one, removed after)");
  cmd.add_option("--sessions", opt->sessions, "simulated sessions")->check(CLI::Range(1, 100000));
  cmd.add_option("--turns", opt->turns, "turns per session")->check(CLI::Range(1, 100000));
  cmd.add_option("--threshold-tokens", opt->threshold_tokens,
                 "cap of the compaction threshold for the demo (0 = as configured)")
    ->check(CLI::Range(int64_t{0}, int64_t{100000000}));
  cmd.add_option("--user-chars", opt->user_chars, "size of each simulated user message")
    ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  cmd.add_option("--summary-outage", opt->summary_outage,
                 "share of summary calls answered with 503")
    ->check(CLI::Range(0.0, 1.0));
  return [opt] { return run_runtime(*opt); };
}

} // namespace

MNEME_COMMAND("run", "Run the runtime on simulated users against the in-process fake LLM",
              setup_run);

} // namespace mneme::cli
