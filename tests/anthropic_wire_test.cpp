// Table tests of the Anthropic door's wire codec
// (apps/common/api/doors/anthropic_messages/anthropic_wire.hpp): Messages bodies into
// session messages, tools and sampling fields in the upstream's form; refusals naming the
// field or block type; fields a stock client sends accepted and named as ignored; the
// answer `message`, its tool_use input in the model's key order, and the stream events.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/api/doors/anthropic_messages/anthropic_wire.hpp"
#include "apps/common/api/http_status.hpp"
#include "policies/tool_loop.hpp"

BOOST_AUTO_TEST_SUITE(anthropic_wire_test)

using namespace mneme;
using namespace mneme::api;
using json = nlohmann::json;

namespace {

anthropic_request decoded(const std::string& body,
                          anthropic_body kind = anthropic_body::messages) {
  auto r = decode_anthropic_request(body, kind);
  if (!r)
    BOOST_FAIL("refused: " + to_string(r.error()));
  return std::move(*r);
}

std::string refusal_of(const std::string& body, anthropic_body kind = anthropic_body::messages) {
  auto r = decode_anthropic_request(body, kind);
  BOOST_REQUIRE_MESSAGE(!r, "accepted: " + body);
  return error_message_of(r.error());
}

} // namespace

BOOST_AUTO_TEST_CASE(system_text_blocks_and_string_content_become_session_messages) {
  auto r = decoded(R"({"model":"claude-x","max_tokens":100,
    "system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}},
              {"type":"text","text":"Answer in English."}],
    "messages":[{"role":"user","content":"hi"},
                {"role":"assistant","content":[{"type":"text","text":"hello"}]},
                {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]})");
  BOOST_REQUIRE(r.messages.size() == 4u);
  BOOST_TEST((r.messages[0].role == msg_role::system));
  BOOST_TEST(r.messages[0].content == "You are terse.\nAnswer in English.");
  BOOST_TEST((r.messages[1].role == msg_role::user));
  BOOST_TEST(r.messages[1].content == "hi");
  BOOST_TEST((r.messages[2].role == msg_role::assistant));
  BOOST_TEST(r.messages[2].content == "hello");
  BOOST_TEST(r.messages[3].content == "a\nb");
  BOOST_TEST(r.model == "claude-x");
  BOOST_TEST(r.turn.options.has_max_tokens);
  BOOST_TEST(r.turn.options.max_tokens == 100);
  BOOST_TEST(r.ignored.empty());
  BOOST_TEST(!r.stream);
}

BOOST_AUTO_TEST_CASE(tool_use_and_tool_result_blocks_become_calls_and_tool_rows) {
  auto r = decoded(R"({"model":"m","max_tokens":5,"messages":[
    {"role":"user","content":"weather?"},
    {"role":"assistant","content":[{"type":"text","text":"Let me look."},
      {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"zeta":1,"city":"Oslo"}},
      {"type":"tool_use","id":"toolu_2","name":"now","input":{}}]},
    {"role":"user","content":[
      {"type":"tool_result","tool_use_id":"toolu_1","content":"cold"},
      {"type":"tool_result","tool_use_id":"toolu_2","is_error":true,
       "content":[{"type":"text","text":"clock broken"}]},
      {"type":"text","text":"and tomorrow?"}]}]})");
  BOOST_REQUIRE(r.messages.size() == 5u);
  const auto& call = r.messages[1];
  BOOST_TEST(call.content == "Let me look.");
  BOOST_REQUIRE(call.tool_calls.size() == 2u);
  BOOST_TEST(call.tool_calls[0].id == "toolu_1");
  BOOST_TEST(call.tool_calls[0].name == "get_weather");
  BOOST_TEST(call.tool_calls[0].arguments == R"({"zeta":1,"city":"Oslo"})"); // the client's order
  BOOST_TEST(call.tool_calls[1].arguments == "{}");
  BOOST_TEST((r.messages[2].role == msg_role::tool));
  BOOST_TEST(r.messages[2].tool_call_id == "toolu_1");
  BOOST_TEST(r.messages[2].content == "cold");
  BOOST_TEST(r.messages[3].tool_call_id == "toolu_2");
  BOOST_TEST(r.messages[3].content == std::string{tool_error_prefix} + "clock broken");
  BOOST_TEST((r.messages[4].role == msg_role::user));
  BOOST_TEST(r.messages[4].content == "and tomorrow?");
}

