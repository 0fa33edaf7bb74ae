// The MCP door's routes (docs/api.md "MCP server"): POST /mcp, its refusals (401, 405,
// 413, 503) as JSON-RPC errors with id null. Only POST is served: GET /mcp (a
// server-to-client stream) and DELETE /mcp (no session is issued) answer 405.
#include "apps/common/api/doors/mcp/mcp_server.hpp"
#include "apps/common/api/doors/mcp/mcp_wire.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_mcp_routes(route_registry& r, const api_state&) {
  auto refusal = [](int, const std::string& code, const std::string& message) {
    return dump_json(mcp::error_message(nullptr, mcp::server_refusal, code + ": " + message));
  };
  r.add("POST", "/mcp", mcp::serve, route_access::user_named, route_kind::actor, refusal);
}

} // namespace mneme::api
