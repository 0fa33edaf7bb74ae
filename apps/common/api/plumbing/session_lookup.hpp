// How a route finds the session a {key} names in the store, without starting a session
// actor (docs/api.md "Conventions"): the newest open session under the key, else a
// stored session with that id (any state: a session ended by a reset stays readable).
// An unknown key is errc::not_found with unknown_key_message (http_status.hpp).
//
// with_owned_key() is the scope check of every key_owned route (policies/access_scope.hpp):
// an admin always passes; a user token passes when the stored session is its own user's
// or none is stored (an append opens it for the token's user), and gets the 404 of an
// unknown key otherwise, so whether another user's key exists is not revealed.
// answer_appended() reads the key's session after an append (the gateway's).
//
// Threads: in the request's actor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "caf/expected.hpp"

#include "apps/common/api/json_codec.hpp"

#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

void stored_session(const call_ptr& c, const std::string& key,
                    std::function<void(caf::expected<session_record>)> then);
// The id of stored_session().
void stored_session_id(const call_ptr& c, const std::string& key,
                       std::function<void(caf::expected<std::string>)> then);

// The stored session of a read route's {key} (c->path[0]): the key checked
// (check_read_key), then `then` with the session's id; a refusal or an unknown key is
// answered (400, 404) and `then` does not run.
void read_stored_session(const call_ptr& c, std::function<void(const std::string& sid)> then);

// Runs `route` when the token may reach the session of the {key} (c->path[0]).
void with_owned_key(const call_ptr& c, const route_handler& route);

// The answer of an append to {key} (row `id`): 201 {"id","session_id"} with the session
// the gateway holds under the key now (a reset in between names the new session;
// `fallback_sid` when the gateway cannot say), plus what `extra` adds.
void answer_appended(const call_ptr& c, const std::string& key, int64_t id,
                     std::string fallback_sid, std::function<void(json&)> extra);

} // namespace mneme::api
