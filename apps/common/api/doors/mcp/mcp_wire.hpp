// The MCP door's wire (docs/api.md "MCP server"): JSON-RPC 2.0 as the Model Context
// Protocol's Streamable HTTP transport carries it. A POST body decoded into messages
// (one, or a batch), each classified (request, notification, response, invalid); the
// protocol version negotiated; the method a request names; results and errors encoded.
// Pure functions on nlohmann::json; no I/O, no clock; safe from any thread; they never
// throw. The route that uses them is mcp_routes.cpp.
//
// Decisions (MCP is silent or leaves them to the server):
//   1. Versions: the server speaks mcp_versions (newest first). initialize answers the
//      client's protocolVersion when it is one of them, else the newest.
//   2. An MCP-Protocol-Version header naming a version not spoken is a 400 (as the
//      transport requires); without the header the request is served.
//   3. Batches (a JSON array) exist up to 2025-03-26: allowed when the header is absent
//      or names 2025-03-26 or older, else the whole POST is -32600. An empty array is
//      -32600 (JSON-RPC).
//   4. A message is a request when it has "method" and an "id" (string or integer), a
//      notification with "method" and no "id", a response with "result" or "error" and no
//      "method". Anything else — no "jsonrpc":"2.0", a null or fractional id, params that
//      are not an object — is invalid (-32600), answered with its id when readable.
//   6. Structured tool output (MCP 2025-06-18 and later): tools/list gives each tool an
//      outputSchema and a successful tools/call result carries structuredContent (the
//      same JSON its text block holds) when the POST's MCP-Protocol-Version header names
//      2025-06-18 or later. Without the header the transport's default, 2025-03-26, is
//      assumed: no outputSchema, no structuredContent. An error result has none.
//   5. Origin (the transport's guard against DNS rebinding): a request carrying an
//      Origin header is served when that origin is a loopback host (localhost,
//      127.0.0.0/8, [::1]) or the request presents a bearer token (a page on another site
//      cannot make the browser send one); otherwise it is refused (403).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mneme::api::mcp {

using json = nlohmann::json;

// Decision 1: the versions spoken, newest first.
inline constexpr std::array<std::string_view, 4> mcp_versions = {
  "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
// The newest version that still has JSON-RPC batches.
inline constexpr std::string_view last_batch_version = "2025-03-26";

// JSON-RPC 2.0 error codes.
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
// A refusal of the HTTP layer (401, 405, 413, 503) in JSON-RPC's shape.
inline constexpr int server_refusal = -32000;

bool spoken_version(std::string_view v);
// Decision 1.
std::string negotiate_version(std::string_view requested);
// Decision 3: may a POST carrying MCP-Protocol-Version `header` ("" = absent) be a batch?
bool batch_allowed(std::string_view header);
// "2025-11-25, 2025-06-18, ..." for messages.
std::string spoken_versions_text();
// Decision 6: do results carry structuredContent (and tools an outputSchema) for a POST
// carrying MCP-Protocol-Version `header` ("" = absent)?
bool structured_output(std::string_view header);
// The first version with structured tool output.
inline constexpr std::string_view first_structured_version = "2025-06-18";
// Decision 5: `origin` is the Origin header's value (not empty).
bool origin_allowed(std::string_view origin, bool has_bearer_token);

enum class message_kind { request, notification, response, invalid };

struct rpc_message {
  message_kind kind = message_kind::invalid;
  json id;            // request: a string or integer; invalid: the id if readable, else null
  std::string method; // request, notification
  json params;        // an object, or null when absent
  std::string error;  // invalid: what was wrong
};

// Decision 4.
rpc_message classify(const json& m);

struct post_body {
  std::optional<std::string> parse_failure; // the body is not JSON: what was wrong
  bool batch = false;
  std::vector<rpc_message> messages;        // one unless batch
};
post_body decode_post(std::string_view body);

// The methods served; anything else is -32601 for a request and ignored as a notification.
enum class mcp_method { initialize, ping, tools_list, tools_call, unknown };
mcp_method method_of(std::string_view name);

json result_message(const json& id, json result);
json error_message(const json& id, int code, const std::string& message);

// The result of initialize for `params` (an object, or null), or the -32602 text.
struct initialize_answer {
  json result;
  std::string error; // non-empty: invalid params
};
initialize_answer answer_initialize(const json& params, std::string_view server_version);

// A tools/call's params: the tool's name and its arguments (an object; {} when absent),
// or the -32602 text.
struct tool_call_params {
  std::string name;
  json arguments = json::object();
  std::string error;
};
tool_call_params decode_tool_call(const json& params);

// A tool's result: one text block, isError when it failed; `structured` (an object, or
// null for none) as structuredContent.
json tool_result(std::string text, bool is_error, json structured = nullptr);

// A successful result of `value` (any JSON): its compact text as the text block and,
// when `structured`, structuredContent = `value` when it is an object, else
// {"result": value} (null value: {}).
json structured_tool_result(const json& value, bool structured);

} // namespace mneme::api::mcp
