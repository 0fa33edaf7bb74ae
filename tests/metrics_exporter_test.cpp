// The /metrics exposition of a live runtime (apps/common/api/metrics_exporter): a
// runtime on a temp SQLite file against the in-process fake LLM, driven through the
// gateway (turns, a forced compaction, a summarizer outage, an anti-thrash lock, an
// exhausted turn and its reset), then rendered and parsed. The samples must equal what
// was driven; every histogram's buckets are cumulative and end in +Inf == _count.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include "apps/common/api/metrics_exporter.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(metrics_exporter_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

// Parsed exposition: "name{labels}" (labels as rendered) -> value; "# TYPE" lines too.
struct exposition {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
  std::vector<std::string> order;  // sample keys in text order

  explicit exposition(const std::string& text) {
    std::istringstream in{text};
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("# TYPE ", 0) == 0) {
        auto rest = line.substr(7);
        auto sp = rest.find(' ');
        types[rest.substr(0, sp)] = rest.substr(sp + 1);
        continue;
      }
      if (line.empty() || line[0] == '#')
        continue;
      auto sp = line.rfind(' ');
      BOOST_REQUIRE_MESSAGE(sp != std::string::npos, "sample line without value: " + line);
      auto key = line.substr(0, sp);
      auto value = line.substr(sp + 1);
      samples[key] = value == "+Inf" ? std::numeric_limits<double>::infinity()
                                     : std::strtod(value.c_str(), nullptr);
      order.push_back(key);
    }
  }

  double at(const std::string& key) const {
    auto it = samples.find(key);
    BOOST_REQUIRE_MESSAGE(it != samples.end(), "no sample " + key);
    return it->second;
  }
  bool has(const std::string& key) const { return samples.count(key) > 0; }

  // The histogram `name`: buckets in text order must be non-decreasing and the +Inf
  // bucket must equal _count. Returns the count.
  double check_histogram(const std::string& name) const {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST(types.at(name) == "histogram");
      double previous = -1;
      std::string last_le;
      int buckets = 0;
      for (auto& key : order) {
        if (key.rfind(name + "_bucket{", 0) != 0)
          continue;
        double v = samples.at(key);
        BOOST_TEST(v >= previous);
        previous = v;
        last_le = key;
        ++buckets;
      }
      BOOST_TEST(buckets >= 2);
      BOOST_TEST(last_le == name + "_bucket{le=\"+Inf\"}");
      BOOST_TEST(previous == at(name + "_count"));
    }
    return at(name + "_count");
  }
};

// A started runtime; every session of user "u".
struct metrics_fixture : serve_runtime_fixture {
  metrics_fixture() { start(); }

  turn_reply say(const std::string& key, const std::string& text) {
    auto r = say_to(key, text);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }

  // A stored session under `key` with a system prompt and `n` alternating rows of about
  // 100 tokens. Returns its id.
  std::string seed(const std::string& key, int n) {
    return serve_runtime_fixture::seed(key, n, [](int i) {
      return std::to_string(i + 1) + " " + std::string(400, static_cast<char>('a' + (i + 1) % 26));
    });
  }

