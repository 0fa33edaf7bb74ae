// Tests of micro-compaction (SPEC §6, §5.5): when a fold is due, which exchange
// is folded, the rolling summary's text and placement, that user messages are
// never absorbed, defragmentation past the threshold, stale plans, and the
// reconciliation of folds whose DB sync failed.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include "policies/micro_compaction.hpp"
#include "policies/split_tool_groups.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(micro_compaction_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

struct transcript {
  std::vector<message> rows;
  int calls = 0;

  message& add(msg_role role, std::string content) {
    message m;
    m.id = static_cast<int64_t>(rows.size()) + 1;
    m.role = role;
    m.content = std::move(content);
    m.token_estimate = estimate_message_tokens(m);
    rows.push_back(std::move(m));
    return rows.back();
  }
  // user question, assistant call, tool output, assistant answer
  void exchange(int k) {
    add(msg_role::user, "question " + std::to_string(k));
    const std::string id = "call_" + std::to_string(++calls);
    auto& a = add(msg_role::assistant, "checking file " + std::to_string(k));
    a.tool_calls.push_back(
        {id, "read_file", R"({"path":"/srv/app/conf)" + std::to_string(k) + R"(.yaml"})"});
    auto& t = add(msg_role::tool, "port: 80" + std::to_string(k) + "\nhost: db" + std::to_string(k));
    t.tool_call_id = id;
    t.tool_name = "read_file";
    add(msg_role::assistant, "the port is 80" + std::to_string(k));
  }
  void recent(int n) {
    for (int i = 0; i < n; ++i) {
      add(msg_role::user, "recent " + std::to_string(i));
      add(msg_role::assistant, "ok " + std::to_string(i));
    }
  }
};

// system + 3 head rows, `exchanges` foldable exchanges, then a 20-row tail.
transcript session(int exchanges) {
  transcript t;
  t.add(msg_role::system, "sys");
  t.add(msg_role::user, "hello");
  t.add(msg_role::assistant, "hi");
  t.add(msg_role::user, "let us start");
  for (int k = 0; k < exchanges; ++k) t.exchange(k);
  t.recent(10);
  return t;
}

compression_params enabled() {
  compression_params p;
  p.micro_compact = true;
  return p;
}

std::vector<int64_t> user_ids(const std::vector<message>& rows) {
  std::vector<int64_t> ids;
  for (const auto& m : rows)
    if (m.role == msg_role::user) ids.push_back(m.id);
  return ids;
}

// Folds until nothing is left, giving each new summary an id like a store would.
std::vector<message> fold_all(std::vector<message> live, const compression_params& p,
                              int64_t& next_id, std::vector<micro_fold_plan>* plans = nullptr) {
  for (int guard = 0; guard < 1000; ++guard) {
    const auto plan = plan_micro_fold(live, p, 200000, 1);
    if (plan.outcome != micro_outcome::fold) break;
    if (plans) plans->push_back(plan);
    auto out = apply_micro_fold(live, plan);
    BOOST_TEST_REQUIRE(out.status == micro_apply_status::applied);
    out.live[out.summary_index].id = next_id++;
    live = std::move(out.live);
  }
  return live;
}

} // namespace

BOOST_AUTO_TEST_CASE(defaults_keep_micro_compaction_off_with_the_spec_numbers) {
  const compression_params p;
  BOOST_TEST(!p.micro_compact);
  BOOST_TEST(p.micro_compact_every_n_turns == 1);
  BOOST_TEST(p.micro_compact_defrag_threshold_tokens == 2000);
  BOOST_TEST(plan_micro_fold(session(3).rows, p, 200000, 100).outcome
             == micro_outcome::disabled);
}

// enabled, every_n, turns since the last fold -> due
BOOST_DATA_TEST_CASE(a_fold_is_due_after_every_n_turns_when_enabled,
                     data::make({true, true, true, true, false}) ^
                         data::make({1, 3, 3, 3, 1}) ^ data::make({1, 2, 3, 4, 5}) ^
                         data::make({true, false, true, true, false}),
                     on, every_n, turns, want) {
  compression_params p;
  p.micro_compact = on;
  p.micro_compact_every_n_turns = every_n;
  BOOST_TEST(micro_fold_due(p, turns) == want);
}

