// Tests of rollback to a checkpoint (SPEC §6, seed 004 stage 3): later rows
// are rolled back, rows a later compaction archived come back live, the
// restored live context is the checkpoint's, bad checkpoints are refused, and
// a simulated session of random appends, compactions, checkpoints and
// rollbacks always lands on the checkpoint's live context.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "policies/rollback_plan.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(rollback_plan_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

message row(int64_t id, bool active = true, bool compacted = false) {
  message m;
  m.id = id;
  m.role = id % 2 ? msg_role::user : msg_role::assistant;
  m.content = "row " + std::to_string(id);
  m.active = active;
  m.compacted = compacted;
  return m;
}

std::vector<message> rows(std::initializer_list<int64_t> ids) {
  std::vector<message> out;
  for (int64_t id : ids) out.push_back(row(id));
  return out;
}

std::vector<int64_t> ids_of(const std::vector<message>& live) {
  std::vector<int64_t> out;
  for (const auto& m : live) out.push_back(m.id);
  return out;
}

using ids = std::vector<int64_t>;

} // namespace

BOOST_AUTO_TEST_CASE(rows_after_the_checkpoint_are_rolled_back_and_the_rest_stays) {
  const rollback_checkpoint cp{"clean", 5, {1, 2, 3, 4, 5}};
  const auto live = rows({1, 2, 3, 4, 5, 6, 7, 8});
  const auto plan = plan_rollback(live, cp);
  BOOST_TEST(plan.outcome == rollback_outcome::rollback);
  BOOST_TEST(plan.roll_back_after_id == 5);
  BOOST_TEST(plan.rolled_back_live_ids == (ids{6, 7, 8}));
  BOOST_TEST(plan.revived_ids.empty());
  BOOST_TEST(plan.re_archived_ids.empty());
  const auto restored = restore_live_context(plan, live, {});
  BOOST_TEST_REQUIRE(restored.has_value());
  BOOST_TEST(ids_of(*restored) == (ids{1, 2, 3, 4, 5}));
}

BOOST_AUTO_TEST_CASE(a_checkpoint_before_a_later_compaction_brings_the_originals_back_live) {
  // At the checkpoint rows 1..10 were live. Then 11..14 arrived and a
  // compaction archived 4..9 under summary 15.
  const rollback_checkpoint cp{"before", 10, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}};
  auto live = rows({1, 2, 3, 15, 10, 11, 12, 13, 14});
  live[3].is_summary = true;
  const auto plan = plan_rollback(live, cp);
  BOOST_TEST(plan.outcome == rollback_outcome::rollback);
  BOOST_TEST(plan.rolled_back_live_ids == (ids{15, 11, 12, 13, 14}));
  BOOST_TEST(plan.revived_ids == (ids{4, 5, 6, 7, 8, 9}));
  std::vector<message> archived;
  for (int64_t id = 9; id >= 4; --id) archived.push_back(row(id, false, true));
  const auto restored = restore_live_context(plan, live, archived);
  BOOST_TEST_REQUIRE(restored.has_value());
  BOOST_TEST(ids_of(*restored) == cp.live_ids);
  for (const auto& m : *restored) {
    BOOST_TEST(m.active);
    BOOST_TEST(!m.compacted);
  }
  archived.pop_back();  // row 4 was not read back
  BOOST_TEST(!restore_live_context(plan, live, archived).has_value());
}

BOOST_AUTO_TEST_CASE(a_checkpoint_after_a_compaction_keeps_its_summary) {
  const rollback_checkpoint cp{"after", 15, {1, 2, 3, 15, 10, 11}};
  const auto plan = plan_rollback(rows({1, 2, 3, 15, 10, 11, 16, 17}), cp);
  BOOST_TEST(plan.rolled_back_live_ids == (ids{16, 17}));
  BOOST_TEST(plan.revived_ids.empty());
  BOOST_TEST(plan.restored_live_ids == cp.live_ids);
}

