// The Anthropic Messages API codec of the LLM client (actors/llm/messages_api_wire.hpp,
// messages_sse_answer.hpp) against its other side, the fake LLM's Messages wire
// (apps/common/fakellm/messages_wire.hpp): a request encoded by mneme parses back into
// the same rows; an answer the fake writes, whole or streamed in pieces of any size,
// reads back as the same chat_answer; the fields without an equivalent are dropped; the
// headers and errors of an Anthropic call; content blocks kept in a row as block lines
// (policies/content_blocks.hpp) on both wires.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <memory>

#include <nlohmann/json.hpp>

#include "actors/llm/llm_call.hpp"
#include "actors/llm/llm_endpoint.hpp"
#include "actors/llm/messages_api_wire.hpp"
#include "actors/llm/messages_sse_answer.hpp"
#include "apps/common/fakellm/messages_wire.hpp"
#include "messages/mneme_types.hpp"
#include "policies/tool_loop.hpp"
#include "tests/message_builders.hpp"
#include "tests/recording_stream.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(messages_api_wire_test)

namespace bdata = boost::unit_test::data;
using nlohmann::json;
using namespace mneme;
using namespace mneme::llm;
using mneme::testing::msg;
using mneme::testing::tool_result;

namespace {

errc errc_of(const caf::error& err) { return static_cast<errc>(err.code()); }

message calling(std::string text, std::vector<tool_call> calls) {
  auto m = msg(msg_role::assistant, std::move(text));
  m.tool_calls = std::move(calls);
  return m;
}

// A tool loop's rows: system prompt, user, a call answered, a second call answered with
// an error, a user follow-up, a marker system row in the middle.
std::vector<message> loop_rows() {
  return {msg(msg_role::system, "You are terse."),
          msg(msg_role::user, "weather in Paris and a file?"),
          calling("Let me look.", {{"toolu_1", "get_weather", R"({"city":"Paris","days":2})"},
                                   {"toolu_2", "read_file", R"({"path":"/etc/hosts"})"}}),
          tool_result("toolu_1", "get_weather", "sunny, 21 C"),
          tool_result("toolu_2", "read_file", std::string{tool_error_prefix} + "no such file"),
          msg(msg_role::user, "thanks"),
          msg(msg_role::system, "[summary of earlier turns]"),
          msg(msg_role::user, "and tomorrow?"),
          calling("", {{"toolu_3", "get_weather", ""}})};
}

const char* weather_tools = R"([{"type":"function","function":{"name":"get_weather",
  "description":"Weather of a city","parameters":{"type":"object","properties":{
  "city":{"type":"string"}},"required":["city"]}}}])";

fakellm::completion a_completion(bool calls) {
  fakellm::completion c;
  c.id = "chatcmpl-fake-7";
  c.model = "claude-fake";
  c.prompt_tokens = 1234;
  c.completion_tokens = 56;
  if (calls) {
    c.content = "Checking both.";
    c.tool_calls = {{"toolu_a", "get_weather", R"({"city":"Paris","days":2})"},
                    {"toolu_b", "read_file", R"({"path":"/tmp/ü-é.txt"})"}};
    c.finish_reason = "tool_calls";
  } else {
    c.content = "Paris: sunny, 21 °C, light wind from the west all afternoon.";
  }
  return c;
}

std::string joined(const std::vector<std::string>& events) {
  std::string out;
  for (const auto& e : events)
    out += e;
  return out;
}

} // namespace

// ---------------------------------------------------------------- requests

