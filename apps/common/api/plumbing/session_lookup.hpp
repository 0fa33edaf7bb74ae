// How a route finds the session a {key} names in the store, without starting a session
// actor (docs/api.md "Conventions"): the newest open session under the key, else a
// stored session with that id (any state: a session ended by a reset stays readable).
// An unknown key is errc::not_found with unknown_key_message (http_status.hpp).
//
// The scope of a key_owned route (policies/access_scope.hpp) is decided where the route
// opens or reads its session, on the session it got, never by an earlier lookup of the
// key: stored_session() refuses another user's record (errc::foreign_session) for a user
// token, and every gateway operation of a route carries reachable_owner(c->who), which
// the gateway checks on the session it then works on. fail() (answer.hpp) answers a user
// token's foreign_session as the 404 of an unknown key, so whether another user's key
// exists is not revealed; a key without a session may be opened by the token's user.
// answer_appended() reads the key's session after an append (the gateway's).
//
// Namespaces (policies/key_namespace.hpp): a route's {key} is stored in its user's
// namespace, key_of_call(): a user token's user, else the user an admin names (`?user=`
// or the body's `user`), else gateway.default_user. The store, the gateway and the leases
// only ever see the stored form; a {key} that is a session id is looked up as it was
// sent (ids are global), and is checked against the caller's scope on the record.
//
// Threads: in the request's actor.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "caf/expected.hpp"

#include "apps/common/api/json_codec.hpp"

#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

// A {key} as the client sent it, its stored form, and the user whose namespace holds it.
struct request_key {
  std::string client;
  std::string stored;
  std::string user;
};

// c->path[0] in its namespace; `body_user` is the user the body names ("" = none, already
// checked against the token). An admin's `?user=` and `body_user` must agree. nullopt
// when refused (400 for a bad name or two users, 403 for a user token naming another:
// answered).
std::optional<request_key> key_of_call(const call_ptr& c, const std::string& body_user = "");

// The stored session of `key` (open under its stored form, else open under the key as
// sent — a session stored without a user —, else a session with the client's text as
// id), when c->who may reach it (errc::foreign_session otherwise).
void stored_session(const call_ptr& c, const request_key& key,
                    std::function<void(caf::expected<session_record>)> then);
// The id of stored_session().
void stored_session_id(const call_ptr& c, const request_key& key,
                       std::function<void(caf::expected<std::string>)> then);

// The stored session of a read route's {key} (c->path[0]): the key checked
// (check_read_key), then `then` with the session's id; a refusal or an unknown key is
// answered (400, 404) and `then` does not run.
void read_stored_session(const call_ptr& c, std::function<void(const std::string& sid)> then);

// The owner a gateway operation of this request requires ("" for an admin: any).
std::string owner_of_call(const call_ptr& c);

// The answer of an append to stored key `key` (row `id`): 201 {"id","session_id"} with the session
// the gateway holds under the key now (a reset in between names the new session;
// `fallback_sid` when the gateway cannot say), plus what `extra` adds.
void answer_appended(const call_ptr& c, const std::string& key, int64_t id,
                     std::string fallback_sid, std::function<void(json&)> extra);

} // namespace mneme::api
