// Tests of the doors' history matching (policies/history_match.hpp): the print folded
// incrementally equals the print folded at once (P1-P3), a resent prefix is verified
// from the print alone, archived rows match and hidden rows (summaries, the daemon's
// prompt, built-in rounds, rolled-back rows) do not, a contradiction rolls back to the
// last common row, retries and replays, and a conversation across continuations.
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include "policies/history_match.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(history_match_test)

using namespace mneme;

namespace {

message oa_msg(msg_role role, std::string content) {
  message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

message oa_row(int64_t id, msg_role role, std::string content) {
  auto m = oa_msg(role, std::move(content));
  m.id = id;
  return m;
}

// A stored session: the daemon's system row, then u/a exchanges; ids from 1.
std::vector<message> oa_session(int exchanges) {
  std::vector<message> rows{oa_row(1, msg_role::system, "daemon prompt")};
  for (int i = 0; i < exchanges; ++i) {
    rows.push_back(oa_row(static_cast<int64_t>(rows.size()) + 1, msg_role::user,
                          "question " + std::to_string(i)));
    rows.push_back(oa_row(static_cast<int64_t>(rows.size()) + 1, msg_role::assistant,
                          "answer " + std::to_string(i)));
  }
  return rows;
}

// What a full-history client sends back: its own transcript.
std::vector<message> oa_transcript(int exchanges) {
  std::vector<message> out;
  for (int i = 0; i < exchanges; ++i) {
    out.push_back(oa_msg(msg_role::user, "question " + std::to_string(i)));
    out.push_back(oa_msg(msg_role::assistant, "answer " + std::to_string(i)));
  }
  return out;
}

history_print oa_print(const std::vector<message>& rows, const visibility_rules& r = {}) {
  history_print p;
  fold_rows(p, rows, r);
  return p;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_print_folded_in_pieces_equals_the_print_folded_at_once) {
  std::mt19937 rng(7);
  auto rows = oa_session(40);
  rows[5].active = false; // archived by a compaction: still visible
  rows[5].compacted = true;
  auto summary = oa_row(0, msg_role::user, "[CONTEXT COMPACTION] ...");
  summary.is_summary = true;
  rows.insert(rows.begin() + 20, summary);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i].id = static_cast<int64_t>(i) + 1;
  auto whole = oa_print(rows);
  for (int trial = 0; trial < 20; ++trial) {
    history_print p;
    size_t at = 0;
    while (at < rows.size()) {
      auto n = std::uniform_int_distribution<size_t>(0, 7)(rng);
      std::vector<message> piece(rows.begin() + static_cast<std::ptrdiff_t>(at),
                                 rows.begin() + static_cast<std::ptrdiff_t>(std::min(rows.size(), at + n)));
      fold_rows(p, piece, {});
      at += piece.size();
    }
    BOOST_TEST(p.rows == whole.rows);
    BOOST_TEST(p.chain == whole.chain);
    BOOST_TEST(p.answered_rows == whole.answered_rows);
    BOOST_TEST(p.answered_chain == whole.answered_chain);
    BOOST_TEST(p.last_row_id == whole.last_row_id);
  }
  BOOST_TEST(whole.rows == 80); // the daemon's system row and the summary are hidden
}

BOOST_AUTO_TEST_CASE(a_resent_transcript_with_one_new_message_is_matched_from_the_print) {
  auto p = oa_print(oa_session(3));
  auto sent = oa_transcript(3);
  sent.push_back(oa_msg(msg_role::user, "question 3"));
  auto plan = plan_from_print(sent, style_of(sent), p);
  BOOST_TEST(!plan.need_rows);
  BOOST_TEST(plan.known == 6u);
  BOOST_TEST(!plan.roll_back);
  std::string why;
  auto fresh = split_new_messages(sent, plan.known, why);
  BOOST_REQUIRE(fresh);
  BOOST_TEST(fresh->appended.empty());
  BOOST_TEST(fresh->user_content == "question 3");
}

BOOST_AUTO_TEST_CASE(an_answer_streamed_with_surrounding_whitespace_still_matches) {
  auto rows = oa_session(1);
  auto p = oa_print(rows);
  auto sent = oa_transcript(1);
  sent[1].content = "\n answer 0 \n";
  sent.push_back(oa_msg(msg_role::user, "next"));
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).known == 2u);
}

