// Tool-call structure rules; see tool_call_rules.hpp.
#include "policies/tool_call_rules.hpp"

#include <algorithm>
#include <cassert>
#include <ostream>
#include <unordered_map>

namespace mneme {

std::string_view to_string(tool_call_rule r) {
  switch (r) {
    case tool_call_rule::ok: return "ok";
    case tool_call_rule::calls_on_non_assistant: return "calls_on_non_assistant";
    case tool_call_rule::too_many_calls: return "too_many_calls";
    case tool_call_rule::empty_call_id: return "empty_call_id";
    case tool_call_rule::duplicate_call_id: return "duplicate_call_id";
    case tool_call_rule::arguments_too_large: return "arguments_too_large";
    case tool_call_rule::call_already_answered: return "call_already_answered";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, tool_call_rule r) { return os << to_string(r); }

tool_call_check check_tool_call_structure(const message& row, int64_t max_calls) {
  assert(max_calls >= 1);
  tool_call_check out;
  const auto& calls = row.tool_calls;
  if (calls.empty())
    return out;
  if (row.role != msg_role::assistant) {
    out.rule = tool_call_rule::calls_on_non_assistant;
    return out;
  }
  if (calls.size() > static_cast<size_t>(max_calls)) { // before looking at any call
    out.rule = tool_call_rule::too_many_calls;
    out.count = calls.size();
    out.limit = static_cast<size_t>(max_calls);
    return out;
  }
  std::unordered_map<std::string_view, size_t> seen; // id -> first index
  seen.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    out.index = i;
    if (c.id.empty()) {
      out.rule = tool_call_rule::empty_call_id;
      return out;
    }
    if (auto [it, fresh] = seen.emplace(c.id, i); !fresh) {
      out.rule = tool_call_rule::duplicate_call_id;
      out.call_id = c.id;
      out.count = it->second; // the earlier index
      return out;
    }
    if (c.arguments.size() > max_tool_call_argument_bytes) {
      out.rule = tool_call_rule::arguments_too_large;
      out.call_id = c.id;
      out.count = c.arguments.size();
      out.limit = max_tool_call_argument_bytes;
      return out;
    }
  }
  return tool_call_check{};
}

tool_call_check check_answered_once(const std::vector<message>& live,
                                    const std::vector<std::string>& in_flight,
                                    const message& row) {
  tool_call_check out;
  if (row.role != msg_role::tool || row.tool_call_id.empty())
    return out;
  const auto& id = row.tool_call_id;
  auto holds = [&id](const message& m) {
    return m.role == msg_role::assistant && m.active
           && std::any_of(m.tool_calls.begin(), m.tool_calls.end(),
                          [&id](const tool_call& c) { return c.id == id; });
  };
  auto call = std::find_if(live.rbegin(), live.rend(), holds);
  if (call == live.rend())
    return out; // not a live call: check_tool_row refuses it
  bool answered = std::any_of(live.rbegin(), call, [&id](const message& m) {
    return m.role == msg_role::tool && m.active && m.tool_call_id == id;
  });
  answered = answered || std::find(in_flight.begin(), in_flight.end(), id) != in_flight.end();
  if (answered) {
    out.rule = tool_call_rule::call_already_answered;
    out.call_id = id;
  }
  return out;
}

std::string describe_tool_call_refusal(const tool_call_check& c) {
  auto head = "tool call rule " + std::string{to_string(c.rule)} + ": ";
  auto at = "tool_calls[" + std::to_string(c.index) + "]";
  switch (c.rule) {
    case tool_call_rule::ok: return {};
    case tool_call_rule::calls_on_non_assistant:
      return head + "only an assistant row may carry tool_calls";
    case tool_call_rule::too_many_calls:
      return head + "the row has " + std::to_string(c.count) + " tool_calls, above "
             + std::to_string(c.limit) + " (gateway.max_tool_calls_per_message)";
    case tool_call_rule::empty_call_id:
      return head + at + ".id is empty";
    case tool_call_rule::duplicate_call_id:
      return head + at + ".id '" + c.call_id + "' repeats tool_calls["
             + std::to_string(c.count) + "].id";
    case tool_call_rule::arguments_too_large:
      return head + at + ".arguments of call '" + c.call_id + "' is "
             + std::to_string(c.count) + " bytes, above " + std::to_string(c.limit);
    case tool_call_rule::call_already_answered:
      return head + "tool_call_id '" + c.call_id
             + "' already has a result in the session; a call is answered once";
  }
  return {};
}

} // namespace mneme
