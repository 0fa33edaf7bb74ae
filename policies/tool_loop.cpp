// The tool loop's decisions; see tool_loop.hpp.
#include "policies/tool_loop.hpp"

#include <algorithm>
#include <cassert>
#include <ostream>
#include <unordered_set>

#include "policies/split_tool_groups.hpp"

namespace mneme {

pending_tool_calls find_pending_calls(const std::vector<message>& live) {
  pending_tool_calls out;
  const tool_group_map groups{live};
  auto a = groups.pending_assistant();
  if (!a)
    return out;
  out.assistant_index = a;
  const auto& answered = groups.answered(*a);
  const auto& calls = live[*a].tool_calls;
  for (size_t k = 0; k < calls.size(); ++k)
    if (!answered[k])
      out.calls.push_back(calls[k]);
  if (out.calls.empty())
    out.assistant_index.reset();
  return out;
}

std::string_view to_string(tool_results_verdict v) {
  switch (v) {
    case tool_results_verdict::ok: return "ok";
    case tool_results_verdict::no_pending_calls: return "no_pending_calls";
    case tool_results_verdict::empty_id: return "empty_id";
    case tool_results_verdict::unknown_id: return "unknown_id";
    case tool_results_verdict::duplicate_id: return "duplicate_id";
    case tool_results_verdict::missing_result: return "missing_result";
  }
  return "unknown";
}

tool_results_check check_tool_results(const pending_tool_calls& pending,
                                      const std::vector<tool_result_input>& results) {
  tool_results_check c;
  if (!pending.any()) {
    c.verdict = tool_results_verdict::no_pending_calls;
    return c;
  }
  std::unordered_set<std::string> open;
  for (const auto& call : pending.calls)
    open.insert(call.id);
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& id = results[i].tool_call_id;
    c.index = i;
    if (id.empty()) {
      c.verdict = tool_results_verdict::empty_id;
      return c;
    }
    if (!open.count(id)) {
      c.verdict = tool_results_verdict::unknown_id;
      c.call_id = id;
      return c;
    }
    if (!seen.insert(id).second) {
      c.verdict = tool_results_verdict::duplicate_id;
      c.call_id = id;
      return c;
    }
  }
  for (const auto& call : pending.calls) {
    if (!seen.count(call.id)) {
      c.verdict = tool_results_verdict::missing_result;
      c.call_id = call.id;
      c.index = 0;
      return c;
    }
  }
  c = tool_results_check{};
  return c;
}

std::string describe_tool_results_refusal(const tool_results_check& c) {
  auto at = "tool_results[" + std::to_string(c.index) + "]";
  switch (c.verdict) {
    case tool_results_verdict::ok: return {};
    case tool_results_verdict::no_pending_calls:
      return "field 'tool_results': no tool call is waiting for a result";
    case tool_results_verdict::empty_id:
      return "field '" + at + ".tool_call_id' is empty";
    case tool_results_verdict::unknown_id:
      return "field '" + at + ".tool_call_id': unknown tool call id '" + c.call_id
             + "' (not a pending call)";
    case tool_results_verdict::duplicate_id:
      return "field '" + at + ".tool_call_id': duplicate result for tool call '" + c.call_id
             + "'";
    case tool_results_verdict::missing_result:
      return "field 'tool_results': missing the result of tool call '" + c.call_id + "'";
  }
  return "field 'tool_results' is invalid";
}

std::vector<message> tool_result_rows(const pending_tool_calls& pending,
                                      const std::vector<tool_result_input>& results) {
  std::vector<message> rows;
  rows.reserve(results.size());
  for (const auto& r : results) {
    auto call = std::find_if(pending.calls.begin(), pending.calls.end(),
                             [&](const tool_call& c) { return c.id == r.tool_call_id; });
    assert(call != pending.calls.end());
    message m;
    m.role = msg_role::tool;
    m.tool_call_id = r.tool_call_id;
    if (call != pending.calls.end())
      m.tool_name = call->name;
    m.content = r.is_error ? std::string{tool_error_prefix} + r.content : r.content;
    rows.push_back(std::move(m));
  }
  return rows;
}

std::vector<message> abandoned_result_rows(const pending_tool_calls& pending) {
  std::vector<message> rows;
  for (const auto& call : pending.calls) {
    message m;
    m.role = msg_role::tool;
    m.tool_call_id = call.id;
    m.tool_name = call.name;
    m.content = std::string{abandoned_call_result};
    rows.push_back(std::move(m));
  }
  return rows;
}

std::string_view to_string(user_turn_verdict v) {
  switch (v) {
    case user_turn_verdict::proceed: return "proceed";
    case user_turn_verdict::refuse_pending: return "refuse_pending";
    case user_turn_verdict::abandon_pending: return "abandon_pending";
  }
  return "unknown";
}

user_turn_verdict decide_user_turn(const pending_tool_calls& pending, bool abandon_pending) {
  if (!pending.any())
    return user_turn_verdict::proceed;
  return abandon_pending ? user_turn_verdict::abandon_pending
                         : user_turn_verdict::refuse_pending;
}

int64_t tool_rounds_in_loop(const std::vector<message>& live) {
  int64_t rounds = 0;
  for (size_t i = live.size(); i > 0; --i) {
    const auto& m = live[i - 1];
    if (is_real_user_message(m))
      break;
    if (m.role == msg_role::assistant && !m.is_summary && !m.has_tool_calls())
      break; // a text answer ended the loop before
    if (m.role == msg_role::assistant && m.has_tool_calls())
      ++rounds;
  }
  return rounds;
}

std::string_view to_string(round_verdict v) {
  return v == round_verdict::call_model ? "call_model" : "cap_reached";
}

round_verdict decide_next_round(int64_t rounds_done, int64_t max_rounds) {
  assert(max_rounds >= 1);
  return rounds_done >= max_rounds ? round_verdict::cap_reached : round_verdict::call_model;
}

std::string finish_reason_of(bool has_tool_calls, std::string_view upstream) {
  if (has_tool_calls)
    return "tool_calls";
  if (upstream == "length" || upstream == "content_filter")
    return std::string{upstream};
  return "stop";
}

std::ostream& operator<<(std::ostream& os, tool_results_verdict v) { return os << to_string(v); }
std::ostream& operator<<(std::ostream& os, user_turn_verdict v) { return os << to_string(v); }
std::ostream& operator<<(std::ostream& os, round_verdict v) { return os << to_string(v); }

} // namespace mneme