BOOST_AUTO_TEST_CASE(a_tool_loop_encodes_as_alternating_messages_with_tool_use_and_tool_result_blocks) {
  chat_request req;
  req.model = "claude-fake";
  req.messages = loop_rows();
  auto body = json::parse(to_messages_wire_json(req));
  BOOST_TEST(body["system"] == "You are terse.");
  BOOST_TEST(body["max_tokens"] == default_messages_max_tokens);
  BOOST_TEST(body["stream"] == false);
  const auto& m = body["messages"];
  BOOST_REQUIRE(m.size() == 4u);
  for (size_t i = 0; i < m.size(); ++i) // merged: roles alternate
    BOOST_TEST(m[i]["role"] == (i % 2 == 0 ? "user" : "assistant"));
  BOOST_TEST(m[1]["content"][0] == json({{"type", "text"}, {"text", "Let me look."}}));
  BOOST_TEST(m[1]["content"][1]["type"] == "tool_use");
  BOOST_TEST(m[1]["content"][1]["input"] == json({{"city", "Paris"}, {"days", 2}}));
  // Both results, then the follow-up, the mid-history system row and the next question.
  const auto& results = m[2]["content"];
  BOOST_REQUIRE(results.size() == 5u);
  BOOST_TEST(results[0] == json({{"type", "tool_result"}, {"tool_use_id", "toolu_1"},
                                 {"content", "sunny, 21 C"}}));
  BOOST_TEST(results[1]["is_error"] == true);
  BOOST_TEST(!results[0].contains("is_error"));
  BOOST_TEST(results[2]["text"] == "thanks");
  BOOST_TEST(results[3]["text"] == "[summary of earlier turns]");
  BOOST_TEST(results[4]["text"] == "and tomorrow?");
  // A call without arguments has an empty object; no empty text block is sent.
  BOOST_REQUIRE(m[3]["content"].size() == 1u);
  BOOST_TEST(m[3]["content"][0]["input"] == json::object());
}

BOOST_AUTO_TEST_CASE(block_lines_of_a_row_are_sent_as_the_blocks_they_keep_in_their_place) {
  std::string image = R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}})";
  std::string thinking = R"({"type":"thinking","thinking":"hm","signature":"sig"})";
  std::string result = R"({"type":"search_result","source":"s","title":"t","content":[]})";
  chat_request req;
  req.model = "claude-fake";
  req.messages = {msg(msg_role::user, "what is this?\n[image] " + image),
                  calling("[thinking] " + thinking + "\nLet me look.", {{"toolu_1", "f", "{}"}}),
                  tool_result("toolu_1", "f", "found\n[search_result] " + result),
                  msg(msg_role::user, "[image] {\"type\":\"document\"}")};
  auto body = json::parse(to_messages_wire_json(req));
  const auto& m = body["messages"];
  BOOST_REQUIRE(m.size() == 3u);
  BOOST_TEST(m[0]["content"][0] == json({{"type", "text"}, {"text", "what is this?"}}));
  BOOST_TEST(m[0]["content"][1] == json::parse(image));
  BOOST_TEST(m[1]["content"][0] == json::parse(thinking)); // thinking first, as the API wants
  BOOST_TEST(m[1]["content"][1] == json({{"type", "text"}, {"text", "Let me look."}}));
  BOOST_TEST(m[1]["content"][2]["type"] == "tool_use");
  const auto& tr = m[2]["content"][0];
  BOOST_TEST(tr["type"] == "tool_result");
  BOOST_TEST(tr["content"] == json::array({{{"type", "text"}, {"text", "found"}},
                                           json::parse(result)}));
  // A line whose JSON is not the block it names stays text.
  BOOST_TEST(m[2]["content"][1] == json({{"type", "text"},
                                         {"text", "[image] {\"type\":\"document\"}"}}));
}

