// Tests of proactive pruning (SPEC §6): when it is due, the duplicate marker and
// the one-line summary of large results, the 8,000-char and 4,096-token limits,
// the skip reasons, and the property that head, tail, user rows and call/result
// pairing are never touched.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include "policies/prune_plan.hpp"
#include "policies/row_replacement.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(prune_plan_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

// Builds a transcript with increasing ids (starting at 1) and filled estimates.
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
  void user(std::string text) { add(msg_role::user, std::move(text)); }
  void answer(std::string text) { add(msg_role::assistant, std::move(text)); }
  // An assistant call followed by its tool result.
  void tool(std::string name, std::string args, std::string output) {
    const std::string id = "call_" + std::to_string(++calls);
    auto& a = add(msg_role::assistant, "");
    a.tool_calls.push_back({id, name, args});
    a.token_estimate = estimate_message_tokens(a);
    auto& t = add(msg_role::tool, std::move(output));
    t.tool_call_id = id;
    t.tool_name = name;
    t.token_estimate = estimate_message_tokens(t);
  }
  // Enough short rows after everything else to fill a 20-row tail.
  void recent_turns(int n) {
    for (int i = 0; i < n; ++i) {
      user("follow-up " + std::to_string(i));
      answer("done " + std::to_string(i));
    }
  }
};

transcript with_head() {
  transcript t;
  t.add(msg_role::system, "you are a helpful agent");
  t.user("please inspect /srv/app");
  t.answer("sure");
  t.user("start with the config");
  return t;
}

const compression_params defaults{};

prune_plan plan_locked(const std::vector<message>& live, const compression_params& p = defaults) {
  return plan_proactive_prune(live, p, 200000, true, 200000, 100000);
}

} // namespace

BOOST_AUTO_TEST_CASE(defaults_are_the_spec_numbers) {
  BOOST_TEST(defaults.proactive_prune_tokens == 0);
  BOOST_TEST(defaults.proactive_prune_min_result_chars == 8000);
  BOOST_TEST(defaults.proactive_prune_min_reclaim_tokens == 4096);
}

// locked, tokens_now, threshold, proactive_prune_tokens -> due
BOOST_DATA_TEST_CASE(pruning_is_due_only_when_locked_over_threshold_or_over_its_own_limit,
                     data::make({true, true, false, false, false, false, true, false}) ^
                         data::make<int64_t>({100, 99, 100, 150, 151, 151, 99, 0}) ^
                         data::make<int64_t>({100, 100, 100, 1000, 1000, 1000, 100, 0}) ^
                         data::make<int64_t>({0, 0, 0, 150, 150, 0, 99, 0}) ^
                         data::make({true, false, false, false, true, false, false, false}),
                     locked, tokens, threshold, prune_tokens, want) {
  compression_params p;
  p.proactive_prune_tokens = prune_tokens;
  BOOST_TEST(proactive_prune_due(p, locked, tokens, threshold) == want);
}

BOOST_AUTO_TEST_CASE(a_plan_that_is_not_due_replaces_nothing) {
  auto t = with_head();
  t.tool("read_file", R"({"path":"/srv/app/big.log"})", std::string(40000, 'x'));
  t.recent_turns(12);
  const auto plan = plan_proactive_prune(t.rows, defaults, 200000, false, 200000, 100000);
  BOOST_TEST(plan.outcome == prune_outcome::not_due);
  BOOST_TEST(plan.replacements.empty());
}

BOOST_AUTO_TEST_CASE(a_large_result_outside_the_tail_becomes_one_line_naming_tool_arguments_size_and_first_line) {
  auto t = with_head();
  t.tool("read_file", R"({"path":"/srv/app/big.log"})",
         "\n  ERROR 42 at boot\n" + std::string(39999, 'x'));
  t.recent_turns(12);
  const auto plan = plan_locked(t.rows);
  BOOST_TEST_REQUIRE(plan.outcome == prune_outcome::prune);
  BOOST_TEST_REQUIRE(plan.replacements.size() == 1u);
  const auto& r = plan.replacements[0];
  BOOST_TEST(r.index == 5u);
  BOOST_TEST(r.original_id == 6);
  BOOST_TEST(r.content
             == "[PRUNED TOOL OUTPUT - read_file({\"path\":\"/srv/app/big.log\"}) returned 40,019 "
                "chars; first line: \"ERROR 42 at boot\"; recall with search]");
  BOOST_TEST(r.tokens_reclaimed == t.rows[5].token_estimate
                                       - replacement_row(t.rows[5], r.content).token_estimate);
  BOOST_TEST(plan.tokens_reclaimed == r.tokens_reclaimed);
  BOOST_TEST(plan.summarized == 1u);
}

