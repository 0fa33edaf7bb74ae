// One request as a door sees it; see door_request.hpp.
#include "apps/common/api/doors/door_request.hpp"

namespace mneme::api {

std::string door_session_key(const http_request& req, const std::string& from_body) {
  for (const char* name : {"X-Mneme-Session", "X-Session-Id", "X-Session-Affinity"})
    if (auto v = req.header(name); !v.empty())
      return v;
  return from_body;
}

} // namespace mneme::api
