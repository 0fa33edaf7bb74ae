// The Prometheus families of the special paths and the memory tiers (docs/api.md
// "Metrics"): each path is driven, then the exposition of the runtime's counters
// (api::render_counters_text, the same code /metrics renders) must show the family
// with the value the path produced. Sessions run under CAF's deterministic
// scheduler on the in-memory store of session_test_fakes.hpp (which can refuse
// commits); facts and cold storage run through the real storage actor on a
// temporary SQLite file.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/sinks/null_sink.h>

#include "actors/gateway/skills_loader.hpp"
#include "actors/session/session_actor.hpp"
#include "actors/storage/storage_actor.hpp"
#include "apps/common/api/metrics_exporter.hpp"
#include "policies/eviction_plan.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"
#include "tests/session_harness.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(metrics_paths_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;

namespace {

// The sample `name{labels} value` of the exposition, or -1 when it is missing.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

struct session_metrics_fixture : session_harness {
  std::shared_ptr<runtime_metrics> metrics = std::make_shared<runtime_metrics>();

  session_metrics_fixture() {
    params.metrics = metrics;
    params.compression.threshold_tokens = 100000;
    params.compression.protect_first_n = 1;
    params.compression.protect_last_n = 2;
  }

  // system, user, [assistant call, tool, assistant] (foldable), user, assistant.
  void one_exchange() {
    add(msg_role::system, "You are a helpful assistant.");
    add(msg_role::user, "which port?");
    add(msg_role::assistant, "", {tool_call{"c1", "read_file", R"({"path":"/a.yaml"})"}});
    add(msg_role::tool, "port: 8080", {}, "c1");
    add(msg_role::assistant, "The port is 8080.");
    add(msg_role::user, "thanks, and the host?");
    add(msg_role::assistant, "localhost");
  }

  void lock_by_cooldown() {
    auto& t = db->sessions[sid].triggers;
    t.cooldown_until_ms = t0 + 600'000;
    t.cooldown_reason = "summary failed";
  }

  // A turn "hello" that must be answered.
  void turn() {
    auto r = session_harness::turn();
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
  }

  std::string text() const { return api::render_counters_text(*metrics); }
};

std::string big(const std::string& first_line, size_t filler, char c) {
  return first_line + "\n" + std::string(filler, c);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(session_paths, session_metrics_fixture)

BOOST_AUTO_TEST_CASE(every_family_is_rendered_at_zero_before_anything_ran) {
  auto t = text();
  for (const char* series :
       {"mneme_tool_output_evictions_total", "mneme_tool_output_eviction_chars_reclaimed_total",
        "mneme_proactive_prunes_total{outcome=\"committed\"}",
        "mneme_proactive_prunes_total{outcome=\"skipped\"}",
        "mneme_proactive_prunes_total{outcome=\"refused\"}",
        "mneme_proactive_prune_tokens_reclaimed_total", "mneme_micro_compaction_folds_total",
        "mneme_micro_compaction_reconciles_total", "mneme_micro_compaction_sync_failures_total",
        "mneme_skill_loads_total", "mneme_skill_unloads_total",
        "mneme_cold_storage_files_written_total", "mneme_cold_storage_failures_total",
        "mneme_cold_storage_retries_total", "mneme_fact_puts_total", "mneme_fact_removes_total"})
    BOOST_TEST(sample(t, series) == 0, series);
  BOOST_TEST(t.find("# TYPE mneme_external_compactions_total counter") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_eviction_counts_the_output_and_the_characters_it_reclaimed) {
  const auto output = big("alpha", 19994, 'x'); // 20,000 characters
  two_tool_outputs(output, "small output");
  start();
  turn();
  auto marker = eviction_marker(20000);
  auto t = text();
  BOOST_TEST(sample(t, "mneme_tool_output_evictions_total") == 1);
  BOOST_TEST(sample(t, "mneme_tool_output_eviction_chars_reclaimed_total")
             == static_cast<double>(20000 - count_code_points(marker)));
}

BOOST_AUTO_TEST_CASE(a_refused_eviction_counts_nothing) {
  two_tool_outputs(big("alpha", 19994, 'x'), "small output");
  start();
  db->fail_commits = true;
  turn();
  BOOST_TEST(sample(text(), "mneme_tool_output_evictions_total") == 0);
}

BOOST_AUTO_TEST_CASE(a_committed_prune_counts_its_outcome_and_the_tokens_it_reclaimed) {
  params.compression.threshold_tokens = 2000; // over it, and the cooldown locks compaction
  lock_by_cooldown();
  two_tool_outputs(big("alpha first line", 12000, 'x'), big("beta first line", 12000, 'y'));
  start();
  auto before = ask<session_snapshot>(ss_state_atom_v)->live_tokens;
  turn();
  auto t = text();
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"committed\"}") == 1);
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"refused\"}") == 0);
  auto reclaimed = sample(t, "mneme_proactive_prune_tokens_reclaimed_total");
  BOOST_TEST(reclaimed > 5000); // two outputs of ~3,000 tokens each became one line
  BOOST_TEST(reclaimed < static_cast<double>(before));
}

