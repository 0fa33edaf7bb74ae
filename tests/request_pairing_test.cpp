// Tests of the tool-pairing repair of chat requests (SPEC §3): unanswered calls get
// a stub answer right after their assistant's tool rows, tool rows without an
// earlier call (or answering a call twice) are left out, everything else is sent
// as stored, in order.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "policies/request_pairing.hpp"

BOOST_AUTO_TEST_SUITE(request_pairing_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

// A transcript in a short notation, one token per row:
//   u = user, a = assistant without calls, a:c1,c2 = assistant calling c1 and c2,
//   t:c1 = tool row answering c1 (in output: s:c1 = the stub answer to c1).
std::vector<message> parse(const std::string& spec) {
  std::vector<message> out;
  std::istringstream in(spec);
  std::string tok;
  int64_t id = 0;
  while (in >> tok) {
    message m;
    m.id = ++id;
    m.content = "row " + std::to_string(id);
    auto colon = tok.find(':');
    auto kind = tok.substr(0, colon);
    auto rest = colon == std::string::npos ? std::string{} : tok.substr(colon + 1);
    if (kind == "u") {
      m.role = msg_role::user;
    } else if (kind == "a") {
      m.role = msg_role::assistant;
      std::istringstream ids(rest);
      for (std::string c; std::getline(ids, c, ',');)
        m.tool_calls.push_back(tool_call{c, "grep", "{}"});
    } else {
      m.role = msg_role::tool;
      m.tool_call_id = rest;
      m.tool_name = "grep";
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string render(const std::vector<message>& rows) {
  std::string out;
  for (const auto& m : rows) {
    if (!out.empty())
      out += ' ';
    switch (m.role) {
      case msg_role::user: out += "u"; break;
      case msg_role::assistant: {
        out += "a";
        for (size_t i = 0; i < m.tool_calls.size(); ++i)
          out += (i == 0 ? ":" : ",") + m.tool_calls[i].id;
        break;
      }
      case msg_role::tool:
        out += (m.content == unanswered_call_stub ? "s:" : "t:") + m.tool_call_id;
        break;
      default: out += "?"; break;
    }
  }
  return out;
}

struct repair_case {
  const char* what;
  const char* in;
  const char* out;
  int64_t dropped;
  int64_t stubbed;
};

std::ostream& operator<<(std::ostream& os, const repair_case& c) {
  return os << c.what;
}

const repair_case cases[] = {
  {"a paired transcript is sent as stored", "u a:c1 t:c1 a u", "u a:c1 t:c1 a u", 0, 0},
  {"an unanswered last call gets a stub", "u a:c1", "u a:c1 s:c1", 0, 1},
  {"a crashed tool call followed by a new turn gets its stub before the user row",
   "u a:c1 u", "u a:c1 s:c1 u", 0, 1},
  {"the unanswered one of two calls is stubbed after the answered one",
   "u a:c1,c2 t:c1 u", "u a:c1,c2 t:c1 s:c2 u", 0, 1},
  {"stubs follow the order of the calls", "u a:c1,c2,c3 t:c2 u",
   "u a:c1,c2,c3 t:c2 s:c1 s:c3 u", 0, 2},
  {"a tool row whose call is gone is left out", "u t:gone a u", "u a u", 1, 0},
  {"a second answer to the same call is left out", "u a:c1 t:c1 t:c1 u", "u a:c1 t:c1 u", 1, 0},
  {"a tool row before its call is left out and the call is stubbed", "t:c1 u a:c1 u",
   "u a:c1 s:c1 u", 1, 1},
  {"a late answer behind a new user row is left out and its call is stubbed", "u a:c1 u t:c1",
   "u a:c1 s:c1 u", 1, 1},
  {"a call id reused by a later turn pairs with its own answer", "u a:c1 t:c1 u a:c1 t:c1",
   "u a:c1 t:c1 u a:c1 t:c1", 0, 0},
  {"a reused call id left unanswered is stubbed", "u a:c1 t:c1 u a:c1 u",
   "u a:c1 t:c1 u a:c1 s:c1 u", 0, 1},
  {"a tool row after an assistant without calls is left out", "u a t:c1 u", "u a u", 1, 0},
  {"an empty transcript stays empty", "", "", 0, 0},
};

} // namespace

BOOST_DATA_TEST_CASE(requests_are_repaired_to_valid_tool_pairing, data::make(cases), c) {
  pairing_repair what;
  auto out = repair_tool_pairing(parse(c.in), &what);
  BOOST_TEST(render(out) == c.out);
  BOOST_TEST(what.dropped_results == c.dropped);
  BOOST_TEST(what.stubbed_calls == c.stubbed);
  BOOST_TEST(what.changed() == (c.dropped + c.stubbed > 0));
}

BOOST_AUTO_TEST_CASE(a_stub_names_the_call_and_is_not_a_stored_row) {
  auto rows = parse("u a:call_7");
  rows[1].tool_calls[0].name = "read_file";
  rows[1].session_id = "s-1";
  auto out = repair_tool_pairing(rows);
  BOOST_REQUIRE_EQUAL(out.size(), 3u);
  BOOST_TEST(out[2].id == 0);
  BOOST_TEST((out[2].role == msg_role::tool));
  BOOST_TEST(out[2].tool_call_id == "call_7");
  BOOST_TEST(out[2].tool_name == "read_file");
  BOOST_TEST(out[2].session_id == "s-1");
  BOOST_TEST(out[2].content == std::string{unanswered_call_stub});
  // The rows that were kept are the stored rows themselves (ids and text unchanged).
  BOOST_TEST(out[0].id == 1);
  BOOST_TEST(out[1].id == 2);
  BOOST_TEST(out[1].content == "row 2");
}

BOOST_AUTO_TEST_SUITE_END() // request_pairing_test
