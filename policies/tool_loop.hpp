// The tool loop of an agent turn (SPEC §8.1, issue 29): which tool calls are pending,
// whether a request's tool_results answer them exactly, whether a user turn may start
// while calls are pending, and whether the loop may call the model once more. Pure
// functions over the session's live rows; standard library only (and the std-only
// vocabulary in messages/); no clock, no I/O; safe from any thread. Called by the
// session actor before it stores anything of a turn.
//
// The loop, per user message (states of the session's transcript, derived from the
// live rows, so a rehydrated session is in the same state):
//
//      user turn ──► [model call] ──text──► idle (the loop ended)
//                        │  ▲
//              tool_calls│  │ tool_results (every pending call answered)
//                        ▼  │
//                     pending ──user turn + abandon_pending──► stub results, new loop
//
// Transitions and who performs them:
//   idle -> model call         decide_user_turn(0 pending) == proceed
//   pending -> model call      check_tool_results(...) ok and decide_next_round(...)
//                              == call_model
//   pending -> cap             decide_next_round(...) == cap_reached: the results are
//                              stored, the model is not called (errc::tool_round_cap)
//   pending -> new loop        decide_user_turn(n > 0, abandon) == abandon_pending:
//                              abandoned_result_rows(pending) are stored first
//   pending -> refused         decide_user_turn(n > 0, no abandon) == refuse
//                              (errc::tool_results_pending, nothing stored)
//
// Invariants (what the session keeps true by calling these before it stores):
//   1. No tool row is stored unless it answers a pending call (check_tool_results).
//   2. A user row is never stored while a call is pending (decide_user_turn): no orphan
//      call ever reaches the model.
//   3. tool_rounds_in_loop(live) <= max_rounds whenever the model is called.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"

namespace mneme {

// The content of the stub result stored for each pending call a user abandons.
inline constexpr std::string_view abandoned_call_result =
  "[tool call abandoned: the user sent a new message before its result]";

// The prefix of a result sent with is_error: true.
inline constexpr std::string_view tool_error_prefix = "[tool error] ";

// The default of gateway.max_tool_rounds: model answers with tool calls per user turn.
inline constexpr int64_t default_max_tool_rounds = 64;

struct pending_tool_calls {
  std::optional<size_t> assistant_index; // the live index of the pending assistant row
  std::vector<tool_call> calls;          // its calls without a result yet, in call order
  bool any() const { return !calls.empty(); }
};

// The pending calls: those of the last assistant row with tool_calls when only tool rows
// follow it, minus the calls those tool rows answer. Nothing pending otherwise.
pending_tool_calls find_pending_calls(const std::vector<message>& live);

enum class tool_results_verdict : uint8_t {
  ok,
  no_pending_calls, // tool_results sent while nothing waits for a result
  empty_id,         // a result without a tool_call_id
  unknown_id,       // a result for a call that is not pending
  duplicate_id,     // two results for the same call
  missing_result,   // a pending call without a result
};

std::string_view to_string(tool_results_verdict v);
std::ostream& operator<<(std::ostream& os, tool_results_verdict v);

struct tool_results_check {
  tool_results_verdict verdict = tool_results_verdict::ok;
  std::string call_id; // the id the verdict names ("" for ok, no_pending_calls, empty_id)
  size_t index = 0;    // the offending entry of tool_results (empty_id, unknown, duplicate)
};

// Checks `results` against `pending` in this order: nothing pending; per result in
// order: empty id, unknown id, duplicate id; then the first pending call (in call order)
// without a result.
tool_results_check check_tool_results(const pending_tool_calls& pending,
                                      const std::vector<tool_result_input>& results);

// The 400 text for a refused check, naming the field and the id; "" for ok.
std::string describe_tool_results_refusal(const tool_results_check& c);

// The tool rows to store for `results` (REQUIRES: check_tool_results ok), in the order
// of the results; tool_name from the call, content prefixed by tool_error_prefix for
// is_error.
std::vector<message> tool_result_rows(const pending_tool_calls& pending,
                                      const std::vector<tool_result_input>& results);

// One stub tool row (abandoned_call_result) per pending call, in call order.
std::vector<message> abandoned_result_rows(const pending_tool_calls& pending);

enum class user_turn_verdict : uint8_t { proceed, refuse_pending, abandon_pending };

std::string_view to_string(user_turn_verdict v);
std::ostream& operator<<(std::ostream& os, user_turn_verdict v);

user_turn_verdict decide_user_turn(const pending_tool_calls& pending, bool abandon_pending);
// How the refusal of a user turn while calls are pending (errc::tool_results_pending)
// ends: the way out in the session routes' fields. A door replaces it with its own.
inline constexpr std::string_view pending_calls_way_out = "; send tool_results, or abandon_pending: true";

// Assistant rows with tool_calls after the last real user message and after the last
// text answer (all of them when there is neither): the tool rounds the current loop ran.
int64_t tool_rounds_in_loop(const std::vector<message>& live);

enum class round_verdict : uint8_t { call_model, cap_reached };

std::string_view to_string(round_verdict v);
std::ostream& operator<<(std::ostream& os, round_verdict v);

// After the results of round `rounds_done` arrived: call the model again unless the
// loop already ran `max_rounds` rounds. REQUIRES: max_rounds >= 1.
round_verdict decide_next_round(int64_t rounds_done, int64_t max_rounds);

// The finish_reason a turn reply reports: "tool_calls" for an answer with calls, the
// upstream's "length" or "content_filter" as sent, else "stop".
std::string finish_reason_of(bool has_tool_calls, std::string_view upstream);

} // namespace mneme
