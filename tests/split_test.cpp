// Unit tests of the compaction split (policies/split*, SPEC §3): every rule and
// every number — head 3, tail 20, at least 1 real user message in the tail,
// tokens tail mode 2.5% / 10,000 / 25,000 / 20% / 3 / 8 — tool groups, orphans,
// the summary role and merge rule, local compaction and plan application.
//
// Transcripts are written in a small notation, one token per row:
//   s system   u user   a assistant   U / A summary as user / assistant
//   a:c1,c2   assistant calling c1 and c2      t:c1   tool row answering c1
//   x:c1   assistant calling c1 with no text (a step of a tool loop)
//   a suffix /N sets the row's token_estimate (default 10). Row ids are 1..n.
// render() prints a transcript back in the same notation, with new rows
// (id 0) in brackets, so expected results read like the input.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "policies/split.hpp"
#include "policies/split_apply.hpp"
#include "policies/split_tool_groups.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(split_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in{text};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> split_on(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<message> parse(const std::string& text) {
  std::vector<message> live;
  for (const std::string& w0 : words(text)) {
    message m;
    m.id = static_cast<int64_t>(live.size()) + 1;
    m.session_id = "s-1";
    m.timestamp_ms = 1000 * m.id;
    m.token_estimate = 10;
    std::string w = w0;
    if (auto slash = w.find('/'); slash != std::string::npos) {
      m.token_estimate = std::stoll(w.substr(slash + 1));
      w = w.substr(0, slash);
    }
    std::string arg;
    if (auto colon = w.find(':'); colon != std::string::npos) {
      arg = w.substr(colon + 1);
      w = w.substr(0, colon);
    }
    if (w == "s") m.role = msg_role::system;
    else if (w == "u" || w == "U") m.role = msg_role::user;
    else if (w == "a" || w == "A" || w == "x") m.role = msg_role::assistant;
    else if (w == "t") m.role = msg_role::tool;
    else throw std::invalid_argument{"bad row token: " + w0};
    m.is_summary = (w == "U" || w == "A");
    if (m.role == msg_role::assistant && !arg.empty())
      for (const auto& id : split_on(arg, ','))
        m.tool_calls.push_back(tool_call{id, "fn_" + id, "{}"});
    if (m.role == msg_role::tool) {
      m.tool_call_id = arg;
      m.tool_name = "fn_" + arg;
    }
    m.content = w == "x" ? "" : "row " + std::to_string(m.id);
    live.push_back(m);
  }
  return live;
}

std::string render(const std::vector<message>& live) {
  std::string out;
  for (const message& m : live) {
    std::string w;
    switch (m.role) {
      case msg_role::system: w = "s"; break;
      case msg_role::user: w = m.is_summary ? "U" : "u"; break;
      case msg_role::assistant: w = m.is_summary ? "A" : m.content.empty() ? "x" : "a"; break;
      case msg_role::tool: w = "t:" + m.tool_call_id; break;
    }
    if (m.role == msg_role::assistant && m.has_tool_calls()) {
      w += ':';
      for (std::size_t k = 0; k < m.tool_calls.size(); ++k)
        w += (k ? "," : "") + m.tool_calls[k].id;
    }
    if (m.id == 0) w = "[" + w + "]";
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// `count` copies of a word, space separated.
std::string times(std::size_t count, const std::string& w) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? " " : "") + w;
  return out;
}

compression_params with_counts(int first, int last, int users = 1) {
  compression_params p;
  p.protect_first_n = first;
  p.protect_last_n = last;
  p.min_tail_user_messages = users;
  return p;
}

// An optional index as a number, -1 when absent, so that Boost.Test can print it.
int index_or_none(const std::optional<std::size_t>& i) { return i ? static_cast<int>(*i) : -1; }

compression_params defaults() { return compression_params(); }

compression_params tokens_mode() {
  compression_params p;
  p.tail_mode = tail_mode::tokens;
  return p;
}

constexpr int64_t k_window = 200000;

} // namespace

// ---------------------------------------------------------------------------
// The SPEC's default numbers.

BOOST_AUTO_TEST_CASE(the_default_params_protect_3_head_and_20_tail_messages_with_1_user) {
  const compression_params p;
  BOOST_TEST(p.protect_first_n == 3);
  BOOST_TEST(p.protect_last_n == 20);
  BOOST_TEST(p.min_tail_user_messages == 1);
  BOOST_TEST((p.tail_mode == tail_mode::count));
}

BOOST_AUTO_TEST_CASE(with_defaults_a_long_transcript_keeps_system_plus_3_and_the_last_20) {
  const auto live = parse("s " + times(60, "u a"));  // 121 rows
  const auto plan = plan_compaction(live, defaults(), k_window);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.head_end == 4u);
  BOOST_TEST(plan.tail_begin == 121u - 20u);
  BOOST_TEST(plan.middle_ids.size() == 121u - 20u - 4u);
  BOOST_TEST(plan.middle_ids.front() == 5);
  BOOST_TEST(plan.middle_ids.back() == 101);
}