// One large result of `chars` characters: pruned only above 8,000.
BOOST_DATA_TEST_CASE(only_results_longer_than_8000_chars_count_as_large,
                     data::make<std::size_t>({7999, 8000, 8001, 30000}) ^
                         data::make({false, false, true, true}),
                     chars, pruned) {
  auto t = with_head();
  t.tool("grep", R"({"q":"x"})", std::string(chars, 'y'));
  t.recent_turns(12);
  compression_params p;
  p.proactive_prune_min_reclaim_tokens = 0;  // isolate the size rule
  const auto plan = plan_locked(t.rows, p);
  BOOST_TEST((plan.outcome == prune_outcome::prune) == pruned);
}

BOOST_AUTO_TEST_CASE(the_commit_needs_a_reclaim_of_at_least_4096_tokens) {
  // Find the output length whose pruning reclaims exactly 4,096 tokens.
  auto build = [](std::size_t chars) {
    auto t = with_head();
    t.tool("grep", R"({"q":"x"})", std::string(chars, 'z'));
    t.recent_turns(12);
    return t.rows;
  };
  compression_params any_reclaim;
  any_reclaim.proactive_prune_min_reclaim_tokens = 0;
  std::size_t exact = 0;
  for (std::size_t chars = 16000; chars < 17500 && exact == 0; ++chars)
    if (plan_locked(build(chars), any_reclaim).tokens_reclaimed == 4096) exact = chars;
  BOOST_TEST_REQUIRE(exact != 0u);
  const auto one_short = build(exact - 4);
  BOOST_TEST_REQUIRE(plan_locked(one_short, any_reclaim).tokens_reclaimed == 4095);

  const auto at = plan_locked(build(exact));
  BOOST_TEST(at.outcome == prune_outcome::prune);
  const auto below = plan_locked(one_short);
  BOOST_TEST(below.outcome == prune_outcome::below_min_reclaim);
  BOOST_TEST(below.replacements.empty());
  BOOST_TEST(below.tokens_reclaimable == 4095);
  BOOST_TEST(below.tokens_reclaimed == 0);
}

BOOST_AUTO_TEST_CASE(older_identical_results_point_at_the_latest_copy_which_stays_intact) {
  auto t = with_head();
  const std::string same(5000, 'd');
  for (int i = 0; i < 4; ++i) t.tool("ls", R"({"dir":"/srv"})", same);
  t.recent_turns(10);
  t.tool("ls", R"({"dir":"/srv"})", same);  // the latest copy, inside the tail
  const auto& latest = t.rows.back();
  const auto plan = plan_locked(t.rows);
  BOOST_TEST_REQUIRE(plan.outcome == prune_outcome::prune);
  BOOST_TEST(plan.deduplicated == 4u);
  BOOST_TEST(plan.summarized == 0u);
  for (const auto& r : plan.replacements) {
    BOOST_TEST(r.content == "[DUPLICATE OUTPUT - 5,000 chars; identical to the later result of call "
                                + latest.tool_call_id + " (row " + std::to_string(latest.id) + ")]");
    BOOST_TEST(r.original_id != latest.id);
  }
}

BOOST_AUTO_TEST_CASE(a_duplicate_marker_omits_the_row_of_a_copy_not_stored_yet) {
  BOOST_TEST(duplicate_marker(12345, "call_9", 0)
             == "[DUPLICATE OUTPUT - 12,345 chars; identical to the later result of call call_9]");
}

BOOST_AUTO_TEST_CASE(small_distinct_results_leave_nothing_to_prune) {
  auto t = with_head();
  for (int i = 0; i < 5; ++i) t.tool("ls", "{}", "file" + std::to_string(i));
  t.recent_turns(12);
  const auto plan = plan_locked(t.rows);
  BOOST_TEST(plan.outcome == prune_outcome::nothing_to_prune);
  BOOST_TEST(plan.tokens_reclaimable == 0);
}

