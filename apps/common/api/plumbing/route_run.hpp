// Running one row of the route table for a request: the verdict of the row's access on
// the request's scope (policies/access_scope.hpp) and the handler run (a key_owned row
// checks its session's owner itself, plumbing/session_lookup.hpp). Shared by http_api
// (every request from the network) and inner requests (plumbing/inner_request.hpp), so a
// route is checked the same way whoever asks it.
//
// Threads: row_verdict and scope_refusal_message from any thread; run_row in the
// request's actor (c->self set).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

// The verdict of `row` for `who` (nullopt: no valid credential) with the route's decoded
// captures `path` (a user_named row names its user in the first one, when it has one).
access_verdict row_verdict(const route_row& row, const std::optional<access_scope>& who,
                           const std::vector<std::string>& path);

// Why `who` was refused on `row` (the message of the 403).
std::string scope_refusal_message(const route_row& row, const access_scope& who);

// Runs the row's handler for `c` (guarded: an exception is a 500); a key_owned row runs
// once the token may reach the key's session.
void run_row(const call_ptr& c, const route_row& row);

} // namespace mneme::api
