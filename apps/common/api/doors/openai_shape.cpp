// What the OpenAI-shaped doors share; see openai_shape.hpp.
#include "apps/common/api/doors/openai_shape.hpp"

#include <string_view>

#include "policies/openai_errors.hpp"

namespace mneme::api {

using nlohmann::json;

json param_of(const std::string& message) {
  static constexpr std::string_view marker = "field '";
  auto at = message.find(marker);
  if (at == std::string::npos)
    return nullptr;
  auto begin = at + marker.size();
  auto end = message.find('\'', begin);
  if (end == std::string::npos)
    return nullptr;
  return message.substr(begin, end - begin);
}

json openai_error_json(const std::string& message, const std::string& type, const json& param,
                       const std::string& code) {
  return {{"error", {{"message", message}, {"type", type}, {"param", param}, {"code", code}}}};
}

http_response openai_json_response(int status, const json& body, header_list headers) {
  return http_response{status, "application/json",
                       body.dump(-1, ' ', false, json::error_handler_t::replace),
                       std::move(headers), false};
}

http_response openai_error_response(int status, const std::string& code,
                                    const std::string& message, header_list headers) {
  auto kind = openai_error_of(status, code);
  return openai_json_response(
    kind.status, openai_error_json(message, kind.type, param_of(message), kind.code),
    std::move(headers));
}

} // namespace mneme::api
