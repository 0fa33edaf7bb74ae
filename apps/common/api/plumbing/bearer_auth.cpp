// Bearer-token check; see bearer_auth.hpp.
#include "apps/common/api/plumbing/bearer_auth.hpp"

#include <cassert>
#include <cstdint>

#include "policies/utf8.hpp"

namespace mneme::api {

bool constant_time_equals(std::string_view a, std::string_view b) {
  // Walk the longer of the two so the loop length does not stop at a prefix match.
  auto n = a.size() > b.size() ? a.size() : b.size();
  volatile uint8_t diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    auto x = i < a.size() ? static_cast<uint8_t>(a[i]) : uint8_t{0};
    auto y = i < b.size() ? static_cast<uint8_t>(b[i]) : uint8_t{0};
    diff = static_cast<uint8_t>(diff | (x ^ y));
  }
  return diff == 0;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() <= scheme.size()
      || !contains_ignoring_case(authorization.substr(0, scheme.size()), scheme))
    return std::nullopt;
  auto rest = authorization.substr(scheme.size());
  if (rest.front() != ' ')
    return std::nullopt;
  auto start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos)
    return std::nullopt;
  return rest.substr(start);
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  assert(!token.empty());
  auto presented = bearer_token(authorization);
  return presented && constant_time_equals(*presented, token);
}

} // namespace mneme::api