BOOST_AUTO_TEST_CASE(tool_calls_and_results_are_part_of_the_match) {
  std::vector<message> rows{oa_row(1, msg_role::user, "weather?")};
  auto call = oa_row(2, msg_role::assistant, "");
  call.tool_calls = {{"call_1", "get_weather", "{\"city\":\"Oslo\"}"}};
  rows.push_back(call);
  auto result = oa_row(3, msg_role::tool, "cold");
  result.tool_call_id = "call_1";
  rows.push_back(result);
  visibility_rules no_prompt;
  no_prompt.daemon_system_prompt = false;
  auto p = oa_print(rows, no_prompt);
  std::vector<message> sent;
  for (auto m : rows) {
    m.id = 0;
    sent.push_back(m);
  }
  sent.push_back(oa_msg(msg_role::user, "thanks"));
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).known == 3u);
  sent[1].tool_calls[0].arguments = "{\"city\":\"Bergen\"}"; // an edited call: a branch
  auto plan = plan_from_print(sent, history_style::full_history, p);
  BOOST_TEST(plan.need_rows);
  auto full = plan_from_rows(sent, history_style::full_history, visible_rows(rows, no_prompt, nullptr), 0);
  BOOST_TEST(full.known == 1u);
  BOOST_TEST(full.roll_back);
  BOOST_TEST(full.last_kept_id == 1);
  BOOST_TEST(full.rebased_rows == 2);
}

BOOST_AUTO_TEST_CASE(call_arguments_match_whatever_the_whitespace_between_their_tokens) {
  std::vector<message> rows{oa_row(1, msg_role::user, "weather?")};
  auto call = oa_row(2, msg_role::assistant, "");
  call.tool_calls = {{"call_1", "get_weather", "{ \"city\": \"Oslo  Nord\",\n \"days\": [1, 2] }"}};
  rows.push_back(call);
  visibility_rules no_prompt;
  no_prompt.daemon_system_prompt = false;
  auto p = oa_print(rows, no_prompt);
  std::vector<message> sent{oa_msg(msg_role::user, "weather?"), oa_msg(msg_role::assistant, "")};
  // The same value written compactly (a door that got it as a JSON value): matched.
  sent[1].tool_calls = {{"call_1", "get_weather", "{\"city\":\"Oslo  Nord\",\"days\":[1,2]}"}};
  sent.push_back(oa_msg(msg_role::user, "thanks"));
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).known == 2u);
  BOOST_TEST(same_message(sent[1], rows[1]));
  // Whitespace inside a string is content: a different value.
  sent[1].tool_calls[0].arguments = "{\"city\":\"Oslo Nord\",\"days\":[1,2]}";
  BOOST_TEST(!same_message(sent[1], rows[1]));
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).need_rows);
  // An escaped quote does not end the string: the space after it is content.
  rows[1].tool_calls[0].arguments = "{\"q\": \"a\\\" b\"}";
  sent[1].tool_calls[0].arguments = "{\"q\":\"a\\\" b\"}";
  BOOST_TEST(same_message(sent[1], rows[1]));
  sent[1].tool_calls[0].arguments = "{\"q\":\"a\\\"b\"}";
  BOOST_TEST(!same_message(sent[1], rows[1]));
  // No arguments at all are an empty object.
  rows[1].tool_calls[0].arguments = "";
  sent[1].tool_calls[0].arguments = "{ }";
  BOOST_TEST(same_message(sent[1], rows[1]));
  sent[1].tool_calls[0].arguments = "[]";
  BOOST_TEST(!same_message(sent[1], rows[1]));
}

