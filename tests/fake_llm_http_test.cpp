// Tests of the fake LLM's protocol pieces: the HTTP/1.1 request parser
// (apps/common/fakellm/http_parser) and the chat-completions wire format
// (wire_format): parsing, limits, keep-alive, bodies, SSE events, error bodies.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/http_parser.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/all.hpp"
#include "messages/errc.hpp"

namespace mneme::fakellm {
inline std::ostream& operator<<(std::ostream& os, parse_status s) { return os << to_string(s); }
} // namespace mneme::fakellm

BOOST_AUTO_TEST_SUITE(fake_llm_http_test)

using namespace mneme;
using namespace mneme::fakellm;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

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

BOOST_AUTO_TEST_SUITE_END() // fake_llm_http_test