BOOST_AUTO_TEST_CASE(the_oldest_exchange_after_the_head_becomes_one_rolling_summary) {
  const auto t = session(3);
  const auto plan = plan_micro_fold(t.rows, enabled(), 200000, 1);
  BOOST_TEST_REQUIRE(plan.outcome == micro_outcome::fold);
  BOOST_TEST(plan.exchange_begin == 5u);  // after the head and the first question
  BOOST_TEST(plan.exchange_end == 8u);
  BOOST_TEST(plan.folded_ids == (std::vector<int64_t>{6, 7, 8}));
  BOOST_TEST(!plan.previous_summary_index.has_value());
  BOOST_TEST(unwrap_summary(plan.summary_text)
             == std::string{k_rolling_summary_title}
                    + "\n- rows 6-8: assistant: checking file 0 [calls: "
                      "read_file({\"path\":\"/srv/app/conf0.yaml\"})] | tool read_file: "
                      "\"port: 800\" (19 chars) | assistant: the port is 800");

  const auto out = apply_micro_fold(t.rows, plan);
  BOOST_TEST_REQUIRE(out.status == micro_apply_status::applied);
  BOOST_TEST(out.live.size() == t.rows.size() - 2);
  BOOST_TEST(out.summary_index == 5u);
  const message& s = out.live[5];
  BOOST_TEST(s.id == 0);
  BOOST_TEST(s.is_summary);
  BOOST_TEST((s.role == msg_role::assistant));
  BOOST_TEST(s.replaced_first_id == 6);
  BOOST_TEST(s.replaced_last_id == 8);
  BOOST_TEST(is_rolling_summary(s));
  BOOST_TEST(out.archived_ids == (std::vector<int64_t>{6, 7, 8}));
  BOOST_TEST(out.live[4].content == "question 0");
  BOOST_TEST(out.live[6].content == "question 1");
}

BOOST_AUTO_TEST_CASE(the_next_fold_supersedes_the_rolling_summary_and_moves_it_forward) {
  const auto t = session(3);
  auto first = apply_micro_fold(t.rows, plan_micro_fold(t.rows, enabled(), 200000, 1));
  first.live[first.summary_index].id = 500;  // stored
  const auto plan = plan_micro_fold(first.live, enabled(), 200000, 1);
  BOOST_TEST_REQUIRE(plan.outcome == micro_outcome::fold);
  BOOST_TEST_REQUIRE(plan.previous_summary_index.has_value());
  BOOST_TEST(*plan.previous_summary_index == 5u);
  BOOST_TEST(plan.folded_ids == (std::vector<int64_t>{10, 11, 12}));
  const auto out = apply_micro_fold(first.live, plan);
  BOOST_TEST_REQUIRE(out.status == micro_apply_status::applied);
  BOOST_TEST(out.archived_ids == (std::vector<int64_t>{10, 11, 12, 500}));
  int rolling = 0;
  for (const auto& m : out.live) rolling += is_rolling_summary(m) ? 1 : 0;
  BOOST_TEST(rolling == 1);
  BOOST_TEST(out.live[4].content == "question 0");
  BOOST_TEST(out.live[5].content == "question 1");
  BOOST_TEST(out.summary_index == 6u);
  const std::string body = unwrap_summary(out.live[6].content);
  BOOST_TEST(body.find("- rows 6-8:") != std::string::npos);
  BOOST_TEST(body.find("- rows 10-12:") != std::string::npos);
  BOOST_TEST(body.find("- rows 6-8:") < body.find("- rows 10-12:"));
  BOOST_TEST(out.live[6].replaced_first_id == 6);
  BOOST_TEST(out.live[6].replaced_last_id == 500);
}

BOOST_AUTO_TEST_CASE(folding_stops_at_the_protected_tail_and_keeps_every_user_message) {
  const auto t = session(6);
  int64_t next_id = 1000;
  std::vector<micro_fold_plan> plans;
  const auto live = fold_all(t.rows, enabled(), next_id, &plans);
  BOOST_TEST(plans.size() == 6u);
  BOOST_TEST(user_ids(live) == user_ids(t.rows));
  BOOST_TEST(plan_micro_fold(live, enabled(), 200000, 1).outcome
             == micro_outcome::nothing_to_fold);
  // the last 20 rows are untouched
  for (std::size_t k = 1; k <= 20; ++k)
    BOOST_TEST(live[live.size() - k].id == t.rows[t.rows.size() - k].id);
}