BOOST_AUTO_TEST_CASE(an_openai_upstream_gets_a_user_rows_image_block_lines_as_image_url_parts) {
  chat_request req;
  std::string b64 = R"([image] {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}})";
  std::string url = R"([image] {"type":"image","source":{"type":"url","url":"https://x.test/a.png"}})";
  std::string doc = R"([document] {"type":"document","source":{"type":"text","data":"memo"}})";
  req.messages = {msg(msg_role::user, "compare these\n" + b64 + "\n" + url + "\nand\n" + doc),
                  msg(msg_role::user, "[image] is a word here")};
  auto j = json::parse(to_wire_json(req));
  const auto& parts = j["messages"][0]["content"];
  BOOST_REQUIRE(parts.is_array());
  BOOST_REQUIRE(parts.size() == 5u);
  BOOST_TEST(parts[0] == json({{"type", "text"}, {"text", "compare these"}}));
  BOOST_TEST(parts[1] == json({{"type", "image_url"},
                              {"image_url", {{"url", "data:image/png;base64,AAAA"}}}}));
  BOOST_TEST(parts[2]["image_url"]["url"] == "https://x.test/a.png");
  BOOST_TEST(parts[3] == json({{"type", "text"}, {"text", "and"}}));
  BOOST_TEST(parts[4] == json({{"type", "text"}, {"text", "[document]"}}));
  BOOST_TEST(j["messages"][1]["content"] == "[image] is a word here");
  // The document encoder and the byte-for-byte one agree.
  std::string appended;
  append_message_json(appended, req.messages[0]);
  BOOST_TEST(appended == message_to_json(req.messages[0]).dump());
}

BOOST_AUTO_TEST_CASE(the_fake_parses_an_encoded_request_back_into_the_same_rows) {
  chat_request req;
  req.model = "claude-fake";
  req.messages = loop_rows();
  req.messages.resize(6); // up to "thanks": each text its own message after the fake's parse
  req.tools_json = weather_tools;
  auto call = fakellm::parse_messages_call(to_messages_wire_json(req));
  BOOST_REQUIRE_MESSAGE(call, (call ? std::string{} : render_error(call.error())));
  BOOST_REQUIRE(call->messages.size() == req.messages.size());
  for (size_t i = 0; i < req.messages.size(); ++i) {
    BOOST_TEST_CONTEXT("row " << i) {
      const auto& want = req.messages[i];
      const auto& got = call->messages[i];
      BOOST_TEST(to_string(got.role) == to_string(want.role));
      BOOST_TEST(got.content == want.content);
      BOOST_TEST(got.tool_call_id == want.tool_call_id);
      BOOST_REQUIRE(got.tool_calls.size() == want.tool_calls.size());
      for (size_t k = 0; k < want.tool_calls.size(); ++k) {
        BOOST_TEST(got.tool_calls[k].id == want.tool_calls[k].id);
        BOOST_TEST(json::parse(got.tool_calls[k].arguments)
                   == json::parse(want.tool_calls[k].arguments));
      }
    }
  }
  BOOST_REQUIRE(call->tools.size() == 1u);
  BOOST_TEST(call->tools[0].name == "get_weather");
  BOOST_TEST(json::parse(call->tools[0].parameters_json)["required"][0] == "city");
  BOOST_TEST(call->max_tokens.value_or(0) == default_messages_max_tokens);
}

struct choice_case {
  std::string extra;
  json want_choice; // null: no tool_choice sent
};
std::ostream& operator<<(std::ostream& os, const choice_case& c) { return os << c.extra; }

BOOST_DATA_TEST_CASE(tool_choice_and_parallel_calls_map_onto_anthropics_tool_choice,
                     bdata::make(std::vector<choice_case>{
                       {R"({"tool_choice":"auto"})", {{"type", "auto"}}},
                       {R"({"tool_choice":"required"})", {{"type", "any"}}},
                       {R"({"tool_choice":"none"})", {{"type", "none"}}},
                       {R"({"tool_choice":{"type":"function","function":{"name":"get_weather"}}})",
                        {{"type", "tool"}, {"name", "get_weather"}}},
                       {R"({"parallel_tool_calls":false})",
                        {{"type", "auto"}, {"disable_parallel_tool_use", true}}},
                       {R"({"tool_choice":"required","parallel_tool_calls":false})",
                        {{"type", "any"}, {"disable_parallel_tool_use", true}}},
                       {R"({"parallel_tool_calls":true})", nullptr},
                       {R"({"tool_choice":"weird"})", nullptr},
                     }),
                     c) {
  chat_request req;
  req.messages = {msg(msg_role::user, "hi")};
  req.tools_json = weather_tools;
  req.extra_json = c.extra;
  auto body = json::parse(to_messages_wire_json(req));
  if (c.want_choice.is_null())
    BOOST_TEST(!body.contains("tool_choice"));
  else
    BOOST_TEST(body["tool_choice"] == c.want_choice);
  req.tools_json.clear(); // without tools, never a tool_choice
  BOOST_TEST(!json::parse(to_messages_wire_json(req)).contains("tool_choice"));
}

