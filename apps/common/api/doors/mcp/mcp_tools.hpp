// The MCP door's tools (docs/api.md "MCP server"): their table (name, description, input
// schema, as tools/list answers it) and a tools/call's arguments turned into what to do.
// A memory tool is one request of mneme's own API (search, facts, session state) run
// with the caller's token, so the route's checks, its scope (a user token reaches only
// its own user) and its answer are the API's; the skill tools read the process's skill
// set. Pure functions; no I/O; safe from any thread; they never throw.
//
// The tools:
//   session_search {query, limit?, user?, include_inactive?, mode?}  GET /v1/search
//   memory {action: list|search|set|remove, key?, value?, query?, limit?, user?}
//                                         GET|PUT|DELETE /v1/users/{user}/facts[/{key}]
//   skills_list {}                        the skills of gateway.skills_dir
//   skill_view {name}                     one skill's SKILL.md
//   session_context {key}                 GET /v1/sessions/{key}: the live rows (the
//                                         summaries are the rows with is_summary) and
//                                         the context's figures
// Decisions:
//   1. `user` names whose memory (admin tokens); absent: the token's own user, or
//      gateway.default_user for an admin. A user token naming another user is refused
//      by the route (403) and the tool answers that as its error.
//   2. Bad arguments are a tool error (isError, naming the argument), not a JSON-RPC
//      error, so a model can correct its call; an unknown tool is -32602.
//   3. Unknown arguments are ignored (hosts add their own, e.g. _meta).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace mneme::api::mcp {

// The tools/list result: {"tools":[{name, description, inputSchema}, ...]}; with
// `structured` (mcp_wire.hpp decision 6) each tool has its outputSchema too: an object
// whose known members are typed and none required (an API answer's other members
// pass), skills_list's {skills} and skill_view's {name, text} required.
const nlohmann::json& tools_list(bool structured = false);
bool known_tool(std::string_view name);

// Who calls: the user of a user token ("" for an admin) and gateway.default_user.
struct tool_caller {
  std::string token_user;
  std::string default_user;
};

// One request of mneme's API: method, target (path and query, percent-encoded), body.
struct api_step {
  std::string method;
  std::string target;
  std::string body;
};

enum class tool_action { bad_arguments, api_request, list_skills, view_skill };

struct tool_plan {
  tool_action action = tool_action::bad_arguments;
  std::string error;      // bad_arguments: the tool error's text
  api_step step;          // api_request
  std::string skill_name; // view_skill
};

// REQUIRES: known_tool(name); `arguments` is an object.
tool_plan plan_tool_call(std::string_view name, const nlohmann::json& arguments,
                         const tool_caller& who);

// Percent-encodes every byte but RFC 3986's unreserved ones (a path segment or a query
// value).
std::string encode_component(std::string_view text);

} // namespace mneme::api::mcp
