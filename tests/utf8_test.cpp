// Tests of the UTF-8 helpers the policies share (policies/utf8.hpp): the
// decoder's contract on valid and invalid input, the CJK classes, counting,
// cutting and case-insensitive search.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "policies/utf8.hpp"

BOOST_AUTO_TEST_SUITE(utf8_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

// Test data is written as byte strings; string_view keeps embedded NULs.
std::string bytes(std::initializer_list<unsigned> values) {
  std::string s;
  for (auto v : values) s += static_cast<char>(v);
  return s;
}

} // namespace

// Every length class and the edges of every range of Table 3-7.
BOOST_DATA_TEST_CASE(
    well_formed_sequences_decode_to_their_code_point_and_consume_their_length,
    data::make({bytes({0x00}), bytes({0x41}), bytes({0x7F}), bytes({0xC2, 0x80}),
                bytes({0xC3, 0xA9}), bytes({0xDF, 0xBF}), bytes({0xE0, 0xA0, 0x80}),
                bytes({0xE6, 0x88, 0x91}), bytes({0xED, 0x9F, 0xBF}),
                bytes({0xEE, 0x80, 0x80}), bytes({0xEF, 0xBF, 0xBF}),
                bytes({0xF0, 0x90, 0x80, 0x80}), bytes({0xF0, 0x9F, 0x98, 0x80}),
                bytes({0xF4, 0x8F, 0xBF, 0xBF})})
        ^ data::make({0x00u, 0x41u, 0x7Fu, 0x80u, 0xE9u, 0x7FFu, 0x800u, 0x6211u, 0xD7FFu,
                      0xE000u, 0xFFFFu, 0x10000u, 0x1F600u, 0x10FFFFu})
        ^ data::make({1u, 1u, 1u, 2u, 2u, 2u, 3u, 3u, 3u, 3u, 3u, 4u, 4u, 4u}),
    text, want_code_point, want_length) {
  std::size_t pos = 0;
  BOOST_TEST(static_cast<unsigned>(next_code_point(text, pos)) == want_code_point);
  BOOST_TEST(pos == want_length);
}

// Overlongs, surrogates, values above U+10FFFF, stray continuations, bytes that
// never occur, truncated sequences and bad continuation bytes.
BOOST_DATA_TEST_CASE(
    every_ill_formed_byte_decodes_to_the_replacement_character_and_consumes_one_byte,
    data::make({bytes({0x80}), bytes({0xBF}), bytes({0xC0, 0x80}), bytes({0xC1, 0xBF}),
                bytes({0xE0, 0x80, 0x80}), bytes({0xE0, 0x9F, 0xBF}),
                bytes({0xED, 0xA0, 0x80}), bytes({0xED, 0xBF, 0xBF}),
                bytes({0xF0, 0x80, 0x80, 0x80}), bytes({0xF0, 0x8F, 0xBF, 0xBF}),
                bytes({0xF4, 0x90, 0x80, 0x80}), bytes({0xF5, 0x80, 0x80, 0x80}),
                bytes({0xFE}), bytes({0xFF}), bytes({0xE6, 0x88}), bytes({0xF0, 0x9F, 0x98}),
                bytes({0xC3}), bytes({0xE6, 0x41, 0x41}), bytes({0xC3, 0xC3, 0xA9})}),
    text) {
  std::size_t pos = 0;
  BOOST_TEST(static_cast<unsigned>(next_code_point(text, pos)) == 0xFFFDu);
  BOOST_TEST(pos == 1u);
}

BOOST_AUTO_TEST_CASE(decoding_resynchronizes_on_the_byte_after_an_invalid_one) {
  const std::string text = bytes({0xE6, 0x41, 0xC3, 0xC3, 0xA9});
  std::size_t pos = 0;
  std::u32string decoded;
  while (pos < text.size()) decoded += next_code_point(text, pos);
  BOOST_TEST((decoded == std::u32string{0xFFFD, U'A', 0xFFFD, 0xE9}));
}

BOOST_AUTO_TEST_CASE(first_invalid_byte_is_found_and_an_encoded_replacement_is_valid) {
  BOOST_TEST(first_invalid_utf8_byte("") == std::string_view::npos);
  BOOST_TEST(first_invalid_utf8_byte("plain \xE4\xB8\xAD\xE6\x96\x87 \xEF\xBF\xBD ok") ==
             std::string_view::npos);
  BOOST_TEST(first_invalid_utf8_byte(bytes({0x41, 0x42, 0xE6, 0x41})) == 2u);
  BOOST_TEST(first_invalid_utf8_byte(bytes({0xFF})) == 0u);
  BOOST_TEST(first_invalid_utf8_byte(bytes({0x41, 0xED, 0xA0, 0x80})) == 1u); // a surrogate
  BOOST_TEST(first_invalid_utf8_byte(bytes({0x41, 0xC3})) == 1u);             // cut short
}

