// Tests of tool output eviction (SPEC §6, seed 004 stage 1): the exact marker,
// "answered after" as the condition, the size limit in characters (not bytes),
// the proposed default, and that an evicted row keeps its pairing while its
// original is archived; and the eviction before compaction exhaustion after a
// refused request, which evicts unanswered outputs too.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/eviction_plan.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(eviction_plan_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

message row(int64_t id, msg_role role, std::string content) {
  message m;
  m.id = id;
  m.role = role;
  m.content = std::move(content);
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

// user, assistant call, tool output; then an answer when `answered`.
std::vector<message> exchange(std::string output, bool answered) {
  std::vector<message> rows{row(1, msg_role::user, "read the log"),
                            row(2, msg_role::assistant, ""),
                            row(3, msg_role::tool, std::move(output))};
  rows[1].tool_calls.push_back({"call_1", "read_file", R"({"path":"/var/log/app.log"})"});
  rows[2].tool_call_id = "call_1";
  rows[2].tool_name = "read_file";
  if (answered) rows.push_back(row(4, msg_role::assistant, "the log shows a timeout"));
  return rows;
}

std::string repeat(const std::string& unit, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s += unit;
  return s;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_marker_is_exactly_the_seed_format_with_the_original_length) {
  BOOST_TEST(eviction_marker(12345) == "[OUTPUT TRUNCATED - 12345 chars; recall with search]");
  BOOST_TEST(is_eviction_marker(eviction_marker(7)));
  BOOST_TEST(!is_eviction_marker("[OUTPUT TRUNCATED - many chars; recall with search]"));
  BOOST_TEST(!is_eviction_marker("[OUTPUT TRUNCATED -  chars; recall with search]"));
  BOOST_TEST(!is_eviction_marker("the log shows a timeout"));
}

BOOST_AUTO_TEST_CASE(the_proposed_default_is_16000_chars) {
  BOOST_TEST(k_default_tool_output_eviction_chars == 16000);
  BOOST_TEST(k_eviction_min_chars_floor == 256);
}

// output chars, answered after -> evicted (limit 16,000)
BOOST_DATA_TEST_CASE(a_large_output_is_evicted_once_the_model_answered_after_it,
                     data::make<std::size_t>({16000, 16001, 16001, 50000}) ^
                         data::make({true, true, false, true}) ^
                         data::make({false, true, false, true}),
                     chars, answered, evicted) {
  const auto rows = exchange(std::string(chars, 'x'), answered);
  const auto plan = plan_tool_output_eviction(rows, k_default_tool_output_eviction_chars);
  BOOST_TEST(plan.size() == (evicted ? 1u : 0u));
  if (!evicted) return;
  BOOST_TEST(plan[0].index == 2u);
  BOOST_TEST(plan[0].original_id == 3);
  BOOST_TEST(plan[0].content == eviction_marker(chars));
  BOOST_TEST(plan[0].tokens_reclaimed > 0);
}

BOOST_AUTO_TEST_CASE(a_user_message_after_the_output_is_not_an_answer) {
  auto rows = exchange(std::string(20000, 'x'), false);
  rows.push_back(row(4, msg_role::user, "and?"));
  BOOST_TEST(plan_tool_output_eviction(rows, 16000).empty());
}

BOOST_AUTO_TEST_CASE(the_size_is_counted_in_characters_not_bytes) {
  const auto rows = exchange(repeat("数", 20000), true);  // 60,000 bytes
  BOOST_TEST(plan_tool_output_eviction(rows, 30000).empty());
  const auto plan = plan_tool_output_eviction(rows, 19999);
  BOOST_TEST_REQUIRE(plan.size() == 1u);
  BOOST_TEST(plan[0].content == "[OUTPUT TRUNCATED - 20000 chars; recall with search]");
}

BOOST_DATA_TEST_CASE(a_limit_of_zero_or_below_turns_eviction_off, data::make<int64_t>({0, -1}),
                     limit) {
  BOOST_TEST(plan_tool_output_eviction(exchange(std::string(90000, 'x'), true), limit).empty());
}

BOOST_AUTO_TEST_CASE(unstored_rows_and_earlier_replacements_are_left_alone) {
  auto unstored = exchange(std::string(20000, 'x'), true);
  unstored[2].id = 0;
  BOOST_TEST(plan_tool_output_eviction(unstored, 16000).empty());
  auto replaced = exchange(std::string(20000, 'x'), true);
  replaced[2].is_summary = true;
  BOOST_TEST(plan_tool_output_eviction(replaced, 16000).empty());
}

BOOST_AUTO_TEST_CASE(at_the_floor_every_eligible_output_reclaims_tokens) {
  const auto limit = static_cast<std::size_t>(k_eviction_min_chars_floor);
  const auto plan = plan_tool_output_eviction(exchange(std::string(limit + 1, 'x'), true),
                                              k_eviction_min_chars_floor);
  BOOST_TEST_REQUIRE(plan.size() == 1u);
  BOOST_TEST(plan[0].tokens_reclaimed > 0);
}

BOOST_AUTO_TEST_CASE(several_outputs_are_evicted_in_order_and_keep_their_pairing) {
  auto rows = exchange(std::string(20000, 'a'), false);
  rows.push_back(row(4, msg_role::assistant, ""));
  rows.back().tool_calls.push_back({"call_2", "grep", "{}"});
  rows.push_back(row(5, msg_role::tool, std::string(30000, 'b')));
  rows.back().tool_call_id = "call_2";
  rows.push_back(row(6, msg_role::tool, std::string(100, 'c')));  // small: kept
  rows.push_back(row(7, msg_role::assistant, "both read"));
  const auto plan = plan_tool_output_eviction(rows, 16000);
  BOOST_TEST_REQUIRE(plan.size() == 2u);
  BOOST_TEST(plan[0].original_id == 3);
  BOOST_TEST(plan[1].original_id == 5);
  const auto applied = apply_replacements(rows, plan);
  BOOST_TEST_REQUIRE(applied.status == replace_status::applied);
  BOOST_TEST(applied.archived_ids == (std::vector<int64_t>{3, 5}));
  BOOST_TEST(applied.live[4].content == "[OUTPUT TRUNCATED - 30000 chars; recall with search]");
  BOOST_TEST(applied.live[4].tool_call_id == "call_2");
  BOOST_TEST(applied.live[4].replaced_first_id == 5);
  BOOST_TEST(applied.live[5].content == rows[5].content);
  // A second pass finds nothing more to evict.
  BOOST_TEST(plan_tool_output_eviction(applied.live, 16000).empty());
}

// ---- plan_refused_output_eviction: the step before compaction exhaustion after the
// model refused a request as too large. It does not wait for an answer past the
// output (nobody can read it while the request carrying it is refused); size, the off
// switch and the rows it never touches are those of the stage-1 eviction.

namespace {

struct refused_case {
  std::string name;
  std::vector<message> live;
  int64_t min_chars;
  std::vector<int64_t> refused_ids;   // evicted by plan_refused_output_eviction
  std::vector<int64_t> answered_ids;  // by plan_tool_output_eviction, for contrast
};
std::ostream& operator<<(std::ostream& os, const refused_case& c) { return os << c.name; }

std::vector<refused_case> refused_cases() {
  std::vector<refused_case> out;
  out.push_back({"unanswered", exchange(std::string(20000, 'x'), false), 16000, {3}, {}});
  out.push_back({"answered", exchange(std::string(20000, 'x'), true), 16000, {3}, {3}});
  out.push_back({"at_the_limit", exchange(std::string(16000, 'x'), false), 16000, {}, {}});
  out.push_back({"one_over_the_limit", exchange(std::string(16001, 'x'), false), 16000, {3}, {}});
  out.push_back({"switched_off", exchange(std::string(20000, 'x'), false), 0, {}, {}});
  auto unstored = exchange(std::string(20000, 'x'), false);
  unstored[2].id = 0;
  out.push_back({"unstored", unstored, 16000, {}, {}});
  auto replaced = exchange(std::string(20000, 'x'), false);
  replaced[2].is_summary = true;
  out.push_back({"a_replacement", replaced, 16000, {}, {}});
  auto user_after = exchange(std::string(10, 'x'), false);
  user_after.push_back(row(4, msg_role::user, std::string(20000, 'u')));
  out.push_back({"a_large_user_row", user_after, 16000, {}, {}});
  auto two = exchange(std::string(20000, 'a'), true);
  two.push_back(row(5, msg_role::assistant, ""));
  two.back().tool_calls.push_back({"call_2", "grep", "{}"});
  two.push_back(row(6, msg_role::tool, std::string(30000, 'b')));
  two.back().tool_call_id = "call_2";
  out.push_back({"read_and_unread", two, 16000, {3, 6}, {3}});
  return out;
}

std::vector<int64_t> ids_of(const std::vector<row_replacement>& plan) {
  std::vector<int64_t> ids;
  for (const auto& r : plan)
    ids.push_back(r.original_id);
  return ids;
}

} // namespace

BOOST_DATA_TEST_CASE(a_refused_request_evicts_large_outputs_whether_answered_or_not,
                     data::make(refused_cases()), c) {
  const auto plan = plan_refused_output_eviction(c.live, c.min_chars);
  BOOST_TEST(ids_of(plan) == c.refused_ids, boost::test_tools::per_element());
  BOOST_TEST(ids_of(plan_tool_output_eviction(c.live, c.min_chars)) == c.answered_ids,
             boost::test_tools::per_element());
  for (const auto& r : plan) {
    BOOST_TEST(r.original_id == c.live[r.index].id);
    BOOST_TEST(r.content == eviction_marker(c.live[r.index].content.size()));
    BOOST_TEST(r.tokens_reclaimed > 0);
  }
  // Applied, a second plan finds nothing: the retry after it is the last one.
  const auto applied = apply_replacements(c.live, plan);
  if (!plan.empty()) {
    BOOST_TEST_REQUIRE(applied.status == replace_status::applied);
    BOOST_TEST(plan_refused_output_eviction(applied.live, c.min_chars).empty());
  }
}

BOOST_AUTO_TEST_SUITE_END() // eviction_plan_test
