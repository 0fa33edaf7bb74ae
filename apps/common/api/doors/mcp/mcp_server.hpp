// The MCP door (docs/api.md "MCP server"): one POST /mcp on its way — the JSON-RPC
// messages of its body decoded (mcp_wire.hpp), each request served (initialize, ping,
// tools/list, tools/call with the tools of mcp_tools.hpp) and the answers sent back as
// one application/json body: the response object, an array for a batch, or 202 with no
// body when the POST held only notifications and responses.
//
// Decisions where MCP leaves the choice to the server:
//   - stateless: no Mcp-Session-Id is issued; every POST carries its own token and is
//     served alone (tools/call before initialize is served too);
//   - no server-to-client stream: answers are application/json, GET /mcp is 405;
//   - an Origin header of another host without a bearer token is 403 (mcp_wire.hpp 5);
//   - structured tool output (outputSchema, structuredContent) only for a POST whose
//     MCP-Protocol-Version header names 2025-06-18 or later (mcp_wire.hpp decision 6);
//   - a body that is not JSON (-32700), a lone invalid message (-32600), an unspoken
//     MCP-Protocol-Version header or a batch the version does not allow is HTTP 400
//     with the JSON-RPC error (id null); every other answer is 200.
//
// Threads: serve() in the request's actor; the tools' inner requests answer there.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/api/plumbing/call.hpp"

namespace mneme::api::mcp {

// Serves one POST /mcp.
void serve(const call_ptr& c);

// A tool result from the answer of mneme's API to the tool's request: a 2xx body as the
// result's text (and, when `structured`, as structuredContent: mcp_wire.hpp's
// structured_tool_result of the body's JSON); an error as "error STATUS CODE: MESSAGE"
// with isError and no structured content.
nlohmann::json tool_result_of_answer(int status, const std::string& body,
                                     bool structured = false);

} // namespace mneme::api::mcp