BOOST_AUTO_TEST_CASE(sampling_and_stop_fields_map_and_fields_without_an_equivalent_are_dropped) {
  chat_request req;
  req.messages = {msg(msg_role::user, "hi")};
  req.temperature = 0.3;
  req.max_tokens = 700;
  req.stream = true;
  req.server_compact_threshold = 5000;
  req.extra_json = R"({"top_p":0.9,"top_k":40,"stop":"END","user":"u-7","seed":42,
    "response_format":{"type":"json_object"},"presence_penalty":0.5,"n":2})";
  auto body = json::parse(to_messages_wire_json(req));
  BOOST_TEST(body["max_tokens"] == 700);
  BOOST_TEST(body["temperature"] == 0.3);
  BOOST_TEST(body["top_p"] == 0.9);
  BOOST_TEST(body["top_k"] == 40);
  BOOST_TEST(body["stop_sequences"] == json::array({"END"}));
  BOOST_TEST(body["metadata"] == json({{"user_id", "u-7"}}));
  BOOST_TEST(body["stream"] == true);
  for (const char* dropped : {"seed", "response_format", "presence_penalty", "n", "stop",
                              "user", "context_management", "stream_options"})
    BOOST_TEST(!body.contains(dropped), dropped);
  req.max_tokens.reset();
  req.extra_json = R"({"max_completion_tokens":333,"stop":["a","b"]})";
  body = json::parse(to_messages_wire_json(req));
  BOOST_TEST(body["max_tokens"] == 333);
  BOOST_TEST(body["stop_sequences"] == json::array({"a", "b"}));
}

BOOST_AUTO_TEST_CASE(the_fields_and_headers_the_anthropic_door_passes_reach_only_the_messages_api) {
  llm_endpoint ep;
  ep.api = llm_api::anthropic;
  ep.url = endpoint_url("http://h", llm_api::anthropic);
  chat_request req;
  req.model = "claude-fake";
  req.max_tokens = 2048;
  req.messages = {msg(msg_role::user, "hi")};
  req.extra_json = R"({"top_k":5,"x-mneme-anthropic":{
    "fields":{"thinking":{"type":"enabled","budget_tokens":1024},"max_tokens":1,"service_tier":"auto"},
    "headers":{"anthropic-version":"2023-01-01","anthropic-beta":"interleaved-thinking-2025-05-14"}}})";
  auto call = build_http_call(ep, req, std::chrono::milliseconds{5000});
  auto count = [&](const std::string& prefix) {
    return std::count_if(call.headers.begin(), call.headers.end(),
                         [&](const std::string& h) { return h.rfind(prefix, 0) == 0; });
  };
  BOOST_TEST(count("anthropic-version: 2023-01-01") == 1); // the client's, not mneme's
  BOOST_TEST(count("anthropic-version:") == 1);
  BOOST_TEST(count("anthropic-beta: interleaved-thinking-2025-05-14") == 1);
  auto body = json::parse(call.body);
  BOOST_TEST(body["thinking"]["budget_tokens"] == 1024);
  BOOST_TEST(body["service_tier"] == "auto");
  BOOST_TEST(body["max_tokens"] == 2048); // never replaces what mneme wrote
  BOOST_TEST(body["top_k"] == 5);
  BOOST_TEST(!body.contains("x-mneme-anthropic"));
  // A header value with a line break is never sent.
  req.extra_json = R"({"x-mneme-anthropic":{"headers":{"anthropic-beta":"a\r\nX-Evil: 1"}}})";
  call = build_http_call(ep, req, std::chrono::milliseconds{5000});
  BOOST_TEST(count("anthropic-beta") == 0);
  BOOST_TEST(count("anthropic-version: 2023-06-01") == 1);
  // An OpenAI-compatible upstream never sees the member.
  req.extra_json = R"({"top_p":0.5,"x-mneme-anthropic":{"fields":{"thinking":{}}}})";
  auto openai = json::parse(to_wire_json(req));
  BOOST_TEST(openai["top_p"] == 0.5);
  BOOST_TEST(!openai.contains("x-mneme-anthropic"));
  BOOST_TEST(!openai.contains("thinking"));
}