BOOST_AUTO_TEST_CASE(an_exchange_whose_tool_output_was_evicted_is_still_folded) {
  auto t = session(2);
  t.rows[6].is_summary = true;  // the tool row, replaced by an eviction marker
  t.rows[6].content = "[OUTPUT TRUNCATED - 19 chars; recall with search]";
  const auto plan = plan_micro_fold(t.rows, enabled(), 200000, 1);
  BOOST_TEST_REQUIRE(plan.outcome == micro_outcome::fold);
  BOOST_TEST(plan.folded_ids == (std::vector<int64_t>{6, 7, 8}));
  BOOST_TEST(unwrap_summary(plan.summary_text).find("OUTPUT TRUNCATED") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_exchange_with_a_row_not_stored_yet_is_not_folded) {
  auto t = session(2);
  t.rows[6].id = 0;
  BOOST_TEST(plan_micro_fold(t.rows, enabled(), 200000, 1).outcome
             == micro_outcome::not_stored);
}

BOOST_AUTO_TEST_CASE(a_short_session_has_nothing_to_fold) {
  const auto t = session(0);
  BOOST_TEST(plan_micro_fold(t.rows, enabled(), 200000, 1).outcome
             == micro_outcome::nothing_to_fold);
}

BOOST_AUTO_TEST_CASE(a_plan_for_a_changed_transcript_is_stale) {
  const auto t = session(2);
  const auto plan = plan_micro_fold(t.rows, enabled(), 200000, 1);
  auto changed = t.rows;
  changed[6].id = 99;
  const auto out = apply_micro_fold(changed, plan);
  BOOST_TEST(out.status == micro_apply_status::stale_plan);
  BOOST_TEST(out.live.size() == changed.size());
  BOOST_TEST(out.archived_ids.empty());
}

BOOST_AUTO_TEST_CASE(a_main_compaction_summary_is_not_a_rolling_summary) {
  message m;
  m.role = msg_role::assistant;
  m.is_summary = true;
  m.content = wrap_summary("goal: fix the build");
  BOOST_TEST(!is_rolling_summary(m));
  m.content = wrap_summary(std::string{k_rolling_summary_title} + "\n- rows 1-2: x");
  BOOST_TEST(is_rolling_summary(m));
  m.role = msg_role::user;
  BOOST_TEST(!is_rolling_summary(m));
}

// The summary is consolidated exactly when it would pass the threshold, and
// afterwards stays within it, keeping the identifiers and the row range.
BOOST_DATA_TEST_CASE(the_rolling_summary_is_consolidated_past_the_threshold_into_half_of_it,
                     data::make<int64_t>({2000, 300, 100}), threshold) {
  compression_params p = enabled();
  p.micro_compact_defrag_threshold_tokens = threshold;
  const auto t = session(60);
  int64_t next_id = 5000;
  std::vector<micro_fold_plan> plans;
  const auto live = fold_all(t.rows, p, next_id, &plans);
  BOOST_TEST_REQUIRE(plans.size() == 60u);
  bool any = false;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    const int64_t tokens = estimate_text_tokens(plans[k].summary_text);
    if (!plans[k].defragmented) {
      BOOST_TEST(tokens <= threshold);
      continue;
    }
    if (k > 0 && threshold >= 2 * rolling_summary_framing_tokens())
      BOOST_TEST(!plans[k - 1].defragmented);  // one defrag buys room for the next fold
    any = true;
    BOOST_TEST(tokens <= rolling_summary_framing_tokens() + threshold / 2);
    const std::string body = unwrap_summary(plans[k].summary_text);
    BOOST_TEST(body.find("- earlier rows 6-") != std::string::npos);
    BOOST_TEST(body.find("consolidated): identifiers:") != std::string::npos);
  }
  BOOST_TEST(any);
  // The newest consolidated identifiers survive even the smallest threshold.
  std::string last_body;
  for (const auto& m : live)
    if (is_rolling_summary(m)) last_body = unwrap_summary(m.content);
  BOOST_TEST(last_body.find("/srv/app/conf5") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_default_2000_token_threshold_decides_when_to_consolidate) {
  const auto t = session(60);
  int64_t a = 5000, b = 5000;
  std::vector<micro_fold_plan> at_default, at_double;
  fold_all(t.rows, enabled(), a, &at_default);
  compression_params doubled = enabled();
  doubled.micro_compact_defrag_threshold_tokens = 4000;
  fold_all(t.rows, doubled, b, &at_double);
  std::size_t first_default = 0, first_double = 0;
  while (first_default < at_default.size() && !at_default[first_default].defragmented)
    ++first_default;
  while (first_double < at_double.size() && !at_double[first_double].defragmented)
    ++first_double;
  BOOST_TEST_REQUIRE(first_default < at_default.size());
  BOOST_TEST(first_double > first_default);
  // The fold before the first defrag was within 2,000 tokens; the same bullets
  // plus one more exceed it (so the plan consolidated).
  const auto& before = at_default[first_default - 1];
  BOOST_TEST(estimate_text_tokens(before.summary_text) <= 2000);
  BOOST_TEST(estimate_text_tokens(at_double[first_default].summary_text) > 2000);
}

// Property: random transcripts, folded until nothing is left: user messages all
// stay in order, one rolling summary at most, every tool row keeps its call.
BOOST_AUTO_TEST_CASE(folding_never_absorbs_user_messages_or_breaks_pairing) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    transcript t;
    t.add(msg_role::system, "sys");
    const int steps = 5 + static_cast<int>(rng() % 30);
    for (int s = 0; s < steps; ++s) {
      if (rng() % 3 == 0) t.add(msg_role::user, "u" + std::to_string(s));
      else if (rng() % 2 == 0) t.add(msg_role::assistant, "a" + std::to_string(s));
      else t.exchange(s);
    }
    compression_params p = enabled();
    p.protect_last_n = 1 + static_cast<int>(rng() % 8);
    p.protect_first_n = static_cast<int>(rng() % 4);
    p.micro_compact_defrag_threshold_tokens = 100 + static_cast<int64_t>(rng() % 400);
    int64_t next_id = 10000;
    const auto live = fold_all(t.rows, p, next_id);
    BOOST_TEST(user_ids(live) == user_ids(t.rows));
    int rolling = 0;
    for (const auto& m : live) rolling += is_rolling_summary(m) ? 1 : 0;
    BOOST_TEST(rolling <= 1);
    const tool_group_map groups{live};
    for (std::size_t i = 0; i < live.size(); ++i)
      if (live[i].role == msg_role::tool) BOOST_TEST(groups.owner_of(i).has_value());
  }
}