BOOST_AUTO_TEST_CASE(a_refused_prune_is_counted_as_refused) {
  params.compression.threshold_tokens = 2000;
  lock_by_cooldown();
  two_tool_outputs(big("alpha first line", 12000, 'x'), big("beta first line", 12000, 'y'));
  start();
  db->fail_commits = true;
  turn();
  auto t = text();
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"refused\"}") >= 1);
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"committed\"}") == 0);
  BOOST_TEST(sample(t, "mneme_proactive_prune_tokens_reclaimed_total") == 0);
}

BOOST_AUTO_TEST_CASE(a_prune_not_worth_it_is_counted_as_skipped) {
  params.compression.threshold_tokens = 2000;
  params.compression.proactive_prune_min_reclaim_tokens = 1'000'000;
  lock_by_cooldown();
  two_tool_outputs(big("alpha first line", 12000, 'x'), big("beta first line", 12000, 'y'));
  start();
  turn();
  auto t = text();
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"skipped\"}") >= 1);
  BOOST_TEST(sample(t, "mneme_proactive_prunes_total{outcome=\"committed\"}") == 0);
}

BOOST_AUTO_TEST_CASE(a_fold_and_a_failed_sync_and_the_reconcile_are_each_counted) {
  params.compression.micro_compact = true;
  one_exchange();
  start();
  db->fail_commits = true;
  turn(); // folds in memory; the sync fails
  auto t = text();
  BOOST_TEST(sample(t, "mneme_micro_compaction_folds_total") == 1);
  BOOST_TEST(sample(t, "mneme_micro_compaction_sync_failures_total") == 1);
  BOOST_TEST(sample(t, "mneme_micro_compaction_reconciles_total") == 0);
  db->fail_commits = false;
  auto report = ask<compaction_report>(ss_compact_atom_v, trigger::t12_manual_session,
                                       std::string{});
  BOOST_REQUIRE(report);
  t = text();
  BOOST_TEST(sample(t, "mneme_micro_compaction_reconciles_total") == 1);
  BOOST_TEST(sample(t, "mneme_micro_compaction_sync_failures_total") == 1);
}

BOOST_AUTO_TEST_CASE(a_server_side_compaction_is_counted_under_its_mode) {
  params.model.name = "gpt-5-codex";
  params.model.backend = backend_kind::responses;
  params.compression.codex_responses_native = true;
  one_exchange();
  chat_answer a;
  a.content = "compacted on the server";
  a.server_compacted = true;
  chat->script.push_back(a);
  start();
  turn();
  BOOST_TEST(sample(text(), "mneme_external_compactions_total{mode=\"server_first\","
                            "outcome=\"server_compacted\"}")
             == 1);
}

BOOST_AUTO_TEST_CASE(an_endpoint_compaction_is_counted_under_its_mode_and_outcome) {
  params.model.backend = backend_kind::codex_app_server;
  params.compression.codex_app_server_auto = codex_mode::managed;
  for (int i = 0; i < 6; ++i)
    one_exchange();
  start();
  auto report = ask<compaction_report>(ss_compact_atom_v, trigger::t12_manual_session,
                                       std::string{});
  BOOST_REQUIRE(report);
  BOOST_REQUIRE(report->committed);
  auto outcome = report->used_fallback ? "fallback" : "committed";
  BOOST_TEST(sample(text(), std::string{"mneme_external_compactions_total{mode=\""
                                        "backend_endpoint\",outcome=\""}
                              + outcome + "\"}")
             == 1);
}

