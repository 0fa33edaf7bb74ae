// A user's key namespace; see key_namespace.hpp.
#include "policies/key_namespace.hpp"

#include "policies/client_text.hpp"

namespace mneme {

std::string stored_key(std::string_view user, std::string_view key) {
  if (user.empty())
    return std::string{key};
  std::string out;
  out.reserve(user.size() + 1 + key.size());
  out.append(user).push_back(key_namespace_separator);
  out.append(key);
  return out;
}

std::string visible_key(std::string_view stored) {
  auto at = stored.rfind(key_namespace_separator);
  return std::string{at == std::string_view::npos ? stored : stored.substr(at + 1)};
}

std::string key_user(std::string_view stored) {
  auto at = stored.rfind(key_namespace_separator);
  return at == std::string_view::npos ? std::string{} : std::string{stored.substr(0, at)};
}

std::string namespace_user(std::string_view token_user, std::string_view named_user,
                           std::string_view default_user) {
  if (!token_user.empty())
    return std::string{token_user};
  return std::string{named_user.empty() ? default_user : named_user};
}

std::string without_namespaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch != key_namespace_separator) {
      out.push_back(ch);
      continue;
    }
    auto quote = out.rfind('\'');
    out.erase(quote == std::string::npos ? 0 : quote + 1);
  }
  return out;
}

std::string key_refusal(std::string_view key, std::size_t max_bytes) {
  auto v = check_name(key, max_bytes);
  if (v.ok())
    return {};
  if (v.problem == name_problem::control_character && v.byte < key.size()
      && key[v.byte] == key_namespace_separator)
    return "the session key holds U+001F (byte " + std::to_string(v.byte)
           + "), the separator of a user's key namespace";
  return describe_name_problem(v, "the session key", max_bytes);
}

} // namespace mneme
