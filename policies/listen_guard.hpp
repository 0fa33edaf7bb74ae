// Whether the daemon may listen on an address without any credential configured (SPEC
// §8.1 credentials; docs/api.md "Authentication"): an API without a token is served
// only on a loopback address, unless gateway.allow_unauthenticated says the operator
// put something else in front of it. Standard library only; pure functions, any thread.
// Called by `mneme serve` (apps/mneme/cmd_serve.cpp) after --host overrides the config.
//
// Loopback is decided on the text, never by resolving a name: "localhost", an IPv4
// dotted quad in 127.0.0.0/8 and "::1" (also "[::1]"). Every other host, names
// included, counts as reachable from elsewhere.
#pragma once

#include <string_view>

namespace mneme {

bool is_loopback_host(std::string_view host);

// True when listening on `host` is allowed: a credential is configured
// (gateway.auth_token, auth_token_file or tokens_file), the host is loopback, or
// gateway.allow_unauthenticated is true.
bool may_listen(std::string_view host, bool credentials_configured, bool allow_unauthenticated);

} // namespace mneme