  void summarizer_down() {
    faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::summary)});
  }

  exposition render() {
    // A long ask timeout: a busy machine must not make an actor's gauges vanish.
    auto text = api::render_metrics_text(*sys, *rt, std::chrono::seconds{60});
    return exposition{text};
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(metrics_exporter, metrics_fixture)

BOOST_AUTO_TEST_CASE(an_idle_runtime_renders_every_family_at_zero) {
  auto m = render();
  BOOST_TEST(m.at("mneme_sessions_hosted") == 0);
  BOOST_TEST(m.at("mneme_sessions_stored") == 0);
  BOOST_TEST(m.at("mneme_sessions_open") == 0);
  BOOST_TEST(m.at("mneme_turns_total") == 0);
  BOOST_TEST(m.at("mneme_messages_appended_total") == 0);
  BOOST_TEST(m.at("mneme_cooldowns_active") == 0);
  BOOST_TEST(m.at("mneme_anti_thrash_locks_active") == 0);
  BOOST_TEST(m.at("mneme_exhaustion_resets_total") == 0);
  BOOST_TEST(m.at("mneme_compaction_exhausted_total") == 0);
  BOOST_TEST(m.types.at("mneme_compaction_exhausted_total") == "counter");
  BOOST_TEST(m.at("mneme_index_backlog_rows") == 0);
  BOOST_TEST(m.at("mneme_wal_checkpoints_total{by=\"checkpointer\"}") == 0);
  BOOST_TEST(m.at("mneme_wal_checkpoints_total{by=\"writer\"}") == 0);
  BOOST_TEST(m.types.at("mneme_wal_checkpoints_total") == "counter");
  BOOST_TEST(m.types.at("mneme_wal_pages") == "gauge");
  BOOST_TEST(m.at("mneme_llm_in_flight{pool=\"chat\"}") == 0);
  BOOST_TEST(m.at("mneme_llm_queued{pool=\"summarizer\"}") == 0);
  BOOST_TEST(m.types.at("mneme_compactions_total") == "counter");
  BOOST_TEST(m.types.at("mneme_summary_failures_total") == "counter");
  for (auto name : {"mneme_summarizer_latency_seconds", "mneme_turn_latency_seconds",
                    "mneme_search_latency_seconds", "mneme_storage_commit_latency_seconds",
                    "mneme_storage_batch_rows", "mneme_compaction_retention_ratio"})
    BOOST_TEST(m.check_histogram(name) == 0);
  BOOST_TEST(m.types.at("mneme_compaction_attempts_total") == "counter");
}

BOOST_AUTO_TEST_CASE(a_logged_compaction_counts_its_attempt_and_its_retention) {
  // Every row names a file and a job URL: the middle has identifiers to keep.
  auto sid = serve_runtime_fixture::seed("kept", 60, [](int i) {
    return "deploy src/app" + std::to_string(i) + ".cpp to https://ci.example.com/job/"
           + std::to_string(i) + " " + std::string(300, 'q');
  });
  say("kept", "hello");
  auto report = call<compaction_report>(rt->gateway(), gw_command_atom_v, std::string{"kept"},
                                        trigger::t12_manual_session, std::string{});
  BOOST_REQUIRE_MESSAGE(report, err_of(report));
  BOOST_REQUIRE(report->committed);
  auto log = call<std::vector<compaction_log_entry>>(rt->storage(), st_clog_atom_v, sid,
                                                     int64_t{10});
  BOOST_REQUIRE_MESSAGE(log, err_of(log));
  BOOST_REQUIRE_EQUAL(log->size(), 1u);
  const auto& e = log->front();
  BOOST_TEST(e.outcome == "committed");
  BOOST_TEST(e.identifiers_in > 0);

  auto m = render();
  BOOST_TEST(m.at("mneme_compaction_attempts_total{outcome=\"committed\",mode=\"summarizer\"}")
             == 1);
  BOOST_TEST(m.check_histogram("mneme_compaction_retention_ratio") == 1);
  const double ratio = static_cast<double>(e.identifiers_kept)
                       / static_cast<double>(e.identifiers_in);
  BOOST_TEST(m.at("mneme_compaction_retention_ratio_sum") == ratio,
             boost::test_tools::tolerance(1e-6));
  BOOST_TEST(m.at("mneme_compaction_retention_ratio_bucket{le=\"1\"}") == 1);
}

BOOST_AUTO_TEST_CASE(turns_and_a_forced_compaction_show_up_as_exact_samples) {
  auto a = seed("metrics-a", 60);
  for (int i = 0; i < 3; ++i)
    say("metrics-a", "turn " + std::to_string(i) + " about the deployment plan");
  auto b = say("metrics-b", "hello").session_id;
  auto report = call<compaction_report>(rt->gateway(), gw_command_atom_v,
                                        std::string{"metrics-a"}, trigger::t12_manual_session,
                                        std::string{});
  BOOST_REQUIRE_MESSAGE(report, err_of(report));
  BOOST_REQUIRE(report->committed);
  BOOST_REQUIRE(!report->used_fallback);

  auto m = render();
  BOOST_TEST(m.at("mneme_turns_total") == 4);
  BOOST_TEST(m.at("mneme_turn_errors_total") == 0);
  BOOST_TEST(m.check_histogram("mneme_turn_latency_seconds") == 4);
  BOOST_TEST(m.at("mneme_sessions_hosted") == 2);
  BOOST_TEST(m.at("mneme_sessions_spawned_total") == 2);
  BOOST_TEST(m.at("mneme_session_restarts_total") == 0);
  BOOST_TEST(m.at("mneme_sessions_stored") == 2);
  BOOST_TEST(m.at("mneme_sessions_open") == 2);
  BOOST_TEST(m.at("mneme_compactions_total{trigger=\"t12_manual_session\",outcome=\"committed\"}")
             == 1);
  BOOST_TEST(m.at("mneme_compaction_tokens_before_total") == report->tokens_before);
  BOOST_TEST(m.at("mneme_compaction_tokens_after_total") == report->tokens_after);
  BOOST_TEST(m.check_histogram("mneme_summarizer_latency_seconds") == 1);
  BOOST_TEST(!m.has("mneme_summary_failures_total{kind=\"llm_server_error\"}"));

  // Appended rows: every stored row except the summary the compaction wrote.
  auto sa = stored_stats(a);
  auto sb = stored_stats(b);
  double stored_rows = sa.live_rows + sa.archived_rows + sa.rolled_back_rows + sb.live_rows
                       + sb.archived_rows + sb.rolled_back_rows;
  BOOST_TEST(sa.summary_rows == 1);
  BOOST_TEST(m.at("mneme_messages_appended_total") == stored_rows - 1);
  // The seed (61), three turns of a user row and an answer, and the new session b's
  // system prompt, question and answer.
  BOOST_TEST(m.at("mneme_messages_appended_total") == 61 + 3 * 2 + 3);
  BOOST_TEST(m.at("mneme_append_failures_total") == 0);
  // One batch histogram observation and one commit latency per group commit.
  auto commits = m.at("mneme_storage_group_commits_total");
  BOOST_TEST(commits >= 1);
  BOOST_TEST(m.check_histogram("mneme_storage_batch_rows") == commits);
  BOOST_TEST(m.at("mneme_storage_batch_rows_sum") == m.at("mneme_messages_appended_total"));
  BOOST_TEST(m.check_histogram("mneme_storage_commit_latency_seconds") == commits);
  // The 61-row seed is one batch: it falls in the (16, 64] bucket.
  BOOST_TEST(m.at("mneme_storage_batch_rows_bucket{le=\"64\"}")
             - m.at("mneme_storage_batch_rows_bucket{le=\"16\"}") >= 1);
  BOOST_TEST(m.at("mneme_llm_failed_total{pool=\"chat\"}") == 0);
  BOOST_TEST(m.at("mneme_llm_overloaded_total{pool=\"summarizer\"}") == 0);
}

BOOST_AUTO_TEST_CASE(a_summarizer_outage_counts_a_fallback_a_failure_kind_and_a_cooldown) {
  seed("outage", 60);
  say("outage", "first");
  summarizer_down();
  auto r = say("outage", "/compress");
  BOOST_REQUIRE(r.compactions.size() == 1u);
  BOOST_REQUIRE(r.compactions[0].used_fallback);

  auto m = render();
  BOOST_TEST(m.at("mneme_compactions_total{trigger=\"t14_channel_command\",outcome=\"fallback\"}")
             == 1);
  BOOST_TEST(!m.has("mneme_compactions_total{trigger=\"t14_channel_command\",outcome=\"committed\"}"));
  BOOST_TEST(m.at("mneme_summary_failures_total{kind=\"llm_server_error\"}") == 1);
  BOOST_TEST(m.check_histogram("mneme_summarizer_latency_seconds") == 1);
  BOOST_TEST(m.at("mneme_cooldowns_active") == 1);
  BOOST_TEST(m.at("mneme_anti_thrash_locks_active") == 0);
  BOOST_TEST(m.at("mneme_llm_failed_total{pool=\"summarizer\"}") == 1);
  BOOST_TEST(m.at("mneme_compaction_attempts_total{outcome=\"committed\",mode=\"fallback\"}")
             == 1);
}

// A model that refuses every request as too long: each refusal compacts (T9) until the
// turn's attempts are spent, the session reports compaction_exhausted to the
// supervisor and the gateway resets it under the same key; the message's re-run in the
// new session is refused the same way and reported, but not reset again.
BOOST_AUTO_TEST_CASE(an_exhausted_turn_and_its_failed_re_run_count_two_reports_and_one_reset) {
  seed("spent", 60);
  say("spent", "hello");
  faults({rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat)});
  exhausted_turn("spent", "one more");

  auto m = render();
  BOOST_TEST(m.at("mneme_compaction_exhausted_total") == 2);
  BOOST_TEST(m.at("mneme_exhaustion_resets_total") == 1);
  auto sv = call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v);
  BOOST_REQUIRE_MESSAGE(sv, err_of(sv));
  BOOST_TEST(m.at("mneme_compaction_exhausted_total") == sv->exhausted);
  BOOST_TEST(m.at("mneme_compaction_attempts_total{outcome=\"exhausted\",mode=\"none\"}")
             == sv->exhausted);
}

