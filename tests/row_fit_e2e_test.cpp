// End to end, a single row that cannot fit the window (SPEC §5.6, issue 25 item 8), with
// an 8,192-token model window and compression.max_row_share 0.5: a 3.9 MB user turn, and
// an assistant row with 10,000 tool calls (gateway.max_tool_calls_per_message raised to
// its largest value, 10,000; the default 128 refuses such a row at the door). Each is
// stored in full (nothing deleted, the original archived and searchable) but lives as a
// marker with an excerpt — also when it sits in the protected head — so the turns after
// it are answered in the same session: no exhaustion, no reset, no empty answer.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/runtime.hpp"
#include "policies/oversized_row.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(row_fit_e2e_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

constexpr int64_t fit_window = 8192;

struct row_fit_fixture : keyed_session_fixture {
  row_fit_fixture() { rc.model.context_length = fit_window; }

  int64_t sessions_under(const std::string& k) {
    session_filter f;
    f.session_key = k;
    auto found = call<std::vector<session_record>>(rt->storage(), st_list_atom_v, f);
    BOOST_REQUIRE_MESSAGE(found, err_of(found));
    return static_cast<int64_t>(found->size());
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_3_9_mb_user_turn_is_stored_whole_and_lives_as_a_marker,
                        row_fit_fixture) {
  start();
  std::string huge = "BEGIN of the dump ";
  while (huge.size() < 3'900'000)
    huge += "line of a very long log file that the user pasted whole\n";
  huge += " END of the dump";
  auto r = say(huge); // the first row after the system prompt: in the protected head
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(r->live_tokens <= fit_window);
  const auto sid = r->session_id;
  for (int i = 0; i < 3; ++i) {
    auto next = say("and then question " + std::to_string(i));
    BOOST_REQUIRE_MESSAGE(next, err_of(next));
    BOOST_TEST(!next->answer.empty());
    BOOST_TEST(next->session_id == sid);
    BOOST_TEST(next->notice.empty());
  }
  BOOST_TEST(sessions_under(key) == 1);
  BOOST_TEST(call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->exhausted == 0);
  // Stored whole and archived; the live row is the marker with the head and the tail.
  int originals = 0;
  for (const auto& m : all_rows(sid))
    if (m.content == huge) {
      ++originals;
      BOOST_TEST(!m.active);
      BOOST_TEST(m.compacted);
    }
  BOOST_TEST(originals == 1);
  auto live = stored_live(sid);
  BOOST_REQUIRE(live.size() >= 2u);
  BOOST_TEST(is_oversized_row_marker(live[1].content));
  BOOST_TEST(live[1].content.find("BEGIN of the dump") != std::string::npos);
  BOOST_TEST(live[1].content.find("END of the dump") != std::string::npos);
  BOOST_TEST(rt->metrics()->oversized_rows.load() == 1u);
}

BOOST_FIXTURE_TEST_CASE(an_assistant_row_of_ten_thousand_tool_calls_does_not_loop,
                        row_fit_fixture) {
  // The largest row the append route still takes (issue 30: the default is 128 calls).
  rc.gateway.max_tool_calls_per_message = 10000;
  start();
  turn("hello");
  message calls;
  calls.role = msg_role::assistant;
  for (int i = 0; i < 10000; ++i)
    calls.tool_calls.push_back({"call_" + std::to_string(i), "lookup", R"({"row":1})"});
  auto id = call<int64_t>(rt->gateway(), gw_append_atom_v, key, std::string{"u"}, calls);
  BOOST_REQUIRE_MESSAGE(id, err_of(id));
  const auto sid = session_id();
  for (int i = 0; i < 3; ++i) {
    auto r = say("what did the lookups find? " + std::to_string(i));
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_TEST(!r->answer.empty());
    BOOST_TEST(r->session_id == sid);
    BOOST_TEST(r->live_tokens <= fit_window);
  }
  BOOST_TEST(sessions_under(key) == 1);
  bool stored_whole = false;
  for (const auto& m : all_rows(sid))
    stored_whole = stored_whole || (m.id == *id && m.tool_calls.size() == 10000u);
  BOOST_TEST(stored_whole);
  for (const auto& m : stored_live(sid))
    BOOST_TEST(m.tool_calls.size() < 10000u);
}

BOOST_AUTO_TEST_SUITE_END() // row_fit_e2e_test