BOOST_AUTO_TEST_CASE(the_tokens_tail_constants_are_the_spec_numbers) {
  BOOST_TEST(k_tail_budget_min_tokens == 10000);
  BOOST_TEST(k_tail_budget_max_tokens == 25000);
  BOOST_TEST(k_tail_budget_per_mille_of_window == 25);
  BOOST_TEST(k_tail_budget_max_percent_of_window == 20);
  BOOST_TEST(k_tail_floor_messages == 3u);
  BOOST_TEST(k_tail_max_messages == 8u);
}

// ---------------------------------------------------------------------------
// Head.

// transcript, protect_first_n, expected head_end
BOOST_DATA_TEST_CASE(the_head_is_the_system_prompt_plus_protect_first_n_messages,
                     data::make({"s u a u a u a u a u a", "u a u a u a u a u a",
                                 "s u a u a u a u a u a", "u a u a u a u a u a",
                                 "s u a u a u a u a u a", "s u a u a u a u a u a",
                                 "u s a u a u a u a u a"})
                       ^ data::make({3, 3, 0, 0, 1, 5, 3})
                       ^ data::make({4u, 3u, 1u, 0u, 2u, 6u, 3u}),
                     text, first, want) {
  const auto plan = plan_compaction(parse(text), with_counts(first, 2), k_window);
  BOOST_TEST(plan.head_end == want);
}

// A head cut inside a tool group moves forward until the group is whole.
BOOST_DATA_TEST_CASE(the_head_grows_forward_over_a_tool_group_it_would_split,
                     data::make({"s u a:c1 t:c1 u a u a u a u a u a",
                                 "s u u a:c1,c2 t:c1 t:c2 u a u a u a u a",
                                 "s u a:c1 u t:c1 u a u a u a u a u a",
                                 "s u a a:c1 t:c1 u a u a u a u a",
                                 "s u a u a:c1 t:c1 u a u a u a u a"})
                       ^ data::make({4u, 6u, 5u, 5u, 4u}),
                     text, want) {
  const auto live = parse(text);
  const auto plan = plan_compaction(live, with_counts(3, 4), k_window);
  BOOST_TEST(plan.head_end == want);
  BOOST_TEST(!tool_group_map{live}.cut_splits_group(plan.head_end));
}

// ---------------------------------------------------------------------------
// Tail, count mode.

BOOST_DATA_TEST_CASE(the_tail_is_the_last_protect_last_n_messages,
                     data::make({20, 5, 1, 30}) ^ data::make({20u, 5u, 1u, 30u}), last, want) {
  const auto live = parse("s " + times(40, "u a") + " u");  // 82 rows, ends with a user
  const auto plan = plan_compaction(live, with_counts(3, last), k_window);
  BOOST_TEST(live.size() - plan.tail_begin == want);
}

// transcript (4-row head), protect_last_n, min_tail_user_messages, expected tail length
BOOST_DATA_TEST_CASE(
  the_tail_extends_back_to_hold_min_tail_user_messages_real_user_messages,
  data::make({"s u a u a u a a a a a", "s u a u a u a a a a a", "s u a u U a a a a a a",
              "s u a u a t:x a a a a a", "s u a u u a u a a a a", "s u a u a a a a a a a",
              "s u a u a u a a a u a", "s u a u a u a a a a a"})
    ^ data::make({2, 2, 2, 2, 2, 2, 2, 2})
    ^ data::make({1, 2, 1, 1, 2, 1, 1, 0})
    ^ data::make({6u, 6u, 2u, 2u, 7u, 2u, 2u, 2u}),
  text, last, users, want) {
  // The head is [0,4), the base tail the last 2 rows. Data cases:
  // _0 reaches back to the user at 5; _1 wants 2 users but the only one after
  // the head is at 5 (3 is protected), so it stops there; _2, _3: a summary
  // user and a tool row are not real users, and no real user follows the head:
  // the tail stays; _4 wants 2 and reaches 6 then 4; _5 has no user after the
  // head; _6 already holds one; _7 asks for none.
  const auto live = parse(text);
  const auto plan = plan_compaction(live, with_counts(3, last, users), k_window);
  BOOST_TEST(live.size() - plan.tail_begin == want, text << " -> " << plan);
}

