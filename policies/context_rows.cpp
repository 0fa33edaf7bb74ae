// The context service's batch check; see context_rows.hpp.
#include "policies/context_rows.hpp"

#include <algorithm>
#include <cassert>
#include <ostream>

namespace mneme {

namespace {

bool holds_call(const message& m, const std::string& id) {
  return m.role == msg_role::assistant
         && std::any_of(m.tool_calls.begin(), m.tool_calls.end(),
                        [&id](const tool_call& c) { return c.id == id; });
}

} // namespace

std::string_view to_string(context_row_problem p) {
  switch (p) {
    case context_row_problem::ok: return "ok";
    case context_row_problem::tool_calls: return "tool_calls";
    case context_row_problem::empty_assistant: return "empty_assistant";
    case context_row_problem::tool_pairing: return "tool_pairing";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, context_row_problem p) { return os << to_string(p); }

context_rows_check check_context_rows(const std::vector<message>& live,
                                      const std::vector<std::string>& in_flight,
                                      const std::vector<message>& rows, int64_t max_calls) {
  assert(max_calls >= 1);
  context_rows_check out;
  // Answers to live calls given by earlier rows of the batch count as in flight.
  auto answered = in_flight;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    out.index = i;
    if (auto c = check_tool_call_structure(row, max_calls); !c.ok()) {
      out.problem = context_row_problem::tool_calls;
      out.calls = c;
      return out;
    }
    if (row.role == msg_role::assistant && row.content.empty() && row.tool_calls.empty()) {
      out.problem = context_row_problem::empty_assistant;
      return out;
    }
    if (row.role != msg_role::tool)
      continue;
    const auto& id = row.tool_call_id;
    // The call is that of the last row holding the id: earlier in the batch first.
    auto first = rows.begin();
    auto here = rows.begin() + static_cast<std::ptrdiff_t>(i);
    auto call = std::find_if(std::make_reverse_iterator(here), std::make_reverse_iterator(first),
                             [&id](const message& m) { return holds_call(m, id); });
    if (!id.empty() && call != std::make_reverse_iterator(first)) {
      auto from = call.base(); // the row after the assistant row
      bool twice = std::any_of(from, here, [&id](const message& m) {
        return m.role == msg_role::tool && m.tool_call_id == id;
      });
      if (twice) {
        out.problem = context_row_problem::tool_calls;
        out.calls.rule = tool_call_rule::call_already_answered;
        out.calls.call_id = id;
        return out;
      }
      continue;
    }
    if (auto v = check_tool_row(live, row); v != tool_row_verdict::ok) {
      out.problem = context_row_problem::tool_pairing;
      out.pairing = v;
      out.call_id = id;
      return out;
    }
    if (auto c = check_answered_once(live, answered, row); !c.ok()) {
      out.problem = context_row_problem::tool_calls;
      out.calls = c;
      return out;
    }
    answered.push_back(id);
  }
  out = context_rows_check{};
  return out;
}

std::string describe_context_rows_refusal(const context_rows_check& c) {
  std::string at;
  switch (c.problem) {
    case context_row_problem::ok: return {};
    case context_row_problem::tool_calls: return at + describe_tool_call_refusal(c.calls);
    case context_row_problem::empty_assistant:
      return at + "an assistant message needs content or tool_calls";
    case context_row_problem::tool_pairing: {
      message row;
      row.role = msg_role::tool;
      row.tool_call_id = c.call_id;
      return at + describe_tool_row_refusal(c.pairing, row);
    }
  }
  return at + "refused";
}

} // namespace mneme