BOOST_AUTO_TEST_CASE(persisted_locks_count_only_open_sessions_whose_lock_lies_ahead) {
  auto locked = seed("locked", 4);
  auto expired = seed("expired", 4);
  auto ended = seed("ended", 4);
  auto now = system_clock_ms();
  auto put = [&](const std::string& sid, time_ms lock_until) {
    trigger_state t;
    t.lock_until_ms = lock_until;
    t.anti_thrash_strikes = 2;
    auto ok = call<caf::ok_atom>(rt->storage(), st_put_triggers_atom_v, sid, t);
    BOOST_REQUIRE_MESSAGE(ok, err_of(ok));
  };
  put(locked, now + 3600000);
  put(expired, now - 1000);
  put(ended, now + 3600000);
  auto end = call<session_record>(rt->storage(), st_end_atom_v, ended, int64_t{now},
                                  std::string{"test"});
  BOOST_REQUIRE_MESSAGE(end, err_of(end));

  auto m = render();
  BOOST_TEST(m.at("mneme_anti_thrash_locks_active") == 1);
  BOOST_TEST(m.at("mneme_cooldowns_active") == 0);
  BOOST_TEST(m.at("mneme_sessions_stored") == 3);
  BOOST_TEST(m.at("mneme_sessions_open") == 2);
}