// The last visible reply (an assistant row with text, not a summary) after the
// last real user message joins the tail. transcript, protect_first_n,
// protect_last_n, min_tail_user_messages, expected tail_begin.
BOOST_DATA_TEST_CASE(
  the_tail_keeps_the_last_assistant_text_after_the_last_user_message,
  data::make(std::vector<std::string>{
    // _0 a long tool loop after a user in the head: the reply at 6 joins the tail.
    "s u x:c1 t:c1 x:c2 t:c2 a:c3 t:c3 x:c4 t:c4 x:c5 t:c5 x:c6 t:c6",
    // _1 the user rule already reaches the user at 5; no reply after it: unchanged.
    "s u a u a u x:c1 t:c1 x:c2 t:c2 x:c3 t:c3",
    // _2 the reply at 7 after the user is already in the 4-row tail: unchanged.
    "s u a u a u a a x:c1 t:c1",
    // _3 the user rule is off: the reply at 6 after the user at 5 still joins.
    "s u a u a u a x:c1 t:c1 x:c2 t:c2",
    // _4 a summary is not a reply: the reply is the plain assistant at 4.
    "s u a u a A x:c1 t:c1 x:c2 t:c2",
    // _5 no text after the user at 3 (tool-only steps): the tail stays.
    "s u a u x:c1 t:c1 x:c2 t:c2 x:c3 t:c3 x:c4 t:c4",
    // _6 the reply sits in the head: the head keeps it, the tail stays.
    "s u a x:c1 t:c1 x:c2 t:c2 x:c3 t:c3"}) ^
    data::make({3, 3, 3, 3, 1, 3, 3}) ^ data::make({4, 2, 4, 2, 2, 2, 2}) ^
    data::make({1, 1, 0, 0, 0, 1, 1}) ^ data::make({6u, 5u, 6u, 6u, 4u, 10u, 7u}),
  text, first, last, users, want) {
  const auto live = parse(text);
  const auto plan = plan_compaction(live, with_counts(first, last, users), k_window);
  BOOST_TEST(plan.tail_begin == want, text << " -> " << plan);
}

BOOST_DATA_TEST_CASE(
  the_tail_keeps_the_user_message_of_the_turn_in_progress_and_its_whole_tool_loop,
  data::make(std::vector<std::string>{
    // _0 a loop of three rounds after the user at 5, the user rule off: the tail
    //    reaches back to 5 (without the rule it would be the last 2 rows).
    "s u a u a u x:c1 t:c1 x:c2 t:c2 x:c3 t:c3",
    // _1 the last round is pending with one of its two calls unanswered: still 5.
    "s u a u a u x:c1 t:c1 x:c2,c3 t:c2",
    // _2 a call made, no result yet (the request is pending at the client): 5.
    "s u a u a u a u x:c1",
    // _3 the loop ended with a text answer: only the reply joins (user rule off).
    "s u a u a u x:c1 t:c1 x:c2 t:c2 a",
    // _4 the turn's user message is in the head: the tail stays.
    "s u x:c1 t:c1 x:c2 t:c2 x:c3 t:c3",
    // _5 a calling answer with text is not a final reply: 5.
    "s u a u a u a:c1 t:c1 x:c2 t:c2"}) ^
    data::make({3, 3, 3, 3, 1, 3}) ^ data::make({2, 1, 1, 1, 2, 1}) ^
    data::make({0u, 0u, 0u, 0u, 0u, 0u}) ^ data::make({5u, 5u, 7u, 10u, 6u, 5u}),
  text, first, last, users, want) {
  const auto live = parse(text);
  const auto plan = plan_compaction(live, with_counts(first, last, static_cast<int>(users)),
                                    k_window);
  BOOST_TEST(plan.tail_begin == want, text << " -> " << plan);
  compression_params tokens = tokens_mode();
  tokens.min_tail_user_messages = 0;
  const auto by_tokens = plan_compaction(live, tokens, k_window);
  if (want < live.size() - 1 && live[want].role == msg_role::user)
    BOOST_TEST(by_tokens.tail_begin <= want, text << " tokens mode -> " << by_tokens);
}

BOOST_AUTO_TEST_CASE(whitespace_only_assistant_text_is_not_a_visible_reply) {
  auto live = parse("s u a u a u a x:c1 t:c1 x:c2 t:c2");
  live[6].content = " \n\t ";
  const auto plan = plan_compaction(live, with_counts(3, 2, 0), k_window);
  // No reply to keep: the turn of the user at 5 is still in progress (rule 3c), so the
  // tail starts there; a visible reply at 6 would have made it 6.
  BOOST_TEST(plan.tail_begin == 5u, plan);
}

