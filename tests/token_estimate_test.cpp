// Tests of the local token estimate (SPEC §2): 4 characters per token for
// Latin text, 1 per CJK character, code points rather than bytes, invalid
// UTF-8 counted per byte, the per-message and per-tool-call overheads, and the
// promise that estimating allocates nothing.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <string>

#include "policies/token_estimate.hpp"

// Test seam: every allocation of the test program is counted, so a test can prove that a
// call allocates nothing. The replacement is program-wide (the policy_tests program) and
// only counts: it allocates with malloc like the default. GCC cannot see that this
// operator new and operator delete are a matching malloc/free pair, hence the pragma.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace token_estimate_allocations {
std::atomic<long> count{0};
} // namespace token_estimate_allocations
void* operator new(std::size_t n) {
  ++token_estimate_allocations::count;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc{};
}
// The nothrow form too (std::stable_sort's temporary buffer takes it and returns it to
// the sized delete above): otherwise, under ASan, it comes from the sanitizer's own
// operator new and reaches free() here, an alloc-dealloc mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  ++token_estimate_allocations::count;
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

BOOST_AUTO_TEST_SUITE(token_estimate_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

message text_message(msg_role role, std::string content) {
  message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

} // namespace

BOOST_DATA_TEST_CASE(
    latin_text_costs_one_token_per_four_characters_rounded_up,
    data::make({std::string{}, std::string{"a"}, std::string{"abc"}, std::string{"abcd"},
                std::string{"abcde"}, std::string{"hello world!"},
                std::string{"hello world!!"}, std::string(400, 'x'), std::string(401, 'x'),
                std::string{"    "}})
        ^ data::make({0, 1, 1, 1, 2, 3, 4, 100, 101, 1}),
    text, want) {
  BOOST_TEST(estimate_text_tokens(text) == want);
}

// Han, kana, Hangul, CJK punctuation and fullwidth forms: one token each; the
// other characters of a mixed text still pool at four per token.
BOOST_DATA_TEST_CASE(
    every_cjk_character_costs_one_token,
    data::make({std::string{"我爱数据库"}, std::string{"こんにちは"}, std::string{"カタカナ"},
                std::string{"안녕하세요"}, std::string{"。，、「」"}, std::string{"ＡＢＣ！"},
                std::string{"𠀀𠀁"}, std::string{"ｱｲｳ"}, std::string{"修改youer服务端"},
                std::string{"数据abcd"}, std::string{"数a据b"}})
        ^ data::make({5, 5, 4, 5, 5, 4, 2, 3, 5 + 2, 2 + 1, 2 + 1}),
    text, want) {
  BOOST_TEST(estimate_text_tokens(text) == want);
}

// A count of bytes would give twice (é), four times (😀) or three times (ß+€
// mix) as much.
BOOST_DATA_TEST_CASE(
    non_cjk_text_is_counted_in_code_points_not_bytes,
    data::make({std::string{"éééé"}, std::string{"éééééééé"}, std::string{"😀😀😀😀"},
                std::string{"Привет, мир"}, std::string{"ß€ß€"}})
        ^ data::make({1, 2, 1, 3, 1}),
    text, want) {
  BOOST_TEST(estimate_text_tokens(text) == want);
}

BOOST_DATA_TEST_CASE(
    each_invalid_utf8_byte_counts_as_one_character,
    data::make({std::string{"\xff"}, std::string{"\xff\xfe\xfd\xfc"},
                std::string{"\xff\xfe\xfd\xfc\xfb"}, std::string{"\xe6\x88"},
                std::string{"\xed\xa0\x80\xed\xb0\x80"}, std::string{"abc\xc3"},
                std::string{"\xe6\x88\xe6\x88\xe6"}})
        ^ data::make({1, 1, 2, 1, 2, 1, 2}),
    text, want) {
  BOOST_TEST(estimate_text_tokens(text) == want);
}

BOOST_AUTO_TEST_CASE(random_bytes_never_cost_more_tokens_than_bytes) {
  std::mt19937 gen{1130};
  std::uniform_int_distribution<int> byte{0, 255};
  for (int round = 0; round < 2000; ++round) {
    std::string text(static_cast<std::size_t>(round % 50), '\0');
    for (auto& c : text) c = static_cast<char>(byte(gen));
    const int64_t tokens = estimate_text_tokens(text);
    BOOST_REQUIRE(tokens <= static_cast<int64_t>(text.size()));
    BOOST_REQUIRE(tokens >= (text.empty() ? 0 : 1));
  }
}

BOOST_AUTO_TEST_CASE(an_empty_message_costs_exactly_the_message_overhead_of_four) {
  BOOST_TEST(message_overhead_tokens == 4);
  BOOST_TEST(estimate_message_tokens(message{}) == 4);
  BOOST_TEST(estimate_message_tokens(text_message(msg_role::system, "abcd")) == 5);
  BOOST_TEST(estimate_message_tokens(text_message(msg_role::user, "我爱数据库")) == 9);
}

BOOST_AUTO_TEST_CASE(each_tool_call_adds_three_tokens_plus_its_id_name_and_arguments) {
  BOOST_TEST(tool_call_overhead_tokens == 3);
  message m = text_message(msg_role::assistant, "");
  m.tool_calls = {tool_call{}};
  BOOST_TEST(estimate_message_tokens(m) == 4 + 3);
  m.tool_calls = {tool_call{"call_1", "grep", R"({"q":"x"})"}}; // 6 + 4 + 9 = 19 chars
  BOOST_TEST(estimate_message_tokens(m) == 4 + 3 + 5);
  m.tool_calls.push_back(tool_call{"call_2", "read", R"({"path":"/etc/hosts"})"}); // 31
  BOOST_TEST(estimate_message_tokens(m) == 4 + 2 * 3 + (19 + 31 + 3) / 4);
}

BOOST_AUTO_TEST_CASE(a_tool_result_counts_its_call_id_and_tool_name) {
  message m = text_message(msg_role::tool, "abcd"); // 4 chars
  BOOST_TEST(estimate_message_tokens(m) == 4 + 1);
  m.tool_call_id = "call_12345678"; // 13 chars
  m.tool_name = "search_file";     // 11 chars
  BOOST_TEST(estimate_message_tokens(m) == 4 + 7);
}

BOOST_AUTO_TEST_CASE(the_fields_of_one_message_are_pooled_before_rounding) {
  message split = text_message(msg_role::tool, "ab");
  split.tool_name = "cd";
  split.tool_call_id = "ef";
  BOOST_TEST(estimate_message_tokens(split) == 4 + 2); // 6 chars, not 1 + 1 + 1
  BOOST_TEST(estimate_message_tokens(split)
             == estimate_message_tokens(text_message(msg_role::tool, "abcdef")));
}

BOOST_AUTO_TEST_CASE(message_content_costs_the_same_whatever_its_role) {
  for (auto role : {msg_role::system, msg_role::user, msg_role::assistant, msg_role::tool})
    BOOST_TEST(estimate_message_tokens(text_message(role, "hello, 世界")) == 4 + 2 + 2);
}

BOOST_AUTO_TEST_CASE(a_transcript_costs_the_sum_of_its_messages_so_a_running_total_matches) {
  std::vector<message> transcript;
  BOOST_TEST(estimate_messages_tokens(transcript) == 0);
  int64_t running = 0;
  const char* texts[] = {"You are helpful.", "帮我查一下数据库", "Sure.", "", "ok 好的"};
  for (const char* t : texts) {
    transcript.push_back(text_message(msg_role::user, t));
    running += estimate_message_tokens(transcript.back());
    BOOST_TEST(estimate_messages_tokens(transcript) == running);
  }
  BOOST_TEST(running == (4 + 4) + (4 + 8) + (4 + 2) + 4 + (4 + 3));
}

BOOST_AUTO_TEST_CASE(estimating_allocates_nothing) {
  message m = text_message(msg_role::assistant, std::string(10000, 'x') + "我爱数据库\xff");
  m.tool_calls = {tool_call{"call_1", "grep", R"({"q":"x"})"}};
  std::vector<message> transcript(50, m);
  const long before_probe = token_estimate_allocations::count.load();
  std::string probe(100, 'x'); // the seam sees an allocation it should see
  BOOST_TEST(token_estimate_allocations::count.load() > before_probe);
  BOOST_TEST(probe.size() == 100u);
  const long before = token_estimate_allocations::count.load();
  int64_t sink = estimate_text_tokens(m.content) + estimate_message_tokens(m)
                 + estimate_messages_tokens(transcript);
  BOOST_TEST(token_estimate_allocations::count.load() == before);
  BOOST_TEST(sink > 0);
}

// A figure for the report, not a pass/fail criterion.
BOOST_AUTO_TEST_CASE(throughput_is_reported) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += i % 3 == 0 ? "数据库" : "lorem ipsum ";
  const auto start = std::chrono::steady_clock::now();
  int64_t sum = 0;
  for (int i = 0; i < 50; ++i) sum += estimate_text_tokens(text);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  BOOST_TEST(sum > 0);
  BOOST_TEST_MESSAGE("estimate throughput: " << (50.0 * text.size() / 1e6) / took.count()
                                             << " MB/s over mixed CJK/Latin text");
}

BOOST_AUTO_TEST_SUITE_END() // token_estimate_test