BOOST_AUTO_TEST_CASE(a_user_message_of_tool_results_alone_is_only_tool_rows) {
  auto r = decoded(R"({"model":"m","max_tokens":5,"messages":[
    {"role":"user","content":"go"},
    {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"a":"b"}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]})");
  BOOST_REQUIRE(r.messages.size() == 3u);
  BOOST_TEST(r.messages[1].content.empty());
  BOOST_TEST((r.messages[2].role == msg_role::tool));
  BOOST_TEST(r.messages[2].content.empty());
}

BOOST_AUTO_TEST_CASE(tools_choice_and_sampling_fields_take_the_upstreams_form) {
  auto r = decoded(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"x"}],
    "tools":[{"name":"get_weather","description":"Weather of a city",
              "input_schema":{"type":"object","properties":{"city":{"type":"string"}}},
              "cache_control":{"type":"ephemeral"}},
             {"type":"web_search_20250305","name":"web_search"}],
    "tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true},
    "stop_sequences":["END","STOP"],"temperature":0.5,"top_p":0.9,"top_k":40,
    "metadata":{"user_id":"u-123"}})");
  BOOST_TEST(r.turn.set_tools);
  auto tools = json::parse(r.turn.tools_json);
  BOOST_REQUIRE(tools.size() == 1u);
  BOOST_TEST(tools[0]["type"] == "function");
  BOOST_TEST(tools[0]["function"]["name"] == "get_weather");
  BOOST_TEST(tools[0]["function"]["description"] == "Weather of a city");
  BOOST_TEST(tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string");
  BOOST_TEST(r.ignored == std::vector<std::string>{"tools[1]:web_search_20250305"});
  BOOST_TEST(r.turn.options.has_temperature);
  BOOST_TEST(r.turn.options.temperature == 0.5);
  auto extra = json::parse(r.turn.options.extra_json);
  BOOST_TEST(extra["tool_choice"] == json::parse(R"({"type":"function","function":{"name":"get_weather"}})"));
  BOOST_TEST(extra["parallel_tool_calls"] == false);
  BOOST_TEST(extra["stop"] == json::parse(R"(["END","STOP"])"));
  BOOST_TEST(extra["top_p"] == 0.9);
  BOOST_TEST(extra["top_k"] == 40);
  BOOST_TEST(extra["user"] == "u-123");
}

BOOST_AUTO_TEST_CASE(every_tool_choice_type_maps_to_the_upstreams) {
  struct row {
    const char* choice;
    json want;
  };
  const row rows[] = {
    {R"({"type":"auto"})", "auto"},
    {R"({"type":"any"})", "required"},
    {R"({"type":"none"})", "none"},
  };
  for (const auto& x : rows) {
    auto r = decoded(std::string{R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":)"}
                     + x.choice + "}");
    BOOST_TEST(json::parse(r.turn.options.extra_json)["tool_choice"] == x.want);
  }
}

BOOST_AUTO_TEST_CASE(fields_a_stock_client_sends_are_accepted_and_named_as_ignored) {
  auto r = decoded(R"({"model":"m","max_tokens":5,"stream":true,
    "messages":[{"role":"user","content":"x"}],
    "thinking":{"type":"enabled","budget_tokens":1024},
    "context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},
    "output_config":{"effort":"high"},"service_tier":"auto"})");
  BOOST_TEST(r.stream);
  BOOST_TEST(r.ignored == (std::vector<std::string>{"thinking", "context_management",
                                                    "output_config", "service_tier"}));
}