BOOST_AUTO_TEST_CASE(an_edited_earlier_message_rolls_back_to_the_last_common_row) {
  auto rows = oa_session(5); // ids: 1 prompt, 2 q0, 3 a0, 4 q1, 5 a1, 6 q2 ...
  auto sent = oa_transcript(2);
  sent[2].content = "question 1, edited";
  sent.push_back(oa_msg(msg_role::user, "go on"));
  auto p = oa_print(rows);
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).need_rows);
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  BOOST_TEST(leading == 1);
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(plan.known == 2u);
  BOOST_TEST(plan.roll_back);
  BOOST_TEST(plan.last_kept_id == 3); // a0
  BOOST_TEST(plan.rebased_rows == 8);
  std::string why;
  auto fresh = split_new_messages(sent, plan.known, why);
  BOOST_REQUIRE(fresh);
  BOOST_TEST(fresh->appended.size() == 2u); // the edited q1 and a1 are stored again
  BOOST_TEST(fresh->user_content == "go on");
}

BOOST_AUTO_TEST_CASE(a_branch_at_the_first_message_keeps_the_daemon_prompt) {
  auto rows = oa_session(2);
  std::vector<message> sent{oa_msg(msg_role::system, "client prompt"),
                            oa_msg(msg_role::user, "hello")};
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto plan = plan_from_rows(sent, style_of(sent), visible, leading);
  BOOST_TEST(plan.known == 0u);
  BOOST_TEST(plan.last_kept_id == 1);
  BOOST_TEST(plan.rebased_rows == 4);
}

BOOST_AUTO_TEST_CASE(archived_rows_match_and_rolled_back_rows_do_not) {
  auto rows = oa_session(3);
  rows[1].active = false; // q0 archived
  rows[1].compacted = true;
  rows[6].active = false; // a2 rolled back: not part of the branch
  auto p = oa_print(rows);
  BOOST_TEST(p.rows == 5);
  auto sent = oa_transcript(3);
  sent.pop_back();
  sent.push_back(oa_msg(msg_role::assistant, "another answer 2"));
  sent.push_back(oa_msg(msg_role::user, "and now?"));
  auto plan = plan_from_print(sent, history_style::full_history, p);
  BOOST_TEST(!plan.need_rows);
  BOOST_TEST(plan.known == 5u);
  std::string why;
  auto fresh = split_new_messages(sent, plan.known, why);
  BOOST_REQUIRE(fresh);
  BOOST_TEST(fresh->appended.size() == 1u);
}

BOOST_AUTO_TEST_CASE(builtin_rounds_are_hidden_from_the_match) {
  visibility_rules r;
  r.builtin_names = {"session_search", "memory"};
  std::vector<message> rows{oa_row(1, msg_role::system, "daemon"),
                            oa_row(2, msg_role::user, "what did we say?")};
  auto call = oa_row(3, msg_role::assistant, "");
  call.tool_calls = {{"b1", "session_search", "{}"}};
  rows.push_back(call);
  auto res = oa_row(4, msg_role::tool, "found it");
  res.tool_call_id = "b1";
  rows.push_back(res);
  rows.push_back(oa_row(5, msg_role::assistant, "we said hi"));
  history_print p;
  fold_rows(p, {rows[0], rows[1], rows[2]}, r); // the round spans two reads
  fold_rows(p, {rows[3], rows[4]}, r);
  BOOST_TEST(p.rows == 2);
  std::vector<message> sent{oa_msg(msg_role::user, "what did we say?"),
                            oa_msg(msg_role::assistant, "we said hi"),
                            oa_msg(msg_role::user, "thanks")};
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).known == 2u);
}

BOOST_AUTO_TEST_CASE(a_resent_answered_transcript_replays_the_stored_answer) {
  auto rows = oa_session(2);
  auto sent = oa_transcript(2);
  auto p = oa_print(rows);
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).need_rows);
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(plan.replay);
  BOOST_TEST(!plan.roll_back);
  BOOST_TEST(plan.replayed.id == 5);
}

