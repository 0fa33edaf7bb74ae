// Tests of policies/utf8_cut.hpp, the one helper that cuts UTF-8 text at a character
// boundary: ASCII; 2-, 3- and 4-byte characters with the limit at every byte inside
// them; stray continuation bytes, truncated sequences and other invalid bytes; the
// empty text; and the header's invariants checked for every limit over a mixed text.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <string_view>

#include "policies/utf8.hpp"
#include "policies/utf8_cut.hpp"

BOOST_AUTO_TEST_SUITE(utf8_cut_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct prefix_case {
  std::string_view text;
  std::size_t max_bytes;
  std::size_t want; // utf8_prefix_length
};

std::ostream& operator<<(std::ostream& os, const prefix_case& c) {
  os << '"';
  for (unsigned char ch : c.text)
    if (ch < 0x80)
      os << ch;
    else
      os << "\\x" << std::hex << static_cast<int>(ch) << std::dec;
  return os << "\" max=" << c.max_bytes << " -> " << c.want;
}

// "aé" = 61 C3 A9; "a€" = 61 E2 82 AC; "a😀" = 61 F0 9F 98 80. A limit that falls inside
// the character keeps only "a"; one at its end keeps it whole.
const prefix_case prefix_cases[] = {
  // Empty text: nothing to cut, whatever the limit.
  {"", 0, 0},
  {"", 5, 0},
  // ASCII: every byte is a boundary.
  {"hello", 0, 0},
  {"hello", 1, 1},
  {"hello", 4, 4},
  {"hello", 5, 5},
  {"hello", 99, 5},
  // A 2-byte character at every cut position.
  {"a\xC3\xA9", 0, 0},
  {"a\xC3\xA9", 1, 1},
  {"a\xC3\xA9", 2, 1},
  {"a\xC3\xA9", 3, 3},
  {"a\xC3\xA9z", 3, 3},
  // A 3-byte character at every cut position.
  {"a\xE2\x82\xAC", 1, 1},
  {"a\xE2\x82\xAC", 2, 1},
  {"a\xE2\x82\xAC", 3, 1},
  {"a\xE2\x82\xAC", 4, 4},
  {"a\xE2\x82\xACz", 4, 4},
  // A 4-byte character at every cut position.
  {"a\xF0\x9F\x98\x80", 1, 1},
  {"a\xF0\x9F\x98\x80", 2, 1},
  {"a\xF0\x9F\x98\x80", 3, 1},
  {"a\xF0\x9F\x98\x80", 4, 1},
  {"a\xF0\x9F\x98\x80", 5, 5},
  {"a\xF0\x9F\x98\x80z", 5, 5},
  // A first character longer than the limit: the prefix is empty.
  {"\xF0\x9F\x98\x80", 3, 0},
  {"\xE2\x82\xAC", 2, 0},
  // Characters back to back: the cut lands between them.
  {"\xC3\xA9\xC3\xA9\xC3\xA9", 3, 2},
  {"\xC3\xA9\xC3\xA9\xC3\xA9", 4, 4},
  {"\xE2\x82\xAC\xF0\x9F\x98\x80", 6, 3},
  // Invalid bytes. A lead byte without its continuation is a boundary of its own.
  {"ab\xC3", 3, 3},
  {"ab\xC3z", 3, 3},
  {"ab\xFFz", 3, 3},
  {"ab\xFF\xFEz", 3, 3},
  // Stray continuation bytes count as the tail of what precedes them: a cut at or in the
  // run drops it with the byte before it; a cut after it keeps it.
  {"ab\x80\x80z", 2, 1},
  {"ab\x80\x80z", 3, 1},
  {"ab\x80\x80z", 4, 4},
  {"ab\x80\x80z", 5, 5},
  {"\x80\x80\x80z", 2, 0},
  // A truncated sequence: cut inside it, it goes; cut after it, it stays as it was.
  {"a\xE2\x82z", 2, 1},
  {"a\xE2\x82z", 3, 3},
};

struct boundary_case {
  std::string_view text;
  std::size_t pos;
  std::size_t want; // utf8_boundary_at_or_before
};

std::ostream& operator<<(std::ostream& os, const boundary_case& c) {
  return os << prefix_case{c.text, c.pos, c.want};
}

const boundary_case boundary_cases[] = {
  {"", 0, 0},
  {"", 3, 3},                         // at or past the end: unchanged
  {"hello", 2, 2},
  {"hello", 5, 5},
  {"hello", 9, 9},
  {"a\xC3\xA9z", 2, 1},               // inside the 2-byte character
  {"a\xC3\xA9z", 1, 1},               // on its lead byte
  {"a\xC3\xA9z", 3, 3},
  {"a\xF0\x9F\x98\x80z", 2, 1},
  {"a\xF0\x9F\x98\x80z", 3, 1},
  {"a\xF0\x9F\x98\x80z", 4, 1},
  {"a\xF0\x9F\x98\x80z", 5, 5},
  {"\x80\x80z", 1, 0},                // stray continuation bytes at the start
};

// A mixed well-formed text: ASCII, 2-, 3- and 4-byte characters.
const std::string_view mixed = "ok \xC3\xA9t\xC3\xA9 \xE2\x82\xAC\xE6\x95\xB0 \xF0\x9F\x98\x80!";

// The helpers are constexpr: a limit known at compile time is cut at compile time.
static_assert(utf8_prefix_length("a\xC3\xA9", 2) == 1);
static_assert(utf8_prefix("abc", 2) == "ab");

} // namespace

BOOST_DATA_TEST_CASE(the_prefix_is_the_longest_that_ends_on_a_boundary, data::make(prefix_cases),
                     c) {
  BOOST_TEST(utf8_prefix_length(c.text, c.max_bytes) == c.want);
  BOOST_TEST(utf8_prefix(c.text, c.max_bytes) == c.text.substr(0, c.want));
}

BOOST_DATA_TEST_CASE(a_position_backs_up_to_the_start_of_its_character,
                     data::make(boundary_cases), c) {
  BOOST_TEST(utf8_boundary_at_or_before(c.text, c.pos) == c.want);
}

BOOST_AUTO_TEST_CASE(continuation_bytes_are_exactly_10xxxxxx) {
  for (int b = 0; b < 256; ++b)
    BOOST_TEST(is_utf8_continuation(static_cast<char>(b)) == (b >= 0x80 && b <= 0xBF), b);
}

BOOST_AUTO_TEST_CASE(every_cut_of_well_formed_text_stays_well_formed_and_maximal) {
  BOOST_REQUIRE(first_invalid_utf8_byte(mixed) == std::string_view::npos);
  for (std::size_t max = 0; max <= mixed.size() + 1; ++max) {
    auto n = utf8_prefix_length(mixed, max);
    BOOST_TEST(n <= max);
    BOOST_TEST(first_invalid_utf8_byte(mixed.substr(0, n)) == std::string_view::npos, max);
    // Maximal: no longer prefix within the limit ends on a character start.
    for (auto longer = n + 1; longer <= std::min(max, mixed.size()); ++longer)
      BOOST_TEST(first_invalid_utf8_byte(mixed.substr(0, longer)) != std::string_view::npos,
                 max << " " << longer);
  }
}

BOOST_AUTO_TEST_SUITE_END() // utf8_cut_test
