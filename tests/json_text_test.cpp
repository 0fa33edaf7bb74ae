// Tests of policies/json_text: append_json_string writes what nlohmann's
// dump(-1, ' ', false, replace) writes, byte for byte, on any bytes.
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/json_text.hpp"

BOOST_AUTO_TEST_SUITE(json_text_test)

namespace {

std::string jt_reference(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string jt_ours(const std::string& text) {
  std::string out = "prefix:"; // appends, never overwrites
  mneme::append_json_string(out, text);
  return out.substr(7);
}

} // namespace

BOOST_AUTO_TEST_CASE(plain_unicode_and_escapes_match_nlohmann) {
  const std::vector<std::string> cases{
    "",
    "hello",
    "quote \" backslash \\ slash /",
    "\b\f\n\r\t and \x01\x1f\x7f",
    std::string("nul \0 inside", 12),
    "中文字符，标点。",
    "emoji 😀 and ü é ß",
    "\xEF\xBF\xBD already a replacement",
    "\xED\x9F\xBF last before surrogates, \xEE\x80\x80 first after",
    "\xF4\x8F\xBF\xBF highest code point",
  };
  for (const auto& c : cases)
    BOOST_TEST(jt_ours(c) == jt_reference(c), "case: " << jt_reference(c));
}

BOOST_AUTO_TEST_CASE(ill_formed_utf8_is_replaced_as_nlohmann_does) {
  const std::vector<std::string> cases{
    "\x80",             // stray continuation
    "\xC0\xAF",         // overlong lead
    "\xE0\x80\x80",     // overlong three bytes
    "\xED\xA0\x80",     // surrogate
    "\xF4\x90\x80\x80", // above U+10FFFF
    "\xF5\x80",         // never a lead
    "\xE4\xB8",         // cut by the end
    "\xE4\xB8" "A",     // cut by ASCII: one replacement, then A
    "\xE4\xB8\xE4\xB8\xAD", // cut by a new lead that completes
    "\xF0\x9F\x98",     // four-byte sequence cut by the end
    "\xF0\x9F\x98\"",   // cut by a quote, which is escaped after
    "a\xFF" "b\xFE\xFF" "c",
  };
  for (const auto& c : cases)
    BOOST_TEST(jt_ours(c) == jt_reference(c), "case: " << jt_reference(c));
}

BOOST_AUTO_TEST_CASE(every_string_of_one_and_two_bytes_matches) {
  std::string s;
  for (int a = 0; a < 256; ++a) {
    s.assign(1, static_cast<char>(a));
    BOOST_REQUIRE(jt_ours(s) == jt_reference(s));
    for (int b = 0; b < 256; ++b) {
      s.assign({static_cast<char>(a), static_cast<char>(b)});
      BOOST_REQUIRE_MESSAGE(jt_ours(s) == jt_reference(s), "bytes " << a << " " << b);
    }
  }
}

BOOST_AUTO_TEST_CASE(random_bytes_biased_to_utf8_edges_match) {
  std::mt19937 rng{20261203};
  // Bytes near the boundaries of Table 3-7 and the escapes, plus plain text.
  const std::vector<unsigned char> pool{0x00, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20, 0x22,
                                        0x2F, 0x41, 0x5C, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                        0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                                        0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  std::uniform_int_distribution<int> len(0, 24);
  for (int round = 0; round < 200000; ++round) {
    std::string s;
    int n = len(rng);
    for (int i = 0; i < n; ++i)
      s.push_back(static_cast<char>(pool[pick(rng)]));
    BOOST_REQUIRE_MESSAGE(jt_ours(s) == jt_reference(s), "round " << round);
  }
}

BOOST_AUTO_TEST_SUITE_END() // json_text_test
