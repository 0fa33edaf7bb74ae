// Bytes from the operating system's random source; see os_random.hpp.
#include "store/os_random.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

namespace mneme {

namespace {

bool fill_from_urandom(unsigned char* out, size_t n) {
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  size_t got = 0;
  while (got < n) {
    auto r = ::read(fd, out + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += static_cast<size_t>(r);
  }
  int saved = errno;
  ::close(fd);
  errno = saved;
  return got == n;
}

} // namespace

bool fill_os_random(unsigned char* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    auto r = ::getrandom(out + got, n - got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && errno == ENOSYS)
      return fill_from_urandom(out + got, n - got);
    if (r <= 0)
      return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

std::string os_random_hex(size_t n) {
  std::vector<unsigned char> bytes(n);
  if (!fill_os_random(bytes.data(), n))
    throw std::system_error(errno, std::generic_category(), "getrandom");
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (auto b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0xf]);
  }
  return out;
}

std::string os_random_id(std::string_view prefix) {
  return std::string{prefix} + os_random_hex(16);
}

} // namespace mneme
