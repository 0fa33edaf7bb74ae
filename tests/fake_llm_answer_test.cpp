// Tests of the fake LLM's deterministic answers (apps/common/fakellm/fake_answer):
// the extractive summary within its target, kept identifiers, determinism, the
// default budget, and chat answers of the configured size.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/fake_answer.hpp"
#include "caf/all.hpp"
#include "messages/errc.hpp"
#include "policies/compression_params.hpp"
#include "policies/token_estimate.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_answer_test)

using namespace mneme;
using namespace mneme::fakellm;
using mneme::testing::msg;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

namespace {

// A long conversation with identifiers sprinkled in.
std::vector<message> long_conversation(int turns) {
  std::vector<message> out{msg(msg_role::system, "You are helpful. SYSTEM_ONLY_TOKEN")};
  for (int i = 0; i < turns; ++i) {
    out.push_back(msg(msg_role::user, "Turn " + std::to_string(i) +
                                          ": please look at the build again and tell me what "
                                          "you think about the weather of the code today."));
    out.push_back(msg(msg_role::assistant, "I looked at it and it seems fine, nothing stands "
                                           "out in this part of the work so far."));
  }
  out.push_back(msg(msg_role::user, "The config lives in /etc/mneme/mneme.yaml and the docs at "
                                    "https://example.org/docs?page=3 ; the job failed with "
                                    "ConnectionResetError after 4711 retries."));
  return out;
}

} // namespace

// --- summaries

BOOST_DATA_TEST_CASE(the_summary_target_is_read_from_the_prompt,
                     data::make({"Write it, target about 2000 tokens.",
                                 "target about 12,000 tokens", "no target here",
                                 "target about tokens", "target about 500 words"}) ^
                         data::make({2000, 12000, -1, -1, -1}),
                     text, want) {
  auto got = find_summary_target(std::string_view(text));
  BOOST_TEST(got.value_or(-1) == want);
}

BOOST_DATA_TEST_CASE(a_summary_stays_within_its_target_and_uses_most_of_it,
                     data::make({64, 200, 500, 2000}), target) {
  auto conv = long_conversation(400);  // far more text than any target
  auto s = fake_summary(conv, target);
  auto tokens = estimate_text_tokens(s);
  BOOST_TEST(tokens <= target);
  BOOST_TEST(tokens >= target * 6 / 10);
}

BOOST_AUTO_TEST_CASE(a_summary_keeps_paths_urls_numbers_and_error_names) {
  auto s = fake_summary(long_conversation(400), 300);
  for (auto id : {"/etc/mneme/mneme.yaml", "https://example.org/docs?page=3",
                  "ConnectionResetError", "4711"})
    BOOST_TEST(s.find(id) != std::string::npos, "kept " << id);
  BOOST_TEST(s.find("SYSTEM_ONLY_TOKEN") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_summary_is_byte_identical_for_the_same_input) {
  auto conv = long_conversation(50);
  BOOST_TEST(fake_summary(conv, 300) == fake_summary(conv, 300));
  BOOST_TEST(fake_summary(conv, 300) != fake_summary(conv, 600));
}

BOOST_AUTO_TEST_CASE(a_short_input_is_summarized_whole) {
  std::vector<message> conv{msg(msg_role::user, "Fix src/a.cpp line 12."),
                            msg(msg_role::assistant, "Done.")};
  auto s = fake_summary(conv, 2000);
  BOOST_TEST(s.find("Fix src/a.cpp line 12.") != std::string::npos);
  BOOST_TEST(s.find("Done.") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(identifiers_are_found_once_in_order_of_appearance) {
  auto ids = extract_identifiers(
      "See (src/main.cpp), then http://a.b/c. Value 42 and 42 again; SIGSEGV in do_work "
      "raised KeyError. e.g. plain words stay out.");
  std::vector<std::string> want{"src/main.cpp", "http://a.b/c", "42", "SIGSEGV", "do_work",
                                "KeyError"};
  BOOST_TEST(ids == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_cjk_summary_respects_its_target_without_splitting_characters) {
  std::vector<message> conv;
  for (int i = 0; i < 300; ++i)
    conv.push_back(msg(msg_role::user, "我们修改了服务端的配置。数据库连接失败了。请检查日志。"));
  auto s = fake_summary(conv, 200);
  BOOST_TEST(estimate_text_tokens(s) <= 200);
  BOOST_TEST(json(s).dump().find("\\ufffd") == std::string::npos);  // valid UTF-8 for JSON
}

BOOST_AUTO_TEST_CASE(the_default_window_is_the_model_blocks_default_context_length) {
  BOOST_TEST(answer_settings{}.window_tokens == model_params{}.context_length);
}

BOOST_AUTO_TEST_CASE(a_summary_without_a_target_uses_the_spec_minimum_budget_of_2000) {
  BOOST_TEST(answer_settings{}.default_summary_tokens == 2000);
  chat_call call;
  call.messages = long_conversation(2000);
  auto text = answer_text(call, true, answer_settings{});
  BOOST_TEST(estimate_text_tokens(text) <= 2000);
  BOOST_TEST(estimate_text_tokens(text) >= 1200);
}

// --- chat answers

BOOST_DATA_TEST_CASE(a_chat_answer_has_about_the_configured_size, data::make({1, 8, 64, 500}),
                     size) {
  std::vector<message> conv{msg(msg_role::user, "What is the capital of France?")};
  auto a = fake_chat_answer(conv, size);
  BOOST_TEST(!a.empty());
  BOOST_TEST(estimate_text_tokens(a) <= size);
  BOOST_TEST(estimate_text_tokens(a) >= std::max<int64_t>(1, size * 8 / 10));
}

BOOST_AUTO_TEST_CASE(a_chat_answer_derives_from_the_last_user_message) {
  std::vector<message> conv{msg(msg_role::user, "first question"),
                            msg(msg_role::assistant, "an answer"),
                            msg(msg_role::user, "second question about zebras")};
  auto a = fake_chat_answer(conv, 64);
  BOOST_TEST(a.find("zebras") != std::string::npos);
  BOOST_TEST(a.find("first") == std::string::npos);
  BOOST_TEST(a == fake_chat_answer(conv, 64));
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_answer_test
