// Tests of the fake LLM's pure pieces: the extractive summary and chat answers
// (fake_answer), the HTTP request parser (http_parser), the chat-completions wire
// format (wire_format) and the response plans of every fault (chat_responder).
#define BOOST_TEST_MODULE fake_llm_answer
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fake_llm/chat_responder.hpp"
#include "apps/common/fake_llm/fake_answer.hpp"
#include "apps/common/fake_llm/http_parser.hpp"
#include "apps/common/fake_llm/wire_format.hpp"
#include "caf/all.hpp"
#include "messages/errc.hpp"
#include "policies/compression_params.hpp"
#include "policies/token_estimate.hpp"

using namespace mneme;
using namespace mneme::fakellm;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

namespace mneme::fakellm {
inline std::ostream& operator<<(std::ostream& os, parse_status s) { return os << to_string(s); }
} // namespace mneme::fakellm

namespace {

message msg(msg_role role, std::string text) {
  message m;
  m.role = role;
  m.content = std::move(text);
  return m;
}

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

// --- HTTP parser

BOOST_AUTO_TEST_CASE(a_request_with_a_body_parses_and_leaves_the_next_one_buffered) {
  std::string wire = "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5"
                     "\r\nX-Mneme-Purpose: summary\r\n\r\nhelloGET /health HTTP/1.1\r\n\r\n";
  http_request req;
  auto r = parse_request(wire, {}, &req);
  BOOST_TEST(r.status == parse_status::complete);
  BOOST_TEST(req.method == "POST");
  BOOST_TEST(req.path() == "/v1/chat/completions");
  BOOST_TEST(req.body == "hello");
  BOOST_TEST(*req.header("x-mneme-purpose") == "summary");
  BOOST_TEST(req.keep_alive);
  http_request next;
  BOOST_TEST(parse_request(std::string_view(wire).substr(r.consumed), {}, &next).status ==
             parse_status::complete);
  BOOST_TEST(next.path() == "/health");
}

BOOST_AUTO_TEST_CASE(a_partial_request_waits_and_announces_expect_continue) {
  std::string wire = "POST /x HTTP/1.1\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\nabc";
  http_request req;
  auto r = parse_request(wire, {}, &req);
  BOOST_TEST(r.status == parse_status::incomplete);
  BOOST_TEST(r.headers_complete);
  BOOST_TEST(r.expects_continue);
  BOOST_TEST(parse_request("POST /x HTTP/1.1\r\nHost", {}, &req).status == parse_status::incomplete);
}

BOOST_DATA_TEST_CASE(
    malformed_or_oversized_requests_are_refused_with_a_reason,
    data::make({std::string("GARBAGE\r\n\r\n"), std::string("GET /x HTTP/2.0\r\n\r\n"),
                std::string("GET x HTTP/1.1\r\n\r\n"), std::string("GET /x HTTP/1.1\r\nNoColon\r\n\r\n"),
                std::string("POST /x HTTP/1.1\r\nContent-Length: abc\r\n\r\n"),
                std::string("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
                std::string("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
                std::string("POST /x HTTP/1.1\r\nContent-Length: 1001\r\n\r\n"),
                std::string("GET /x HTTP/1.1\r\nX: ") + std::string(600, 'a')}) ^
        data::make({parse_status::bad_request, parse_status::bad_request,
                    parse_status::bad_request, parse_status::bad_request,
                    parse_status::bad_request, parse_status::bad_request,
                    parse_status::unsupported, parse_status::too_large,
                    parse_status::too_large}),
    wire, want) {
  http_limits limits;
  limits.max_body_bytes = 1000;
  limits.max_header_bytes = 512;
  http_request req;
  auto r = parse_request(wire, limits, &req);
  BOOST_TEST(r.status == want);
  BOOST_TEST(!r.error.empty());
}

BOOST_DATA_TEST_CASE(keep_alive_follows_the_version_and_connection_header,
                     data::make({"HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/1.0"}) ^
                         data::make({"", "Connection: close\r\n", "", "Connection: keep-alive\r\n"}) ^
                         data::make({true, false, false, true}),
                     version, header, keep) {
  auto wire = std::string("GET /health ") + version + "\r\n" + header + "\r\n";
  http_request req;
  BOOST_TEST_REQUIRE(parse_request(wire, {}, &req).status == parse_status::complete);
  BOOST_TEST(req.keep_alive == keep);
}

// --- wire format

BOOST_AUTO_TEST_CASE(a_chat_call_parses_roles_parts_tools_and_options) {
  auto call = parse_chat_call(R"({"model":"m","stream":true,"max_tokens":9,"messages":[
    {"role":"system","content":"s"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
      "function":{"name":"ls","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"c1","content":"out"}]})");
  BOOST_TEST_REQUIRE(static_cast<bool>(call));
  BOOST_TEST(call->model == "m");
  BOOST_TEST(call->stream);
  BOOST_TEST(*call->max_tokens == 9);
  BOOST_TEST_REQUIRE(call->messages.size() == 4u);
  BOOST_TEST(call->messages[1].content == "ab");
  BOOST_TEST(call->messages[2].tool_calls.at(0).name == "ls");
  BOOST_TEST(call->messages[3].tool_call_id == "c1");
}

BOOST_DATA_TEST_CASE(bad_chat_calls_are_rejected_naming_the_field,
                     data::make({std::string("{"), std::string("[]"),
                                 std::string(R"({"messages":[{"role":"user","content":"x"}]})"),
                                 std::string(R"({"model":"m"})"),
                                 std::string(R"({"model":"m","messages":[]})"),
                                 std::string(R"({"model":"m","messages":[{"role":"boss","content":"x"}]})"),
                                 std::string(R"({"model":"m","messages":[{"role":"user","content":5}]})"),
                                 std::string(R"({"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]})"),
                                 std::string(R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]})")}) ^
                         data::make({"not valid JSON", "JSON object", "model", "messages",
                                     "messages", "messages[0].role", "messages[0].content",
                                     "stream", "max_tokens"}),
                     body, needle) {
  auto call = parse_chat_call(body);
  BOOST_TEST_REQUIRE(!call);
  BOOST_TEST((call.error() == errc::bad_request));
  BOOST_TEST(render_error(call.error()).find(needle) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_overflow_body_is_openai_shaped) {
  auto j = json::parse(overflow_body(1000, 1234));
  BOOST_TEST(j["error"]["code"] == "context_length_exceeded");
  BOOST_TEST(j["error"]["type"] == "invalid_request_error");
  auto text = j["error"]["message"].get<std::string>();
  BOOST_TEST(text.find("maximum context length is 1000 tokens") != std::string::npos);
  BOOST_TEST(text.find("1234 tokens") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_long_context_429_body_mentions_long_context_and_extra_usage) {
  auto j = json::parse(long_context_429_body());
  auto text = j["error"]["message"].get<std::string>();
  BOOST_TEST(j["error"]["type"] == "rate_limit_error");
  BOOST_TEST(text.find("long context") != std::string::npos);
  BOOST_TEST(text.find("Extra usage") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(sse_events_reassemble_to_the_content_and_end_with_done) {
  completion c;
  c.id = "chatcmpl-1";
  c.model = "m";
  c.content = std::string(200, 'x') + "é";
  c.prompt_tokens = 7;
  c.completion_tokens = 51;
  auto events = completion_events(c, 64);
  BOOST_TEST_REQUIRE(events.size() >= 5u);
  BOOST_TEST(events.back() == "data: [DONE]\n\n");
  std::string joined;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    BOOST_TEST_REQUIRE(events[i].rfind("data: ", 0) == 0u);
    BOOST_TEST_REQUIRE(events[i].substr(events[i].size() - 2) == "\n\n");
    auto j = json::parse(events[i].substr(6));
    BOOST_TEST(j["object"] == "chat.completion.chunk");
    auto& delta = j["choices"][0]["delta"];
    if (delta.contains("content")) joined += delta["content"].get<std::string>();
  }
  BOOST_TEST(joined == c.content);
  auto last = json::parse(events[events.size() - 2].substr(6));
  BOOST_TEST(last["choices"][0]["finish_reason"] == "stop");
  BOOST_TEST(last["usage"]["prompt_tokens"] == 7);
}

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
