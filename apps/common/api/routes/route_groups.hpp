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

// GET /v1/health, GET /metrics (routes/admin_routes.cpp)
void add_admin_routes(route_registry& r, const api_state& s);
// GET /v1/sessions; GET /v1/sessions/{key}; POST .../messages, .../compact,
// .../checkpoints, .../rollback; GET .../checkpoints, .../export, .../compactions
// (routes/session_routes.cpp)
void add_session_routes(route_registry& r, const api_state& s);
// POST /v1/sessions/{key}/turns (routes/turn_routes.cpp)
void add_turn_routes(route_registry& r, const api_state& s);
// POST /v1/sessions/{key}/context, /usage, /model_error (routes/context_routes.cpp)
void add_context_routes(route_registry& r, const api_state& s);
// GET /v1/search (routes/search_routes.cpp)
void add_search_routes(route_registry& r, const api_state& s);
// GET /v1/users/{user}/facts, PUT and DELETE /v1/users/{user}/facts/{key},
// POST /v1/sessions/{key}/facts (routes/fact_routes.cpp)
void add_fact_routes(route_registry& r, const api_state& s);
// POST /v1/chat/completions, GET /v1/models (doors/openai_chat/openai_routes.cpp)
void add_openai_chat_routes(route_registry& r, const api_state& s);

} // namespace mneme::api
