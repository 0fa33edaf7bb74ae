// The check of the rows an agent sends to the context service (issue 27 item 2;
// POST /v1/sessions/{key}/context and the answer of /usage): the whole batch is checked
// against the session's live rows before any row is stored, so a bad row anywhere stores
// nothing. Pure: standard library only (and the std-only vocabulary in messages/); no
// clock, no I/O; safe from any thread. Called by the session actor
// (actors/session/session_context.cpp) in its handler, before its first append.
//
// Rules, per row in order (the first broken one is reported with the row's index):
//   1. tool_calls structure        policies/tool_call_rules.hpp rules 1..5
//   2. empty_assistant             an assistant row with neither content nor tool_calls
//   3. tool row pairing            a tool row must answer a call of an assistant row that
//                                  is live, or earlier in the batch (policies/
//                                  tool_pairing.hpp check_tool_row)
//   4. call answered once          a call gets one result: the live rows, the answers
//                                  still in flight and the earlier rows of the batch
//                                  count (tool_call_rules.hpp rule 6)
// Invariant: ok() implies appending the rows one after the other to `live` passes the
// session's own append checks (check_tool_row, check_answered_once) for every row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/tool_pairing.hpp"
#include "policies/tool_call_rules.hpp"

namespace mneme {

enum class context_row_problem : uint8_t {
  ok,
  tool_calls,      // rules 1 and 4: see `calls`
  empty_assistant, // rule 2
  tool_pairing,    // rule 3: see `pairing`
};

std::string_view to_string(context_row_problem p);
std::ostream& operator<<(std::ostream& os, context_row_problem p);

struct context_rows_check {
  context_row_problem problem = context_row_problem::ok;
  size_t index = 0;          // the offending row of the batch
  tool_call_check calls;     // problem == tool_calls
  tool_row_verdict pairing = tool_row_verdict::ok; // problem == tool_pairing
  std::string call_id;       // the tool row's tool_call_id (tool_pairing)
  bool ok() const { return problem == context_row_problem::ok; }
};

// Checks `rows` as if appended in order after `live`; `in_flight` holds the
// tool_call_id of the session's tool rows whose append is not answered yet.
// REQUIRES: max_calls >= 1.
context_rows_check check_context_rows(const std::vector<message>& live,
                                      const std::vector<std::string>& in_flight,
                                      const std::vector<message>& rows, int64_t max_calls);

// The 400 text naming the rule and the id (the caller names the row); "" for ok.
std::string describe_context_rows_refusal(const context_rows_check& c);

} // namespace mneme
