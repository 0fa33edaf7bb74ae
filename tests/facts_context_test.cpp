// Tests of the facts context row (policies/facts_context.hpp): the exact text the
// model sees, one line per fact, the caps on facts and value length, the empty
// case, the role and the token estimate.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/facts_context.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"

BOOST_AUTO_TEST_SUITE(facts_context_test)

using namespace mneme;
namespace data = boost::unit_test::data;

BOOST_AUTO_TEST_CASE(the_facts_become_one_system_row_with_one_line_each) {
  auto m = facts_context_message({{"editor", "vim"}, {"city", "住在\n上海"}}, "s1", 1234);
  BOOST_TEST(m.content
             == "[MEMORY: facts about the user, loaded on request]\n"
                "- editor: vim\n"
                "- city: 住在 上海\n"
                "[END OF MEMORY]");
  BOOST_TEST((m.role == msg_role::system));
  BOOST_TEST(m.session_id == "s1");
  BOOST_TEST(m.timestamp_ms == 1234);
  BOOST_TEST(m.id == 0);
  BOOST_TEST(!m.is_summary);
  BOOST_TEST(m.token_estimate == estimate_message_tokens(m));
  BOOST_TEST(is_facts_context(m.content));
  BOOST_TEST(!is_facts_context("- editor: vim"));
}

BOOST_AUTO_TEST_CASE(no_facts_says_so) {
  auto m = facts_context_message({}, "s1", 1);
  BOOST_TEST(m.content.find("- (no facts remembered)\n") != std::string::npos);
}

BOOST_DATA_TEST_CASE(at_most_one_hundred_facts_are_listed_then_a_count_of_the_rest,
                     data::make({std::size_t{99}, std::size_t{100}, std::size_t{101},
                                 std::size_t{250}}),
                     n) {
  BOOST_TEST(facts_context_max_facts == 100u);
  std::vector<remembered_fact> facts;
  for (std::size_t i = 0; i < n; ++i)
    facts.push_back({"k" + std::to_string(i), "v"});
  auto text = facts_context_message(facts, "s", 1).content;
  std::size_t lines = 0;
  for (auto at = text.find("\n- k"); at != std::string::npos; at = text.find("\n- k", at + 1))
    ++lines;
  BOOST_TEST(lines == std::min<std::size_t>(n, 100));
  auto more = "- (" + std::to_string(n - std::min<std::size_t>(n, 100)) + " more not shown)";
  BOOST_TEST((text.find(more) != std::string::npos) == (n > 100));
}

BOOST_AUTO_TEST_CASE(a_long_value_is_cut_to_five_hundred_characters) {
  BOOST_TEST(facts_context_value_chars == 500u);
  auto m = facts_context_message({{"k", std::string(600, 'x')}}, "s", 1);
  auto from = m.content.find("- k: ") + 5;
  auto line = m.content.substr(from, m.content.find('\n', from) - from);
  BOOST_TEST(count_code_points(line) == 500u);
  BOOST_TEST(line.substr(line.size() - 3) == "…");
}

BOOST_AUTO_TEST_SUITE_END() // facts_context_test