BOOST_AUTO_TEST_CASE(for_a_messages_api_upstream_unused_fields_and_client_headers_are_passed_on) {
  auto r = decode_anthropic_request(R"({"model":"m","max_tokens":5,"top_k":3,
    "messages":[{"role":"user","content":"x"}],
    "thinking":{"type":"enabled","budget_tokens":1024},
    "context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},
    "output_config":{"effort":"high"}})", anthropic_body::messages, true);
  BOOST_REQUIRE_MESSAGE(r, "refused: " + (r ? std::string{} : to_string(r.error())));
  BOOST_TEST(r->ignored == std::vector<std::string>{"thinking"}); // never passed on
  BOOST_TEST(r->passthrough.size() == 2u);
  add_upstream_passthrough(*r, "2023-06-01", "context-management-2025-06-27");
  auto extra = json::parse(r->turn.options.extra_json);
  BOOST_TEST(extra["top_k"] == 3); // mapped fields stay where they were
  const auto& pass = extra["x-mneme-anthropic"];
  BOOST_TEST(!pass["fields"].contains("thinking"));
  BOOST_TEST(pass["fields"]["output_config"]["effort"] == "high");
  BOOST_TEST(pass["fields"].contains("context_management"));
  BOOST_TEST(pass["headers"] == json({{"anthropic-version", "2023-06-01"},
                                      {"anthropic-beta", "context-management-2025-06-27"}}));
  // Nothing to pass: extra_json is left alone.
  auto plain = decode_anthropic_request(R"({"model":"m","max_tokens":5,
    "messages":[{"role":"user","content":"x"}]})", anthropic_body::messages, true);
  BOOST_REQUIRE(plain);
  add_upstream_passthrough(*plain, "", "");
  BOOST_TEST(plain->turn.options.extra_json.empty());
}

BOOST_AUTO_TEST_CASE(count_tokens_needs_no_max_tokens_and_never_streams) {
  auto r = decoded(R"({"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]})",
                   anthropic_body::count_tokens);
  BOOST_TEST(!r.turn.options.has_max_tokens);
  BOOST_TEST(!r.stream);
  BOOST_TEST(refusal_of(R"({"model":"m","messages":[{"role":"user","content":"x"}]})")
               .find("missing field 'max_tokens'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_bodies_are_refused_naming_the_field_or_block_type) {
  struct row {
    const char* body;
    const char* names;
  };
  const row rows[] = {
    {R"([1])", "must be a JSON object"},
    {R"({"max_tokens":5,"messages":[{"role":"user","content":"x"}]})", "missing field 'model'"},
    {R"({"model":"m","max_tokens":5})", "missing field 'messages'"},
    {R"({"model":"m","max_tokens":5,"messages":[]})", "field 'messages' is empty"},
    {R"({"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]})",
     "field 'max_tokens' must be 1 or more"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]})",
     "field 'messages[0].role': unknown role 'system'"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[
       {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}]})",
     "field 'messages[0].content[0].type': content blocks of type \"image\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"thinking","thinking":"hm","signature":"s"}]}]})",
     "content blocks of type \"thinking\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"document","source":{}}]}]})",
     "content blocks of type \"document\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"search_result","source":"s","title":"t","content":[]}]}]})",
     "content blocks of type \"search_result\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[
       {"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]})",
     "content blocks of type \"server_tool_use\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"brand_new","x":1}]}]})",
     "content blocks of type \"brand_new\""},
    {R"({"model":"m","max_tokens":5,"system":[{"type":"image","source":{}}],
       "messages":[{"role":"user","content":"x"}]})",
     "field 'system[0].type': content blocks of type \"image\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{}}]}]}]})",
     "field 'messages[0].content[0].content[0].type': content blocks of type \"image\""},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
       {"type":"tool_use","id":"t","name":"f","input":{}}]}]})",
     "content blocks of type \"tool_use\" are not supported in a user message"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[
       {"type":"tool_use","id":"t","name":"f","input":[1]}]}]})",
     "field 'messages[0].content[0].input' must be an object"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],
       "tools":[{"name":"f"}]})", "missing field 'tools[0].input_schema'"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],
       "tool_choice":{"type":"sometimes"}})", "field 'tool_choice.type'"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],
       "temperature":1.5})", "field 'temperature' must be between 0 and 1"},
    {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],
       "stop_sequences":"END"})", "field 'stop_sequences' must be an array of strings"},
  };
  for (const auto& x : rows) {
    BOOST_TEST_CONTEXT(x.body) {
      auto why = refusal_of(x.body);
      BOOST_TEST(why.find(x.names) != std::string::npos, why);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_openai_upstream_gets_user_images_as_block_lines_and_no_thinking) {
  auto image = R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}})";
  auto r = decoded(std::string{R"({"model":"m","max_tokens":5,"messages":[
    {"role":"user","content":[{"type":"text","text":"what is this?"},)"} + image + R"(]},
    {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},
      {"type":"redacted_thinking","data":"zz"},{"type":"text","text":"a cat"}]},
    {"role":"user","content":"thanks"}]})");
  BOOST_REQUIRE(r.messages.size() == 3u);
  BOOST_TEST(r.messages[0].content == std::string{"what is this?\n[image] "} + image);
  BOOST_TEST(r.messages[1].content == "a cat");
  BOOST_TEST(r.ignored == (std::vector<std::string>{"messages[1].content[0]:thinking",
                                                    "messages[1].content[1]:redacted_thinking"}));
}

