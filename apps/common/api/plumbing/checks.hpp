// The checks a route makes before it asks anything (docs/api.md "Names",
// "Authentication"): strict names (policies/client_text.hpp), the user a request names
// against its token's scope (policies/access_scope.hpp), and optional query parameters.
// The refusals are plain values, so a door answers them in its own wire's shape; the
// check_* functions answer them in mneme's and return false when they did.
//
// Threads: in the request's actor (or on the blocking thread for a blocking route).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

// A refusal before a route runs: 400 bad_request or 403 forbidden, and why.
struct refusal {
  int status = 400;
  std::string code;
  std::string message;
};

// `text` as a strict name (1..max_bytes bytes of valid UTF-8, no control characters):
// nullopt, or the 400 naming `what` ("field 'user'", "the session key").
std::optional<refusal> name_refusal(std::string_view what, std::string_view text,
                                    size_t max_bytes);
// A user the request names against the token's scope: a user token may name only its
// own user, naming none means it. nullopt and `user` set to the acting user, or the 403.
std::optional<refusal> scope_refusal(const access_scope& who, std::string_view what,
                                     std::string& user);
// Both, for a user from a body or query: empty means the default (or the key's owner),
// and is not a name to check.
std::optional<refusal> user_refusal(const access_scope& who, std::string_view what,
                                    std::string& user);

// The 403 of a request refused for its token's scope (counted, logged at debug).
void refuse_scope(const call_ptr& c, const std::string& why);

// mneme's answers of the refusals above: false when the refusal was sent.
bool check(const call_ptr& c, std::string_view what, std::string_view text, size_t max_bytes);
bool check_key(const call_ptr& c, const std::string& key); // the {key} of a route that writes
bool scoped_user(const call_ptr& c, std::string_view what, std::string& user);
bool check_optional_user(const call_ptr& c, std::string_view what, std::string& user);
// A {key} of a read route: any stored key (older keys stay readable), but bounded.
bool check_read_key(const call_ptr& c, const std::string& key);

// The body of a route that writes to its {key} (c->path[0]): the key checked
// (check_key), then the body decoded by `decode` (string_view -> caf::expected<Body>; a
// decode error answered by fail()). nullopt when the refusal was sent.
template <class Decode>
auto keyed_body(const call_ptr& c, Decode decode)
  -> std::optional<typename decltype(decode(std::string_view{}))::value_type> {
  if (!check_key(c, c->path[0]))
    return std::nullopt;
  auto in = decode(std::string_view{c->req.body});
  if (!in) {
    fail(c, in.error());
    return std::nullopt;
  }
  return std::move(*in);
}

// Optional query parameters: absent leaves `out` as it is; false when the 400 was sent.
bool bool_param(const call_ptr& c, const char* name, bool& out);
bool int_param(const call_ptr& c, const char* name, int64_t min, int64_t max, int64_t& out);
// A parameter's text must be valid UTF-8.
bool utf8_param(const call_ptr& c, const char* name, const std::string& text);

} // namespace mneme::api
