// Access decisions of the HTTP API; see access_scope.hpp.
#include "policies/access_scope.hpp"

#include <cassert>

namespace mneme {

namespace {

constexpr std::string_view admin_text = "admin";
constexpr std::string_view user_prefix = "user:";

} // namespace

std::string to_string(const access_scope& s) {
  if (s.is_admin())
    return std::string{admin_text};
  return std::string{user_prefix} + s.user;
}

std::optional<access_scope> parse_access_scope(std::string_view text) {
  if (text == admin_text)
    return access_scope::admin();
  if (text.substr(0, user_prefix.size()) != user_prefix || text.size() == user_prefix.size())
    return std::nullopt;
  return access_scope::of_user(std::string{text.substr(user_prefix.size())});
}

std::ostream& operator<<(std::ostream& os, const access_scope& s) { return os << to_string(s); }

std::string_view to_string(route_access r) {
  switch (r) {
    case route_access::open: return "open";
    case route_access::admin_only: return "admin_only";
    case route_access::user_named: return "user_named";
    case route_access::key_owned: return "key_owned";
  }
  return "?";
}

std::string_view to_string(access_verdict v) {
  switch (v) {
    case access_verdict::allow: return "allow";
    case access_verdict::unauthorized: return "unauthorized";
    case access_verdict::forbidden: return "forbidden";
    case access_verdict::hidden: return "hidden";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, route_access r) { return os << to_string(r); }
std::ostream& operator<<(std::ostream& os, access_verdict v) { return os << to_string(v); }

access_verdict decide_access(const access_question& q) {
  if (q.route == route_access::open)
    return access_verdict::allow;
  if (!q.who)
    return access_verdict::unauthorized;
  const auto& who = *q.who;
  if (who.is_admin())
    return access_verdict::allow;
  if (q.route == route_access::admin_only)
    return access_verdict::forbidden;
  if (!q.named_user.empty() && q.named_user != who.user)
    return access_verdict::forbidden;
  if (q.route == route_access::key_owned && q.key_owner && *q.key_owner != who.user)
    return access_verdict::hidden;
  return access_verdict::allow;
}

std::string acting_user(const access_scope& who, std::string_view named_user) {
  assert(who.is_admin() || named_user.empty() || named_user == who.user);
  return who.is_admin() ? std::string{named_user} : who.user;
}

std::string reachable_owner(const access_scope& who) {
  return who.is_admin() ? std::string{} : who.user;
}

bool may_reach(const access_scope& who, std::string_view owner) {
  return who.is_admin() || owner == who.user;
}

} // namespace mneme
