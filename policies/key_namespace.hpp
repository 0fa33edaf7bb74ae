// Session keys belong to a user's namespace (docs/api.md "Authentication"): the key a
// client names is stored as USER + U+001F + KEY, so the same key under two users is two
// sessions and no user can open, read or shadow another's. Standard library only; pure
// functions, safe from any thread. Used by the HTTP layer (apps/common/api), the CLI,
// the gateway (the visible key of a stored one) and the stores' migrations, which write
// the same form.
//
// Invariants:
//   - a client's key never holds U+001F (key_refusal refuses it), so the last U+001F of
//     a stored key separates the user from the key the client named, whatever the user;
//   - an empty user is the unscoped namespace: the stored key is the client's key (keys
//     of sessions without a user, written before namespaces existed or by a CLI import);
//   - visible_key(stored_key(u, k)) == k and key_user(stored_key(u, k)) == u.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr char key_namespace_separator = '\x1f';

// The stored form of client key `key` in `user`'s namespace.
std::string stored_key(std::string_view user, std::string_view key);
// The key a client names for a stored key (the part after the last U+001F).
std::string visible_key(std::string_view stored);
// The namespace of a stored key ("" for an unscoped one).
std::string key_user(std::string_view stored);

// The namespace a request's key lives in: a user token's user, else the user the
// request names (an admin's `user`), else gateway.default_user.
std::string namespace_user(std::string_view token_user, std::string_view named_user,
                           std::string_view default_user);

// `text` (an error's message) with every stored key in it shown as its client's key: the
// namespace before each U+001F is cut back to the opening quote (or the start).
std::string without_namespaces(std::string_view text);

// Why a client's key is refused ("" when acceptable): the checks of
// policies/client_text.hpp, and U+001F named as the namespace separator.
std::string key_refusal(std::string_view key, std::size_t max_bytes);

} // namespace mneme
