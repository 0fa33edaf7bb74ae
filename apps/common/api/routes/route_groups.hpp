// The API's routes, one file per resource (docs/api.md "Endpoints"): each group adds its
// rows (plumbing/route_registry.hpp) when the API is built; http_api calls every group
// below, in this order. A new route goes into its group's file (handler and row); a new
// group or door adds its function here and in http_api.cpp's list.
//
// Threads: called once, while the API is built.
#pragma once

#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"

namespace mneme::api {

// The daemon's own state: health and metrics (routes/admin_routes.cpp)
void add_admin_routes(route_registry& r, const api_state& s);
// The sessions: /v1/sessions and /v1/sessions/{key}, their rows, compactions,
// checkpoints, rollback and export (routes/session_routes.cpp)
void add_session_routes(route_registry& r, const api_state& s);
// Turns: /v1/sessions/{key}/turns (routes/turn_routes.cpp)
void add_turn_routes(route_registry& r, const api_state& s);
// The context service: /v1/sessions/{key}/context, /usage, /model_error
// (routes/context_routes.cpp)
void add_context_routes(route_registry& r, const api_state& s);
// Recall: /v1/search (routes/search_routes.cpp)
void add_search_routes(route_registry& r, const api_state& s);
// Facts: /v1/users/{user}/facts... and /v1/sessions/{key}/facts (routes/fact_routes.cpp)
void add_fact_routes(route_registry& r, const api_state& s);
// The chat-completions door: /v1/chat/completions, /v1/models
// (doors/openai_chat/openai_routes.cpp)
void add_openai_chat_routes(route_registry& r, const api_state& s);
// The MCP server: POST /mcp (doors/mcp/mcp_routes.cpp)
void add_mcp_routes(route_registry& r, const api_state& s);
// The Responses door: /v1/responses (doors/openai_responses/responses_routes.cpp)
void add_openai_responses_routes(route_registry& r, const api_state& s);
// The Anthropic Messages door: /v1/messages, /v1/messages/count_tokens
// (doors/anthropic_messages/anthropic_routes.cpp)
void add_anthropic_messages_routes(route_registry& r, const api_state& s);
// The web console: /console/ and its embedded files (console/console_routes.cpp)
void add_console_routes(route_registry& r, const api_state& s);

} // namespace mneme::api
