// The check of session tools every backend makes; see session_tools.hpp.
#include "store/session_tools.hpp"

#include "store/store_errors.hpp"

namespace mneme {

caf::error check_session_tools(const std::string& session_key, const std::string& tools_json,
                               time_ms now) {
  if (session_key.empty())
    return bad_request("session tools: the session key is empty");
  if (now < 0)
    return bad_request("session tools: now must be >= 0");
  if (tools_json.size() > session_tools_max_bytes)
    return bad_request("session tools: " + std::to_string(tools_json.size())
                       + " bytes of tools exceed the limit of "
                       + std::to_string(session_tools_max_bytes));
  return {};
}

} // namespace mneme