BOOST_AUTO_TEST_CASE(an_anthropic_call_sends_x_api_key_and_anthropic_version_to_the_messages_url) {
  BOOST_TEST(messages_url("https://api.anthropic.com") == "https://api.anthropic.com/v1/messages");
  BOOST_TEST(messages_url("https://proxy/v1/") == "https://proxy/v1/messages");
  BOOST_TEST(endpoint_url("http://h", llm_api::openai) == "http://h/v1/chat/completions");
  llm_endpoint ep;
  ep.api = llm_api::anthropic;
  ep.url = endpoint_url("http://h", llm_api::anthropic);
  ep.api_key = "sk-ant-secret";
  ep.model = "claude-fake";
  chat_request req;
  req.messages = {msg(msg_role::user, "hi")};
  auto call = build_http_call(ep, req, std::chrono::milliseconds{5000});
  auto has = [&](const std::string& h) {
    return std::find(call.headers.begin(), call.headers.end(), h) != call.headers.end();
  };
  BOOST_TEST(call.url == "http://h/v1/messages");
  BOOST_TEST(has("x-api-key: sk-ant-secret"));
  BOOST_TEST(has("anthropic-version: 2023-06-01"));
  for (const auto& h : call.headers)
    BOOST_TEST(h.rfind("Authorization", 0) != 0u);
  auto body = json::parse(call.body);
  BOOST_TEST(body["model"] == "claude-fake");
  BOOST_TEST(body["messages"][0]["content"][0]["text"] == "hi");
}

// ---------------------------------------------------------------- answers

BOOST_DATA_TEST_CASE(a_whole_answer_of_the_fake_reads_back_as_its_completion,
                     bdata::make({false, true}), calls) {
  auto c = a_completion(calls);
  auto parsed = parse_messages_answer(fakellm::messages_body(c), llm_purpose::chat);
  BOOST_REQUIRE_MESSAGE(parsed.kind == llm_error_kind::none, parsed.detail);
  BOOST_TEST(parsed.answer.content == c.content);
  BOOST_TEST(parsed.answer.finish_reason == (calls ? "tool_calls" : "stop"));
  BOOST_TEST(parsed.answer.prompt_tokens == 1234);
  BOOST_TEST(parsed.answer.completion_tokens == 56);
  BOOST_REQUIRE(parsed.answer.tool_calls.size() == c.tool_calls.size());
  for (size_t i = 0; i < c.tool_calls.size(); ++i) {
    BOOST_TEST(parsed.answer.tool_calls[i].id == c.tool_calls[i].id);
    BOOST_TEST(parsed.answer.tool_calls[i].name == c.tool_calls[i].name);
    BOOST_TEST(json::parse(parsed.answer.tool_calls[i].arguments)
               == json::parse(c.tool_calls[i].arguments));
  }
}

BOOST_AUTO_TEST_CASE(answers_without_content_or_with_reasoning_only_fail_as_on_the_openai_wire) {
  BOOST_TEST(parse_messages_answer("not json", llm_purpose::chat).kind == llm_error_kind::malformed);
  BOOST_TEST(parse_messages_answer(R"({"type":"message"})", llm_purpose::chat).kind
             == llm_error_kind::malformed);
  auto thinking = parse_messages_answer(
    R"({"type":"message","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":""}],
        "stop_reason":"max_tokens"})",
    llm_purpose::summary);
  BOOST_TEST(thinking.kind == llm_error_kind::empty_answer);
  BOOST_TEST(thinking.detail.find("reasoning only") != std::string::npos);
  BOOST_TEST(thinking.detail.find("finish_reason=length") != std::string::npos);
  auto cached = parse_messages_answer(
    R"({"type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
        "usage":{"input_tokens":10,"cache_read_input_tokens":90,"cache_creation_input_tokens":5,
        "output_tokens":3}})",
    llm_purpose::chat);
  BOOST_TEST(cached.answer.prompt_tokens == 105); // every input token counts in the window
}

