// Tests of the Conversations API's items (policies/conversation_items.hpp): the ids of a
// row's items and their parsing (a response's own output ids name no row), OpenAI's
// cursor pages in both orders, the input rows of a response, and the deletion plan of an
// item: what it rolls back, what it appends again, and each refusal.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/conversation_items.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(conversation_items_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

message ci_row(int64_t id, msg_role role, std::string content = "text") {
  message m;
  m.id = id;
  m.role = role;
  m.content = std::move(content);
  return m;
}

message ci_calls(int64_t id, std::vector<std::string> call_ids, std::string content = "") {
  auto m = ci_row(id, msg_role::assistant, std::move(content));
  for (auto& cid : call_ids)
    m.tool_calls.push_back({cid, "get_weather", "{}"});
  return m;
}

message ci_output(int64_t id, std::string call_id) {
  auto m = ci_row(id, msg_role::tool, "sunny");
  m.tool_call_id = std::move(call_id);
  return m;
}

struct id_case {
  const char* id;
  bool parses;
  int64_t row;
  conversation_item_kind kind;
  size_t index;
};

std::ostream& operator<<(std::ostream& os, const id_case& c) { return os << c.id; }

const id_case id_cases[] = {
  {"msg_42", true, 42, conversation_item_kind::message, 0},
  {"fc_42_0", true, 42, conversation_item_kind::function_call, 0},
  {"fc_42_3", true, 42, conversation_item_kind::function_call, 3},
  {"fco_7", true, 7, conversation_item_kind::function_call_output, 0},
  // a response's output ids: 32 hex digits name no row
  {"msg_0123456789abcdef0123456789abcdef", false, 0, conversation_item_kind::message, 0},
  {"fc_0123456789abcdef0123456789abcdef_0", false, 0, conversation_item_kind::message, 0},
  {"msg_", false, 0, conversation_item_kind::message, 0},
  {"msg_007", false, 0, conversation_item_kind::message, 0},
  {"msg_-1", false, 0, conversation_item_kind::message, 0},
  {"fc_42", false, 0, conversation_item_kind::message, 0},
  {"fc_42_01", false, 0, conversation_item_kind::message, 0},
  {"msg_1234567890123456789", false, 0, conversation_item_kind::message, 0}, // > 18 digits
  {"item_42", false, 0, conversation_item_kind::message, 0},
};

std::vector<std::string> ids_of(const std::vector<conversation_item_ref>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs)
    out.push_back(conversation_item_id(r));
  return out;
}

std::vector<int64_t> row_ids(const std::vector<message>& rows) {
  std::vector<int64_t> out;
  for (const auto& m : rows)
    out.push_back(m.id);
  return out;
}

} // namespace

BOOST_DATA_TEST_CASE(an_item_id_names_its_row_and_nothing_else_parses, data::make(id_cases), c) {
  auto ref = parse_conversation_item_id(c.id);
  BOOST_TEST(ref.has_value() == c.parses);
  if (!ref || !c.parses)
    return;
  BOOST_TEST(ref->row_id == c.row);
  BOOST_TEST(static_cast<int>(ref->kind) == static_cast<int>(c.kind));
  BOOST_TEST(ref->call_index == c.index);
  BOOST_TEST(conversation_item_id(*ref) == c.id); // the round trip
}

BOOST_AUTO_TEST_CASE(a_row_gives_its_message_then_its_calls_and_a_tool_row_its_output) {
  BOOST_TEST(ids_of(conversation_items_of(ci_row(3, msg_role::user))) ==
             std::vector<std::string>{"msg_3"});
  BOOST_TEST(ids_of(conversation_items_of(ci_calls(4, {"a", "b"}, "let me look"))) ==
             (std::vector<std::string>{"msg_4", "fc_4_0", "fc_4_1"}));
  BOOST_TEST(ids_of(conversation_items_of(ci_calls(5, {"a"}))) ==
             std::vector<std::string>{"fc_5_0"}); // calls alone: no message item
  BOOST_TEST(ids_of(conversation_items_of(ci_output(6, "a"))) ==
             std::vector<std::string>{"fco_6"});
  BOOST_TEST(ids_of(conversation_items_of(ci_row(7, msg_role::assistant, ""))) ==
             std::vector<std::string>{"msg_7"}); // an empty answer is still one
}

