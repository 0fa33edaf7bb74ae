// Tests of the fake LLM's response plans (apps/common/fakellm/chat_responder):
// what each fault sends (status, bytes, pauses, close/reset/silence) and the
// window's own overflow 400.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/messages_responder.hpp"
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
                                 fault_kind::long_context_429, fault_kind::overflow_400,
                                 fault_kind::rate_limit_429}) ^
                         data::make({503, 413, 429, 400, 429}),
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

BOOST_AUTO_TEST_CASE(retry_after_rides_on_the_rules_503_529_and_429_answers) {
  fault_decision d;
  d.answer = fault_kind::rate_limit_429;
  d.answer_rule = 0;
  fault_rule r;
  r.kind = fault_kind::rate_limit_429;
  r.retry_after = "17";
  BOOST_TEST(validate(r).empty());
  chat_facts f;
  answer_settings s;
  auto chat = plan_chat_response(simple_call(), f, d, &r, s);
  BOOST_TEST(chat.first.rfind("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 17\r\n", 0) == 0u);
  BOOST_TEST(chat.first.find("rate_limit_exceeded") != std::string::npos);
  BOOST_TEST(chat.first.find("long context") == std::string::npos); // a plain rate limit
  d.answer = r.kind = fault_kind::unavailable;
  r.retry_after = "Sun, 06 Nov 1994 08:49:37 GMT";
  auto overloaded = plan_messages_response(simple_call(), f, d, &r, s);
  BOOST_TEST(overloaded.status == 529);
  BOOST_TEST(overloaded.first.find("\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
             != std::string::npos);
  // Without the parameter no header; on another kind the parameter is refused.
  r.retry_after.clear();
  BOOST_TEST(plan_chat_response(simple_call(), f, d, &r, s).first.find("Retry-After")
             == std::string::npos);
  r.kind = fault_kind::overflow_400;
  r.retry_after = "3";
  BOOST_TEST(!validate(r).empty());
  r.kind = fault_kind::rate_limit_429;
  r.retry_after = "3\r\nX-Evil: 1";
  BOOST_TEST(!validate(r).empty());
}

BOOST_DATA_TEST_CASE(a_text_answer_stops_before_the_first_stop_sequence_and_names_it,
                     data::make({false, true}), stream) {
  auto call = parse_chat_call(std::string(R"({"model":"m","stream":)") + (stream ? "true" : "false")
                              + R"(,"stop":["Point", "there"],"messages":[{"role":"user",
                                 "content":"hello there"}]})");
  BOOST_REQUIRE(call);
  BOOST_TEST((call->stop == std::vector<std::string>{"Point", "there"}));
  chat_facts f;
  answer_settings s;
  auto p = plan_chat_response(*call, f, fault_decision{}, nullptr, s);
  auto bytes = p.first;
  // "Reply to: hello there. Point 1: ..." ends before "there", the earlier match.
  BOOST_TEST(bytes.find("Point") == std::string::npos);
  BOOST_TEST(bytes.find("Reply to: hello ") != std::string::npos);
  BOOST_TEST(bytes.find(R"("stop_reason":"there")") != std::string::npos);
  BOOST_TEST(bytes.find(R"("finish_reason":"stop")") != std::string::npos);
  // One stop string alone is accepted too; no match leaves the answer whole.
  auto single = parse_chat_call(R"({"model":"m","stop":"zzz","messages":[{"role":"user","content":"hi"}]})");
  BOOST_REQUIRE(single);
  auto whole = plan_chat_response(*single, f, fault_decision{}, nullptr, s).first;
  BOOST_TEST(whole.find("stop_reason") == std::string::npos);
  BOOST_TEST(whole.find("Point") != std::string::npos);
  BOOST_TEST(!parse_chat_call(R"({"model":"m","stop":[1],"messages":[{"role":"user","content":"hi"}]})"));
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_responder_test
