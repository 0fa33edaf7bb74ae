// A request of the API made on behalf of another one (the MCP door's tools are requests
// of mneme's own routes): the route at `method target` runs with the outer request's
// token scope, its Authorization header (a request forwarded to another node carries
// it) and its actor, through the same checks as a request from the network
// (plumbing/route_run.hpp); its answer comes back as a value instead of going to a
// connection. Streamed and blocking routes are not served this way (500 internal).
//
// Contract: `done` runs exactly once with the route's answer (or its refusal: 403, 404
// for another user's key, 404 for no route), in the outer request's actor; at the
// daemon's shutdown it may run on the thread that fails the pending requests.
//
// Threads: in the outer request's actor.
#pragma once

#include <functional>
#include <string>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/plumbing/call.hpp"

namespace mneme::api {

void run_inner_request(const call_ptr& outer, std::string method, std::string target,
                       std::string body, std::function<void(http_response)> done);

} // namespace mneme::api
