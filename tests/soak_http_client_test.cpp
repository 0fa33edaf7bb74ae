// Unit tests of the soak's HTTP client helpers that need no server: the daemon's
// /metrics text read into the counters the soak checks (committed and fallback
// compactions by trigger, crashed session actors), and session keys percent-encoded
// as one path segment.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>

#include "apps/common/soak/soak_http_client.hpp"
#include "messages/trigger.hpp"

BOOST_AUTO_TEST_SUITE(soak_http_client_test)

namespace bdata = boost::unit_test::data;
using namespace mneme;
using namespace mneme::soak;

namespace {

const std::string metrics_text =
  "# HELP mneme_compactions_total Compactions by trigger and outcome.\n"
  "# TYPE mneme_compactions_total counter\n"
  "mneme_compactions_total{trigger=\"t1_pre_call\",outcome=\"committed\"} 7\n"
  "mneme_compactions_total{trigger=\"t1_pre_call\",outcome=\"fallback\"} 2\n"
  "mneme_compactions_total{outcome=\"committed\",trigger=\"t3_hygiene_message_cap\"} 5\n"
  "mneme_compactions_total{trigger=\"t9_context_overflow\",outcome=\"failed\"} 4\n"
  "mneme_compaction_tokens_before_total 123456\n"
  "# TYPE mneme_session_restarts_total counter\n"
  "mneme_session_restarts_total 3\n"
  "# TYPE mneme_compaction_exhausted_total counter\n"
  "mneme_compaction_exhausted_total 2\n";

struct count_case {
  trigger by;
  uint64_t committed;
  uint64_t fallback;
};

std::ostream& operator<<(std::ostream& os, const count_case& c) {
  return os << to_string(c.by);
}

const count_case count_cases[] = {
  {trigger::t1_pre_call, 7, 2},
  {trigger::t3_hygiene_message_cap, 5, 0},   // labels in the other order
  {trigger::t9_context_overflow, 0, 0},      // failed compactions are not committed
  {trigger::t2_post_call, 0, 0},             // absent: zero
};

} // namespace

BOOST_DATA_TEST_CASE(the_metrics_text_gives_committed_and_fallback_compactions_by_trigger,
                     bdata::make(count_cases), c) {
  auto parsed = parse_daemon_metrics(metrics_text);
  BOOST_REQUIRE(parsed.has_value());
  auto t = static_cast<size_t>(c.by);
  BOOST_TEST(parsed->compactions.committed[t] == c.committed);
  BOOST_TEST(parsed->compactions.fallback[t] == c.fallback);
}

BOOST_AUTO_TEST_CASE(the_metrics_text_gives_the_session_restarts) {
  auto parsed = parse_daemon_metrics(metrics_text);
  BOOST_REQUIRE(parsed.has_value());
  BOOST_TEST(parsed->session_restarts == 3);
  BOOST_TEST(parsed->compaction_exhausted == 2);
}

BOOST_AUTO_TEST_CASE(a_metrics_text_without_the_restarts_counter_is_not_the_daemons) {
  BOOST_TEST(!parse_daemon_metrics("some_other_total 1\n").has_value());
  BOOST_TEST(!parse_daemon_metrics("").has_value());
}

struct encode_case {
  std::string key;
  std::string encoded;
};

std::ostream& operator<<(std::ostream& os, const encode_case& c) { return os << c.key; }

const encode_case encode_cases[] = {
  {"soak-12", "soak-12"},
  {"a.b_c~d", "a.b_c~d"},
  {"team/chat", "team%2Fchat"},
  {"with space?&#", "with%20space%3F%26%23"},
  {"%", "%25"},
  {"\xE4\xBC\x9A", "%E4%BC%9A"},   // UTF-8 bytes one by one
};

BOOST_DATA_TEST_CASE(a_session_key_is_percent_encoded_as_one_path_segment,
                     bdata::make(encode_cases), c) {
  BOOST_TEST(encode_path_segment(c.key) == c.encoded);
}

BOOST_AUTO_TEST_SUITE_END() // soak_http_client_test
