// Tests of the LLM client's pure parts: wire JSON, answer parsing, reasoning stripping,
// URL and key resolution, pool configs from the config blocks, error mapping.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"

#include "actors/llm/llm_call.hpp"
#include "actors/llm/llm_endpoint.hpp"
#include "actors/llm/llm_errors.hpp"
#include "actors/llm/llm_wire.hpp"
#include "messages/mneme_types.hpp"
#include "tests/test_print.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(llm_wire_test)

namespace bdata = boost::unit_test::data;
using nlohmann::json;
using namespace mneme;
using namespace mneme::llm;
using mneme::testing::msg;
using mneme::testing::tool_result;

namespace {

std::string answer_body(const json& message_obj, const std::string& finish = "stop") {
  return json{{"choices", json::array({{{"index", 0}, {"message", message_obj},
                                         {"finish_reason", finish}}})},
              {"usage", {{"prompt_tokens", 1234}, {"completion_tokens", 56}}}}
    .dump();
}

errc code_of(const caf::error& err) { return static_cast<errc>(err.code()); }

// The request body as to_wire_json built it before it wrote the messages directly: the
// whole request as one nlohmann document, dumped (the oracle of the byte-identity test).
std::string wire_reference(const chat_request& req) {
  json j;
  j["model"] = req.model;
  auto msgs = json::array();
  for (const auto& m : req.messages)
    msgs.push_back(message_to_json(m));
  j["messages"] = std::move(msgs);
  if (req.max_tokens)
    j["max_tokens"] = *req.max_tokens;
  if (req.temperature)
    j["temperature"] = *req.temperature;
  j["stream"] = req.stream;
  if (req.stream)
    j["stream_options"] = {{"include_usage", true}};
  bool tools = false;
  if (!req.tools_json.empty()) {
    auto t = json::parse(req.tools_json, nullptr, false);
    if (t.is_array() && !t.empty()) {
      j["tools"] = std::move(t);
      tools = true;
    }
  }
  auto extra = req.extra_json.empty() ? json() : json::parse(req.extra_json, nullptr, false);
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) {
      bool tool_field = it.key() == "tool_choice" || it.key() == "parallel_tool_calls";
      if ((tool_field && !tools) || j.contains(it.key()))
        continue;
      j[it.key()] = it.value();
    }
  if (req.server_compact_threshold > 0)
    j["context_management"] = json::array(
      {{{"type", "compaction"}, {"compact_threshold", req.server_compact_threshold}}});
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

// ---------------------------------------------------------------- request JSON

BOOST_AUTO_TEST_CASE(request_json_carries_model_messages_and_stream_false_without_max_tokens) {
  chat_request req;
  req.model = "m1";
  req.messages = {msg(msg_role::system, "sys"), msg(msg_role::user, "hello")};
  auto j = json::parse(to_wire_json(req));
  BOOST_TEST(!j.contains("stream_options"));
  BOOST_TEST(j["model"] == "m1");
  BOOST_TEST(j["messages"].size() == 2u);
  BOOST_TEST(j["messages"][0]["role"] == "system");
  BOOST_TEST(j["messages"][1]["content"] == "hello");
  BOOST_TEST(j["stream"] == false);
  BOOST_TEST(!j.contains("max_tokens"));
  BOOST_TEST(!j.contains("temperature"));
}

BOOST_AUTO_TEST_CASE(a_streamed_request_asks_for_the_stream_and_its_usage) {
  chat_request req;
  req.model = "m1";
  req.messages = {msg(msg_role::user, "hello")};
  req.stream = true;
  auto j = json::parse(to_wire_json(req));
  BOOST_TEST(j["stream"] == true);
  BOOST_TEST(j["stream_options"]["include_usage"] == true);
}

BOOST_AUTO_TEST_CASE(request_json_has_max_tokens_and_temperature_only_when_set) {
  chat_request req;
  req.model = "m";
  req.max_tokens = 777;
  req.temperature = 0.25;
  auto j = json::parse(to_wire_json(req));
  BOOST_TEST(j["max_tokens"] == 777);
  BOOST_TEST(j["temperature"].get<double>() == 0.25);
}

BOOST_AUTO_TEST_CASE(request_json_sends_tool_calls_and_tool_results_in_openai_shape) {
  chat_request req;
  auto call = msg(msg_role::assistant, "");
  call.tool_calls = {{"call_1", "read_file", R"({"path":"/etc/hosts"})"}};
  auto result = tool_result("call_1", "read_file", "127.0.0.1 localhost");
  req.messages = {call, result};
  auto j = json::parse(to_wire_json(req));
  const auto& a = j["messages"][0];
  BOOST_TEST(a["content"].is_null());
  BOOST_TEST(a["tool_calls"][0]["id"] == "call_1");
  BOOST_TEST(a["tool_calls"][0]["type"] == "function");
  BOOST_TEST(a["tool_calls"][0]["function"]["name"] == "read_file");
  BOOST_TEST(a["tool_calls"][0]["function"]["arguments"] == R"({"path":"/etc/hosts"})");
  const auto& t = j["messages"][1];
  BOOST_TEST(t["role"] == "tool");
  BOOST_TEST(t["tool_call_id"] == "call_1");
  BOOST_TEST(t["name"] == "read_file");
}

BOOST_AUTO_TEST_CASE(invalid_utf8_in_a_message_is_replaced_not_thrown) {
  chat_request req;
  req.messages = {msg(msg_role::user, std::string{"ok \xff\xfe end"})};
  std::string body;
  BOOST_REQUIRE_NO_THROW(body = to_wire_json(req));
  auto j = json::parse(body);
  BOOST_TEST(j["messages"][0]["content"].get<std::string>().find("end") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(http_call_has_bearer_purpose_header_and_the_endpoint_model_by_default) {
  llm_endpoint ep;
  ep.url = "http://h/v1/chat/completions";
  ep.api_key = "sk-secret";
  ep.model = "summ-model";
  ep.idle_timeout = std::chrono::milliseconds{60000};
  chat_request req;
  req.purpose = llm_purpose::summary;
  auto call = build_http_call(ep, req, std::chrono::milliseconds{5000});
  auto has = [&](const std::string& h) {
    return std::find(call.headers.begin(), call.headers.end(), h) != call.headers.end();
  };
  BOOST_TEST(has("Authorization: Bearer sk-secret"));
  BOOST_TEST(has("X-Mneme-Purpose: summary"));
  BOOST_TEST(json::parse(call.body)["model"] == "summ-model");
  // The idle bound never exceeds what is left of the deadline.
  BOOST_TEST(call.total_timeout.count() == 5000);
  BOOST_TEST(call.idle_timeout.count() == 5000);
  req.purpose = llm_purpose::chat;
  ep.api_key.clear();
  auto chat = build_http_call(ep, req, std::chrono::milliseconds{90000});
  BOOST_TEST((std::find(chat.headers.begin(), chat.headers.end(), "X-Mneme-Purpose: chat")
              != chat.headers.end()));
  for (const auto& h : chat.headers)
    BOOST_TEST(h.rfind("Authorization", 0) != 0u);
  BOOST_TEST(chat.idle_timeout.count() == 60000);
}

// ---------------------------------------------------------------- CAF serialization

template <class T>
T round_trip(const T& in) {
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto copy = in;
  BOOST_REQUIRE(!sink(copy));
  T out;
  caf::binary_deserializer source{sys, buf};
  BOOST_REQUIRE(!source(out));
  return out;
}

BOOST_AUTO_TEST_CASE(chat_request_optionals_survive_serialization_both_set_and_unset) {
  chat_request req;
  req.model = "m";
  req.messages = {msg(msg_role::user, "hi")};
  req.max_tokens = 321;
  req.purpose = llm_purpose::summary;
  auto back = round_trip(req);
  BOOST_TEST(back.model == "m");
  BOOST_REQUIRE(back.messages.size() == 1u);
  BOOST_TEST(back.messages[0].content == "hi");
  BOOST_TEST(back.max_tokens.value_or(0) == 321);
  BOOST_TEST(!back.temperature.has_value());
  BOOST_TEST(back.purpose == llm_purpose::summary);
  req.max_tokens.reset();
  req.temperature = 0.5;
  back = round_trip(req);
  BOOST_TEST(!back.max_tokens.has_value());
  BOOST_TEST(back.temperature.value_or(0) == 0.5);
}

BOOST_AUTO_TEST_CASE(chat_answer_survives_serialization) {
  chat_answer a;
  a.content = "sum";
  a.finish_reason = "stop";
  a.prompt_tokens = 10;
  a.completion_tokens = 3;
  a.tool_calls = {{"c1", "f", "{}"}};
  auto back = round_trip(a);
  BOOST_TEST(back.content == "sum");
  BOOST_TEST(back.finish_reason == "stop");
  BOOST_TEST(back.stop_sequence.empty());
  a.stop_sequence = "END";
  BOOST_TEST(round_trip(a).stop_sequence == "END");
  BOOST_TEST(back.prompt_tokens == 10);
  BOOST_TEST(back.completion_tokens == 3);
  BOOST_TEST((back.tool_calls == a.tool_calls));
}

// ---------------------------------------------------------------- reasoning

BOOST_DATA_TEST_CASE(reasoning_blocks_are_stripped_from_content,
                     bdata::make({std::string{"<think>plan</think>Answer"},
                                  std::string{"  <think>a\nb</think>\n\nAnswer  "},
                                  std::string{"Ans<thinking>x</thinking>wer"},
                                  std::string{"<reasoning>r</reasoning>Answer"},
                                  std::string{"<think>one</think>Ans<think>two</think>wer"},
                                  std::string{"cut-off thinking</think>Answer"},
                                  std::string{"Answer<think>never closed"},
                                  std::string{"<think>only thinking</think>"},
                                  std::string{"Answer"}})
                       ^ bdata::make({std::string{"Answer"}, std::string{"Answer"},
                                      std::string{"Answer"}, std::string{"Answer"},
                                      std::string{"Answer"}, std::string{"Answer"},
                                      std::string{"Answer"}, std::string{""},
                                      std::string{"Answer"}}),
                     input, expected) {
  BOOST_TEST(strip_reasoning_blocks(input) == expected);
}

// ---------------------------------------------------------------- answers

BOOST_AUTO_TEST_CASE(answer_yields_content_usage_and_finish_reason) {
  auto parsed = parse_chat_answer(
    answer_body({{"role", "assistant"}, {"content", "<think>x</think>The summary."}}, "length"),
    llm_purpose::summary);
  BOOST_TEST(parsed.kind == llm_error_kind::none);
  BOOST_TEST(parsed.answer.content == "The summary.");
  BOOST_TEST(parsed.answer.prompt_tokens == 1234);
  BOOST_TEST(parsed.answer.completion_tokens == 56);
  BOOST_TEST(parsed.answer.finish_reason == "length");
}

BOOST_AUTO_TEST_CASE(a_string_stop_reason_beside_stop_is_the_matched_stop_sequence) {
  // vLLM: finish_reason "stop" and the stop string in stop_reason.
  auto body = json::parse(answer_body({{"role", "assistant"}, {"content", "1, 2"}}));
  body["choices"][0]["stop_reason"] = ", 3";
  auto parsed = parse_chat_answer(body.dump(), llm_purpose::chat);
  BOOST_REQUIRE(parsed.kind == llm_error_kind::none);
  BOOST_TEST(parsed.answer.finish_reason == "stop");
  BOOST_TEST(parsed.answer.stop_sequence == ", 3");
  // A stop token (a number), null, or a string beside another finish_reason: none.
  for (const json& other : {json(128001), json(nullptr)}) {
    body["choices"][0]["stop_reason"] = other;
    BOOST_TEST(parse_chat_answer(body.dump(), llm_purpose::chat).answer.stop_sequence.empty());
  }
  body["choices"][0]["stop_reason"] = ", 3";
  body["choices"][0]["finish_reason"] = "length";
  BOOST_TEST(parse_chat_answer(body.dump(), llm_purpose::chat).answer.stop_sequence.empty());
}

BOOST_AUTO_TEST_CASE(reasoning_fields_never_become_content) {
  auto parsed = parse_chat_answer(answer_body({{"role", "assistant"},
                                               {"content", "Final."},
                                               {"reasoning_content", "long thoughts"},
                                               {"reasoning", "more thoughts"}}),
                                  llm_purpose::chat);
  BOOST_TEST(parsed.kind == llm_error_kind::none);
  BOOST_TEST(parsed.answer.content == "Final.");
}

BOOST_AUTO_TEST_CASE(content_given_as_parts_is_concatenated) {
  auto parsed = parse_chat_answer(
    answer_body({{"role", "assistant"},
                 {"content", json::array({{{"type", "text"}, {"text", "Hello "}},
                                          {{"type", "text"}, {"text", "world"}}})}}),
    llm_purpose::chat);
  BOOST_TEST(parsed.answer.content == "Hello world");
}

BOOST_AUTO_TEST_CASE(chat_answer_with_tool_calls_may_have_empty_content_but_a_summary_may_not) {
  json m = {{"role", "assistant"},
            {"content", nullptr},
            {"tool_calls", json::array({{{"id", "c1"}, {"type", "function"},
                                         {"function", {{"name", "search"},
                                                       {"arguments", "{\"q\":1}"}}}}})}};
  auto chat = parse_chat_answer(answer_body(m, "tool_calls"), llm_purpose::chat);
  BOOST_TEST(chat.kind == llm_error_kind::none);
  BOOST_REQUIRE(chat.answer.tool_calls.size() == 1u);
  BOOST_TEST(chat.answer.tool_calls[0].id == "c1");
  BOOST_TEST(chat.answer.tool_calls[0].name == "search");
  BOOST_TEST(chat.answer.tool_calls[0].arguments == "{\"q\":1}");
  auto summary = parse_chat_answer(answer_body(m), llm_purpose::summary);
  BOOST_TEST(summary.kind == llm_error_kind::empty_answer);
}

BOOST_DATA_TEST_CASE(
  bad_answer_bodies_are_classified,
  bdata::make({std::string{"not json at all"},
               std::string{"{\"choices\": ["},
               std::string{"[1,2,3]"},
               std::string{"{\"id\": \"x\"}"},
               std::string{"{\"choices\": []}"},
               std::string{"{\"choices\": [{\"text\": \"legacy\"}]}"},
               answer_body({{"role", "assistant"}, {"content", ""}}),
               answer_body({{"role", "assistant"}, {"content", "   \n "}}),
               answer_body({{"role", "assistant"}, {"content", nullptr}}),
               answer_body({{"role", "assistant"}, {"content", ""}, {"reasoning_content", "hm"}}),
               answer_body({{"role", "assistant"}, {"content", "<think>all thought</think>"}})})
    ^ bdata::make({llm_error_kind::malformed, llm_error_kind::malformed,
                   llm_error_kind::malformed, llm_error_kind::malformed,
                   llm_error_kind::malformed, llm_error_kind::malformed,
                   llm_error_kind::empty_answer, llm_error_kind::empty_answer,
                   llm_error_kind::empty_answer, llm_error_kind::empty_answer,
                   llm_error_kind::empty_answer}),
  body, kind) {
  BOOST_TEST(parse_chat_answer(body, llm_purpose::summary).kind == kind);
}

BOOST_DATA_TEST_CASE(error_objects_inside_2xx_answers_expose_their_status,
                     bdata::make({std::string{R"({"error":{"code":429,"message":"slow down"}})"},
                                  std::string{R"({"error":{"code":"503","message":"x"}})"},
                                  std::string{R"({"error":{"code":"rate_limit","message":"x"}})"},
                                  std::string{R"({"error":{"code":200}})"},
                                  std::string{R"({"choices":[],"error":{"code":500}})"},
                                  std::string{"garbage"}})
                       ^ bdata::make({429, 503, 0, 0, 0, 0}),
                     body, status) {
  BOOST_TEST(error_status_in_body(body) == status);
}

// ---------------------------------------------------------------- reading outcomes

BOOST_AUTO_TEST_CASE(a_transport_failure_keeps_its_kind_and_names_the_elapsed_time) {
  http_outcome out;
  out.transport = llm_error_kind::idle_timeout;
  out.transport_detail = "no byte for 1000 ms";
  out.elapsed = std::chrono::milliseconds{1002};
  auto res = read_http_outcome(out, llm_purpose::summary, "");
  BOOST_REQUIRE(!res);
  BOOST_TEST(code_of(res.error()) == errc::llm_idle_timeout);
  BOOST_TEST(render_error(res.error()).find("no byte for 1000 ms after 1.002 s")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_http_error_names_status_and_body_but_never_the_key) {
  http_outcome out;
  out.status = 401;
  out.body = R"({"error":{"message":"Incorrect API key provided: sk-live-123"}})";
  auto res = read_http_outcome(out, llm_purpose::chat, "sk-live-123");
  BOOST_REQUIRE(!res);
  BOOST_TEST(code_of(res.error()) == errc::llm_auth);
  auto text = render_error(res.error());
  BOOST_TEST(text.find("HTTP 401") != std::string::npos);
  BOOST_TEST(text.find("Incorrect API key") != std::string::npos);
  BOOST_TEST(text.find("sk-live-123") == std::string::npos);
  BOOST_TEST(text.find("[redacted]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_429_503_or_529_with_retry_after_carries_the_upstreams_wait) {
  http_outcome out;
  out.status = 429;
  out.body = R"({"error":{"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}})";
  out.retry_after = "30";
  auto limited = read_http_outcome(out, llm_purpose::chat, "");
  BOOST_REQUIRE(!limited);
  BOOST_TEST(code_of(limited.error()) == errc::llm_rate_limited);
  BOOST_TEST(upstream_retry_after_of(limited.error()).value_or(-1) == 30);
  BOOST_TEST(render_error(limited.error()).find("retry-after 30 s") != std::string::npos);
  // An HTTP-date, read against the time the answer came; a 503 server error.
  out.status = 503;
  out.body = R"({"error":{"message":"busy"}})";
  out.retry_after = "Sun, 06 Nov 1994 08:49:37 GMT";
  out.completed_unix_s = 784111777 - 12;
  auto busy = read_http_outcome(out, llm_purpose::chat, "");
  BOOST_REQUIRE(!busy);
  BOOST_TEST(code_of(busy.error()) == errc::llm_server_error);
  BOOST_TEST(upstream_retry_after_of(busy.error()).value_or(-1) == 12);
  // The Messages API: 529 overloaded_error, the wait capped.
  out.status = 529;
  out.body = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
  out.retry_after = "86400";
  auto overloaded = read_http_outcome(out, llm_purpose::chat, "", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(!overloaded);
  BOOST_TEST(code_of(overloaded.error()) == errc::llm_server_error);
  BOOST_TEST(upstream_retry_after_of(overloaded.error()).value_or(-1) == 600);
  // None: another status, an unreadable value, no header.
  out.status = 500;
  out.retry_after = "30";
  BOOST_TEST(!upstream_retry_after_of(read_http_outcome(out, llm_purpose::chat, "").error()));
  out.status = 429;
  out.retry_after = "soon";
  BOOST_TEST(!upstream_retry_after_of(read_http_outcome(out, llm_purpose::chat, "").error()));
  out.retry_after.clear();
  BOOST_TEST(!upstream_retry_after_of(read_http_outcome(out, llm_purpose::chat, "").error()));
}

BOOST_AUTO_TEST_CASE(an_error_object_in_a_200_is_classified_by_its_embedded_status) {
  http_outcome out;
  out.status = 200;
  out.body = R"({"error":{"code":400,"message":"This model's maximum context length is 8192 tokens"}})";
  auto res = read_http_outcome(out, llm_purpose::summary, "");
  BOOST_REQUIRE(!res);
  BOOST_TEST(code_of(res.error()) == errc::llm_context_overflow);
}

BOOST_AUTO_TEST_CASE(a_good_200_becomes_the_answer) {
  http_outcome out;
  out.status = 200;
  out.body = answer_body({{"role", "assistant"}, {"content", "fine"}});
  auto res = read_http_outcome(out, llm_purpose::summary, "");
  BOOST_REQUIRE(res);
  BOOST_TEST(res->content == "fine");
}

// ---------------------------------------------------------------- error mapping

BOOST_DATA_TEST_CASE(
  every_failure_kind_maps_to_its_project_code,
  bdata::make({llm_error_kind::refused, llm_error_kind::dns, llm_error_kind::tls,
               llm_error_kind::idle_timeout, llm_error_kind::total_timeout,
               llm_error_kind::network, llm_error_kind::payload_too_large,
               llm_error_kind::long_context_rate_limit, llm_error_kind::rate_limited,
               llm_error_kind::output_too_large, llm_error_kind::context_overflow,
               llm_error_kind::unsupported_parameter, llm_error_kind::auth,
               llm_error_kind::quota, llm_error_kind::server_error,
               llm_error_kind::bad_request, llm_error_kind::malformed,
               llm_error_kind::empty_answer})
    ^ bdata::make({errc::llm_refused, errc::llm_dns, errc::llm_tls, errc::llm_idle_timeout,
                   errc::llm_total_timeout, errc::llm_network, errc::llm_payload_too_large,
                   errc::llm_long_context_rate_limit, errc::llm_rate_limited,
                   errc::llm_output_too_large, errc::llm_context_overflow,
                   errc::llm_unsupported_parameter, errc::llm_auth, errc::llm_quota,
                   errc::llm_server_error, errc::llm_bad_request, errc::llm_malformed,
                   errc::llm_empty_answer}),
  kind, code) {
  BOOST_TEST(to_errc(kind) == code);
}

BOOST_AUTO_TEST_CASE(the_kind_table_is_one_to_one_and_reads_both_ways) {
  // Every failure kind maps to a distinct llm_* code and back to itself; a code
  // outside the LLM range is no failure kind.
  std::set<errc> codes;
  for (const auto& [kind, code] : llm_errc_table) {
    BOOST_TEST(codes.insert(code).second);
    BOOST_TEST((llm_kind_of(to_errc(kind)) == std::optional<llm_error_kind>{kind}));
  }
  BOOST_TEST(codes.size() == llm_errc_table.size());
  BOOST_TEST(!llm_kind_of(errc::bad_request).has_value());
  BOOST_TEST(to_errc(llm_error_kind::none) == errc::internal);
}

BOOST_DATA_TEST_CASE(curl_codes_map_to_transport_kinds,
                     bdata::make({CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST,
                                  CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION,
                                  CURLE_OPERATION_TIMEDOUT, CURLE_PARTIAL_FILE,
                                  CURLE_GOT_NOTHING, CURLE_RECV_ERROR})
                       ^ bdata::make({llm_error_kind::refused, llm_error_kind::dns,
                                      llm_error_kind::tls, llm_error_kind::tls,
                                      llm_error_kind::total_timeout, llm_error_kind::network,
                                      llm_error_kind::network, llm_error_kind::network}),
                     code, kind) {
  BOOST_TEST(classify_curl_code(code) == kind);
}

BOOST_AUTO_TEST_CASE(body_excerpt_is_short_single_line_and_redacted) {
  std::string body = "key sk-1 line1\nline2 " + std::string(500, 'x');
  auto ex = body_excerpt(body, "sk-1", 40);
  BOOST_TEST(ex.size() == 43u); // 40 + "..."
  BOOST_TEST(ex.find('\n') == std::string::npos);
  BOOST_TEST(ex.find("sk-1") == std::string::npos);
  BOOST_TEST(ex.rfind("key [redacted] line1", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(body_excerpt_cuts_between_characters_and_keeps_a_whole_last_one) {
  std::string body;
  for (int i = 0; i < 30; ++i)
    body += "\xC3\xA9"; // é, 2 bytes
  BOOST_TEST(body_excerpt(body, "", 41) == body.substr(0, 40) + "..."); // not half of one
  BOOST_TEST(body_excerpt(body, "", 40) == body.substr(0, 40) + "..."); // the 20th whole
}

// ---------------------------------------------------------------- endpoints

BOOST_DATA_TEST_CASE(chat_completions_url_appends_the_path_once,
                     bdata::make({std::string{"http://127.0.0.1:8080"},
                                  std::string{"http://127.0.0.1:8080/"},
                                  std::string{"https://api.example.com/v1"},
                                  std::string{"https://api.example.com/v1/"},
                                  std::string{"https://proxy.example.com/openai"}})
                       ^ bdata::make({std::string{"http://127.0.0.1:8080/v1/chat/completions"},
                                      std::string{"http://127.0.0.1:8080/v1/chat/completions"},
                                      std::string{"https://api.example.com/v1/chat/completions"},
                                      std::string{"https://api.example.com/v1/chat/completions"},
                                      std::string{"https://proxy.example.com/openai/v1/chat/completions"}}),
                     base, url) {
  BOOST_TEST(chat_completions_url(base) == url);
}

struct key_file {
  std::string path = std::string{MNEME_BINARY_DIR} + "/llm_wire_test.key";
  explicit key_file(const std::string& content) { std::ofstream{path} << content; }
  ~key_file() { std::remove(path.c_str()); }
};

BOOST_AUTO_TEST_CASE(key_file_wins_over_the_inline_key_and_is_trimmed) {
  key_file f{"  sk-from-file \nsecond line ignored\n"};
  auto key = load_api_key("sk-inline", f.path, "auxiliary.compression");
  BOOST_REQUIRE(key);
  BOOST_TEST(*key == "sk-from-file");
  BOOST_TEST(*load_api_key("sk-inline", "", "model") == "sk-inline");
}

BOOST_AUTO_TEST_CASE(missing_or_empty_key_file_is_a_config_error_naming_path_not_content) {
  auto missing = load_api_key("", "/nonexistent/key", "auxiliary.compression");
  BOOST_REQUIRE(!missing);
  BOOST_TEST(code_of(missing.error()) == errc::config_invalid);
  BOOST_TEST(render_error(missing.error()).find("auxiliary.compression") != std::string::npos);
  key_file empty{"\n  \n"};
  auto e = load_api_key("", empty.path, "model");
  BOOST_REQUIRE(!e);
  BOOST_TEST(render_error(e.error()).find("is empty") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(summary_pool_timeouts_come_from_the_spec_defaults) {
  summarizer_params aux;
  aux.base_url = "http://127.0.0.1:1";
  model_params model;
  compression_params comp;
  auto cfg = make_summary_pool_config(aux, model, comp);
  BOOST_REQUIRE(cfg);
  // idle = context_timeout_seconds (60); total = min(context_total_ceiling_seconds (300),
  // auxiliary.compression.timeout (120)).
  BOOST_TEST(cfg->endpoint.idle_timeout.count() == 60000);
  BOOST_TEST(cfg->endpoint.total_timeout.count() == 120000);
  BOOST_TEST(cfg->endpoint.purpose == llm_purpose::summary);
  BOOST_TEST(cfg->endpoint.model == model.name); // aux.model empty: the model block's
  BOOST_TEST(cfg->max_concurrency == 8u);
  BOOST_TEST(cfg->max_queue == 256u);
  aux.timeout_seconds = 1000; // no longer the cap: the 300 s ceiling is
  BOOST_TEST(make_summary_pool_config(aux, model, comp)->endpoint.total_timeout.count()
             == 300000);
  comp.context_total_ceiling_seconds = 200;
  comp.context_timeout_seconds = 500; // idle can never exceed the total
  cfg = make_summary_pool_config(aux, model, comp);
  BOOST_TEST(cfg->endpoint.total_timeout.count() == 200000);
  BOOST_TEST(cfg->endpoint.idle_timeout.count() == 200000);
}

BOOST_AUTO_TEST_CASE(hygiene_pool_timeouts_come_from_the_hygiene_keys) {
  summarizer_params aux;
  aux.base_url = "http://127.0.0.1:1";
  aux.timeout_seconds = 1000;
  compression_params comp;
  // idle = hygiene_timeout_seconds (60); total = hygiene_total_ceiling_seconds (180).
  auto cfg = make_hygiene_pool_config(aux, model_params{}, comp);
  BOOST_REQUIRE(cfg);
  BOOST_TEST(cfg->name == "hygiene");
  BOOST_TEST(cfg->endpoint.idle_timeout.count() == 60000);
  BOOST_TEST(cfg->endpoint.total_timeout.count() == 180000);
  aux.timeout_seconds = 90; // the auxiliary timeout caps the ceiling
  BOOST_TEST(make_hygiene_pool_config(aux, model_params{}, comp)->endpoint.total_timeout.count()
             == 90000);
  comp.hygiene_timeout_seconds = 0;
  auto bad = make_hygiene_pool_config(aux, model_params{}, comp);
  BOOST_REQUIRE(!bad);
  BOOST_TEST(render_error(bad.error()).find("hygiene_timeout_seconds") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(summary_pool_uses_its_own_key_else_the_model_key) {
  summarizer_params aux;
  aux.base_url = "http://127.0.0.1:1";
  aux.model = "aux-model";
  model_params model;
  model.api_key = "sk-model";
  compression_params comp;
  BOOST_TEST(make_summary_pool_config(aux, model, comp)->endpoint.api_key == "sk-model");
  aux.api_key = "sk-aux";
  auto cfg = make_summary_pool_config(aux, model, comp);
  BOOST_TEST(cfg->endpoint.api_key == "sk-aux");
  BOOST_TEST(cfg->endpoint.model == "aux-model");
}

BOOST_AUTO_TEST_CASE(chat_pool_comes_from_the_model_block) {
  model_params model;
  model.base_url = "http://127.0.0.1:9/v1";
  model.name = "main-model";
  chat_pool_params chat;
  auto cfg = make_chat_pool_config(model, chat);
  BOOST_REQUIRE(cfg);
  BOOST_TEST(cfg->endpoint.url == "http://127.0.0.1:9/v1/chat/completions");
  BOOST_TEST(cfg->endpoint.purpose == llm_purpose::chat);
  BOOST_TEST(cfg->endpoint.total_timeout.count() == 300000);
  BOOST_TEST(cfg->max_concurrency == 32u);
  BOOST_TEST(cfg->max_queue == 4096u);
}

BOOST_AUTO_TEST_CASE(an_unresolved_builtin_endpoint_or_bad_bound_is_a_config_error) {
  model_params model; // base_url "builtin"
  auto chat = make_chat_pool_config(model, chat_pool_params{});
  BOOST_REQUIRE(!chat);
  BOOST_TEST(render_error(chat.error()).find("model.base_url") != std::string::npos);
  summarizer_params aux;
  aux.base_url = "http://127.0.0.1:1";
  aux.max_concurrency = 0;
  auto s = make_summary_pool_config(aux, model, compression_params{});
  BOOST_REQUIRE(!s);
  BOOST_TEST(code_of(s.error()) == errc::config_invalid);
  BOOST_TEST(render_error(s.error()).find("max_concurrency") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_agent_request_carries_its_tools_and_fields_verbatim) {
  chat_request req;
  req.model = "m";
  req.messages = {message{}};
  req.tools_json = R"([{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}])";
  req.extra_json = R"({"tool_choice":"auto","top_p":0.5,"seed":7,"stop":["END"],)"
                   R"("parallel_tool_calls":false,"model":"other"})";
  req.max_tokens = 300;
  auto j = nlohmann::json::parse(llm::to_wire_json(req));
  BOOST_TEST(j["tools"] == nlohmann::json::parse(req.tools_json));
  BOOST_TEST(j["tool_choice"] == "auto");
  BOOST_TEST(j["top_p"] == 0.5);
  BOOST_TEST(j["seed"] == 7);
  BOOST_TEST(j["stop"][0] == "END");
  BOOST_TEST(j["parallel_tool_calls"] == false);
  BOOST_TEST(j["max_tokens"] == 300);
  BOOST_TEST(j["model"] == "m"); // an extra field never overrides the request's own
  // Without tools (none set, or cleared with "[]") the tool fields are left out.
  for (const char* none : {"", "[]"}) {
    req.tools_json = none;
    auto k = nlohmann::json::parse(llm::to_wire_json(req));
    BOOST_TEST(!k.contains("tools"));
    BOOST_TEST(!k.contains("tool_choice"));
    BOOST_TEST(!k.contains("parallel_tool_calls"));
    BOOST_TEST(k["seed"] == 7);
  }
}

BOOST_AUTO_TEST_CASE(agent_fields_and_turn_inputs_survive_caf_serialization) {
  chat_request req;
  req.tools_json = "[1]";
  req.extra_json = "{\"seed\":1}";
  auto back = round_trip(req);
  BOOST_TEST(back.tools_json == req.tools_json);
  BOOST_TEST(back.extra_json == req.extra_json);
  turn_input in;
  in.tool_results = {tool_result_input{"c1", "out", true}};
  in.set_tools = true;
  in.tools_json = "[]";
  in.options.has_max_tokens = true;
  in.options.max_tokens = 9;
  in.options.extra_json = "{}";
  auto got = round_trip(in);
  BOOST_REQUIRE(got.tool_results.size() == 1u);
  BOOST_TEST(got.tool_results[0].tool_call_id == "c1");
  BOOST_TEST(got.tool_results[0].is_error);
  BOOST_TEST(got.set_tools);
  BOOST_TEST(got.options.max_tokens == 9);
  BOOST_TEST(got.options.extra_json == "{}");
  turn_reply r;
  r.tool_calls = {tool_call{"c1", "f", "{\"a\":1}"}};
  r.finish_reason = "tool_calls";
  auto rr = round_trip(r);
  BOOST_REQUIRE(rr.tool_calls.size() == 1u);
  BOOST_TEST(rr.tool_calls[0].arguments == "{\"a\":1}");
  BOOST_TEST(rr.finish_reason == "tool_calls");
}

BOOST_AUTO_TEST_CASE(the_request_body_is_byte_identical_to_the_document_dump) {
  auto call = msg(msg_role::assistant, "");
  call.tool_calls = {{"call_1", "read_file", R"({"path":"/etc/\"hosts\""})"},
                     {"call_2", "查找", "{\"q\":\"caf\u00e9 \\n\"}"}};
  auto spoken_call = msg(msg_role::assistant, "Let me look. \xF0\x9F\x98\x80");
  spoken_call.tool_calls = {{"c\"3", "f", ""}};
  auto named = tool_result("call_1", "read_file", "127.0.0.1 localhost\n\t\x01");
  auto unnamed = tool_result("call_2", "", "结果：\xE4\xB8 cut, \xFF bad, \x7F del");
  auto user_calls = msg(msg_role::user, "a user row never sends calls");
  user_calls.tool_calls = {{"x", "y", "z"}};
  std::vector<message> rows{msg(msg_role::system, "sys \"quoted\" \\ back"),
                            msg(msg_role::user, "héllo 中文 \b\f\r"),
                            call, named, unnamed, spoken_call, user_calls,
                            msg(msg_role::assistant, std::string("nul\0byte", 8)),
                            msg(msg_role::user, "")};
  std::vector<chat_request> reqs(6);
  for (auto& r : reqs) {
    r.model = "m\xC3\xA9";
    r.messages = rows;
  }
  reqs[1].stream = true;
  reqs[1].max_tokens = 300;
  reqs[1].temperature = 0.1;
  reqs[2].tools_json = R"([{"type":"function","function":{"name":"f","parameters":{}}}])";
  reqs[2].extra_json = R"({"tool_choice":"auto","metadata":{"messages":null},"logit_bias":)"
                       R"({"1":2},"messages":[1],"n":1,"user":"u\u00e9","frequency_penalty":0.5,)"
                       R"("max_completion_tokens":9,"zeta":"\u0000"})";
  reqs[3].extra_json = R"({"tool_choice":"none","stream":true,"model":"x","context_management":1})";
  reqs[3].server_compact_threshold = 1000;
  reqs[4].messages.clear();
  reqs[5].tools_json = "[]";
  reqs[5].extra_json = "not json";
  reqs.push_back(reqs[2]); // the same tools again (kept from the first time)
  reqs.back().tools_json = R"([{"type":"function","function":{"name":"g"}}])";
  reqs.push_back(reqs[2]);
  for (size_t i = 0; i < reqs.size(); ++i)
    BOOST_TEST(to_wire_json(reqs[i]) == wire_reference(reqs[i]), "request " << i);
  for (const auto& m : rows) {
    std::string one;
    append_message_json(one, m);
    BOOST_TEST(one == message_to_json(m).dump(-1, ' ', false, json::error_handler_t::replace));
  }
}

BOOST_AUTO_TEST_SUITE_END() // llm_wire_test