BOOST_AUTO_TEST_CASE(a_stop_sequence_answer_names_its_sequence_whole_and_streamed) {
  // The fake stops on the request's stop_sequences and reports it as the API does.
  auto call = fakellm::parse_messages_call(
    R"({"model":"claude-fake","max_tokens":64,"stop_sequences":["never", "sunny"],
        "messages":[{"role":"user","content":"hi"}]})");
  BOOST_REQUIRE(call);
  BOOST_TEST((call->stop == std::vector<std::string>{"never", "sunny"}));
  BOOST_TEST(!fakellm::parse_messages_call(
    R"({"model":"m","max_tokens":9,"stop_sequences":"x","messages":[{"role":"user","content":"hi"}]})"));
  auto c = a_completion(false);
  c.stop_sequence = fakellm::apply_stop_sequences(c.content, call->stop);
  BOOST_TEST(c.stop_sequence == "sunny");
  BOOST_TEST(c.content == "Paris: ");
  auto body = json::parse(fakellm::messages_body(c));
  BOOST_TEST(body["stop_reason"] == "stop_sequence");
  BOOST_TEST(body["stop_sequence"] == "sunny");
  auto whole = parse_messages_answer(fakellm::messages_body(c), llm_purpose::chat);
  BOOST_REQUIRE_MESSAGE(whole.kind == llm_error_kind::none, whole.detail);
  BOOST_TEST(whole.answer.finish_reason == "stop");
  BOOST_TEST(whole.answer.stop_sequence == "sunny");
  messages_sse_answer reader{nullptr};
  reader.feed(joined(fakellm::messages_events(c, 3)));
  auto streamed = reader.finish(llm_purpose::chat);
  BOOST_REQUIRE_MESSAGE(streamed.kind == llm_error_kind::none, streamed.detail);
  BOOST_TEST(streamed.answer.finish_reason == "stop");
  BOOST_TEST(streamed.answer.stop_sequence == "sunny");
  // An answer that ended on its own names none.
  auto plain = a_completion(false);
  BOOST_TEST(json::parse(fakellm::messages_body(plain))["stop_sequence"].is_null());
  BOOST_TEST(parse_messages_answer(fakellm::messages_body(plain), llm_purpose::chat)
               .answer.stop_sequence.empty());
}

BOOST_DATA_TEST_CASE(a_streamed_answer_fed_in_pieces_of_any_size_is_the_whole_answer,
                     bdata::make({false, true}) * bdata::make({1, 7, 64, 100000}), calls,
                     piece) {
  auto c = a_completion(calls);
  auto bytes = joined(fakellm::messages_events(c, 5));
  auto sink = std::make_shared<test::recording_stream>();
  messages_sse_answer reader{sink};
  for (size_t at = 0; at < bytes.size(); at += static_cast<size_t>(piece))
    reader.feed(std::string_view{bytes}.substr(at, static_cast<size_t>(piece)));
  BOOST_TEST(reader.saw_events());
  auto streamed = reader.finish(llm_purpose::chat);
  auto whole = parse_messages_answer(fakellm::messages_body(c), llm_purpose::chat);
  BOOST_REQUIRE_MESSAGE(streamed.kind == llm_error_kind::none, streamed.detail);
  BOOST_TEST(streamed.answer.content == whole.answer.content);
  BOOST_TEST(streamed.answer.finish_reason == whole.answer.finish_reason);
  BOOST_TEST(streamed.answer.prompt_tokens == whole.answer.prompt_tokens);
  BOOST_TEST(streamed.answer.completion_tokens == whole.answer.completion_tokens);
  BOOST_REQUIRE(streamed.answer.tool_calls.size() == whole.answer.tool_calls.size());
  for (size_t i = 0; i < whole.answer.tool_calls.size(); ++i) {
    BOOST_TEST(streamed.answer.tool_calls[i].id == whole.answer.tool_calls[i].id);
    BOOST_TEST(streamed.answer.tool_calls[i].name == whole.answer.tool_calls[i].name);
    BOOST_TEST(streamed.answer.tool_calls[i].arguments == whole.answer.tool_calls[i].arguments);
  }
  // What was handed on while it streamed makes the same answer.
  BOOST_TEST(sink->text() == c.content);
  std::vector<std::string> args(c.tool_calls.size());
  for (const auto& f : sink->call_fragments()) {
    BOOST_REQUIRE(f.index < args.size());
    args[f.index] += f.arguments;
  }
  for (size_t i = 0; i < args.size(); ++i)
    BOOST_TEST(args[i] == streamed.answer.tool_calls[i].arguments);
}