BOOST_AUTO_TEST_CASE(a_resent_unanswered_message_is_rolled_back_and_run_again) {
  auto rows = oa_session(1);
  rows.push_back(oa_row(4, msg_role::user, "failed question")); // its call failed
  auto sent = oa_transcript(1);
  sent.push_back(oa_msg(msg_role::user, "failed question"));
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto full = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(full.roll_back);
  BOOST_TEST(full.last_kept_id == 3);
  BOOST_TEST(full.known == 2u);
  // The stateful retry: the same message alone.
  std::vector<message> again{oa_msg(msg_role::user, "failed question")};
  auto p = oa_print(rows);
  BOOST_TEST(plan_from_print(again, history_style::stateful, p).need_rows);
  auto st = plan_from_rows(again, history_style::stateful, visible, leading);
  BOOST_TEST(st.roll_back);
  BOOST_TEST(st.last_kept_id == 3);
  BOOST_TEST(st.known == 0u);
  // A stateful message after an answer is simply new, even when its text repeats.
  std::vector<message> yes{oa_msg(msg_role::user, "question 0")};
  auto plain = plan_from_print(yes, history_style::stateful, oa_print(oa_session(1)));
  BOOST_TEST(!plain.need_rows);
  BOOST_TEST(plain.known == 0u);
}

BOOST_AUTO_TEST_CASE(a_retried_first_request_keeps_the_clients_system_message) {
  std::vector<message> rows{oa_row(1, msg_role::system, "daemon prompt"),
                            oa_row(2, msg_role::system, "client prompt"),
                            oa_row(3, msg_role::user, "hello")}; // its model call failed
  std::vector<message> sent{oa_msg(msg_role::system, "client prompt"),
                            oa_msg(msg_role::user, "hello")};
  int64_t leading = 0;
  auto plan = plan_from_rows(sent, history_style::full_history, visible_rows(rows, {}, &leading),
                             leading);
  BOOST_TEST(plan.roll_back);
  BOOST_TEST(plan.last_kept_id == 2);
  BOOST_TEST(plan.known == 1u);
}

BOOST_AUTO_TEST_CASE(styles_follow_the_sent_roles) {
  BOOST_TEST(style_of({oa_msg(msg_role::user, "x")}) == history_style::stateful);
  auto tool = oa_msg(msg_role::tool, "r");
  BOOST_TEST(style_of({tool, tool}) == history_style::stateful);
  BOOST_TEST(style_of({oa_msg(msg_role::system, "s"), oa_msg(msg_role::user, "x")})
             == history_style::full_history);
  BOOST_TEST(style_of(oa_transcript(1)) == history_style::full_history);
}

BOOST_AUTO_TEST_CASE(new_messages_must_end_with_a_user_or_tool_message) {
  std::string why;
  auto sent = oa_transcript(1);
  BOOST_TEST(!split_new_messages(sent, 0, why));
  BOOST_TEST(why.find("assistant") != std::string::npos);
  auto call = oa_msg(msg_role::assistant, "");
  call.tool_calls = {{"c1", "f", "{}"}, {"c2", "f", "{}"}};
  auto r1 = oa_msg(msg_role::tool, "one");
  r1.tool_call_id = "c1";
  auto r2 = oa_msg(msg_role::tool, "two");
  r2.tool_call_id = "c2";
  std::vector<message> loop{oa_msg(msg_role::user, "go"), call, r1, r2};
  auto fresh = split_new_messages(loop, 2, why);
  BOOST_REQUIRE(fresh);
  BOOST_TEST(fresh->appended.empty());
  BOOST_TEST(fresh->tool_results.size() == 2u);
}

