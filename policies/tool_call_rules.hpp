// The structure of the tool calls a client may store (issue 30 item 2): which rows may
// carry tool_calls, what their ids and arguments must look like, how many one row may
// hold, and that a call is answered at most once. Pure functions over a row (and, for
// the answer rule, the session's live rows); standard library only (and the std-only
// vocabulary in messages/); no clock, no I/O; safe from any thread.
//
// Called at every entry of a client-supplied row before anything is stored:
//   - the gateway's append handler (gw_append_atom), before it opens a session for the
//     key: check_tool_call_structure;
//   - the session's append handler (ss_append_atom): check_tool_call_structure again
//     (its other callers), and append_row (the session's one writer of rows) checks
//     check_answered_once for every tool row, against the live rows plus the tool rows
//     whose append is still in flight.
// Turns' tool_results are checked by policies/tool_loop (check_tool_results): a result
// must answer a pending call, which already excludes a second answer.
//
// Rules, checked in this order (the first broken one is reported):
//   1. calls_on_non_assistant   tool_calls on a system, user or tool row
//   2. too_many_calls           more than max_calls calls in one row
//   3. empty_call_id            a call whose id is ""           (per call, in order)
//   4. duplicate_call_id        an id already used by an earlier call of the row
//   5. arguments_too_large      arguments above max_tool_call_argument_bytes
//   6. call_already_answered    a tool row for a call that already has a result
// (`arguments` is a string by construction: the request decoder refuses other types.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// The default of gateway.max_tool_calls_per_message (config range 1..10000). Agent models
// ask for a handful of parallel calls; 128 leaves room for fan-out tools while a row of
// 10,000 calls (issue 30) is refused.
inline constexpr int64_t default_max_tool_calls_per_message = 128;

// The largest `arguments` of one call, in bytes: 64 KiB. Arguments are the JSON a model
// writes for one tool invocation (a path, a query, a short patch); large payloads belong
// in tool results, which max_content_bytes bounds. Fixed, not configurable: with the
// per-row cap, a row's calls stay below 128 x 64 KiB = 8 MiB by default.
inline constexpr size_t max_tool_call_argument_bytes = 64 * 1024;

enum class tool_call_rule : uint8_t {
  ok,
  calls_on_non_assistant,
  too_many_calls,
  empty_call_id,
  duplicate_call_id,
  arguments_too_large,
  call_already_answered,
};

std::string_view to_string(tool_call_rule r);
std::ostream& operator<<(std::ostream& os, tool_call_rule r);

struct tool_call_check {
  tool_call_rule rule = tool_call_rule::ok;
  size_t index = 0;    // the offending entry of tool_calls (rules 3..5)
  std::string call_id; // the id the rule names (rules 4..6)
  size_t count = 0;    // too_many_calls: the calls in the row; arguments_too_large: bytes
  size_t limit = 0;    // too_many_calls: max_calls; arguments_too_large: the byte bound
  bool ok() const { return rule == tool_call_rule::ok; }
};

// Rules 1..5 for `row`. REQUIRES: max_calls >= 1.
tool_call_check check_tool_call_structure(const message& row, int64_t max_calls);

// Rule 6 for a tool row: the call it answers is that of the last live assistant row
// holding the id (ids may repeat across rows); refused when a live tool row after that
// assistant row, or a tool row in `in_flight` (appends not answered yet), already
// answers it. Any other row, or a tool row whose call is not live (check_tool_row's
// business), passes.
tool_call_check check_answered_once(const std::vector<message>& live,
                                    const std::vector<std::string>& in_flight,
                                    const message& row);

// The 400 text of a refusal: "tool call rule <rule>: ..." naming the index and id; ""
// for ok.
std::string describe_tool_call_refusal(const tool_call_check& c);

} // namespace mneme
