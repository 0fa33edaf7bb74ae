// The scoped API tokens of gateway.tokens_file (SPEC §8.1 credentials; docs/api.md
// "Authentication"): the file's format, its parser, and the lookup of a presented
// bearer token. The file never holds a token, only its SHA-256; one line per token:
//
//   ID sha256:HEX SCOPE
//
// ID is the token's 8 lowercase hex digits (also inside the token: mneme_ID_SECRET),
// HEX the 64 lowercase hex digits of SHA-256 of the whole token text, SCOPE `admin` or
// `user:NAME` (the rest of the line: a NAME may hold spaces; only a final '\r' is
// dropped). Fields are separated by exactly one space. Blank lines and lines starting
// with '#' are ignored. A bad line, a repeated ID or a repeated hash makes the whole file
// invalid, with an error naming the file, the line number and what is wrong.
//
// Hashing: OpenSSL's libcrypto (EVP, SHA-256). The tokens are 256 random bits, so a
// plain SHA-256 (no salt, no slow KDF) is enough to keep a stolen file from being
// usable, and it costs a microsecond per request.
//
// Threads: a token_set is immutable once built; find() from any thread. The daemon
// swaps whole sets on SIGHUP (http_api::set_tokens).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "caf/expected.hpp"

#include "policies/access_scope.hpp"

namespace mneme::api {

inline constexpr size_t token_id_chars = 8;
inline constexpr size_t token_secret_bytes = 32;
inline constexpr std::string_view token_prefix = "mneme_";
inline constexpr std::string_view token_hash_prefix = "sha256:";

struct token_entry {
  std::string id;          // token_id_chars lowercase hex digits
  std::string sha256_hex;  // of the whole token, 64 lowercase hex digits
  access_scope scope;
};

// `n` bytes as 2n lowercase hex digits.
std::string lower_hex(const unsigned char* bytes, size_t n);

// The lowercase hex SHA-256 of `data`; empty only if libcrypto cannot hash (then no
// token matches).
std::string sha256_hex(std::string_view data);

// The ID inside a token of the form mneme_ID_SECRET; nullopt for any other text.
std::optional<std::string> token_id_of(std::string_view token);

// "ID sha256:HEX SCOPE" (no newline).
std::string token_line(const token_entry& e);

class token_set {
 public:
  // The tokens of a file's text; `origin` (the path) leads every error, as in
  // "tokens.list:3: ...". Errors: errc::config_invalid.
  static caf::expected<token_set> parse(std::string_view text, const std::string& origin);
  // parse() of the file at `path`; errc::config_invalid when it cannot be read.
  static caf::expected<token_set> load(const std::string& path);

  // The scope of `token`, nullopt when no line holds its hash.
  std::optional<access_scope> find(std::string_view token) const;

  const std::vector<token_entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<token_entry> entries_;
  std::unordered_map<std::string, size_t> by_hash_; // sha256_hex -> index in entries_
};

} // namespace mneme::api