BOOST_AUTO_TEST_CASE(a_messages_api_upstream_gets_every_block_kept_verbatim_in_its_place) {
  std::string body = R"({"model":"m","max_tokens":5,"messages":[
    {"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"memo"}},
      {"type":"text","text":"summarize"},{"type":"brand_new","x":{"y":[1,2]}}]},
    {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},
      {"type":"server_tool_use","id":"srv","name":"web_search","input":{"query":"q"}},
      {"type":"web_search_tool_result","tool_use_id":"srv","content":[]},
      {"type":"tool_use","id":"t1","name":"f","input":{}}]},
    {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[
      {"type":"text","text":"found"},{"type":"search_result","source":"s","title":"t",
       "content":[{"type":"text","text":"x"}]}]}]}]})";
  auto r = decode_anthropic_request(body, anthropic_body::messages, true);
  BOOST_REQUIRE_MESSAGE(r, "refused: " + (r ? std::string{} : to_string(r.error())));
  BOOST_REQUIRE(r->messages.size() == 3u);
  BOOST_TEST(r->messages[0].content
             == R"([document] {"type":"document","source":{"type":"text","media_type":"text/plain","data":"memo"}})"
                "\nsummarize\n"
                R"([brand_new] {"type":"brand_new","x":{"y":[1,2]}})");
  BOOST_TEST(r->messages[1].content
             == R"([thinking] {"type":"thinking","thinking":"hm","signature":"s"})"
                "\n"
                R"([server_tool_use] {"type":"server_tool_use","id":"srv","name":"web_search","input":{"query":"q"}})"
                "\n"
                R"([web_search_tool_result] {"type":"web_search_tool_result","tool_use_id":"srv","content":[]})");
  BOOST_REQUIRE(r->messages[1].tool_calls.size() == 1u);
  BOOST_TEST(r->messages[2].role == msg_role::tool);
  BOOST_TEST(r->messages[2].content
             == "found\n" R"([search_result] {"type":"search_result","source":"s","title":"t","content":[{"type":"text","text":"x"}]})");
  BOOST_TEST(r->ignored.empty());
  // The system prompt takes text alone whatever the upstream.
  auto sys = decode_anthropic_request(
    R"({"model":"m","max_tokens":5,"system":[{"type":"image","source":{}}],"messages":[{"role":"user","content":"x"}]})",
    anthropic_body::messages, true);
  BOOST_TEST(!sys);
}

