// Rollback checkpoints end to end (SPEC §6, §1): the runtime (storage, pools,
// supervisor, gateway, session) against the in-process fake LLM over loopback and a
// real SQLite file. A checkpoint (st_checkpoint_atom), later turns and a compaction,
// then `/rollback NAME` in the channel: every later row rolled back (active = 0,
// compacted = 0), the live context exactly as at the checkpoint (the compaction's
// archived rows revived, its summary rolled back), the session answering from there,
// the rolled-back rows gone from default search and back with include_inactive; an
// unknown name and a checkpoint undone by an earlier rollback are clear errors.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>

#include "actors/runtime.hpp"
#include "policies/token_estimate.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(rollback_e2e_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

struct fixture : keyed_session_fixture {
  fixture() {
    // A small head and tail so that a few turns leave a middle to compact.
    rc.compression.protect_first_n = 1;
    rc.compression.protect_last_n = 2;
    start();
  }
};

std::vector<int64_t> ids_of(const std::vector<message>& rows) {
  std::vector<int64_t> out;
  for (auto& m : rows)
    out.push_back(m.id);
  return out;
}

// id -> state of every row.
std::map<int64_t, row_state> states_of(const std::vector<message>& rows) {
  std::map<int64_t, row_state> out;
  for (auto& m : rows)
    out.emplace(m.id, m.state());
  return out;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(a_rollback_after_turns_and_a_compaction_restores_the_checkpoint,
                        fixture) {
  turn("first question about apples");
  turn("second question about pears");
  auto sid = session_id();
  auto cp = checkpoint(sid, "before-detour");
  auto live_at_cp = stored_live(sid);
  auto states_at_cp = states_of(all_rows(sid));
  BOOST_TEST(cp.last_message_id == live_at_cp.back().id);

  turn("zebradetour one");
  turn("zebradetour two");
  auto compressed = say("/compress");
  BOOST_REQUIRE_MESSAGE(compressed, err_of(compressed));
  BOOST_REQUIRE(compressed->compactions.size() == 1u);
  BOOST_REQUIRE(compressed->compactions[0].committed);
  auto summary_id = compressed->compactions[0].summary_id;
  BOOST_TEST(summary_id > cp.last_message_id);
  // The compaction archived rows from before the checkpoint too.
  int archived_before_mark = 0;
  for (auto& m : all_rows(sid))
    if (m.id <= cp.last_message_id && m.state() == row_state::archived)
      ++archived_before_mark;
  BOOST_TEST(archived_before_mark > 0);
  BOOST_TEST(!search("zebradetour", false).hits.empty()); // findable before the rollback

  auto rolled = say("/rollback before-detour");
  BOOST_REQUIRE_MESSAGE(rolled, err_of(rolled));
  BOOST_TEST(rolled->notice.find("before-detour") != std::string::npos);
  BOOST_TEST(rolled->live_messages == static_cast<int64_t>(live_at_cp.size()));

  // Every row after the checkpoint is rolled back (the summary included); every row
  // up to it is in the state it had at the checkpoint (archived rows revived).
  for (auto& m : all_rows(sid)) {
    if (m.id > cp.last_message_id) {
      BOOST_TEST(!m.active, "row " << m.id);
      BOOST_TEST(!m.compacted, "row " << m.id);
    } else {
      BOOST_TEST((m.state() == states_at_cp.at(m.id)), "row " << m.id);
    }
  }
  BOOST_TEST(ids_of(stored_live(sid)) == ids_of(live_at_cp));
  BOOST_TEST(ids_of(session_live()) == ids_of(live_at_cp)); // the session's memory too

  // Rolled-back rows leave default search and come back on request.
  BOOST_TEST(search("zebradetour", false).hits.empty());
  auto inactive = search("zebradetour", true);
  BOOST_REQUIRE(inactive.hits.size() == 1u);
  BOOST_TEST(inactive.hits[0].kind == recall_hit_kind::rolled_back);
  BOOST_TEST(!search("apples", false).hits.empty()); // rows before the mark stay findable

  // The session continues from the checkpoint.
  turn("third question about plums");
  auto live = session_live();
  BOOST_REQUIRE(live.size() == live_at_cp.size() + 2);
  auto ids = ids_of(live);
  ids.resize(live_at_cp.size());
  BOOST_TEST(ids == ids_of(live_at_cp));
  BOOST_TEST(live[live_at_cp.size()].content == "third question about plums");
}

BOOST_FIXTURE_TEST_CASE(a_rollback_to_an_unknown_name_is_a_clear_error_and_changes_nothing,
                        fixture) {
  turn("hello there");
  auto sid = session_id();
  auto before = states_of(all_rows(sid));
  auto r = say("/rollback no-such-point");
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::not_found);
  BOOST_TEST(render_error(r.error()).find("no-such-point") != std::string::npos);
  BOOST_TEST(states_of(all_rows(sid)) == before);
  turn("still answering"); // the session is unharmed
}

BOOST_FIXTURE_TEST_CASE(a_checkpoint_undone_by_an_earlier_rollback_cannot_be_restored,
                        fixture) {
  turn("base turn");
  auto sid = session_id();
  checkpoint(sid, "early");
  turn("branch turn");
  checkpoint(sid, "late");
  auto r = say("/rollback early");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  auto late = say("/rollback late");
  BOOST_REQUIRE(!late);
  BOOST_TEST(late.error() == errc::bad_request);
  BOOST_TEST(render_error(late.error()).find("undone by the rollback to 'early'")
             != std::string::npos);
  // Re-creating the name makes it usable again.
  turn("new branch turn");
  auto again = checkpoint(sid, "late");
  turn("after the new late");
  auto back = say("/rollback late");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(stored_live(sid).back().id == again.last_message_id);
}

BOOST_FIXTURE_TEST_CASE(a_compaction_made_before_the_checkpoint_survives_the_rollback,
                        fixture) {
  // Long turns: the summary of short ones would not be smaller (the size guard).
  for (auto t : {"one", "two", "three"})
    turn(std::string{"turn "} + t + " " + std::string(2000, 'x'));
  auto compressed = say("/compress");
  BOOST_REQUIRE_MESSAGE(compressed, err_of(compressed));
  BOOST_REQUIRE(compressed->compactions.size() == 1u);
  auto summary_id = compressed->compactions[0].summary_id;
  auto sid = session_id();
  checkpoint(sid, "after-summary");
  auto live_at_cp = stored_live(sid);
  turn("later turn");
  BOOST_REQUIRE(say("/rollback after-summary"));
  auto live = stored_live(sid);
  BOOST_TEST(ids_of(live) == ids_of(live_at_cp));
  bool summary_live = false;
  for (auto& m : live)
    summary_live = summary_live || (m.id == summary_id && m.is_summary);
  BOOST_TEST(summary_live);
}

BOOST_AUTO_TEST_SUITE_END() // rollback_e2e_test
