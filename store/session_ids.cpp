// Session id generation; see session_ids.hpp.
#include "store/session_ids.hpp"

#include <cassert>
#include <cstdio>

namespace mneme {

session_id_generator::session_id_generator() : rng_(std::random_device{}()) {
  // nop
}

std::string session_id_generator::next(time_ms now) {
  assert(now >= 0);
  char buf[32];
  auto rnd = rng_() & 0xffffffffffffULL;
  std::snprintf(buf, sizeof(buf), "%012llx%012llx",
                static_cast<unsigned long long>(now) & 0xffffffffffffULL,
                static_cast<unsigned long long>(rnd));
  return buf;
}

bool valid_session_id(const std::string& id) {
  if (id.empty() || id.size() > 128)
    return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

} // namespace mneme
