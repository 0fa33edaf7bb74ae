// Identifiers a client is given and may send back cannot be guessed: session ids
// (store/session_ids.hpp), the doors' ids (store/os_random.hpp's os_random_id) and API
// tokens (apps/common/api/tokens/token_file.hpp) carry at least 128 bits from the
// kernel's random source. Each test draws many ids and checks that none repeats, that
// the format has room for 128 random bits, and that every one of those bits takes both
// values across the draws (a generator with fewer bits, or a counter, leaves some fixed).
#include <boost/test/unit_test.hpp>

#include <array>
#include <set>
#include <string>
#include <vector>

#include "apps/common/api/tokens/token_file.hpp"
#include "store/os_random.hpp"
#include "store/session_ids.hpp"

using namespace mneme;

namespace {

constexpr int draws = 20000;

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

// Which of the bits of `hex` digits were seen as 0 and as 1 over the draws.
struct bit_census {
  std::vector<std::array<bool, 2>> seen;
  explicit bit_census(size_t digits) : seen(digits * 4, {false, false}) {}
  void add(const std::string& hex) {
    BOOST_REQUIRE_EQUAL(hex.size() * 4, seen.size());
    for (size_t i = 0; i < hex.size(); ++i) {
      int v = hex_value(hex[i]);
      BOOST_REQUIRE_MESSAGE(v >= 0, "not a lowercase hex digit in " << hex);
      for (int b = 0; b < 4; ++b)
        seen[i * 4 + b][(v >> b) & 1] = true;
    }
  }
  size_t varying_bits() const {
    size_t n = 0;
    for (auto& s : seen)
      n += s[0] && s[1];
    return n;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(unguessable_ids_test)

BOOST_AUTO_TEST_CASE(session_ids_drawn_in_one_millisecond_never_repeat_and_vary_in_128_bits) {
  session_id_generator gen;
  std::set<std::string> seen;
  bit_census census{session_id_random_chars};
  const time_ms now = 1700000000000;
  for (int i = 0; i < draws; ++i) {
    auto id = gen.next(now); // the same millisecond every time: only randomness differs
    BOOST_REQUIRE_EQUAL(id.size(), session_id_chars);
    BOOST_REQUIRE(valid_session_id(id));
    BOOST_REQUIRE_EQUAL(id.substr(0, 12), "018bcfe56800");
    census.add(id.substr(12));
    seen.insert(id);
  }
  BOOST_TEST(seen.size() == static_cast<size_t>(draws));
  BOOST_TEST(census.varying_bits() == 128u);
}

BOOST_AUTO_TEST_CASE(two_generators_started_together_draw_different_ids) {
  // A generator seeded once (the former Mersenne Twister) could be replayed from its
  // seed; the kernel's source gives two fresh generators unrelated ids.
  session_id_generator a, b;
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(a.next(1700000000000));
    seen.insert(b.next(1700000000000));
  }
  BOOST_TEST(seen.size() == 2000u);
}

BOOST_AUTO_TEST_CASE(door_ids_are_the_prefix_and_32_random_hex_digits) {
  for (std::string prefix : {"resp_", "msg_", "chatcmpl-"}) {
    std::set<std::string> seen;
    bit_census census{32};
    for (int i = 0; i < draws; ++i) {
      auto id = os_random_id(prefix);
      BOOST_REQUIRE_EQUAL(id.size(), prefix.size() + 32);
      BOOST_REQUIRE_EQUAL(id.substr(0, prefix.size()), prefix);
      census.add(id.substr(prefix.size()));
      seen.insert(id);
    }
    BOOST_TEST(seen.size() == static_cast<size_t>(draws), prefix);
    BOOST_TEST(census.varying_bits() == 128u, prefix);
  }
}

BOOST_AUTO_TEST_CASE(os_random_fills_any_length_and_hex_has_two_digits_a_byte) {
  std::array<unsigned char, 4096> big{};
  BOOST_REQUIRE(fill_os_random(big.data(), big.size()));
  int zeros = 0;
  for (auto b : big)
    zeros += b == 0;
  BOOST_TEST(zeros < 100); // about 16 expected; all-zero means nothing was written
  BOOST_TEST(fill_os_random(big.data(), 0));
  BOOST_TEST(os_random_hex(0).empty());
  BOOST_TEST(os_random_hex(7).size() == 14u);
}

BOOST_AUTO_TEST_CASE(api_tokens_never_repeat_and_carry_256_random_bits_after_their_id) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    auto token = api::generate_token();
    BOOST_REQUIRE(token);
    seen.insert(*token);
    auto cut = token->rfind('_');
    BOOST_REQUIRE(cut != std::string::npos);
    BOOST_TEST(token->size() - cut - 1 == 2 * api::token_secret_bytes);
  }
  BOOST_TEST(seen.size() == 2000u);
}

BOOST_AUTO_TEST_SUITE_END()