BOOST_AUTO_TEST_CASE(large_results_in_the_head_or_the_tail_are_never_pruned) {
  transcript t;
  t.add(msg_role::system, "sys");
  t.tool("read_file", "{}", std::string(50000, 'h'));  // inside the protected head
  t.recent_turns(5);
  t.tool("read_file", "{}", std::string(50000, 't'));  // inside the protected tail
  t.recent_turns(3);
  const auto plan = plan_locked(t.rows);
  BOOST_TEST(plan.outcome == prune_outcome::nothing_to_prune);
}

BOOST_AUTO_TEST_CASE(unstored_rows_and_earlier_replacements_are_never_pruned_again) {
  auto t = with_head();
  t.tool("read_file", "{}", std::string(50000, 'a'));
  t.rows.back().id = 0;
  t.tool("read_file", "{}", std::string(50000, 'b'));
  t.rows.back().is_summary = true;
  t.recent_turns(12);
  BOOST_TEST(plan_locked(t.rows).outcome == prune_outcome::nothing_to_prune);
}

BOOST_AUTO_TEST_CASE(the_call_name_is_used_when_the_tool_row_carries_none) {
  auto t = with_head();
  t.tool("fetch_url", R"({"url":"https://example.org/a"})", std::string(20000, 'u'));
  t.rows.back().tool_name.clear();
  t.recent_turns(12);
  const auto plan = plan_locked(t.rows);
  BOOST_TEST_REQUIRE(plan.replacements.size() == 1u);
  BOOST_TEST(plan.replacements[0].content.rfind(
                 "[PRUNED TOOL OUTPUT - fetch_url({\"url\":\"https://example.org/a\"}) returned", 0)
             == 0u);
}

// Property: over many generated transcripts, a prune plan touches only tool
// rows strictly between the protected cuts, and applying it keeps every role,
// call id and user text in place.
BOOST_AUTO_TEST_CASE(pruning_never_touches_head_tail_user_rows_or_pairing) {
  std::mt19937 rng(7);
  int pruned_plans = 0;
  for (int round = 0; round < 300; ++round) {
    transcript t;
    t.add(msg_role::system, "sys");
    const int steps = 5 + static_cast<int>(rng() % 40);
    for (int s = 0; s < steps; ++s) {
      switch (rng() % 4) {
        case 0: t.user("question " + std::to_string(s)); break;
        case 1: t.answer("answer " + std::to_string(s)); break;
        default: {
          const std::size_t size = (rng() % 3 == 0) ? 9000 + rng() % 30000 : rng() % 3000;
          t.tool("tool" + std::to_string(rng() % 3), "{}",
                 std::string(size, static_cast<char>('a' + rng() % 3)));
        }
      }
    }
    compression_params p;
    p.protect_last_n = 1 + static_cast<int>(rng() % 10);
    p.protect_first_n = static_cast<int>(rng() % 4);
    p.proactive_prune_min_reclaim_tokens = static_cast<int64_t>(rng() % 5000);
    const auto plan = plan_locked(t.rows, p);
    if (plan.outcome != prune_outcome::prune) continue;
    ++pruned_plans;
    BOOST_TEST(plan.tokens_reclaimed >= p.proactive_prune_min_reclaim_tokens);
    int64_t sum = 0;
    for (const auto& r : plan.replacements) {
      BOOST_TEST(r.index >= plan.head_end);
      BOOST_TEST(r.index < plan.tail_begin);
      BOOST_TEST((t.rows[r.index].role == msg_role::tool));
      BOOST_TEST(r.tokens_reclaimed > 0);
      sum += r.tokens_reclaimed;
    }
    BOOST_TEST(sum == plan.tokens_reclaimed);
    const auto applied = apply_replacements(t.rows, plan.replacements);
    BOOST_TEST_REQUIRE(applied.status == replace_status::applied);
    BOOST_TEST_REQUIRE(applied.live.size() == t.rows.size());
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      BOOST_TEST((applied.live[i].role == t.rows[i].role));
      BOOST_TEST(applied.live[i].tool_call_id == t.rows[i].tool_call_id);
      BOOST_TEST((applied.live[i].tool_calls == t.rows[i].tool_calls));
      if (t.rows[i].role != msg_role::tool || i < plan.head_end || i >= plan.tail_begin)
        BOOST_TEST(applied.live[i].content == t.rows[i].content);
    }
  }
  BOOST_TEST_MESSAGE("generated transcripts that pruned: " << pruned_plans << " of 300");
  BOOST_TEST(pruned_plans > 20);
}

BOOST_AUTO_TEST_SUITE_END() // prune_plan_test