BOOST_AUTO_TEST_CASE(a_stream_cut_before_its_stop_or_with_an_error_event_never_returns_an_answer) {
  auto events = fakellm::messages_events(a_completion(false), 8);
  messages_sse_answer cut{nullptr};
  for (size_t i = 0; i < events.size() / 2; ++i)
    cut.feed(events[i]);
  BOOST_TEST(cut.finish(llm_purpose::chat).kind == llm_error_kind::network);

  messages_sse_answer overloaded{nullptr};
  overloaded.feed(events[0]);
  overloaded.feed(events[1]);
  overloaded.feed(fakellm::messages_error_event("overloaded_error", "Overloaded"));
  auto r = overloaded.finish(llm_purpose::chat);
  BOOST_TEST(r.kind == llm_error_kind::server_error);
  BOOST_TEST(r.detail.find("overloaded_error") != std::string::npos);

  messages_sse_answer broken{nullptr};
  broken.feed("event: content_block_start\ndata: {\"type\": \n\n");
  BOOST_TEST(broken.finish(llm_purpose::chat).kind == llm_error_kind::malformed);
}

// ---------------------------------------------------------------- outcomes

BOOST_AUTO_TEST_CASE(anthropic_error_answers_become_mnemes_error_codes_without_the_key) {
  http_outcome out;
  out.status = 529;
  out.body = fakellm::messages_error_body("overloaded_error", "Overloaded");
  auto r = read_http_outcome(out, llm_purpose::chat, "", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(!r);
  BOOST_TEST(errc_of(r.error()) == errc::llm_server_error);
  BOOST_TEST(render_error(r.error()).find("HTTP 529") != std::string::npos);

  out.status = 401;
  out.body = fakellm::messages_error_body("authentication_error", "invalid x-api-key sk-ant-1");
  r = read_http_outcome(out, llm_purpose::chat, "sk-ant-1", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(!r);
  BOOST_TEST(errc_of(r.error()) == errc::llm_auth);
  BOOST_TEST(render_error(r.error()).find("sk-ant-1") == std::string::npos);

  out.status = 400;
  out.body = fakellm::messages_error_body("invalid_request_error",
                                          "prompt is too long: 300000 tokens > 200000 maximum");
  r = read_http_outcome(out, llm_purpose::summary, "", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(!r);
  BOOST_TEST(errc_of(r.error()) == errc::llm_context_overflow);

  out.status = 200; // an error object in a 2xx body is still a failure
  out.body = fakellm::messages_error_body("api_error", "Internal server error");
  r = read_http_outcome(out, llm_purpose::chat, "", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(!r);
  BOOST_TEST(errc_of(r.error()) == errc::llm_server_error);

  out.body = fakellm::messages_body(a_completion(false));
  r = read_http_outcome(out, llm_purpose::chat, "", nullptr, llm_api::anthropic);
  BOOST_REQUIRE(r);
  BOOST_TEST(r->content == a_completion(false).content);
}

BOOST_AUTO_TEST_SUITE_END()
