// Tool pairing of chat requests; see request_pairing.hpp.
#include "policies/request_pairing.hpp"

#include <set>
#include <string>

namespace mneme {

namespace {

message stub_for(const message& assistant, const tool_call& call) {
  message m;
  m.role = msg_role::tool;
  m.session_id = assistant.session_id;
  m.tool_call_id = call.id;
  m.tool_name = call.name;
  m.content = std::string{unanswered_call_stub};
  m.timestamp_ms = assistant.timestamp_ms;
  return m;
}

} // namespace

std::vector<message> repair_tool_pairing(const std::vector<message>& rows, pairing_repair* what) {
  pairing_repair counts;
  // Pass 1: which tool rows are kept (their call is earlier and not answered yet).
  std::set<std::string> called, answered;
  std::vector<bool> keep(rows.size(), true);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    if (m.role == msg_role::assistant) {
      for (const auto& c : m.tool_calls)
        called.insert(c.id);
    } else if (m.role == msg_role::tool) {
      if (called.count(m.tool_call_id) == 0 || !answered.insert(m.tool_call_id).second) {
        keep[i] = false;
        ++counts.dropped_results;
      }
    }
  }
  // Pass 2: copy, adding stubs after each assistant's directly following tool rows.
  std::vector<message> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!keep[i])
      continue;
    out.push_back(rows[i]);
    if (rows[i].role != msg_role::assistant || rows[i].tool_calls.empty())
      continue;
    const auto& assistant = rows[i];
    size_t j = i + 1;
    for (; j < rows.size() && rows[j].role == msg_role::tool; ++j)
      if (keep[j])
        out.push_back(rows[j]);
    for (const auto& c : assistant.tool_calls)
      if (answered.count(c.id) == 0) {
        out.push_back(stub_for(assistant, c));
        answered.insert(c.id); // a repeated call id gets one answer
        ++counts.stubbed_calls;
      }
    i = j - 1;
  }
  if (what)
    *what = counts;
  return out;
}

} // namespace mneme
