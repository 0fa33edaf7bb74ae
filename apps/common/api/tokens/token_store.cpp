// Scoped API tokens; see token_store.hpp.
//
// find() hashes the presented token and looks the hash up in a map: the time of the
// lookup depends on the hash, never on how much of a stored token the presented one
// shares, so it reveals nothing usable about a stored token.
#include "apps/common/api/tokens/token_store.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "messages/errc.hpp"
#include "policies/client_text.hpp"
#include "policies/credential_file.hpp"

namespace mneme::api {

namespace {

bool is_lower_hex(std::string_view text, size_t n) {
  if (text.size() != n)
    return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

caf::error line_error(const std::string& origin, size_t line, const std::string& what) {
  return caf::make_error(errc::config_invalid,
                         origin + ":" + std::to_string(line) + ": " + what);
}

// One non-comment line -> its entry, or what is wrong with it.
std::optional<token_entry> parse_line(std::string_view line, std::string& problem) {
  auto first = line.find(' ');
  auto second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos) {
    problem = "expected 'ID sha256:HEX SCOPE' (three fields separated by single spaces)";
    return std::nullopt;
  }
  token_entry e;
  auto id = line.substr(0, first);
  auto hash = line.substr(first + 1, second - first - 1);
  auto scope = line.substr(second + 1);
  if (!is_lower_hex(id, token_id_chars)) {
    problem = "the ID must be " + std::to_string(token_id_chars) + " lowercase hex digits";
    return std::nullopt;
  }
  if (hash.substr(0, token_hash_prefix.size()) != token_hash_prefix
      || !is_lower_hex(hash.substr(token_hash_prefix.size()), 64)) {
    problem = "the hash must be 'sha256:' followed by 64 lowercase hex digits";
    return std::nullopt;
  }
  auto parsed = parse_access_scope(scope);
  if (!parsed) {
    problem = "the scope must be 'admin' or 'user:NAME'";
    return std::nullopt;
  }
  if (!parsed->is_admin()) {
    auto v = check_name(parsed->user, user_max_bytes);
    if (!v.ok()) {
      problem = describe_name_problem(v, "the scope's user", user_max_bytes);
      return std::nullopt;
    }
  }
  e.id = std::string{id};
  e.sha256_hex = std::string{hash.substr(token_hash_prefix.size())};
  e.scope = std::move(*parsed);
  return e;
}

} // namespace

std::string lower_hex(const unsigned char* bytes, size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 0xF]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1)
    return {}; // libcrypto without SHA-256: nothing matches (fails closed)
  return lower_hex(digest, size);
}

std::optional<std::string> token_id_of(std::string_view token) {
  if (token.substr(0, token_prefix.size()) != token_prefix)
    return std::nullopt;
  auto rest = token.substr(token_prefix.size());
  if (rest.size() <= token_id_chars + 1 || rest[token_id_chars] != '_')
    return std::nullopt;
  auto id = rest.substr(0, token_id_chars);
  if (!is_lower_hex(id, token_id_chars))
    return std::nullopt;
  return std::string{id};
}

std::string token_line(const token_entry& e) {
  return e.id + " " + std::string{token_hash_prefix} + e.sha256_hex + " " + to_string(e.scope);
}

caf::expected<token_set> token_set::parse(std::string_view text, const std::string& origin) {
  token_set out;
  std::unordered_map<std::string, size_t> line_of_id;
  size_t number = 0;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty() || line.front() == '#')
      continue;
    std::string problem;
    auto e = parse_line(line, problem);
    if (!e)
      return line_error(origin, number, problem);
    if (auto i = line_of_id.find(e->id); i != line_of_id.end())
      return line_error(origin, number,
                        "ID " + e->id + " is already used on line " + std::to_string(i->second));
    if (out.by_hash_.count(e->sha256_hex) != 0)
      return line_error(origin, number, "the same hash is already on another line");
    line_of_id.emplace(e->id, number);
    out.by_hash_.emplace(e->sha256_hex, out.entries_.size());
    out.entries_.push_back(std::move(*e));
  }
  return out;
}

caf::expected<token_set> token_set::load(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return caf::make_error(errc::config_invalid,
                           path + ": cannot open the tokens file: " + std::strerror(errno));
  std::error_code ec;
  auto perms = std::filesystem::status(path, ec).permissions();
  if (auto bad = credential_file_problem(static_cast<unsigned>(perms)); !ec && !bad.empty())
    return caf::make_error(errc::config_invalid, path + ": the tokens file " + bad);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return caf::make_error(errc::config_invalid, path + ": cannot read the tokens file");
  return parse(ss.str(), path);
}

std::optional<access_scope> token_set::find(std::string_view token) const {
  if (token.empty() || entries_.empty())
    return std::nullopt;
  auto hash = sha256_hex(token);
  auto i = by_hash_.find(hash);
  if (hash.empty() || i == by_hash_.end())
    return std::nullopt;
  return entries_[i->second].scope;
}

} // namespace mneme::api
