// compression.in_place through the whole runtime (SPEC §3): a turn crossing the
// threshold compacts in place (same session) or ends the session and continues in a
// child (same key, parent link, head + summary + tail), the next turn and a restarted
// daemon go to the child, the parent's export keeps every row; rows appended while
// the summary is in flight reach the child; /compress answers with the child's id;
// exhaustion after a switch resets the child.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

#include "actors/runtime.hpp"
#include "policies/token_estimate.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(child_session_runtime_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;

namespace {

constexpr int seeded_rows = 60;          // after the system prompt
constexpr int64_t row_tokens = 100;      // estimate of each seeded row
constexpr int64_t threshold = 5000;      // compression.threshold_tokens: 60 x 100 crosses it

// A text whose message estimate is exactly `tokens`.
std::string text_of(int64_t tokens) {
  return std::string(static_cast<size_t>((tokens - message_overhead_tokens) * 4), 'a');
}

struct child_fixture : serve_runtime_fixture {
  explicit child_fixture(bool in_place = false) {
    rc.compression.in_place = in_place;
    rc.compression.threshold_tokens = threshold;
  }

  // A stored session under `key`: system prompt + seeded_rows rows, row i starting "i ".
  std::string seed(const std::string& key) {
    return serve_runtime_fixture::seed(
      key, seeded_rows, [](int i) { return std::to_string(i) + " " + text_of(row_tokens - 2); });
  }

  session_record record(const std::string& sid) {
    auto r = call<session_record>(rt->storage(), st_session_atom_v, sid);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }

  // The leading number of every non-summary, non-system row of `rows`.
  static std::set<std::string> prefixes(const std::vector<message>& rows) {
    std::set<std::string> out;
    for (const auto& m : rows)
      if (m.role != msg_role::system && !m.is_summary)
        out.insert(m.content.substr(0, m.content.find(' ')));
    return out;
  }
};

// Seeded rows in the tail a pre-call compaction keeps beside the question: the last 20
// rows (protect_last_n) would start at the assistant row seeded_rows - 19, and a tail
// starts at a user row, so it begins one later.
constexpr int tail_seeded_rows = 18;

// The live context a compaction of a seeded session leaves before the answer: system +
// head 3 + summary + tail (18 seeded rows, then `question`).
void check_compacted_shape(const std::vector<message>& rows, const std::string& question) {
  BOOST_REQUIRE_GE(rows.size(), 1u + 3u + 1u + tail_seeded_rows + 1u);
  BOOST_TEST(rows[0].role == msg_role::system);
  BOOST_TEST(rows[1].content.rfind("0 ", 0) == 0u);
  BOOST_TEST(rows[3].content.rfind("2 ", 0) == 0u);
  BOOST_TEST(rows[4].is_summary);
  BOOST_TEST(rows[5].role == msg_role::user);
  BOOST_TEST(rows[5].content.rfind(std::to_string(seeded_rows - tail_seeded_rows) + " ", 0)
             == 0u);
  BOOST_TEST(rows[5 + tail_seeded_rows].content == question);
}

} // namespace

BOOST_AUTO_TEST_SUITE(child_session_runtime)

BOOST_DATA_TEST_CASE(a_turn_over_the_threshold_compacts_in_place_or_continues_in_a_child,
                     data::make({true, false}), in_place) {
  child_fixture f{in_place};
  f.start();
  auto sid = f.seed("grow");
  const std::string question = "what did we decide?";
  auto r = f.say_to("grow", question);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE_EQUAL(r->compactions.size(), 1u);
  BOOST_TEST(r->compactions[0].committed);
  BOOST_TEST(r->compactions[0].by == trigger::t1_pre_call);
  BOOST_TEST(!r->answer.empty());

  // Which session answered: the same one in place, else a child under the same key.
  BOOST_TEST((r->session_id == sid) == in_place);
  auto answered = f.record(r->session_id);
  auto parent = f.record(sid);
  if (in_place) {
    BOOST_TEST(parent.ended_at_ms == 0);
  } else {
    BOOST_TEST(answered.parent_id == sid);
    BOOST_TEST(answered.session_key == "grow");
    BOOST_TEST(answered.user_id == "u");
    BOOST_TEST(answered.model == parent.model);
    BOOST_TEST(answered.ended_at_ms == 0);
    BOOST_TEST(parent.ended_at_ms > 0);
    BOOST_TEST(parent.end_reason == "continued_in_child");
    BOOST_TEST(answered.triggers.compaction_count == 1); // the state the compaction left
  }
  BOOST_TEST(f.snapshot("grow").record.id == r->session_id);

  // The same live context either way: head + summary + tail + the answer.
  auto live = f.stored_live(r->session_id);
  check_compacted_shape(live, question);
  BOOST_REQUIRE_EQUAL(live.size(), 1u + 3u + 1u + tail_seeded_rows + 1u + 1u);
  BOOST_TEST(live.back().content == r->answer);
  BOOST_TEST(r->compactions[0].summary_id == live[4].id);
  for (const auto& m : live)
    BOOST_TEST(m.session_id == r->session_id);

  // The parent's rows are all there: every seeded row and the question, archived
  // middle included; its export lists each of them.
  auto parent_rows = f.all_rows(sid);
  auto kept = child_fixture::prefixes(parent_rows);
  for (int i = 0; i < seeded_rows; ++i)
    BOOST_TEST_REQUIRE(kept.count(std::to_string(i)) == 1u);
  BOOST_TEST(std::count_if(parent_rows.begin(), parent_rows.end(), [&](const message& m) {
               return m.content == question;
             }) == 1);
  auto exported = f.call<std::string>(f.rt->storage(), st_export_atom_v, sid);
  BOOST_REQUIRE_MESSAGE(exported, err_of(exported));
  BOOST_TEST(std::count(exported->begin(), exported->end(), '\n')
             == static_cast<std::ptrdiff_t>(parent_rows.size()));
  auto archived = std::count_if(parent_rows.begin(), parent_rows.end(), [](const message& m) {
    return m.state() == row_state::archived;
  });
  BOOST_TEST(archived == seeded_rows - 3 - tail_seeded_rows);

  // The next turn goes to the session that answered.
  auto next = f.say_to("grow", "and the next step?");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == r->session_id);
  BOOST_TEST(f.stored_live(r->session_id).size() == live.size() + 2);

  // So does a restarted daemon (the gateway finds the newest open session by key).
  f.restart();
  auto after = f.say_to("grow", "still there?");
  BOOST_REQUIRE_MESSAGE(after, err_of(after));
  BOOST_TEST(after->session_id == r->session_id);
  auto rehydrated = f.snapshot("grow");
  BOOST_TEST(rehydrated.record.id == r->session_id);
  BOOST_TEST(rehydrated.live_messages == static_cast<int64_t>(live.size()) + 4);
}