BOOST_AUTO_TEST_CASE(reconcile_lists_what_the_db_owes_after_a_failed_sync) {
  const auto t = session(3);
  std::vector<int64_t> db_live;
  for (const auto& m : t.rows) db_live.push_back(m.id);
  // Two folds in memory, neither synced: the first summary (id 0) is superseded.
  auto one = apply_micro_fold(t.rows, plan_micro_fold(t.rows, enabled(), 200000, 1));
  auto two = apply_micro_fold(one.live, plan_micro_fold(one.live, enabled(), 200000, 1));
  BOOST_TEST_REQUIRE(two.status == micro_apply_status::applied);
  BOOST_TEST(two.archived_ids == (std::vector<int64_t>{10, 11, 12}));  // id-0 summary not listed
  const auto r = reconcile(two.live, db_live);
  BOOST_TEST(r.archive_ids == (std::vector<int64_t>{6, 7, 8, 10, 11, 12}));
  BOOST_TEST(r.insert_indices == (std::vector<std::size_t>{two.summary_index}));
  BOOST_TEST(r.unknown_ids.empty());
  BOOST_TEST(!r.in_sync());

  // After the store caught up: in sync.
  auto synced = two.live;
  synced[two.summary_index].id = 900;
  std::vector<int64_t> db_after;
  for (const auto& m : synced) db_after.push_back(m.id);
  BOOST_TEST(reconcile(synced, db_after).in_sync());

  // A live memory row the DB does not hold live: memory and DB disagree.
  db_after.erase(db_after.begin());
  BOOST_TEST(reconcile(synced, db_after).unknown_ids == (std::vector<int64_t>{1}));
}

BOOST_AUTO_TEST_CASE(appends_still_in_flight_are_not_reconciled) {
  auto t = session(1);
  std::vector<int64_t> db_live;
  for (const auto& m : t.rows) db_live.push_back(m.id);
  t.add(msg_role::user, "just typed").id = 0;
  BOOST_TEST(reconcile(t.rows, db_live).in_sync());
}

BOOST_AUTO_TEST_SUITE_END() // micro_compaction_test