BOOST_AUTO_TEST_CASE(the_tokens_tail_also_keeps_the_last_reply_after_a_long_tool_loop) {
  // The user at 1 is in the head [0,4); the reply at 6 is followed by 12
  // tool-loop steps (24 rows), far past the 8-row cap: the tail reaches back to it.
  const auto live = parse("s u x:c0 t:c0 x:c00 t:c00 a " + [] {
    std::string loop;
    for (int k = 1; k <= 12; ++k)
      loop += (k > 1 ? " x:c" : "x:c") + std::to_string(k) + " t:c" + std::to_string(k);
    return loop;
  }());
  const auto plan = plan_compaction(live, tokens_mode(), k_window);
  BOOST_TEST(plan.head_end == 4u);
  BOOST_TEST(plan.tail_begin == 6u, plan);
  BOOST_TEST(plan.middle_ids == std::vector<int64_t>({5, 6}));
}

BOOST_AUTO_TEST_CASE(a_tail_cut_inside_a_tool_group_moves_back_so_the_tail_holds_it_whole) {
  //                      0 1 2 3 4 5 6    7    8    9    10 11
  const auto live = parse("s u a u a u a:c1,c2 t:c1 t:c2 a u a");
  // the last 5 rows start at 7 (t:c1): the cut moves back to 6 (the call).
  const auto plan = plan_compaction(live, with_counts(3, 5), k_window);
  BOOST_TEST(plan.tail_begin == 6u);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.middle_ids == std::vector<int64_t>({5, 6}));
}

BOOST_AUTO_TEST_CASE(a_group_reaching_back_into_the_head_leaves_nothing_to_compact) {
  // a:c1 in the head is answered at the very end: no cut between them is allowed.
  const auto live = parse("s u a:c1 u a u a u a u t:c1 u");
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_TEST(plan.outcome == split_outcome::middle_empty);
  BOOST_TEST(plan.nothing_to_compact());
}

// ---------------------------------------------------------------------------
// Tail, tokens mode.

BOOST_DATA_TEST_CASE(the_tokens_tail_budget_is_2_5_percent_clamped_to_10k_25k_and_at_most_20_percent,
                     data::make<int64_t>({200000, 400000, 600000, 1000000, 2000000, 40000,
                                          30000, 50000, 0, -5})
                       ^ data::make<int64_t>({10000, 10000, 15000, 25000, 25000, 8000, 6000,
                                              10000, 0, 0}),
                     window, want) {
  BOOST_TEST(tail_token_budget(window) == want);
}

// Rows after a 4-row head, token sizes, window, expected tail length.
BOOST_DATA_TEST_CASE(
  the_tokens_tail_takes_3_rows_at_least_8_at_most_and_otherwise_what_fits_the_budget,
  data::make(std::vector<std::string>{
    // 20 tiny rows: the budget would take all, the cap keeps 8.
    times(10, "u/10 a/10"),
    // 20 huge rows: over budget at once, the floor keeps 3.
    times(10, "u/9000 a/9000"),
    // 2,000-token rows with a 10,000 budget: 5 fit.
    times(10, "u/2000 a/2000"),
    // 2,000-token rows with a 25,000 budget (1M window): 12 would fit, 8 kept.
    times(10, "u/2000 a/2000"),
    // 3,000-token rows with 15,000 (600K window): 5 fit.
    times(10, "u/3000 a/3000"),
    // contiguous: a small row after a big one that does not fit is not taken.
    "u/10 u/10 u/10 u/10 a/9999 u/1 a/1 u/1 a/1"}) ^
    data::make<int64_t>({200000, 200000, 200000, 1000000, 600000, 200000}) ^
    data::make({8u, 3u, 5u, 8u, 5u, 4u}),
  rows, window, want) {
  const auto live = parse("s u a u " + rows);
  const auto plan = plan_compaction(live, tokens_mode(), window);
  BOOST_TEST(live.size() - plan.tail_begin == want, plan);
}

BOOST_AUTO_TEST_CASE(the_tokens_tail_extends_past_its_cap_to_reach_a_real_user_message) {
  // 12 assistant rows after the head's user: budget and cap take 8 rows, none a user;
  // the extension then reaches back to the user at index 4, past the cap of 8.
  const auto live = parse("s u a u u " + times(12, "a/10"));
  const auto plan = plan_compaction(live, tokens_mode(), k_window);
  BOOST_TEST(plan.tail_begin == 4u);
  BOOST_TEST(plan.outcome == split_outcome::middle_empty);
  const auto live2 = parse("s u a u a u " + times(12, "a/10"));
  const auto plan2 = plan_compaction(live2, tokens_mode(), k_window);
  BOOST_TEST(plan2.tail_begin == 5u);
  BOOST_TEST(live2.size() - plan2.tail_begin == 13u);
  BOOST_TEST(plan2.middle_ids == std::vector<int64_t>({5}));
}

