// Tests of the append path's tool-row check end to end (gateway -> session ->
// store): an orphan tool row is refused with bad_request naming its tool_call_id
// and stores nothing; the same row is accepted once its assistant call is live.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "actors/runtime.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(tool_append_test)

using namespace mneme;
using mneme::testing::err_of;

namespace {

struct append_fixture : test::serve_runtime_fixture {
  caf::expected<int64_t> append(message m) {
    return call<int64_t>(rt->gateway(), gw_append_atom_v, std::string{"k"},
                         std::string{"alice"}, std::move(m));
  }
  size_t live_rows() {
    auto rows = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, std::string{"k"});
    BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
    return rows->size();
  }
  static message tool_result(std::string call_id) {
    message m;
    m.role = msg_role::tool;
    m.tool_call_id = std::move(call_id);
    m.tool_name = "lookup";
    m.content = "42";
    return m;
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(an_orphan_tool_row_is_refused_until_its_call_is_live, append_fixture) {
  start();
  message user;
  user.role = msg_role::user;
  user.content = "look it up";
  BOOST_REQUIRE(append(user));
  auto before = live_rows();
  auto orphan = append(tool_result("c1"));
  BOOST_REQUIRE(!orphan);
  BOOST_TEST((orphan.error() == errc::bad_request));
  auto text = render_error(orphan.error());
  BOOST_TEST(text.find("'c1'") != std::string::npos, text);
  BOOST_TEST(live_rows() == before);

  message call_row;
  call_row.role = msg_role::assistant;
  call_row.tool_calls.push_back(tool_call{"c1", "lookup", "{}"});
  BOOST_REQUIRE(append(call_row));
  auto paired = append(tool_result("c1"));
  BOOST_TEST(static_cast<bool>(paired), err_of(paired));
  BOOST_TEST(live_rows() == before + 2);
  BOOST_TEST(!append(tool_result("")));
}

// Issue 30: two answers to one call sent back to back; the second is refused whether
// the first is still being stored (in flight) or already live.
BOOST_FIXTURE_TEST_CASE(of_two_answers_sent_at_once_to_one_call_only_the_first_is_stored,
                        append_fixture) {
  start();
  message call_row;
  call_row.role = msg_role::assistant;
  call_row.tool_calls.push_back(tool_call{"c7", "lookup", "{}"});
  BOOST_REQUIRE(append(call_row));
  auto before = live_rows();
  caf::scoped_actor self{*sys};
  auto first = self->request(rt->gateway(), call_timeout, gw_append_atom_v, std::string{"k"},
                             std::string{"alice"}, tool_result("c7"));
  auto second = self->request(rt->gateway(), call_timeout, gw_append_atom_v,
                              std::string{"k"}, std::string{"alice"}, tool_result("c7"));
  int stored = 0;
  std::string refusal;
  for (auto* h : {&first, &second})
    h->receive([&](int64_t) { ++stored; },
               [&](caf::error& e) { refusal = render_error(e); });
  BOOST_TEST(stored == 1);
  BOOST_TEST(refusal.find("call_already_answered") != std::string::npos, refusal);
  BOOST_TEST(live_rows() == before + 1);
}

BOOST_AUTO_TEST_SUITE_END() // tool_append_test