BOOST_FIXTURE_TEST_CASE(rows_appended_while_the_summary_is_in_flight_reach_the_child,
                        child_fixture) {
  start();
  auto sid = seed("busy");
  fakellm::fault_rule slow = rule(fakellm::fault_kind::latency, fakellm::purpose_filter::summary);
  slow.latency_ms = 1500;
  faults({slow});
  caf::scoped_actor self{*sys};
  auto pending = self->request(rt->gateway(), call_timeout, gw_message_atom_v,
                               std::string{"busy"}, std::string{"u"}, std::string{"go on"});
  bool saw_in_flight = false;
  for (int i = 0; i < 400 && !saw_in_flight; ++i) {
    auto s = call<session_snapshot>(rt->gateway(), gw_state_atom_v, std::string{"busy"});
    saw_in_flight = s && s->compaction_in_flight;
    if (!saw_in_flight)
      std::this_thread::sleep_for(5ms);
  }
  BOOST_REQUIRE(saw_in_flight);
  message side;
  side.role = msg_role::user;
  side.content = "side note during the summary";
  auto side_id = call<int64_t>(rt->gateway(), gw_append_atom_v, std::string{"busy"},
                               std::string{"u"}, side);
  BOOST_REQUIRE_MESSAGE(side_id, err_of(side_id));
  caf::expected<turn_reply> r{caf::error{}};
  pending.receive([&](turn_reply& x) { r = std::move(x); },
                  [&](caf::error& e) { r = std::move(e); });
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->session_id != sid);
  // The side note went to the parent while it was open, and the child holds it once,
  // after the tail.
  auto parent_rows = all_rows(sid);
  BOOST_TEST(std::any_of(parent_rows.begin(), parent_rows.end(),
                         [&](const message& m) { return m.id == *side_id; }));
  auto live = stored_live(r->session_id);
  auto copies = std::count_if(live.begin(), live.end(),
                              [&](const message& m) { return m.content == side.content; });
  BOOST_TEST(copies == 1);
  auto in_memory = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, std::string{"busy"});
  BOOST_REQUIRE(in_memory);
  BOOST_TEST(in_memory->size() == live.size()); // the actor holds what the store holds
  for (size_t i = 0; i < std::min(live.size(), in_memory->size()); ++i)
    BOOST_TEST((*in_memory)[i].id == live[i].id);
}

BOOST_FIXTURE_TEST_CASE(a_compress_command_answers_with_the_child_session, child_fixture) {
  start();
  auto sid = seed("cmd");
  auto r = say_to("cmd", "/compress keep the numbers");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE_EQUAL(r->compactions.size(), 1u);
  BOOST_TEST(r->compactions[0].by == trigger::t14_channel_command);
  BOOST_TEST(r->session_id != sid);
  BOOST_TEST(record(r->session_id).parent_id == sid);
  BOOST_TEST(snapshot("cmd").record.id == r->session_id);
  auto live = stored_live(r->session_id);
  BOOST_REQUIRE_EQUAL(live.size(), 1u + 3u + 1u + 20u);
  BOOST_TEST(live[4].is_summary);
}

BOOST_FIXTURE_TEST_CASE(exhaustion_after_continuing_in_children_resets_the_latest_child,
                        child_fixture) {
  rc.gateway.replay_after_reset = false; // one exhaustion, the reset's reply as an error
  start();
  auto sid = seed("spent");
  faults({rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat)});
  auto r = exhausted_turn("spent", "one more");
  BOOST_TEST(r.notice.find("please send it again") != std::string::npos);
  // Walk the chain back from the fresh session: the reset ended the last child, each
  // child before it ended by continuing, down to the seeded session.
  auto fresh = record(r.session_id);
  BOOST_REQUIRE(!fresh.parent_id.empty());
  auto exhausted = record(fresh.parent_id);
  BOOST_TEST(exhausted.end_reason == "compaction_exhausted");
  BOOST_TEST(exhausted.id != sid); // the turn had continued in a child before it ran out
  int children = 0;
  auto at = exhausted;
  while (at.id != sid && children < 10) {
    BOOST_REQUIRE(!at.parent_id.empty());
    at = record(at.parent_id);
    BOOST_TEST(at.end_reason == "continued_in_child");
    ++children;
  }
  BOOST_TEST(at.id == sid);
  BOOST_TEST(children >= 1);
  BOOST_TEST(call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->exhausted == 1);
  llm.clear_faults();
  auto next = say_to("spent", "fresh start");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == r.session_id);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // child_session_runtime_test