BOOST_AUTO_TEST_CASE(the_tokens_tail_moves_back_over_a_tool_group_past_its_cap) {
  // The 8-row cap cuts between a:c1,c2,c3 and its answers: the tail takes the call.
  const auto live = parse("s u a u a u a u a:c1,c2,c3 t:c1 t:c2 t:c3 " + times(3, "a u"));
  const auto plan = plan_compaction(live, tokens_mode(), k_window);
  BOOST_TEST(plan.tail_begin == 8u);
  BOOST_TEST(live.size() - plan.tail_begin == 10u);
}

// ---------------------------------------------------------------------------
// Nothing to compact.

BOOST_DATA_TEST_CASE(a_transcript_that_fits_in_head_and_tail_has_nothing_to_compact,
                     data::make(std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                                                         12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                                         22, 23, 24}),
                     size) {
  // `size` rows, the first a system prompt: the head takes 4 rows, the tail 20,
  // so up to 24 rows leave an empty middle; 25 rows leave one (next test).
  const auto live = parse(size == 0 ? std::string{} : "s " + times(size - 1, "u"));
  const auto plan = plan_compaction(live, defaults(), k_window);
  BOOST_TEST(plan.nothing_to_compact());
  BOOST_TEST(plan.outcome == split_outcome::middle_empty);
  BOOST_TEST(plan.middle_ids.empty());
  BOOST_TEST(plan.orphan_fixes.empty());
}

BOOST_AUTO_TEST_CASE(one_row_more_than_head_plus_tail_compacts_exactly_that_row) {
  const auto live = parse("s " + times(24, "u"));
  const auto plan = plan_compaction(live, defaults(), k_window);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.middle_ids == std::vector<int64_t>({5}));
}

BOOST_AUTO_TEST_CASE(a_plan_with_nothing_to_compact_applies_as_the_unchanged_transcript) {
  const auto live = parse("s u a u a");
  const auto plan = plan_compaction(live, defaults(), k_window);
  const auto out = apply_plan(live, plan, "summary");
  BOOST_TEST(out.status == apply_status::nothing_to_compact);
  BOOST_TEST(render(out.live) == render(live));
  BOOST_TEST(out.archived_ids.empty());
}

// ---------------------------------------------------------------------------
// Token sums and the previous summary.

BOOST_AUTO_TEST_CASE(the_plan_sums_the_token_estimates_of_head_middle_and_tail) {
  const auto live = parse("s/100 u/1 a/2 u/3 a/1000 A/2000 u/10000 a/7 u/8");
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_TEST(plan.head_tokens == 106);
  BOOST_TEST(plan.middle_tokens == 13000);
  BOOST_TEST(plan.tail_tokens == 15);
}

BOOST_DATA_TEST_CASE(the_latest_previous_summary_inside_the_middle_is_reported,
                     data::make({"s u a u A u a u a u a", "s u a u a u U a A u a",
                                 "s u a u a u a u a u a", "s u a U a u a u a u A"})
                       ^ data::make({4, 8, -1, -1}),
                     text, want) {
  const auto plan = plan_compaction(parse(text), with_counts(3, 2), k_window);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(index_or_none(plan.previous_summary_index) == want);
}

BOOST_AUTO_TEST_CASE(a_replaced_tool_output_in_the_middle_is_not_a_previous_summary) {
  // Pruning and eviction store a tool row flagged is_summary: a tool result, not a
  // summary of turns, so the iterative update must not start from it.
  auto live = parse("s u a u a:c1 t:c1 u a u a u a");
  live[5].is_summary = true;
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(index_or_none(plan.previous_summary_index) == -1);
}

// ---------------------------------------------------------------------------
// Summary role and merge.

// transcript, protect_first_n, protect_last_n, role, merge target (-1: none)
BOOST_DATA_TEST_CASE(
  the_summary_role_follows_the_head_and_merges_when_it_equals_the_first_tail_role,
  data::make({"s u a u a u a u a", "s u a u a u a a u", "s u a a:c1 t:c1 u a u a u a",
              "s u a u a u a u a", "s u a u a u a u a", "u a u a u a u a", "u a u a u a u a",
              "s u a t:x u a u a u a u"})
    ^ data::make({3, 3, 3, 0, 0, 2, 0, 3})
    ^ data::make({2, 2, 2, 2, 3, 2, 2, 2})
    ^ data::make({msg_role::assistant, msg_role::assistant, msg_role::user, msg_role::user,
                  msg_role::user, msg_role::user, msg_role::user, msg_role::user})
    ^ data::make({-1, 7, 9, 7, -1, 6, 6, -1}),
  text, first, last, role, merge_at) {
  // 1: head ends with user -> assistant; first tail u: no merge.
  // 2: same, first tail is an assistant -> merge into it.
  // 3: head grows over a tool group and ends with a tool row -> user; the tail
  //    starts with u -> merge.
  // 4, 5: head is only the system prompt -> user; merge iff the tail starts with u.
  // 6: head ends with an assistant -> user; 7: empty head -> user.
  // 8: the head's orphan tool row is dropped; the kept head ends with a -> user;
  //    the tail starts with a: no merge.
  const auto plan = plan_compaction(parse(text), with_counts(first, last), k_window);
  BOOST_TEST(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.summary_role == role, plan);
  BOOST_TEST(plan.merge_into_first_tail == (merge_at >= 0));
  BOOST_TEST(index_or_none(plan.merge_target_index) == merge_at);
}