BOOST_AUTO_TEST_CASE(new_messages_leaving_a_call_without_its_result_are_refused_unless_abandoned) {
  auto call = oa_msg(msg_role::assistant, "");
  call.tool_calls = {{"c1", "f", "{}"}, {"c2", "f", "{}"}};
  auto r1 = oa_msg(msg_role::tool, "one");
  r1.tool_call_id = "c1";
  auto r2 = oa_msg(msg_role::tool, "two");
  r2.tool_call_id = "c2";
  auto go = oa_msg(msg_role::user, "go");
  auto next = oa_msg(msg_role::user, "next");
  struct {
    std::vector<message> sent;
    size_t known;
    bool refused;
  } cases[] = {
    {{go, call, r1, r2, next}, 0, false}, // every call answered
    {{go, call, r1, next}, 0, true},      // c2 unanswered, then a user message
    {{go, call, next}, 0, true},          // no result at all
    {{go, call, r2, r1, next}, 0, false}, // results in any order
    {{go, call, r1, next}, 3, false},     // the call is known (stored): the turn decides
    {{go, call, r1}, 0, true},            // trailing results that leave c2 unanswered
  };
  for (auto& c : cases) {
    std::string why;
    auto fresh = split_new_messages(c.sent, c.known, why);
    BOOST_TEST(!fresh == c.refused, why);
    if (c.refused) {
      BOOST_TEST(why.find("message 1 ") != std::string::npos, why);
      BOOST_TEST(why.find("c2") != std::string::npos, why);
      BOOST_TEST(split_new_messages(c.sent, c.known, why, true).has_value());
    }
  }
}

