// The unauthenticated-listener guard; see listen_guard.hpp.
#include "policies/listen_guard.hpp"

namespace mneme {

namespace {

// A dotted quad of four decimal numbers 0..255 (no sign, no empty part, at most three
// digits each); false for anything else.
bool parse_ipv4(std::string_view text, int (&parts)[4]) {
  int n = 0;
  size_t i = 0;
  while (n < 4) {
    size_t start = i;
    int value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 3)
      value = value * 10 + (text[i++] - '0');
    if (i == start || value > 255)
      return false;
    parts[n++] = value;
    if (n < 4) {
      if (i >= text.size() || text[i] != '.')
        return false;
      ++i;
    }
  }
  return i == text.size();
}

} // namespace

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]")
    return true;
  int parts[4];
  return parse_ipv4(host, parts) && parts[0] == 127;
}

bool may_listen(std::string_view host, bool credentials_configured, bool allow_unauthenticated) {
  return credentials_configured || allow_unauthenticated || is_loopback_host(host);
}

} // namespace mneme
