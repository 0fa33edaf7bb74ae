// Tool-row pairing at append time (SPEC §3: no tool row may reference a call id
// that is not in context). A pure check over the live context a session holds and
// the row a caller wants to append: a tool row must name, in tool_call_id, a call of
// an assistant row that is live. Standard library only; no I/O, no clock. Called by
// the session actor (its own thread) before it stores an appended row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

enum class tool_row_verdict : uint8_t {
  ok,              // not a tool row, or its call is live
  missing_call_id, // a tool row with an empty tool_call_id
  unknown_call_id, // no live assistant row has a call with this id
};

std::string_view to_string(tool_row_verdict v);

// Whether `row` may be appended after `live` (the session's live rows, in order).
tool_row_verdict check_tool_row(const std::vector<message>& live, const message& row);

// A caller-facing explanation of a refusal, naming the tool_call_id; "" for ok.
std::string describe_tool_row_refusal(tool_row_verdict v, const message& row);

} // namespace mneme
