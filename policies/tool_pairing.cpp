// Tool-row pairing at append time; see tool_pairing.hpp.
#include "policies/tool_pairing.hpp"

namespace mneme {

std::string_view to_string(tool_row_verdict v) {
  switch (v) {
    case tool_row_verdict::ok: return "ok";
    case tool_row_verdict::missing_call_id: return "missing_call_id";
    case tool_row_verdict::unknown_call_id: return "unknown_call_id";
  }
  return "unknown";
}

tool_row_verdict check_tool_row(const std::vector<message>& live, const message& row) {
  if (row.role != msg_role::tool)
    return tool_row_verdict::ok;
  if (row.tool_call_id.empty())
    return tool_row_verdict::missing_call_id;
  for (const auto& m : live) {
    if (m.role != msg_role::assistant || !m.active)
      continue;
    for (const auto& call : m.tool_calls)
      if (call.id == row.tool_call_id)
        return tool_row_verdict::ok;
  }
  return tool_row_verdict::unknown_call_id;
}

std::string describe_tool_row_refusal(tool_row_verdict v, const message& row) {
  switch (v) {
    case tool_row_verdict::ok: return {};
    case tool_row_verdict::missing_call_id:
      return "a tool row needs a tool_call_id naming a call of a live assistant row";
    case tool_row_verdict::unknown_call_id:
      return "tool_call_id '" + row.tool_call_id
             + "' matches no tool call of a live assistant row: append the assistant row"
               " with that call first";
  }
  return {};
}

} // namespace mneme
