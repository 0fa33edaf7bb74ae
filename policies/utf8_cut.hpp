// Cutting UTF-8 text at a character boundary: the one place that decides where a byte
// limit may cut a text (excerpts, bounded tool results, query and summary limits, SSE
// pieces). Standard library only, no allocation; pure functions, callable from any
// thread.
//
// A boundary is a byte offset `pos` of `text` with pos == text.size() or text[pos] not a
// continuation byte (10xxxxxx). On well-formed UTF-8 that is exactly a character start,
// so a cut there never splits a character. On malformed input the rule stays total: a
// run of stray continuation bytes counts as the tail of whatever precedes it, so a cut
// backs over the whole run (and may then keep less than it could, never more than asked).
//
// Invariants of the functions below (checked by tests/utf8_cut_test.cpp):
//   1. utf8_boundary_at_or_before(text, pos) <= pos, and it is a boundary or 0.
//   2. utf8_prefix_length(text, max) <= min(max, text.size()), and equals text.size()
//      when the text fits.
//   3. On well-formed text, text.substr(0, utf8_prefix_length(text, max)) is well-formed.
#pragma once

#include <cstddef>
#include <string_view>

namespace mneme {

// True for the bytes 10xxxxxx, which continue a multi-byte sequence.
constexpr bool is_utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// `pos` moved back to the boundary at or before it (see above). A `pos` at or past the
// end is returned unchanged: the end is a boundary.
constexpr std::size_t utf8_boundary_at_or_before(std::string_view text, std::size_t pos) {
  if (pos >= text.size())
    return pos;
  while (pos > 0 && is_utf8_continuation(text[pos]))
    --pos;
  return pos;
}

// The length of the longest prefix of `text` of at most `max_bytes` bytes that ends on a
// boundary: text.size() when the text fits, else max_bytes backed up to a boundary (0
// when the first character is longer than max_bytes).
constexpr std::size_t utf8_prefix_length(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes)
    return text.size();
  return utf8_boundary_at_or_before(text, max_bytes);
}

// That prefix itself.
constexpr std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  return text.substr(0, utf8_prefix_length(text, max_bytes));
}

} // namespace mneme