BOOST_AUTO_TEST_CASE(a_merged_summary_is_a_new_row_copying_the_first_tail_row_with_the_text_first) {
  const auto live = parse("s u a u a u a a:c1 t:c1 u");
  const auto plan = plan_compaction(live, with_counts(3, 3), k_window);
  BOOST_REQUIRE(plan.merge_into_first_tail);
  BOOST_REQUIRE(index_or_none(plan.merge_target_index) == 7);
  const auto out = apply_plan(live, plan, "SUMMARY");
  BOOST_TEST(out.status == apply_status::applied);
  BOOST_TEST(render(out.live) == "s u a u [A:c1] t:c1 u");
  const message& merged = out.live[out.summary_index];
  BOOST_TEST(out.summary_index == 4u);
  BOOST_TEST(merged.content == "SUMMARY\n\nrow 8");
  BOOST_TEST(merged.is_summary);
  BOOST_TEST((merged.tool_calls == live[7].tool_calls));
  BOOST_TEST(merged.replaced_first_id == 5);
  BOOST_TEST(merged.replaced_last_id == 8);
  BOOST_TEST(out.archived_ids == std::vector<int64_t>({5, 6, 7, 8}));
}

// ---------------------------------------------------------------------------
// Orphans in the kept context.

BOOST_AUTO_TEST_CASE(kept_tool_rows_whose_call_is_absent_are_dropped_and_archived) {
  //                      0 1 2    3 4 5 6 7 8    9 10
  const auto live = parse("s u t:x u a u a u t:zz u a");
  const auto plan = plan_compaction(live, with_counts(3, 3), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  BOOST_REQUIRE(plan.orphan_fixes.size() == 2u);
  BOOST_TEST(plan.orphan_fixes[0] == (orphan_fix{orphan_fix::kind::drop_orphan_result, 2, 3, "x",
                                                 "fn_x", 0}));
  BOOST_TEST(plan.orphan_fixes[1] == (orphan_fix{orphan_fix::kind::drop_orphan_result, 8, 9,
                                                 "zz", "fn_zz", 0}));
  const auto out = apply_plan(live, plan, "S");
  BOOST_TEST(render(out.live) == "s u u [A] u a");
  BOOST_TEST(out.archived_ids == std::vector<int64_t>({5, 6, 7, 8, 3, 9}));
}

BOOST_AUTO_TEST_CASE(kept_calls_without_an_answer_get_a_synthetic_no_result_recorded_row) {
  //                      0 1 2       3    4 5 6 7 8    9 10
  const auto live = parse("s u a:c1,c2 t:c2 u a u a a:c3 u a");
  const auto plan = plan_compaction(live, with_counts(3, 3), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  BOOST_REQUIRE(plan.orphan_fixes.size() == 2u);
  BOOST_TEST(plan.orphan_fixes[0] == (orphan_fix{orphan_fix::kind::answer_unanswered_call, 2, 3,
                                                 "c1", "fn_c1", 3}));
  BOOST_TEST(plan.orphan_fixes[1] == (orphan_fix{orphan_fix::kind::answer_unanswered_call, 8, 9,
                                                 "c3", "fn_c3", 8}));
  const auto out = apply_plan(live, plan, "S");
  BOOST_TEST(render(out.live) == "s u a:c1,c2 t:c2 [t:c1] [U] a:c3 [t:c3] u a");
  const message& answer = out.live[4];
  BOOST_TEST(answer.content == std::string{k_no_result_recorded});
  BOOST_TEST(answer.content == "[no result recorded]");
  BOOST_TEST(answer.tool_name == "fn_c1");
  BOOST_TEST(answer.timestamp_ms == live[2].timestamp_ms);
  BOOST_TEST(out.archived_ids == std::vector<int64_t>({5, 6, 7, 8}));
}

BOOST_AUTO_TEST_CASE(the_pending_calls_at_the_end_of_the_transcript_are_not_answered_synthetically) {
  const auto live = parse("s u a u a u a u a:c1,c2 t:c1");
  const auto plan = plan_compaction(live, with_counts(3, 3), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.orphan_fixes.empty(), plan);
  BOOST_TEST(index_or_none(tool_group_map{live}.pending_assistant()) == 8);
}

BOOST_AUTO_TEST_CASE(orphans_inside_the_middle_need_no_fix_because_they_are_summarized) {
  const auto live = parse("s u a u t:x a:c9 u a u a");
  const auto plan = plan_compaction(live, with_counts(3, 3), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.middle_ids == std::vector<int64_t>({5, 6, 7}));
  BOOST_TEST(plan.orphan_fixes.empty(), plan);
}

BOOST_AUTO_TEST_CASE(a_tool_row_answers_only_an_earlier_call) {
  const auto live = parse("s u t:c1 a:c1 u");
  const tool_group_map groups{live};
  BOOST_TEST(!groups.owner_of(2).has_value());
  BOOST_TEST(groups.answered(3) == std::vector<bool>({false}));
  BOOST_TEST(!groups.cut_splits_group(3));
}

BOOST_AUTO_TEST_CASE(every_cut_inside_a_group_span_splits_it_and_cuts_outside_do_not) {
  //                      0 1    2 3    4    5 6
  const auto live = parse("u a:c1 u a:c2 t:c2 t:c1 u");
  const tool_group_map groups{live};
  const std::vector<bool> want{false, false, true, true, true, true, false, false};
  for (std::size_t c = 0; c <= live.size(); ++c)
    BOOST_TEST(groups.cut_splits_group(c) == want[c], "cut " << c);
  BOOST_TEST(index_or_none(groups.owner_of(4)) == 3);
  BOOST_TEST(index_or_none(groups.owner_of(5)) == 1);
}

// ---------------------------------------------------------------------------
// Rows that are not stored yet.

BOOST_AUTO_TEST_CASE(a_middle_row_without_an_id_makes_the_plan_uncommittable) {
  auto live = parse("s u a u a u a u a");
  live[5].id = 0;
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_TEST(plan.outcome == split_outcome::middle_not_stored);
  BOOST_TEST(plan.nothing_to_compact());
  BOOST_TEST(apply_plan(live, plan, "S").status == apply_status::nothing_to_compact);
}

// ---------------------------------------------------------------------------
// Applying a plan.

BOOST_AUTO_TEST_CASE(applying_a_plan_gives_head_summary_tail_and_archives_the_middle) {
  const auto live = parse("s u a u a u a u a u a");
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  const auto out = apply_plan(live, plan, "SUMMARY");
  BOOST_TEST(out.status == apply_status::applied);
  BOOST_TEST(render(out.live) == "s u a u [A] u a");
  BOOST_TEST(out.archived_ids == std::vector<int64_t>({5, 6, 7, 8, 9}));
  const message& s = out.live[out.summary_index];
  BOOST_TEST(out.summary_index == 4u);
  BOOST_TEST(s.content == "SUMMARY");
  BOOST_TEST(s.is_summary);
  BOOST_TEST(s.active);
  BOOST_TEST(!s.compacted);
  BOOST_TEST(s.replaced_first_id == 5);
  BOOST_TEST(s.replaced_last_id == 9);
  BOOST_TEST(s.timestamp_ms == live[8].timestamp_ms);
  BOOST_TEST(s.session_id == "s-1");
  for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(out.live[i].content == live[i].content);
}

BOOST_AUTO_TEST_CASE(the_replaced_range_spans_middle_ids_out_of_order_after_an_earlier_summary) {
  auto live = parse("s u a u A u a u a u a");
  live[4].id = 500;  // an earlier summary was inserted after rows 5..11 existed
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  const auto out = apply_plan(live, plan, "S");
  BOOST_TEST(out.live[out.summary_index].replaced_first_id == 6);
  BOOST_TEST(out.live[out.summary_index].replaced_last_id == 500);
}

BOOST_AUTO_TEST_CASE(rows_appended_after_planning_are_kept_after_the_tail) {
  auto live = parse("s u a u a u a u a u a");
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  const auto more = parse("s u a u a u a u a u a u a:c1");
  const auto out = apply_plan(more, plan, "S");
  BOOST_TEST(out.status == apply_status::applied);
  BOOST_TEST(render(out.live) == "s u a u [A] u a u a:c1");
}

BOOST_DATA_TEST_CASE(a_plan_for_a_different_transcript_is_refused_as_stale,
                     data::make({"shorter", "middle id changed", "fix row id changed"}), change) {
  const auto live = parse("s u t:x u a u a u a u a");
  const auto plan = plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  auto other = live;
  if (std::string{change} == "shorter") other.pop_back();
  if (std::string{change} == "middle id changed") other[6].id = 77;
  if (std::string{change} == "fix row id changed") other[2].id = 77;
  const auto out = apply_plan(other, plan, "S");
  BOOST_TEST(out.status == apply_status::stale_plan);
  BOOST_TEST(render(out.live) == render(other));
  BOOST_TEST(out.archived_ids.empty());
}

// ---------------------------------------------------------------------------
// Local compaction (T13).

// center, radius, expected middle [lo, hi) or the refusal
BOOST_DATA_TEST_CASE(
  a_local_compaction_takes_the_window_around_the_center_within_the_protections,
  data::make({10u, 10u, 10u, 5u, 2u, 25u, 40u, 14u, 8u})
    ^ data::make({2u, 0u, 100u, 3u, 1u, 1u, 0u, 0u, 0u})
    ^ data::make({8u, 10u, 4u, 4u, 0u, 0u, 0u, 13u, 8u})
    ^ data::make({13u, 11u, 21u, 10u, 0u, 0u, 0u, 16u, 10u})
    ^ data::make({split_outcome::compact, split_outcome::compact, split_outcome::compact,
                  split_outcome::compact, split_outcome::center_in_protected_head,
                  split_outcome::center_in_protected_tail, split_outcome::center_out_of_range,
                  split_outcome::compact, split_outcome::compact}),
  center, radius, lo, hi, outcome) {
  //                      0 1 2 3 4 5 6 7 8    9    10 11 12 13   14   15   16 17 18 19 20 21..
  const auto live = parse("s u a u a u a u a:c1 t:c1 u  a  u  a:c2 t:c2 t:c2 u  a  u  a  u  " +
                          times(5, "a u"));
  // head = [0,4), tail = last 10 rows = [21, 31). Data cases (_0.._8): _2 is
  // clipped by both protections; _3 clipped by the head and widened over the
  // group 8-9; _7 widened both ways over the group 13-15; _8 widened forward
  // over 8-9; _4.._6 are refused with the reason.
  const auto plan = plan_local_compaction(live, center, radius, with_counts(3, 10), k_window);
  BOOST_TEST(plan.outcome == outcome, plan);
  if (outcome == split_outcome::compact) {
    BOOST_TEST(plan.head_end == lo);
    BOOST_TEST(plan.tail_begin == hi);
    BOOST_TEST(plan.middle_ids.size() == hi - lo);
  }
}

BOOST_AUTO_TEST_CASE(a_local_compaction_applies_with_the_rows_on_both_sides_verbatim) {
  const auto live = parse("s u a u a u a u a u a u a u a u a");
  const auto plan = plan_local_compaction(live, 8, 1, with_counts(3, 4), k_window);
  BOOST_REQUIRE(plan.outcome == split_outcome::compact);
  BOOST_TEST(plan.summary_role == msg_role::user);  // row 6 before the window: assistant
  BOOST_TEST(!plan.merge_into_first_tail);           // row 10 after it: assistant
  const auto out = apply_plan(live, plan, "S");
  BOOST_TEST(render(out.live) == "s u a u a u a [U] a u a u a u a");
  BOOST_TEST(out.archived_ids == std::vector<int64_t>({8, 9, 10}));
}

// ---------------------------------------------------------------------------
// Printing.

BOOST_AUTO_TEST_CASE(plans_print_their_cuts_outcome_and_fixes) {
  const auto live = parse("s u t:x u a u a u a");
  std::ostringstream os;
  os << plan_compaction(live, with_counts(3, 2), k_window);
  BOOST_TEST(os.str().find("outcome=compact") != std::string::npos, os.str());
  BOOST_TEST(os.str().find("middle=[4,7)") != std::string::npos, os.str());
  BOOST_TEST(os.str().find("drop_orphan_result index=2") != std::string::npos, os.str());
  std::ostringstream os2;
  os2 << split_outcome::center_in_protected_tail << ' ' << apply_status::stale_plan;
  BOOST_TEST(os2.str() == "center_in_protected_tail stale_plan");
}

// A refused local compaction reaches users (API error, CLI) as describe(), never as
// the enum's name.
BOOST_DATA_TEST_CASE(every_split_outcome_reads_as_a_sentence_not_as_its_name,
                     data::make({split_outcome::compact, split_outcome::middle_empty,
                                 split_outcome::center_out_of_range,
                                 split_outcome::center_in_protected_head,
                                 split_outcome::center_in_protected_tail,
                                 split_outcome::middle_not_stored}),
                     outcome) {
  auto sentence = std::string{describe(outcome)};
  BOOST_TEST(sentence.find('_') == std::string::npos);
  BOOST_TEST(sentence.find(' ') != std::string::npos);
  BOOST_TEST(sentence != "unknown outcome");
}

BOOST_AUTO_TEST_CASE(a_center_in_the_protected_head_says_to_pick_a_later_message) {
  BOOST_TEST(std::string{describe(split_outcome::center_in_protected_head)}.find(
               "protected head") != std::string::npos);
  BOOST_TEST(std::string{describe(split_outcome::center_in_protected_tail)}.find(
               "earlier message") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // split_test
