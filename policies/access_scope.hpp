// Which caller may do what on which route of the daemon's HTTP API (SPEC §8.1
// credentials; docs/api.md "Authentication"). Standard library only; pure functions,
// safe from any thread. Called by apps/common/api/http_api.cpp, which resolves the
// bearer token into an access_scope (apps/common/api/tokens/token_store.hpp), looks up the
// owner of a {key} when the decision needs it, and turns the verdict into a status.
//
// Scopes:
//   admin      everything (gateway.auth_token, an `admin` line of gateway.tokens_file,
//              or any caller when no credential is configured at all);
//   user:NAME  only NAME's sessions, search, facts and exports; the user of each of its
//              requests is NAME.
//
// Routes, by what they need of the caller (route_access):
//   open        anyone, even without a token (GET /v1/health);
//   admin_only  an admin scope (GET /metrics);
//   user_named  the request names a user in its path, query or body (search, session
//               list, /v1/users/{user}/facts): a user scope may name only its own user,
//               and naming none means its own user;
//   key_owned   /v1/sessions/{key}/...: a user scope reaches only sessions it owns;
//               a key without a session may be opened (as the scope's user).
//
// Verdicts, checked in this order (decide_access):
//   1. no valid credential while credentials are configured   -> unauthorized (401)
//   2. a user scope on an admin_only route                     -> forbidden (403)
//   3. a user scope naming another user                        -> forbidden (403)
//   4. a user scope on a key owned by another user             -> hidden (404, the
//      answer of an unknown key: whether the key exists is not revealed)
//   5. otherwise                                               -> allow
// Invariants: an admin scope is never refused; a user scope is allowed only when every
// user it names and the owner of every key it touches is its own user; `open` routes
// are allowed to everyone.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace mneme {

enum class scope_kind : uint8_t { admin, user };

struct access_scope {
  scope_kind kind = scope_kind::admin;
  std::string user; // the scope's user (kind == user); empty for admin

  static access_scope admin() { return {}; }
  static access_scope of_user(std::string name) { return {scope_kind::user, std::move(name)}; }
  bool is_admin() const { return kind == scope_kind::admin; }
  bool operator==(const access_scope& o) const { return kind == o.kind && user == o.user; }
};

// "admin" or "user:NAME" (the text of a tokens file line and of logs).
std::string to_string(const access_scope& s);
// The scope of "admin" / "user:NAME" (NAME not empty, else nullopt); NAME is not
// checked further here (http_api checks names with policies/client_text.hpp).
std::optional<access_scope> parse_access_scope(std::string_view text);
std::ostream& operator<<(std::ostream& os, const access_scope& s);

enum class route_access : uint8_t { open, admin_only, user_named, key_owned };

enum class access_verdict : uint8_t {
  allow,
  unauthorized, // 401
  forbidden,    // 403
  hidden,       // 404, as for an unknown key
};

std::string_view to_string(route_access r);
std::string_view to_string(access_verdict v);
std::ostream& operator<<(std::ostream& os, route_access r);
std::ostream& operator<<(std::ostream& os, access_verdict v);

struct access_question {
  route_access route = route_access::open;
  // The caller's scope; nullopt when it presented no valid credential (or none while
  // credentials are required). When no credential is configured the caller is admin.
  std::optional<access_scope> who;
  // A user the request names (path, query or body); empty = none named.
  std::string_view named_user;
  // The owner of the session the {key} names; nullopt = no session under it, or not
  // looked up (the caller looks it up only for a user scope on a key_owned route).
  std::optional<std::string_view> key_owner;
};

access_verdict decide_access(const access_question& q);

// The user a request acts as: a user scope's own user; for admin the named user (empty
// = the route's default). REQUIRES: decide_access allowed the question's who/named_user.
std::string acting_user(const access_scope& who, std::string_view named_user);

// The user whose sessions `who` may reach on a key_owned route or a door: a user scope's
// own user; "" for admin (any user's). Handed to the place that opens or reads the
// session, which decides on the session it actually got (never on an earlier lookup of
// the key): a session of another user is answered as an unknown key.
std::string reachable_owner(const access_scope& who);
// Whether `who` may reach a session of `owner` (reachable_owner's rule).
bool may_reach(const access_scope& who, std::string_view owner);

} // namespace mneme