BOOST_AUTO_TEST_SUITE_END()

// Every errc value has a slot in the summary-failure table (lease_elsewhere and
// lease_lost, 130 and 131, included): each one recorded shows up under its own kind,
// with its own count. The values are every code with a name, so a new one is covered.
BOOST_AUTO_TEST_CASE(a_summary_failure_of_every_errc_shows_up_in_metrics_under_its_kind) {
  runtime_metrics rm;
  std::map<std::string, int> recorded; // kind -> count
  for (int v = 1; v <= std::numeric_limits<uint8_t>::max(); ++v) {
    auto code = static_cast<errc>(v);
    auto kind = to_string(code);
    if (kind.rfind("unknown", 0) == 0)
      continue; // not a code
    int times = 1 + v % 3;
    for (int i = 0; i < times; ++i)
      rm.record_summary_failure(code);
    recorded[kind] = times;
  }
  BOOST_TEST(recorded.count("lease_elsewhere") == 1u);
  BOOST_TEST(recorded.count("lease_lost") == 1u);
  BOOST_TEST(recorded.size() >= 40u);
  exposition m{api::render_counters_text(rm)};
  for (const auto& [kind, times] : recorded)
    BOOST_TEST(m.at("mneme_summary_failures_total{kind=\"" + kind + "\"}") == times, kind);
}

BOOST_AUTO_TEST_SUITE_END() // metrics_exporter_test
