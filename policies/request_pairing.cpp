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
  std::vector<message> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& m = rows[i];
    if (m.role == msg_role::tool) { // not in the run after an assistant's calls
      ++counts.dropped_results;
      continue;
    }
    out.push_back(m);
    if (m.role != msg_role::assistant || m.tool_calls.empty())
      continue;
    std::set<std::string> pending; // this row's calls not answered in its run yet
    for (const auto& c : m.tool_calls)
      pending.insert(c.id);
    size_t j = i + 1;
    for (; j < rows.size() && rows[j].role == msg_role::tool; ++j) {
      if (pending.erase(rows[j].tool_call_id) == 1)
        out.push_back(rows[j]);
      else
        ++counts.dropped_results;
    }
    for (const auto& c : m.tool_calls)
      if (pending.erase(c.id) == 1) { // a repeated call id gets one answer
        out.push_back(stub_for(m, c));
        ++counts.stubbed_calls;
      }
    i = j - 1;
  }
  if (what)
    *what = counts;
  return out;
}

} // namespace mneme