namespace {

// A parent session P (ids 1.., timestamps 1000 + id) and its continuation: copies of
// `copied` (indexes into P, same message and timestamp, new ids), a summary among them,
// then `own` new rows; ids continue after P's.
struct oa_continuation {
  std::vector<message> parent;
  std::vector<message> rows;
  int64_t creation_end_id = 0; // the last creation row's id
};

oa_continuation oa_continue(std::vector<message> parent, const std::vector<size_t>& copied,
                            const std::vector<message>& own) {
  for (auto& m : parent)
    m.timestamp_ms = 1000 + m.id;
  oa_continuation c{parent, {}, 0};
  int64_t id = parent.back().id;
  auto add = [&](message m) {
    m.id = ++id;
    c.rows.push_back(m);
  };
  for (size_t k = 0; k < copied.size(); ++k) {
    if (k == 1) { // the summary after the first copy (the head's system row)
      auto summary = oa_msg(msg_role::user, "[CONTEXT COMPACTION] earlier turns");
      summary.is_summary = true;
      summary.timestamp_ms = 5000;
      add(summary);
    }
    add(parent[copied[k]]);
  }
  c.creation_end_id = id;
  for (auto m : own) {
    m.timestamp_ms = 9000 + id;
    add(m);
  }
  return c;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_continuations_creation_rows_are_its_copies_and_summaries) {
  auto c = oa_continue(oa_session(4), {0, 7, 8},
                       {oa_msg(msg_role::user, "question 5"), oa_msg(msg_role::assistant, "x")});
  BOOST_TEST(creation_row_count(c.parent, c.rows) == 4u); // 3 copies + the summary
  // A new row equal to a parent row but written later is the continuation's own.
  auto resent = c.rows;
  resent[4] = c.parent[7];
  resent[4].timestamp_ms = 99999;
  BOOST_TEST(creation_row_count(c.parent, resent) == 4u);
  BOOST_TEST(creation_row_count(c.parent, {}) == 0u);
  BOOST_TEST(is_continuation_end("continued_in_child"));
  BOOST_TEST(is_continuation_end("compaction_exhausted"));
  BOOST_TEST(!is_continuation_end("closed"));
}

BOOST_AUTO_TEST_CASE(a_full_transcript_matches_the_conversation_across_a_child_session) {
  // P answered 4 exchanges and took a 5th question; the child holds the system row, a
  // summary and the tail (the last answer and the question), then answers it.
  auto parent = oa_session(4);
  parent.push_back(oa_row(10, msg_role::user, "question 4"));
  auto c = oa_continue(parent, {0, 8, 9}, {oa_msg(msg_role::assistant, "answer 4")});
  auto conversation = c.parent;
  continue_conversation(conversation, c.rows, creation_row_count(c.parent, c.rows));
  auto sent = oa_transcript(5);
  sent.push_back(oa_msg(msg_role::user, "question 5"));
  int64_t leading = 0;
  auto visible = visible_rows(conversation, {}, &leading);
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(plan.known == 10u);
  BOOST_TEST(!plan.roll_back);
  auto p = oa_print(conversation);
  BOOST_TEST(plan_from_print(sent, history_style::full_history, p).known == 10u);
  // Matched against the child alone, the same transcript is a branch after the head.
  int64_t child_leading = 0;
  auto child_only = visible_rows(c.rows, {}, &child_leading);
  BOOST_TEST(plan_from_rows(sent, history_style::full_history, child_only, child_leading)
               .roll_back);
}

BOOST_AUTO_TEST_CASE(a_reset_that_ran_the_question_again_holds_it_once) {
  auto parent = oa_session(3);
  parent.push_back(oa_row(8, msg_role::user, "question 3")); // unanswered: exhausted
  auto c = oa_continue(parent, {0, 1},
                       {oa_msg(msg_role::user, "question 3"), oa_msg(msg_role::assistant, "answer 3")});
  auto conversation = c.parent;
  continue_conversation(conversation, c.rows, creation_row_count(c.parent, c.rows));
  auto visible = visible_rows(conversation, {}, nullptr);
  auto sent = oa_transcript(4);
  BOOST_REQUIRE(visible.size() == sent.size());
  for (size_t i = 0; i < sent.size(); ++i)
    BOOST_TEST(same_message(visible[i], sent[i]), i);
  // Not run again (the new session's own rows start elsewhere): the tail stays.
  auto other = oa_continue(parent, {0, 1}, {oa_msg(msg_role::user, "something else")});
  auto kept = other.parent;
  continue_conversation(kept, other.rows, creation_row_count(other.parent, other.rows));
  BOOST_TEST(visible_rows(kept, {}, nullptr).size() == 8u);
}

BOOST_AUTO_TEST_CASE(a_rollback_in_a_continuation_stays_in_its_own_rows) {
  auto parent = oa_session(2);
  auto c = oa_continue(parent, {0, 3, 4},
                       {oa_msg(msg_role::user, "question 2"), oa_msg(msg_role::assistant, "answer 2")});
  auto conversation = c.parent;
  continue_conversation(conversation, c.rows, creation_row_count(c.parent, c.rows));
  int64_t leading = 0;
  auto visible = visible_rows(conversation, {}, &leading);
  BOOST_REQUIRE(visible.size() == 6u);
  // The client edited its last question (in the continuation's own rows).
  auto sent = oa_transcript(2);
  sent.push_back(oa_msg(msg_role::user, "question 2, edited"));
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_REQUIRE(plan.roll_back);
  auto fitted = fit_to_continuation(plan, visible, c.creation_end_id);
  BOOST_REQUIRE(fitted);
  BOOST_TEST(fitted->last_kept_id == c.creation_end_id); // not the parent's row: own rows only
  BOOST_TEST(fitted->rebased_rows == 2);
  // An edit before the continuation would roll back a parent row: not fit.
  auto early = oa_transcript(1);
  early.push_back(oa_msg(msg_role::user, "question 1, edited"));
  auto branch = plan_from_rows(early, history_style::full_history, visible, leading);
  BOOST_REQUIRE(branch.roll_back);
  BOOST_TEST(!fit_to_continuation(branch, visible, c.creation_end_id));
  history_plan none;
  BOOST_TEST(fit_to_continuation(none, visible, c.creation_end_id).has_value());
}

BOOST_AUTO_TEST_CASE(a_continuations_conversation_is_its_parents_rows_then_its_own) {
  auto parent = oa_session(4);
  parent.push_back(oa_row(10, msg_role::user, "question 4"));
  auto c = oa_continue(parent, {0, 8, 9}, {oa_msg(msg_role::assistant, "answer 4")});
  auto conv = continued_conversation(conversation_of(c.parent), c.rows);
  BOOST_TEST(conv.boundary_id == c.creation_end_id);
  BOOST_TEST(conv.own.size() == c.rows.size());
  BOOST_REQUIRE(conv.rows.size() == c.parent.size() + 1); // the parent, then the answer
  BOOST_TEST(conv.rows.back().id == c.rows.back().id);
  // The print covers the creation rows without folding them: P1-P3 over the rows.
  auto p = print_of_conversation(conv, {}, "child");
  BOOST_TEST(p.session_id == "child");
  BOOST_TEST(p.last_row_id == c.rows.back().id);
  BOOST_TEST(p.rows == oa_print(conv.rows).rows);
  BOOST_TEST(p.chain == oa_print(conv.rows).chain);
  // A continuation without creation rows keeps its parent's last row as the boundary.
  auto bare = continued_conversation(conversation_of(c.parent),
                                     {oa_row(40, msg_role::user, "fresh start")});
  BOOST_TEST(bare.boundary_id == c.parent.back().id);
  BOOST_TEST(print_of_conversation(conversation_of({}), {}, "s").last_row_id == 0);
}

BOOST_AUTO_TEST_CASE(a_conversation_plan_rolls_back_own_rows_or_matches_the_session_alone) {
  auto parent = oa_session(2);
  auto c = oa_continue(parent, {0, 3, 4},
                       {oa_msg(msg_role::user, "question 2"), oa_msg(msg_role::assistant, "answer 2")});
  auto conv = continued_conversation(conversation_of(c.parent), c.rows);
  // Across the continuation: the whole transcript and one new question.
  auto sent = oa_transcript(3);
  sent.push_back(oa_msg(msg_role::user, "question 3"));
  auto plan = plan_from_conversation(sent, history_style::full_history, conv, {});
  BOOST_TEST(!plan.roll_back);
  BOOST_TEST(plan.known == 6u);
  // An edit in the continuation's own rows: rolled back to the boundary, not before.
  auto edited = oa_transcript(2);
  edited.push_back(oa_msg(msg_role::user, "question 2, edited"));
  auto own_edit = plan_from_conversation(edited, history_style::full_history, conv, {});
  BOOST_REQUIRE(own_edit.roll_back);
  BOOST_TEST(own_edit.last_kept_id == c.creation_end_id);
  BOOST_TEST(own_edit.rebased_rows == 2);
  // An edit before the continuation: the plan of the newest session's rows alone.
  auto early = oa_transcript(1);
  early.push_back(oa_msg(msg_role::user, "question 1, edited"));
  int64_t leading = 0;
  auto alone = visible_rows(c.rows, {}, &leading);
  auto want = plan_from_rows(early, history_style::full_history, alone, leading);
  auto got = plan_from_conversation(early, history_style::full_history, conv, {});
  BOOST_TEST(got.roll_back == want.roll_back);
  BOOST_TEST(got.known == want.known);
  BOOST_TEST(got.last_kept_id == want.last_kept_id);
  BOOST_TEST(got.rebased_rows == want.rebased_rows);
  // A session that continues nothing is planned from its rows as they are.
  auto session = oa_session(2);
  auto single = plan_from_conversation(edited, history_style::full_history,
                                       conversation_of(session), {});
  auto direct = plan_from_rows(edited, history_style::full_history,
                               visible_rows(session, {}, &leading), leading);
  BOOST_TEST(single.last_kept_id == direct.last_kept_id);
  BOOST_TEST(single.known == direct.known);
}

// A compacted window resent (the Responses door's compaction item): q0..a1 (ids 2-5)
// were summarized; the summary row (id 12) is live, the replaced rows archived.
namespace {
std::vector<message> oa_compacted_session() {
  auto rows = oa_session(5); // 1 prompt, 2 q0, 3 a0, ... 10 q4, 11 a4
  for (size_t i = 1; i <= 4; ++i) {
    rows[i].active = false;
    rows[i].compacted = true;
  }
  auto summary = oa_row(12, msg_role::user, "summary of q0-a1");
  summary.is_summary = true;
  summary.replaced_first_id = 2;
  summary.replaced_last_id = 5;
  rows.push_back(summary);
  return rows;
}

message oa_summary_item(int64_t first, int64_t last) {
  auto m = oa_msg(msg_role::user, "summary of q0-a1");
  m.is_summary = true;
  m.replaced_first_id = first;
  m.replaced_last_id = last;
  return m;
}

// The window a client holds after the compaction: the summary, then q2..a4.
std::vector<message> oa_window() {
  std::vector<message> sent{oa_summary_item(2, 5)};
  auto rest = oa_transcript(5);
  sent.insert(sent.end(), rest.begin() + 4, rest.end());
  return sent;
}
} // namespace

BOOST_AUTO_TEST_CASE(a_resent_compacted_window_matches_the_rows_its_summary_replaced) {
  auto rows = oa_compacted_session();
  auto sent = oa_window();
  sent.push_back(oa_msg(msg_role::user, "go on"));
  BOOST_TEST(style_of(sent) == history_style::full_history);
  BOOST_TEST(plan_from_print(sent, history_style::full_history, oa_print(rows)).need_rows);
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(!plan.roll_back);
  BOOST_TEST(plan.known == 7u); // the summary and q2..a4
  std::string why;
  auto fresh = split_new_messages(sent, plan.known, why);
  BOOST_REQUIRE(fresh);
  BOOST_TEST(fresh->appended.empty());
  BOOST_TEST(fresh->user_content == "go on");
}

BOOST_AUTO_TEST_CASE(a_compacted_window_resent_whole_replays_and_an_edit_after_it_rolls_back) {
  auto rows = oa_compacted_session();
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto plan = plan_from_rows(oa_window(), history_style::full_history, visible, leading);
  BOOST_TEST(plan.replay);
  BOOST_TEST(plan.replayed.id == 11);
  auto edited = oa_window();
  edited[3].content = "question 3, edited";
  edited.resize(4);
  auto branch = plan_from_rows(edited, history_style::full_history, visible, leading);
  BOOST_TEST(branch.known == 3u);
  BOOST_TEST(branch.roll_back);
  BOOST_TEST(branch.last_kept_id == 7); // a2
  BOOST_TEST(branch.rebased_rows == 4);
}

BOOST_AUTO_TEST_CASE(a_summary_item_of_other_rows_matches_nothing_and_is_never_stored) {
  auto rows = oa_compacted_session();
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  for (auto range : {std::pair<int64_t, int64_t>{4, 5}, {6, 7}, {0, 3}, {5, 2}}) {
    auto sent = oa_window();
    sent[0] = oa_summary_item(range.first, range.second);
    sent.push_back(oa_msg(msg_role::user, "go on"));
    auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
    BOOST_TEST(plan.known == 0u);
    std::string why;
    BOOST_TEST(!split_new_messages(sent, plan.known, why));
    BOOST_TEST(why.find("message 0 is a summary of rows") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(the_client_window_keeps_summaries_and_hides_the_daemon_prompt) {
  auto rows = oa_compacted_session();
  std::vector<message> live{rows[0], rows.back()}; // live order: the summary in place
  live.insert(live.end(), rows.begin() + 5, rows.end() - 1);
  auto window = client_window(live, {});
  BOOST_REQUIRE(window.size() == 7u);
  BOOST_TEST(window[0].is_summary);
  BOOST_TEST(window[1].id == 6);
  int64_t leading = 0;
  auto visible = visible_rows(rows, {}, &leading);
  auto sent = window;
  sent.push_back(oa_msg(msg_role::user, "go on"));
  auto plan = plan_from_rows(sent, history_style::full_history, visible, leading);
  BOOST_TEST(!plan.roll_back);
  BOOST_TEST(plan.known == 7u);
}

BOOST_AUTO_TEST_SUITE_END() // history_match_test
