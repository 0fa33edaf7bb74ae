// Permission checks of credential files; see credential_file.hpp.
#include "policies/credential_file.hpp"

namespace mneme {

namespace {

constexpr unsigned others_may_write = 0002; // S_IWOTH

std::string octal_mode(unsigned mode) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3)
    out.push_back(static_cast<char>('0' + ((mode >> shift) & 7)));
  return out;
}

} // namespace

std::string credential_file_problem(unsigned mode) {
  if ((mode & others_may_write) == 0)
    return {};
  return "is writable by every user (mode " + octal_mode(mode & 07777)
         + "); remove that with chmod o-w";
}

} // namespace mneme