BOOST_AUTO_TEST_CASE(pages_follow_the_cursor_in_both_orders) {
  std::vector<std::string> ids{"a", "b", "c", "d", "e"};
  auto page = page_of_items(ids, {"", 2, false}); // desc: newest first
  BOOST_TEST(page.indexes == (std::vector<size_t>{4, 3}));
  BOOST_TEST(page.has_more);
  page = page_of_items(ids, {"d", 2, false});
  BOOST_TEST(page.indexes == (std::vector<size_t>{2, 1}));
  BOOST_TEST(page.has_more);
  page = page_of_items(ids, {"b", 2, false});
  BOOST_TEST(page.indexes == std::vector<size_t>{0});
  BOOST_TEST(!page.has_more);
  page = page_of_items(ids, {"", 20, true});
  BOOST_TEST(page.indexes == (std::vector<size_t>{0, 1, 2, 3, 4}));
  BOOST_TEST(!page.has_more);
  page = page_of_items(ids, {"c", 1, true});
  BOOST_TEST(page.indexes == std::vector<size_t>{3});
  BOOST_TEST(page.has_more);
  page = page_of_items(ids, {"e", 5, true});
  BOOST_TEST(page.indexes.empty());
  BOOST_TEST(!page.has_more);
  page = page_of_items(ids, {"zz", 5, true});
  BOOST_TEST(!page.after_found);
  BOOST_TEST(page_of_items({}, {"", 20, false}).indexes.empty());
}

BOOST_AUTO_TEST_CASE(the_input_of_a_response_starts_after_the_answer_it_continued) {
  std::vector<message> before{ci_row(1, msg_role::system), ci_row(2, msg_role::user),
                              ci_calls(3, {"c1"}), ci_output(4, "c1"), ci_row(5, msg_role::user)};
  // a chain: after the previous response's answer
  BOOST_TEST(row_ids(response_input_rows(before, 3, false)) == (std::vector<int64_t>{4, 5}));
  BOOST_TEST(row_ids(response_input_rows(before, 2, true)) == (std::vector<int64_t>{3, 4, 5}));
  // a conversation: after its last assistant row
  BOOST_TEST(row_ids(response_input_rows(before, 0, true)) == (std::vector<int64_t>{4, 5}));
  // a whole transcript: all of it
  BOOST_TEST(row_ids(response_input_rows(before, 0, false)) ==
             (std::vector<int64_t>{1, 2, 3, 4, 5}));
  // a first message of a conversation: nothing answered before it
  std::vector<message> first{ci_row(9, msg_role::user)};
  BOOST_TEST(row_ids(response_input_rows(first, 0, true)) == std::vector<int64_t>{9});
}

BOOST_AUTO_TEST_CASE(deleting_an_item_rolls_back_from_its_row_and_appends_the_rest_again) {
  auto rolled = ci_row(13, msg_role::user);
  rolled.active = false; // rolled back earlier: not appended again
  std::vector<message> from{ci_row(11, msg_role::user), ci_row(12, msg_role::assistant), rolled,
                            ci_row(14, msg_role::user)};
  auto plan = plan_item_deletion(from);
  BOOST_TEST(plan.refusal.empty());
  BOOST_TEST(plan.rollback_mark == 10);
  BOOST_REQUIRE(plan.reappend.size() == 2u);
  BOOST_TEST(plan.reappend[0].id == 0); // new rows
  BOOST_TEST(plan.reappend[0].content == from[1].content);
  BOOST_TEST((plan.reappend[0].role == msg_role::assistant));
  BOOST_TEST((plan.reappend[1].role == msg_role::user));
  // the last item: a rollback alone
  auto last = plan_item_deletion({ci_row(20, msg_role::assistant)});
  BOOST_TEST(last.refusal.empty());
  BOOST_TEST(last.rollback_mark == 19);
  BOOST_TEST(last.reappend.empty());
  // calls whose outputs are not stored yet go with their row
  auto pending = plan_item_deletion({ci_calls(30, {"c"})});
  BOOST_TEST(pending.refusal.empty());
  // trailing outputs of one call round: the others stay
  auto output = plan_item_deletion({ci_output(40, "a"), ci_output(41, "b")});
  BOOST_TEST(output.refusal.empty());
  BOOST_TEST(output.reappend.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_deletion_that_would_break_a_compaction_or_a_call_is_refused) {
  auto archived = ci_row(1, msg_role::user);
  archived.active = false;
  archived.compacted = true;
  BOOST_TEST(!plan_item_deletion({archived}).refusal.empty());
  auto summary = ci_row(3, msg_role::user, "[summary]");
  summary.is_summary = true;
  BOOST_TEST(plan_item_deletion({ci_row(2, msg_role::user), summary}).refusal.find("compaction")
             != std::string::npos);
  // a call whose output follows it
  auto answered = plan_item_deletion({ci_calls(5, {"c5"}), ci_output(6, "c5")});
  BOOST_TEST(answered.refusal.find("c5") != std::string::npos);
  BOOST_TEST(answered.reappend.empty());
  // an output followed by more of the conversation
  auto mid = plan_item_deletion({ci_output(7, "c"), ci_row(8, msg_role::assistant)});
  BOOST_TEST(!mid.refusal.empty());
  BOOST_TEST(mid.reappend.empty());
  // a rolled-back row or a summary is no item
  auto gone = ci_row(9, msg_role::user);
  gone.active = false;
  BOOST_TEST(!plan_item_deletion({gone}).refusal.empty());
  BOOST_TEST(!plan_item_deletion({}).refusal.empty());
}

BOOST_AUTO_TEST_SUITE_END()