BOOST_AUTO_TEST_CASE(random_bytes_always_decode_with_progress_and_within_bounds) {
  std::mt19937 gen{20261130};
  std::uniform_int_distribution<int> byte{0, 255};
  for (int round = 0; round < 2000; ++round) {
    std::string text(static_cast<std::size_t>(round % 37), '\0');
    for (auto& c : text) c = static_cast<char>(byte(gen));
    std::size_t pos = 0, count = 0;
    while (pos < text.size()) {
      const std::size_t before = pos;
      const char32_t c = next_code_point(text, pos);
      BOOST_REQUIRE(pos > before);
      BOOST_REQUIRE(pos - before <= 4);
      BOOST_REQUIRE(c <= 0x10FFFF);
      BOOST_REQUIRE(!(c >= 0xD800 && c <= 0xDFFF));
      ++count;
    }
    BOOST_REQUIRE(pos == text.size());
    BOOST_REQUIRE(count == count_code_points(text));
  }
}

BOOST_DATA_TEST_CASE(
    cjk_code_points_are_han_kana_hangul_bopomofo_cjk_punctuation_and_fullwidth_forms,
    data::make({0x4E00u, 0x6211u, 0x9FFFu, 0x3400u, 0x4DBFu, 0x20000u, 0x2A6DFu, 0x2B740u,
                0x30000u, 0x31350u, 0xF900u, 0x2F800u, 0x2E80u, 0x2F00u, 0x3042u, 0x30A2u,
                0x30FCu, 0x31F0u, 0x1B000u, 0xFF71u, 0xAC00u, 0xD7A3u, 0x1100u, 0x3131u,
                0x3105u, 0x3000u, 0x3001u, 0x3002u, 0x300Cu, 0x3010u, 0xFF01u, 0xFF0Cu,
                0xFF21u, 0xFF5Au, 0xFE30u, 0x3231u, 0x2FF0u}),
    code_point) {
  BOOST_TEST(is_cjk_code_point(static_cast<char32_t>(code_point)));
}

BOOST_DATA_TEST_CASE(
    latin_greek_cyrillic_thai_symbols_emoji_and_the_replacement_character_are_not_cjk,
    data::make({0x41u, 0x7Au, 0x20u, 0x0Au, 0xE9u, 0x3A9u, 0x42Fu, 0x5D0u, 0x627u, 0xE01u,
                0x10FFu, 0x2014u, 0x201Cu, 0x20ACu, 0x2E7Fu, 0xA000u, 0xFFFDu, 0xFFF0u,
                0x1F600u, 0x10FFFFu}),
    code_point) {
  BOOST_TEST(!is_cjk_code_point(static_cast<char32_t>(code_point)));
}

BOOST_DATA_TEST_CASE(
    cjk_letters_exclude_punctuation_and_fullwidth_latin,
    data::make({0x6211u, 0x3042u, 0x30A2u, 0xFF71u, 0xAC00u, 0x3105u, 0x20000u, 0x3001u,
                0x3002u, 0x300Cu, 0xFF01u, 0xFF21u, 0xFF10u, 0x3000u})
        ^ data::make({true, true, true, true, true, true, true, false, false, false, false,
                      false, false, false}),
    code_point, want_letter) {
  BOOST_TEST(is_cjk_letter(static_cast<char32_t>(code_point)) == want_letter);
  BOOST_TEST(is_cjk_code_point(static_cast<char32_t>(code_point)));
}

BOOST_DATA_TEST_CASE(
    code_points_are_counted_not_bytes_and_each_invalid_byte_counts_once,
    data::make({std::string{}, std::string{"abc"}, std::string{"数据库"},
                std::string{"a我😀"}, std::string{"éééé"}, bytes({0xFF, 0xFE, 0x80}),
                std::string{"x"} + bytes({0xE6, 0x88}) + "y"})
        ^ data::make({0u, 3u, 3u, 3u, 4u, 3u, 4u}),
    text, want) {
  BOOST_TEST(count_code_points(text) == want);
}

BOOST_DATA_TEST_CASE(
    the_byte_offset_of_a_code_point_never_splits_a_sequence,
    data::make({0u, 1u, 2u, 3u, 4u, 100u}) ^ data::make({0u, 1u, 4u, 8u, 9u, 9u}),
    index, want_offset) {
  const std::string text = "a我😀" + bytes({0xFF});
  BOOST_TEST(byte_offset_of_code_point(text, index) == want_offset);
}

BOOST_DATA_TEST_CASE(
    case_insensitive_search_folds_ascii_letters_only,
    data::make({"Prompt IS too long", "prompt is too long", "promp", "", "数据库 ABC",
                "数据库 ABC", "ÉCOLE", "x"})
        ^ data::make({"prompt is TOO LONG", "too long", "prompt", "", "abc", "数据",
                      "école", ""})
        ^ data::make({true, true, false, true, true, true, false, true}),
    haystack, needle, want) {
  BOOST_TEST(contains_ignoring_case(haystack, needle) == want);
}

BOOST_AUTO_TEST_SUITE_END() // utf8_test