BOOST_AUTO_TEST_CASE(an_answer_is_a_message_with_text_and_tool_use_blocks) {
  anthropic_answer a;
  a.id = "msg_1";
  a.model = "fake-chat";
  a.text = "Looking.";
  a.tool_calls = {{"call_1", "get_weather", R"({ "zeta": 1, "city": "Oslo" })"},
                  {"call_2", "now", ""}};
  a.stop_reason = "tool_use";
  a.usage = {12, 7};
  auto m = to_anthropic_message(a);
  BOOST_TEST(m["id"] == "msg_1");
  BOOST_TEST(m["type"] == "message");
  BOOST_TEST(m["role"] == "assistant");
  BOOST_TEST(m["stop_reason"] == "tool_use");
  BOOST_TEST(m["stop_sequence"].is_null());
  BOOST_TEST(m["usage"]["input_tokens"] == 12);
  BOOST_TEST(m["usage"]["output_tokens"] == 7);
  BOOST_REQUIRE(m["content"].size() == 3u);
  BOOST_TEST(m["content"][0]["type"] == "text");
  BOOST_TEST(m["content"][1]["type"] == "tool_use");
  BOOST_TEST(m["content"][1]["id"] == "call_1");
  BOOST_TEST(m["content"][1]["input"].dump() == R"({"zeta":1,"city":"Oslo"})"); // model's order
  BOOST_TEST(m["content"][2]["input"].dump() == "{}");
  // A tool-only answer has no text block; an empty answer one empty text block.
  a.text.clear();
  BOOST_TEST(to_anthropic_message(a)["content"].size() == 2u);
  a.tool_calls.clear();
  BOOST_TEST(to_anthropic_message(a)["content"].dump() == R"([{"type":"text","text":""}])");
}

BOOST_AUTO_TEST_CASE(an_answer_that_stopped_on_a_stop_sequence_names_it) {
  anthropic_answer a;
  a.id = "msg_3";
  a.text = "Counting: 1, 2";
  a.stop_reason = "stop_sequence";
  a.stop_sequence = ", 3";
  auto m = to_anthropic_message(a);
  BOOST_TEST(m["stop_reason"] == "stop_sequence");
  BOOST_TEST(m["stop_sequence"] == ", 3");
  a.stop_reason = "end_turn"; // any other stop_reason: null, whatever the field holds
  BOOST_TEST(to_anthropic_message(a)["stop_sequence"].is_null());
}

BOOST_AUTO_TEST_CASE(stream_events_name_their_type_and_errors_take_anthropics_shape) {
  BOOST_TEST(anthropic_sse({{"type", "ping"}}) == "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  anthropic_answer head;
  head.id = "msg_2";
  head.model = "m";
  auto start = message_start_event(head);
  BOOST_TEST(start["type"] == "message_start");
  BOOST_TEST(start["message"]["content"].empty());
  BOOST_TEST(start["message"]["stop_reason"].is_null());
  auto delta = message_delta_event("end_turn", "", 9);
  BOOST_TEST(delta["delta"]["stop_reason"] == "end_turn");
  BOOST_TEST(delta["delta"]["stop_sequence"].is_null());
  BOOST_TEST(delta["usage"]["output_tokens"] == 9);
  auto stopped = message_delta_event("stop_sequence", "END", 4);
  BOOST_TEST(stopped["delta"]["stop_reason"] == "stop_sequence");
  BOOST_TEST(stopped["delta"]["stop_sequence"] == "END");
  auto err = anthropic_error_json("overloaded_error", "busy");
  BOOST_TEST(err.dump() == R"({"error":{"message":"busy","type":"overloaded_error"},"type":"error"})");
}

BOOST_AUTO_TEST_SUITE_END() // anthropic_wire_test
