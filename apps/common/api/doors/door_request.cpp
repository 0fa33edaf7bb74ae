// One request as a door sees it; see door_request.hpp.
#include "apps/common/api/doors/door_request.hpp"

#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"

namespace mneme::api {

std::string door_session_key(const http_request& req, const std::string& from_body) {
  for (const char* name : {"X-Mneme-Session", "X-Session-Id", "X-Session-Affinity"})
    if (auto v = req.header(name); !v.empty())
      return v;
  return from_body;
}

std::string door_stored_key(const access_scope& who, const std::string& user,
                            const std::string& default_user, const std::string& key,
                            std::string& refused) {
  if (key.empty())
    return key;
  refused = key_refusal(key, session_key_max_bytes);
  if (!refused.empty())
    return {};
  return stored_key(namespace_user(who.is_admin() ? std::string{} : who.user, user, default_user),
                    key);
}

} // namespace mneme::api