BOOST_AUTO_TEST_CASE(a_skill_load_and_unload_are_counted) {
  testing::temp_dir dir{"mneme-metrics-skills"};
  std::filesystem::create_directories(dir.file("deploy"));
  std::ofstream{dir.file("deploy/SKILL.md")}
    << "---\nname: deploy\ndescription: ship a release\n---\n# Deploy\n1. build\n2. ship\n";
  auto quiet = std::make_shared<spdlog::logger>(
    "skills", std::make_shared<spdlog::sinks::null_sink_mt>());
  preload_skills(dir.path(), quiet);
  one_exchange();
  start();
  auto loaded = ask<int64_t>(ss_skill_atom_v, std::string{"deploy"}, true);
  BOOST_REQUIRE_MESSAGE(loaded, err_of(loaded));
  BOOST_TEST(sample(text(), "mneme_skill_loads_total") == 1);
  auto unloaded = ask<int64_t>(ss_skill_atom_v, std::string{"deploy"}, false);
  BOOST_REQUIRE_MESSAGE(unloaded, err_of(unloaded));
  BOOST_TEST(sample(text(), "mneme_skill_unloads_total") == 1);
  BOOST_TEST(sample(text(), "mneme_skill_loads_total") == 1);
  preload_skills("", quiet);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// The real storage actor on a SQLite file in a fresh directory, with its counters.
struct storage_metrics_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  testing::temp_dir dir{"mneme-metrics"};
  store_params params;
  std::shared_ptr<runtime_metrics> metrics = std::make_shared<runtime_metrics>();
  storage_actor storage;

  storage_metrics_fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    params.path = dir.file("m.db");
    params.synchronous_full = false;
  }
  ~storage_metrics_fixture() {
    if (storage) {
      caf::anon_send_exit(storage, caf::exit_reason::user_shutdown);
      storage = storage_actor{};
    }
    sys.reset();
  }

  void start() {
    auto s = spawn_storage(*sys, params, nullptr, metrics->storage);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    storage = *s;
  }

  template <class T, class... Ts>
  caf::expected<T> call(Ts... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out{caf::error{}};
    self->request(storage, 30s, xs...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  // A session with one row, ended now.
  void end_session(const std::string& id) {
    session_record rec;
    rec.id = id;
    rec.user_id = "u";
    rec.session_key = id;
    rec.started_at_ms = t0;
    auto opened = call<session_record>(st_new_session_atom_v, rec, int64_t{t0});
    BOOST_REQUIRE_MESSAGE(opened, err_of(opened));
    message m;
    m.session_id = id;
    m.role = msg_role::user;
    m.content = "hello from " + id;
    m.timestamp_ms = t0;
    BOOST_REQUIRE(call<int64_t>(st_append_atom_v, m));
    auto ended = call<session_record>(st_end_atom_v, id, int64_t{t0 + 1}, std::string{"test"});
    BOOST_REQUIRE_MESSAGE(ended, err_of(ended));
  }

  std::string text() const { return api::render_counters_text(*metrics); }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(storage_paths, storage_metrics_fixture)

BOOST_AUTO_TEST_CASE(fact_puts_and_removes_are_counted_only_when_the_store_took_them) {
  start();
  fact_record f;
  f.user_id = "alice";
  f.key = "editor";
  f.value = "vim";
  BOOST_REQUIRE(call<fact_record>(st_fact_put_atom_v, f, int64_t{t0}));
  f.value = "emacs";
  BOOST_REQUIRE(call<fact_record>(st_fact_put_atom_v, f, int64_t{t0 + 1}));
  f.key = "";
  BOOST_REQUIRE(!call<fact_record>(st_fact_put_atom_v, f, int64_t{t0 + 2})); // refused
  BOOST_REQUIRE(call<fact_record>(st_fact_del_atom_v, std::string{"alice"},
                                  std::string{"editor"}, int64_t{t0 + 3}));
  BOOST_REQUIRE(!call<fact_record>(st_fact_del_atom_v, std::string{"alice"},
                                   std::string{"editor"}, int64_t{t0 + 4})); // none active
  auto t = text();
  BOOST_TEST(sample(t, "mneme_fact_puts_total") == 2);
  BOOST_TEST(sample(t, "mneme_fact_removes_total") == 1);
}

BOOST_AUTO_TEST_CASE(cold_storage_counts_files_failures_and_the_retry_that_wrote_the_file) {
  params.cold_storage_dir = dir.file("cold");
  std::ofstream{dir.file("cold")} << "a file where the folder should be";
  start();
  end_session("s-a");
  auto t = text();
  BOOST_TEST(sample(t, "mneme_cold_storage_failures_total") == 1);
  BOOST_TEST(sample(t, "mneme_cold_storage_files_written_total") == 0);
  std::filesystem::remove(dir.file("cold"));
  end_session("s-b"); // its sweep retries s-a and writes both
  t = text();
  BOOST_TEST(sample(t, "mneme_cold_storage_files_written_total") == 2);
  BOOST_TEST(sample(t, "mneme_cold_storage_retries_total") == 1);
  BOOST_TEST(sample(t, "mneme_cold_storage_failures_total") == 1);
  BOOST_TEST(std::filesystem::exists(dir.file("cold/s-a.jsonl")));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // metrics_paths_test
