// Session id generation; see session_ids.hpp.
#include "store/session_ids.hpp"

#include <cassert>
#include <cstdio>

#include "store/os_random.hpp"

namespace mneme {

std::string session_id_generator::next(time_ms now) {
  assert(now >= 0);
  char time_part[16];
  std::snprintf(time_part, sizeof time_part, "%012llx",
                static_cast<unsigned long long>(now) & 0xffffffffffffULL);
  return time_part + os_random_hex(session_id_random_chars / 2);
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
