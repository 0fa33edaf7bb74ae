// Tests of what a reset after exhaustion copies into the new session (SPEC §5.3, §5.6,
// issue 25 item 8): the head and the latest summary as before, but never a row that
// cannot fit, nor the tool answers of an assistant row left behind.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/reset_plan.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(reset_plan_test)

using namespace mneme;

namespace {

message reset_row(msg_role role, size_t chars, bool summary = false) {
  message m;
  m.role = role;
  m.content = std::string(chars, 'x');
  m.is_summary = summary;
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

message call_row(const std::string& id, size_t calls = 1) {
  message m;
  m.role = msg_role::assistant;
  for (size_t i = 0; i < calls; ++i)
    m.tool_calls.push_back({i == 0 ? id : id + "_" + std::to_string(i), "f", "{}"});
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

message answer_row(const std::string& id) {
  message m = reset_row(msg_role::tool, 10);
  m.tool_call_id = id;
  return m;
}

using idx = std::vector<std::size_t>;

} // namespace

BOOST_AUTO_TEST_CASE(without_a_limit_the_head_and_the_latest_summary_are_copied) {
  std::vector<message> live{reset_row(msg_role::system, 20),  reset_row(msg_role::user, 40),
                            reset_row(msg_role::assistant, 40), reset_row(msg_role::user, 40),
                            reset_row(msg_role::user, 100, true), reset_row(msg_role::user, 40),
                            reset_row(msg_role::assistant, 100, true), reset_row(msg_role::user, 40)};
  BOOST_TEST((plan_reset_copy(live, 3, 0) == idx{0, 1, 2, 3, 6}));
  BOOST_TEST((plan_reset_copy(live, 0, 0) == idx{0, 6}));
}

BOOST_AUTO_TEST_CASE(the_head_takes_the_tool_answers_that_follow_it) {
  std::vector<message> live{reset_row(msg_role::system, 20), reset_row(msg_role::user, 40),
                            call_row("c1"), answer_row("c1"), reset_row(msg_role::user, 40)};
  BOOST_TEST((plan_reset_copy(live, 2, 0) == idx{0, 1, 2, 3}));
}

BOOST_AUTO_TEST_CASE(a_head_row_that_cannot_fit_stays_behind) {
  std::vector<message> live{reset_row(msg_role::system, 20),
                            reset_row(msg_role::user, 4'000'000), // a 3.9 MB turn
                            reset_row(msg_role::assistant, 40), reset_row(msg_role::user, 40),
                            reset_row(msg_role::user, 100, true)};
  BOOST_TEST((plan_reset_copy(live, 3, 4096) == idx{0, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(the_answers_of_an_assistant_row_left_behind_stay_behind_too) {
  std::vector<message> live{reset_row(msg_role::system, 20), reset_row(msg_role::user, 40),
                            call_row("big", 3000), answer_row("big"), answer_row("big_1"),
                            reset_row(msg_role::user, 40)};
  BOOST_REQUIRE(live[2].token_estimate > 4096);
  BOOST_TEST((plan_reset_copy(live, 2, 4096) == idx{0, 1}));
}

BOOST_AUTO_TEST_CASE(a_summary_that_cannot_fit_is_not_copied) {
  std::vector<message> live{reset_row(msg_role::system, 20), reset_row(msg_role::user, 40),
                            reset_row(msg_role::user, 100, true),
                            reset_row(msg_role::assistant, 40000, true)};
  BOOST_TEST((plan_reset_copy(live, 1, 4096) == idx{0, 1}));
}

BOOST_AUTO_TEST_CASE(an_empty_context_copies_nothing) {
  BOOST_TEST(plan_reset_copy({}, 3, 4096).empty());
}

BOOST_AUTO_TEST_SUITE_END() // reset_plan_test
