// The JSON form of a stored message; see message_json.hpp.
#include "store/message_json.hpp"

#include <string>

namespace mneme {

nlohmann::json message_json(const message& m) {
  auto calls = nlohmann::json::array();
  for (const auto& c : m.tool_calls)
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  return {{"id", m.id},
          {"session_id", m.session_id},
          {"role", std::string{to_string(m.role)}},
          {"content", m.content},
          {"tool_call_id", m.tool_call_id},
          {"tool_calls", std::move(calls)},
          {"tool_name", m.tool_name},
          {"timestamp_ms", m.timestamp_ms},
          {"token_estimate", m.token_estimate},
          {"active", m.active},
          {"compacted", m.compacted},
          {"is_summary", m.is_summary},
          {"replaced_first_id", m.replaced_first_id},
          {"replaced_last_id", m.replaced_last_id},
          {"state", std::string{to_string(m.state())}}};
}

} // namespace mneme
