// Counting, cutting and case-insensitive search; see utf8.hpp.
#include "policies/utf8.hpp"

namespace mneme {

std::size_t count_code_points(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t pos = 0; pos < text.size(); ++n)
    next_code_point(text, pos);
  return n;
}

std::size_t byte_offset_of_code_point(std::string_view text, std::size_t index) {
  std::size_t pos = 0;
  for (std::size_t n = 0; n < index && pos < text.size(); ++n)
    next_code_point(text, pos);
  return pos;
}

namespace {

constexpr unsigned char ascii_lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c - 'A' + 'a') : c;
}

} // namespace

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  const std::size_t last = haystack.size() - needle.size();
  for (std::size_t start = 0; start <= last; ++start) {
    std::size_t i = 0;
    while (i < needle.size()
           && ascii_lower(static_cast<unsigned char>(haystack[start + i]))
                == ascii_lower(static_cast<unsigned char>(needle[i])))
      ++i;
    if (i == needle.size()) return true;
  }
  return false;
}

} // namespace mneme
