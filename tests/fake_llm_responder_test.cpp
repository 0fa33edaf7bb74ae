// Tests of the fake LLM's response plans (apps/common/fakellm/chat_responder):
// what each fault sends (status, bytes, pauses, close/reset/silence) and the
// window's own overflow 400.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/wire_format.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_responder_test)

using namespace mneme;
using namespace mneme::fakellm;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

// --- response plans

namespace {

chat_call simple_call(bool stream = false) {
  auto call = parse_chat_call(std::string(R"({"model":"m","stream":)") + (stream ? "true" : "false") +
                              R"(,"messages":[{"role":"user","content":"hello there"}]})");
  return *call;
}

response_plan plan_for(std::optional<fault_kind> kind, bool stream = false, int64_t prompt = 10) {
  fault_decision d;
  fault_rule r;
  if (kind) {
    d.answer = kind;
    d.answer_rule = 0;
    r.kind = *kind;
    r.silence_ms = 777;
    r.max_body_bytes = 5;
  }
  chat_facts f;
  f.prompt_tokens = prompt;
  answer_settings s;
  s.window_tokens = 100;
  return plan_chat_response(simple_call(stream), f, d, kind ? &r : nullptr, s);
}

} // namespace

BOOST_DATA_TEST_CASE(error_faults_answer_with_their_status,
                     data::make({fault_kind::unavailable, fault_kind::payload_too_large,
                                 fault_kind::long_context_429, fault_kind::overflow_400}) ^
                         data::make({503, 413, 429, 400}),
                     kind, status) {
  auto p = plan_for(kind);
  BOOST_TEST(p.status == status);
  BOOST_TEST(p.first.rfind("HTTP/1.1 " + std::to_string(status), 0) == 0u);
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_window_gets_the_overflow_400_without_a_fault) {
  BOOST_TEST(plan_for(std::nullopt, false, 100).status == 200);
  auto p = plan_for(std::nullopt, false, 101);
  BOOST_TEST(p.status == 400);
  BOOST_TEST(p.window_overflow);
  BOOST_TEST(p.first.find("context_length_exceeded") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(reset_and_silence_send_nothing) {
  BOOST_TEST(plan_for(fault_kind::reset).reset);
  BOOST_TEST(plan_for(fault_kind::refuse).reset);
  auto s = plan_for(fault_kind::silence);
  BOOST_TEST(s.silence);
  BOOST_TEST(s.first.empty());
}

BOOST_DATA_TEST_CASE(truncated_answers_close_before_the_end, data::make({false, true}), stream) {
  auto p = plan_for(fault_kind::truncated_body, stream);
  auto whole = plan_for(std::nullopt, stream);
  BOOST_TEST(p.close_after);
  BOOST_TEST(p.first.size() < whole.first.size());
  BOOST_TEST(whole.first.find(p.first.substr(p.first.find("\r\n\r\n"))) != std::string::npos);
}

BOOST_DATA_TEST_CASE(a_trickle_pauses_between_two_parts_of_the_whole_answer,
                     data::make({false, true}), stream) {
  auto p = plan_for(fault_kind::trickle, stream);
  BOOST_TEST(p.pause_ms == 777);
  BOOST_TEST(!p.first.empty());
  BOOST_TEST(!p.rest.empty());
  auto whole = plan_for(std::nullopt, stream).first;
  // Same bytes apart from the answer id's sequence number (both are 0 here).
  BOOST_TEST(p.first + p.rest == whole);
}

BOOST_AUTO_TEST_CASE(empty_and_reasoning_only_answers_have_empty_content) {
  auto body_of = [](const response_plan& p) { return json::parse(p.first.substr(p.first.find("\r\n\r\n") + 4)); };
  auto empty = body_of(plan_for(fault_kind::empty_content));
  BOOST_TEST(empty["choices"][0]["message"]["content"] == "");
  auto reasoning = body_of(plan_for(fault_kind::reasoning_only));
  BOOST_TEST(reasoning["choices"][0]["message"]["content"] == "");
  BOOST_TEST(!reasoning["choices"][0]["message"]["reasoning_content"].get<std::string>().empty());
}

BOOST_AUTO_TEST_CASE(a_malformed_answer_is_not_json) {
  auto p = plan_for(fault_kind::malformed_json);
  auto body = p.first.substr(p.first.find("\r\n\r\n") + 4);
  BOOST_TEST(json::parse(body, nullptr, false).is_discarded());
  BOOST_TEST(p.status == 200);
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_responder_test
