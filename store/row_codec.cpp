// Row conversion and validation; see row_codec.hpp.
#include "store/row_codec.hpp"

#include <nlohmann/json.hpp>

#include "store/store_errors.hpp"

namespace mneme {

namespace {

constexpr size_t max_session_id_bytes = 128;

bool known_role(msg_role r) {
  return static_cast<uint8_t>(r) <= static_cast<uint8_t>(msg_role::tool);
}

} // namespace

caf::error validate_new_message(const message& m, const store_params& params) {
  if (m.session_id.empty() || m.session_id.size() > max_session_id_bytes)
    return bad_request("message: session_id must be 1.." + std::to_string(max_session_id_bytes)
                       + " bytes, got " + std::to_string(m.session_id.size()));
  if (!known_role(m.role))
    return bad_request("message: unknown role value "
                       + std::to_string(static_cast<int>(m.role)));
  if (!m.active || m.compacted)
    return bad_request("message: an appended row must be live (active=1, compacted=0)");
  if (m.timestamp_ms < 0 || m.token_estimate < 0)
    return bad_request("message: timestamp_ms and token_estimate must be >= 0");
  if (m.is_summary) {
    if (m.replaced_first_id <= 0 || m.replaced_last_id < m.replaced_first_id)
      return bad_request("message: a summary needs 0 < replaced_first_id <= replaced_last_id");
  } else if (m.replaced_first_id != 0 || m.replaced_last_id != 0) {
    return bad_request("message: replaced ids are only allowed on a summary");
  }
  auto size = m.content.size() + m.tool_call_id.size() + m.tool_name.size();
  for (const auto& c : m.tool_calls)
    size += c.id.size() + c.name.size() + c.arguments.size();
  if (size > static_cast<size_t>(params.max_content_bytes))
    return bad_request("message: " + std::to_string(size) + " bytes exceed max_content_bytes "
                       + std::to_string(params.max_content_bytes));
  return {};
}

std::string encode_tool_calls(const std::vector<tool_call>& calls) {
  if (calls.empty())
    return {};
  auto arr = nlohmann::json::array();
  for (const auto& c : calls)
    arr.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  return arr.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

caf::expected<std::vector<tool_call>> decode_tool_calls(const std::string& json) {
  std::vector<tool_call> out;
  if (json.empty())
    return out;
  auto doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_array())
    return caf::make_error(errc::storage_corrupt, "tool_calls column is not a JSON array");
  for (const auto& item : doc) {
    if (!item.is_object() || !item.contains("id") || !item["id"].is_string()
        || !item.contains("name") || !item["name"].is_string()
        || !item.contains("arguments") || !item["arguments"].is_string())
      return caf::make_error(errc::storage_corrupt, "tool_calls entry lacks id/name/arguments");
    out.push_back(tool_call{item["id"].get<std::string>(), item["name"].get<std::string>(),
                            item["arguments"].get<std::string>()});
  }
  return out;
}

std::string describe(const message& m) {
  return m.session_id + " #" + std::to_string(m.id);
}

} // namespace mneme
