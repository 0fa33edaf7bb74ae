// Tests of who compacts (SPEC §6): the Codex app-server modes, OpenAI native
// server-side compaction for matching models with mneme's trigger set later
// (10% of the window left), and the defaults that keep mneme in charge.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/external_compaction.hpp"

BOOST_AUTO_TEST_SUITE(external_compaction_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

struct row_case {
  const char* name;
  backend_kind backend;
  codex_mode mode;
  bool responses_native;
  int64_t compact_threshold;
  const char* model;
  int64_t threshold;
  int64_t window;
  compactor who;
  int64_t server;
  int64_t mneme;
};

std::ostream& operator<<(std::ostream& os, const row_case& c) { return os << c.name; }

const row_case cases[] = {
    {"defaults_leave_mneme_in_charge", backend_kind::chat_completions, codex_mode::native, false,
     0, "fake-chat", 150000, 200000, compactor::mneme, 0, 150000},
    {"app_server_native_compacts_its_own_threads", backend_kind::codex_app_server,
     codex_mode::native, false, 0, "gpt-5-codex", 150000, 200000, compactor::backend_native, 0,
     0},
    {"app_server_managed_uses_mneme_triggers_and_the_endpoint", backend_kind::codex_app_server,
     codex_mode::managed, false, 0, "gpt-5-codex", 150000, 200000, compactor::backend_endpoint,
     0, 150000},
    {"app_server_off_compacts_nothing", backend_kind::codex_app_server, codex_mode::off, false, 0,
     "gpt-5-codex", 150000, 200000, compactor::nobody, 0, 0},
    {"app_server_mode_wins_over_responses_native", backend_kind::codex_app_server,
     codex_mode::managed, true, 0, "gpt-5-codex", 150000, 200000, compactor::backend_endpoint, 0,
     150000},
    {"native_model_gets_server_first_at_the_threshold", backend_kind::responses,
     codex_mode::native, true, 0, "gpt-5.1-codex", 150000, 200000, compactor::server_first,
     150000, 155000},
    {"native_model_match_ignores_case", backend_kind::chat_completions, codex_mode::native, true,
     100000, "GPT-5-mini", 150000, 200000, compactor::server_first, 100000, 110000},
    {"non_matching_model_keeps_mneme", backend_kind::responses, codex_mode::native, true, 0,
     "claude-sonnet", 150000, 200000, compactor::mneme, 0, 150000},
    {"native_off_keeps_mneme_for_matching_models", backend_kind::responses, codex_mode::native,
     false, 100000, "gpt-5", 150000, 200000, compactor::mneme, 0, 150000},
    {"server_threshold_above_the_window_is_clamped", backend_kind::responses, codex_mode::native,
     true, 300000, "gpt-5", 150000, 200000, compactor::server_first, 200000, 200000},
    {"mneme_stays_at_least_one_token_later", backend_kind::responses, codex_mode::native, true,
     199995, "gpt-5", 150000, 200000, compactor::server_first, 199995, 199996},
};

} // namespace

BOOST_DATA_TEST_CASE(the_decision_table_picks_the_compactor_and_both_thresholds,
                     data::make(cases), c) {
  compression_params p;
  p.codex_app_server_auto = c.mode;
  p.codex_responses_native = c.responses_native;
  p.codex_responses_compact_threshold = c.compact_threshold;
  const auto d = decide_external_compaction(p, c.backend, c.model, c.threshold, c.window);
  BOOST_TEST(d.who == c.who);
  BOOST_TEST(d.server_compact_threshold == c.server);
  BOOST_TEST(d.mneme_threshold == c.mneme);
  BOOST_TEST(d.mneme_triggers_enabled() == (c.mneme > 0));
}

BOOST_AUTO_TEST_CASE(the_config_defaults_are_native_app_server_and_no_server_compaction) {
  const compression_params p;
  BOOST_TEST((p.codex_app_server_auto == codex_mode::native));
  BOOST_TEST(!p.codex_responses_native);
  BOOST_TEST(p.codex_responses_compact_threshold == 0);
  BOOST_TEST(k_server_first_margin_percent == 10);
}

// Property: whatever the numbers, the server compacts strictly first unless it
// is already at the window, and mneme never waits past the window.
BOOST_AUTO_TEST_CASE(with_server_first_mneme_is_later_than_the_server_and_within_the_window) {
  compression_params p;
  p.codex_responses_native = true;
  for (int64_t window : {1, 2, 10, 64000, 200000, 1000000})
    for (int64_t asked : {0, 1, 5, 63999, 150000, 199999, 200000, 5000000}) {
      p.codex_responses_compact_threshold = asked;
      const int64_t threshold = std::max<int64_t>(1, window / 2);
      const auto d = decide_external_compaction(p, backend_kind::responses, "gpt-5", threshold,
                                                window);
      BOOST_TEST(d.mneme_threshold <= window);
      BOOST_TEST(d.server_compact_threshold <= window);
      if (d.server_compact_threshold < window)
        BOOST_TEST(d.mneme_threshold > d.server_compact_threshold);
      else
        BOOST_TEST(d.mneme_threshold == window);
    }
}

BOOST_DATA_TEST_CASE(native_compaction_is_recognized_by_model_name,
                     data::make({"gpt-5", "gpt-5.3-codex-spark", "openai/GPT-5.1", "codex-mini",
                                 "gpt-4o", "fake-chat", ""}) ^
                         data::make({true, true, true, true, false, false, false}),
                     model, want) {
  BOOST_TEST(supports_native_compaction(model) == want);
}

BOOST_AUTO_TEST_SUITE_END() // external_compaction_test
