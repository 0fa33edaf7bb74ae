// Bearer-token check of the daemon's HTTP API (gateway.auth_token): the comparison
// takes the same time wherever the first differing byte is, so response times do not
// reveal the token. Pure functions; safe from any thread.
#pragma once

#include <optional>
#include <string_view>

namespace mneme::api {

// True when a and b are equal; the time depends only on their lengths.
bool constant_time_equals(std::string_view a, std::string_view b);

// The token of an Authorization header's value "Bearer <token>" (scheme
// case-insensitive, one or more spaces); nullopt for any other value or an empty token.
std::optional<std::string_view> bearer_token(std::string_view authorization);

// True when `authorization` (the header's value) is "Bearer <token>" (scheme
// case-insensitive, one or more spaces). REQUIRES: token is not empty.
bool bearer_matches(std::string_view authorization, std::string_view token);

} // namespace mneme::api
