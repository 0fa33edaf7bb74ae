// Changes to a tokens file (gateway.tokens_file, format in token_store.hpp), for
// `mneme token add|revoke|list` (apps/mneme/cmd_token.cpp): a new token is made from
// the kernel's random source (getrandom), only its hash is written, and the token text
// is returned once to the caller. Every change holds an exclusive lock on FILE.lock
// (flock), reads and checks the whole file (a bad line refuses the change, naming the
// line), and replaces the file atomically (a temporary file in the same folder, fsync,
// rename) with mode 0600: a crash leaves the old file or the new one, never a mix.
// Lines are kept as they were (comments too) except the one a revoke removes.
//
// A running daemon sees a change after SIGHUP (apps/mneme/cmd_serve.cpp).
// Threads: blocking file I/O; called from a program's main thread.
#pragma once

#include <string>

#include "caf/expected.hpp"

#include "apps/common/api/tokens/token_store.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

struct issued_token {
  std::string token; // mneme_ID_SECRET: shown once, stored nowhere
  token_entry entry; // the line written
};

// A new random token text (mneme_ID_SECRET, SECRET = 64 hex digits of 32 random
// bytes); errc::internal when the kernel gives no randomness.
caf::expected<std::string> generate_token();

// Adds a new token with `scope` to the file at `path` (created when missing);
// errc::config_invalid for a bad existing file or a bad scope (the user fails the
// strict name rules), errc::internal for an I/O failure.
caf::expected<issued_token> add_token(const std::string& path, const access_scope& scope);

// Removes the token whose ID is `id_or_token`, or whose hash is that of `id_or_token`
// (the whole token text given); the removed entry. errc::not_found when no line
// matches (the message never repeats the argument: it may be a secret).
caf::expected<token_entry> revoke_token(const std::string& path, const std::string& id_or_token);

} // namespace mneme::api