BOOST_AUTO_TEST_CASE(rolling_forward_to_a_newer_checkpoint_re_archives_what_an_older_one_revived) {
  // Rolled back to an older checkpoint: 4..9 live again, 11 and 15 rolled back.
  const rollback_checkpoint newer{"newer", 15, {1, 2, 3, 15, 10, 11}};
  const auto plan = plan_rollback(rows({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), newer);
  BOOST_TEST(plan.outcome == rollback_outcome::rollback);
  BOOST_TEST(plan.rolled_back_live_ids.empty());
  BOOST_TEST(plan.re_archived_ids == (ids{4, 5, 6, 7, 8, 9}));
  BOOST_TEST(plan.revived_ids == (ids{15, 11}));
}

BOOST_AUTO_TEST_CASE(a_session_still_at_its_checkpoint_has_nothing_to_roll_back) {
  const auto plan = plan_rollback(rows({1, 2, 3}), {"now", 3, {1, 2, 3}});
  BOOST_TEST(plan.outcome == rollback_outcome::nothing_to_roll_back);
  BOOST_TEST(plan.rolled_back_live_ids.empty());
}

BOOST_AUTO_TEST_CASE(a_row_not_stored_yet_postpones_the_rollback) {
  auto live = rows({1, 2, 3});
  live.push_back(row(0));
  const auto plan = plan_rollback(live, {"cp", 2, {1, 2}});
  BOOST_TEST(plan.outcome == rollback_outcome::pending_appends);
  BOOST_TEST(!plan.detail.empty());
}

// mark, live ids -> invalid
BOOST_DATA_TEST_CASE(an_impossible_checkpoint_is_refused_with_the_reason,
                     data::make<int64_t>({-1, 5, 5, 5}) ^
                         data::make({ids{}, ids{1, 0}, ids{1, 6}, ids{1, 2, 1}}),
                     mark, live_ids) {
  const auto plan = plan_rollback(rows({1, 2}), {"bad", mark, live_ids});
  BOOST_TEST(plan.outcome == rollback_outcome::invalid_checkpoint);
  BOOST_TEST(!plan.detail.empty());
  BOOST_TEST(plan.restored_live_ids.empty());
}

// Property: a simulated store (row states by id, live order) under random
// appends, contiguous compactions, checkpoints and rollbacks applied by the
// plan's rules always ends a rollback on the checkpoint's live context, with
// every later row rolled back.
BOOST_AUTO_TEST_CASE(random_histories_always_restore_the_checkpoint_live_context) {
  std::mt19937 rng(3);
  int rollbacks = 0;
  for (int round = 0; round < 100; ++round) {
    std::map<int64_t, message> db;
    std::vector<int64_t> live;
    std::vector<rollback_checkpoint> checkpoints;
    int64_t next = 1;
    for (int step = 0; step < 60; ++step) {
      const unsigned op = rng() % 10;
      if (op < 5 || live.size() < 4) {
        db[next] = row(next);
        live.push_back(next++);
      } else if (op < 7) {  // compact a contiguous run of >= 2 live rows
        const std::size_t len = 2 + rng() % (live.size() - 2);
        const std::size_t at = rng() % (live.size() - len + 1);
        for (std::size_t k = at; k < at + len; ++k) {
          db[live[k]].active = false;
          db[live[k]].compacted = true;
        }
        live.erase(live.begin() + static_cast<long>(at),
                   live.begin() + static_cast<long>(at + len));
        db[next] = row(next);
        db[next].is_summary = true;
        live.insert(live.begin() + static_cast<long>(at), next++);
      } else if (op < 8) {
        checkpoints.push_back({"cp", next - 1, live});
      } else if (!checkpoints.empty()) {
        const auto& cp = checkpoints[rng() % checkpoints.size()];
        std::vector<message> live_rows;
        for (int64_t id : live) live_rows.push_back(db[id]);
        const auto plan = plan_rollback(live_rows, cp);
        BOOST_TEST_REQUIRE(plan.outcome != rollback_outcome::invalid_checkpoint);
        if (plan.outcome != rollback_outcome::rollback) {
          BOOST_TEST(live == cp.live_ids);
          continue;
        }
        ++rollbacks;
        std::vector<message> revived;
        for (int64_t id : plan.revived_ids) revived.push_back(db.at(id));
        for (auto& [id, m] : db)
          if (id > plan.roll_back_after_id) m.active = false, m.compacted = false;
        for (int64_t id : plan.revived_ids) db[id].active = true, db[id].compacted = false;
        for (int64_t id : plan.re_archived_ids) db[id].active = false, db[id].compacted = true;
        const auto restored = restore_live_context(plan, live_rows, revived);
        BOOST_TEST_REQUIRE(restored.has_value());
        live = ids_of(*restored);
        BOOST_TEST(live == cp.live_ids);
        std::vector<int64_t> db_live;
        for (const auto& [id, m] : db)
          if (m.active) db_live.push_back(id);
        auto sorted = live;
        std::sort(sorted.begin(), sorted.end());
        BOOST_TEST(db_live == sorted);
        for (const auto& [id, m] : db)
          if (id > cp.last_message_id) BOOST_TEST((m.state() == row_state::rolled_back));
      }
    }
  }
  BOOST_TEST_MESSAGE("rollbacks exercised: " << rollbacks);
  BOOST_TEST(rollbacks > 50);
}

BOOST_AUTO_TEST_SUITE_END() // rollback_plan_test
