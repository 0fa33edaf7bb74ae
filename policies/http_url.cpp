// Advertise URLs; see http_url.hpp.
#include "policies/http_url.hpp"

#include <cctype>

namespace mneme {

std::optional<http_url> parse_http_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (url.substr(0, scheme.size()) != scheme)
    return std::nullopt;
  url.remove_prefix(scheme.size());
  if (url.find_first_of("?#") != std::string_view::npos)
    return std::nullopt;
  auto slash = url.find('/');
  auto authority = url.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : url.substr(slash);
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  http_url out;
  out.base = std::string{path};
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') { // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    out.host = std::string{authority.substr(1, close - 1)};
    auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return std::nullopt;
      port = rest.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    out.host = std::string{authority.substr(0, colon)};
    if (colon != std::string_view::npos)
      port = authority.substr(colon + 1);
    if (out.host.find(':') != std::string::npos)
      return std::nullopt;
  }
  if (out.host.empty() || out.host.find('@') != std::string::npos)
    return std::nullopt;
  if (port.empty() && authority.find(':') != std::string_view::npos
      && authority.front() != '[')
    return std::nullopt; // "host:" with no digits
  if (!port.empty()) {
    if (port.size() > 5)
      return std::nullopt;
    for (char ch : port)
      if (!std::isdigit(static_cast<unsigned char>(ch)))
        return std::nullopt;
    out.port = std::string{port};
  } else {
    out.port = "80";
  }
  return out;
}

} // namespace mneme
