// Tests of the tool-row pairing check at append time (SPEC §3): a tool row is
// accepted only when a live assistant row holds its call; every other role passes.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/tool_pairing.hpp"

BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::tool_row_verdict)

BOOST_AUTO_TEST_SUITE(tool_pairing_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

message row(msg_role role, std::string call_id = {}) {
  message m;
  m.role = role;
  m.content = "x";
  m.tool_call_id = std::move(call_id);
  return m;
}

message assistant_calling(std::vector<std::string> ids, bool active = true) {
  message m;
  m.role = msg_role::assistant;
  for (auto& id : ids)
    m.tool_calls.push_back(tool_call{id, "grep", "{}"});
  m.active = active;
  m.compacted = !active;
  return m;
}

struct pairing_case {
  const char* what;
  std::vector<message> live;
  message appended;
  tool_row_verdict expected;
};
std::ostream& operator<<(std::ostream& os, const pairing_case& c) { return os << c.what; }

const std::vector<pairing_case> cases{
  {"a user row needs no call", {}, row(msg_role::user), tool_row_verdict::ok},
  {"an assistant row needs no call", {}, row(msg_role::assistant), tool_row_verdict::ok},
  {"a system row needs no call", {}, row(msg_role::system), tool_row_verdict::ok},
  {"a tool row answering a live call", {assistant_calling({"c1"})}, row(msg_role::tool, "c1"),
   tool_row_verdict::ok},
  {"a tool row answering the second call of a row", {assistant_calling({"c1", "c2"})},
   row(msg_role::tool, "c2"), tool_row_verdict::ok},
  {"a tool row answering an older live call",
   {assistant_calling({"c1"}), row(msg_role::user), assistant_calling({"c9"})},
   row(msg_role::tool, "c1"), tool_row_verdict::ok},
  {"a tool row without a call id", {assistant_calling({"c1"})}, row(msg_role::tool),
   tool_row_verdict::missing_call_id},
  {"a tool row in an empty context", {}, row(msg_role::tool, "c1"),
   tool_row_verdict::unknown_call_id},
  {"a tool row whose call id nobody made", {assistant_calling({"c1"})},
   row(msg_role::tool, "c2"), tool_row_verdict::unknown_call_id},
  {"a tool row whose call was archived", {assistant_calling({"c1"}, false)},
   row(msg_role::tool, "c1"), tool_row_verdict::unknown_call_id},
  {"a tool row naming the id of another tool row", {row(msg_role::tool, "c1")},
   row(msg_role::tool, "c1"), tool_row_verdict::unknown_call_id},
  {"a call id differing in case", {assistant_calling({"Call_1"})},
   row(msg_role::tool, "call_1"), tool_row_verdict::unknown_call_id},
};

} // namespace

BOOST_DATA_TEST_CASE(a_tool_row_is_accepted_only_when_a_live_assistant_row_holds_its_call,
                     data::make(cases), c) {
  BOOST_TEST((check_tool_row(c.live, c.appended) == c.expected), c.what);
}

BOOST_AUTO_TEST_CASE(a_refusal_names_the_tool_call_id_and_what_to_do) {
  auto text = describe_tool_row_refusal(tool_row_verdict::unknown_call_id,
                                        row(msg_role::tool, "call_42"));
  BOOST_TEST(text.find("'call_42'") != std::string::npos, text);
  BOOST_TEST(text.find("append the assistant row") != std::string::npos, text);
  BOOST_TEST(describe_tool_row_refusal(tool_row_verdict::missing_call_id,
                                       row(msg_role::tool))
               .find("tool_call_id") != std::string::npos);
  BOOST_TEST(describe_tool_row_refusal(tool_row_verdict::ok, row(msg_role::user)).empty());
}

BOOST_AUTO_TEST_SUITE_END() // tool_pairing_test
