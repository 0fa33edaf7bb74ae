// Table tests of the Responses door's wire codec
// (apps/common/api/doors/openai_responses/responses_wire.hpp): input items into session
// messages, the request's tools and sampling fields into the chat shape mneme's turns
// carry, refusals naming the field, the `response` object built from an answer, and the
// stream's events of a stopped response (responses_stream.hpp) over a stand-in
// connection.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/api/doors/openai_responses/responses_stream.hpp"
#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "messages/errc.hpp"
#include "tests/sse_events.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(responses_wire_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

std::vector<message> items_of(const char* text) {
  auto r = api::decode_response_items(json::parse(text), "input");
  BOOST_REQUIRE_MESSAGE(r, testing::err_of(r));
  return *r;
}

// A connection that keeps what a stream wrote; `gone` is its client having left.
struct kept_stream final : api::event_stream {
  std::string bytes;
  bool gone = false;
  bool ended = false;
  bool push(std::string b) override {
    if (gone || ended)
      return false;
    bytes += b;
    return true;
  }
  void end() override { ended = true; }
  bool open() const override { return !gone && !ended; }
};
struct kept_sink final : api::reply_sink {
  std::shared_ptr<kept_stream> stream = std::make_shared<kept_stream>();
  void deliver(api::http_response) override {}
  std::shared_ptr<api::event_stream> open_stream(int, std::string, api::header_list) override {
    return stream;
  }
};

api::responses_answer head_of(const char* id) {
  api::responses_answer h;
  h.id = id;
  h.created_at = 1;
  h.model = "m";
  return h;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_stopped_stream_ends_every_item_it_began_incomplete_then_response_incomplete) {
  auto sink = std::make_shared<kept_sink>();
  auto relay = std::make_shared<api::responses_event_relay>(api::http_reply{sink},
                                                           head_of("resp_ab"),
                                                           std::vector<std::string>{"memory"});
  answer_stream& s = *relay;
  s.text("Hel");
  s.text("lo");
  s.tool_call(0, "call_1", "get_weather", "{\"ci");
  s.tool_call(1, "call_2", "memory", "{}"); // a built-in call: never the client's
  s.tool_call(0, "", "", "ty\":");
  auto output = relay->stopped_output();
  BOOST_TEST(relay->cancelled());
  s.text(" more"); // a piece after the stop is not relayed
  s.tool_call(0, "", "", "\"Oslo\"}");
  const json want = json::parse(R"([
    {"type":"message","id":"msg_ab","status":"incomplete","role":"assistant",
     "content":[{"type":"output_text","text":"Hello","annotations":[]}]},
    {"type":"function_call","id":"fc_ab_0","call_id":"call_1","name":"get_weather",
     "arguments":"{\"city\":","status":"incomplete"}])");
  BOOST_TEST(output == want, output.dump());
  BOOST_TEST(relay->stopped_output() == want); // the same from then on
  auto cancelled = head_of("resp_ab");
  cancelled.status = "cancelled";
  relay->finish(cancelled);
  BOOST_TEST(sink->stream->ended);
  auto events = test::sse_data_events(sink->stream->bytes);
  BOOST_REQUIRE(events.size() >= 3u);
  std::vector<std::string> types;
  for (const auto& e : events)
    types.push_back(e["type"].get<std::string>());
  const std::vector<std::string> want_types{
    "response.created", "response.in_progress", "response.output_item.added",
    "response.content_part.added", "response.output_text.delta", "response.output_text.delta",
    "response.output_item.added", "response.function_call_arguments.delta",
    "response.function_call_arguments.delta", "response.output_text.done",
    "response.content_part.done", "response.output_item.done",
    "response.function_call_arguments.done", "response.output_item.done",
    "response.incomplete"};
  BOOST_TEST(types == want_types, boost::test_tools::per_element());
  // every item added is done, at its output index, as stopped_output() gave it
  std::vector<json> done;
  for (const auto& e : events)
    if (e["type"] == "response.output_item.done") {
      BOOST_TEST(e["item"] == want[e["output_index"].get<size_t>()]);
      done.push_back(e["item"]);
    }
  BOOST_TEST(done.size() == 2u);
  for (size_t i = 0; i < events.size(); ++i)
    BOOST_TEST(events[i]["sequence_number"] == static_cast<int64_t>(i));
  const auto& last = events.back();
  BOOST_TEST(last["response"]["status"] == "cancelled");
  BOOST_TEST(last["response"]["output"] == want);
  BOOST_TEST(events[9]["text"] == "Hello");
  BOOST_TEST(events[12]["arguments"] == "{\"city\":");
}

BOOST_AUTO_TEST_CASE(a_stream_whose_client_left_stops_its_answer) {
  auto sink = std::make_shared<kept_sink>();
  auto relay = std::make_shared<api::responses_event_relay>(api::http_reply{sink},
                                                           head_of("resp_cd"),
                                                           std::vector<std::string>{});
  answer_stream& s = *relay;
  s.text("a");
  BOOST_TEST(!relay->cancelled());
  sink->stream->gone = true; // the client closed the connection
  BOOST_TEST(!relay->cancelled()); // seen at the next event
  s.text("b");
  BOOST_TEST(relay->cancelled()); // the turn's model call is asked to stop
  auto output = relay->stopped_output();
  BOOST_REQUIRE(output.size() == 1u);
  BOOST_TEST(output[0]["content"][0]["text"] == "ab"); // what was sent before it was seen
  BOOST_TEST(output[0]["status"] == "incomplete");
  // A stream nothing stopped ends completed, its items completed.
  auto sink2 = std::make_shared<kept_sink>();
  auto whole = std::make_shared<api::responses_event_relay>(api::http_reply{sink2},
                                                           head_of("resp_ef"),
                                                           std::vector<std::string>{});
  static_cast<answer_stream&>(*whole).text("done");
  auto a = head_of("resp_ef");
  a.content = "done";
  whole->finish(a);
  BOOST_TEST(!whole->cancelled());
  auto events = test::sse_data_events(sink2->stream->bytes);
  BOOST_REQUIRE(!events.empty());
  BOOST_TEST(events.back()["type"] == "response.completed");
  BOOST_TEST(events.back()["response"]["output"][0]["status"] == "completed");
}

BOOST_AUTO_TEST_CASE(a_string_input_is_one_user_message) {
  auto m = items_of(R"("hello")");
  BOOST_REQUIRE(m.size() == 1u);
  BOOST_TEST((m[0].role == msg_role::user));
  BOOST_TEST(m[0].content == "hello");
}

BOOST_AUTO_TEST_CASE(items_become_the_messages_mneme_stores) {
  auto m = items_of(R"([
    {"role":"developer","content":"be brief"},
    {"type":"message","role":"user","content":[{"type":"input_text","text":"a"},
                                               {"type":"input_text","text":"b"}]},
    {"type":"message","id":"msg_1","status":"completed","role":"assistant",
     "content":[{"type":"output_text","text":"thinking","annotations":[]}]},
    {"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{}"},
    {"type":"function_call","call_id":"c2","name":"g","arguments":"{\"x\":1}"},
    {"type":"function_call_output","call_id":"c1","output":"r1"},
    {"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"r2"}]},
    {"type":"reasoning","id":"rs_1","summary":[]},
    {"type":"function_call","call_id":"c3","name":"h","arguments":""}
  ])");
  BOOST_REQUIRE(m.size() == 6u);
  BOOST_TEST((m[0].role == msg_role::system));
  BOOST_TEST(m[1].content == "ab");
  // The assistant's text and the calls after it are one answer.
  BOOST_TEST((m[2].role == msg_role::assistant));
  BOOST_TEST(m[2].content == "thinking");
  BOOST_REQUIRE(m[2].tool_calls.size() == 2u);
  BOOST_TEST(m[2].tool_calls[1].arguments == "{\"x\":1}");
  BOOST_TEST((m[3].role == msg_role::tool));
  BOOST_TEST(m[3].tool_call_id == "c1");
  BOOST_TEST(m[3].tool_name == "f");
  BOOST_TEST(m[4].content == "r2");
  BOOST_TEST(m[4].tool_name == "g");
  // A call after tool results opens an assistant message without text.
  BOOST_TEST((m[5].role == msg_role::assistant));
  BOOST_TEST(m[5].content.empty());
  BOOST_TEST(m[5].tool_calls.size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_requests_are_refused_naming_the_field) {
  const std::vector<std::pair<std::string, std::string>> refused{
    {R"({"model":"m"})", "missing field 'input'"},
    {R"({"input":7})", "field 'input' must be a string or an array"},
    {R"({"input":[]})", "field 'input' holds no message"},
    {R"({"input":[{"type":"item_reference","id":"x"}]})", "field 'input[0].type' is \"item_reference\""},
    {R"({"input":[{"role":"robot","content":"x"}]})", "field 'input[0].role': unknown role"},
    {R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"u"}]}]})",
     "field 'input[0].content[0].type' is \"input_image\""},
    {R"({"input":[{"type":"function_call","name":"f"}]})", "missing field 'input[0].call_id'"},
    {R"({"input":[{"type":"function_call_output","call_id":"c"}]})",
     "missing field 'input[0].output'"},
    {R"({"input":"x","tools":[{"type":"web_search"}]})",
     "field 'tools[0].type' is \"web_search\": only function tools"},
    {R"({"input":"x","tools":[{"type":"function"}]})", "tools[0]"},
    {R"({"input":"x","tool_choice":{"type":"file_search"}})", "field 'tool_choice.type'"},
    {R"({"input":"x","max_output_tokens":0})", "field 'max_output_tokens'"},
    {R"({"input":"x","temperature":"hot"})", "field 'temperature'"},
    {R"({"input":"x","store":"yes"})", "field 'store' must be a boolean"},
    {R"({"input":"x","background":true})", "field 'background'"},
    {R"({"input":"x","metadata":[]})", "field 'metadata' must be an object"},
    {R"({"input":"x","conversation":3})", "field 'conversation'"},
    {R"({"input":"x","text":{"format":{"type":"xml"}}})", "field 'text.format.type'"},
  };
  for (const auto& [body, expected] : refused) {
    auto r = api::decode_responses_request(body);
    BOOST_REQUIRE_MESSAGE(!r, body);
    BOOST_TEST((r.error() == errc::bad_request));
    BOOST_TEST(render_error(r.error()).find(expected) != std::string::npos,
               render_error(r.error()) << " should hold " << expected);
  }
}

BOOST_AUTO_TEST_CASE(function_tools_and_sampling_fields_reach_the_turn_in_chat_shape) {
  auto r = api::decode_responses_request(R"({
    "model":"mneme","input":"hi","instructions":"be kind","store":false,
    "previous_response_id":"resp_1","prompt_cache_key":"k","user":"ann",
    "conversation":{"id":"conv_1"},"include":["reasoning.encrypted_content"],
    "tools":[{"type":"function","name":"get_weather","description":"d","strict":true,
              "parameters":{"type":"object","properties":{}}}],
    "tool_choice":{"type":"function","name":"get_weather"},"parallel_tool_calls":false,
    "max_output_tokens":64,"temperature":0.5,"top_p":0.9,"metadata":{"a":"b"},
    "text":{"format":{"type":"json_schema","name":"s","schema":{"type":"object"}}}})");
  BOOST_REQUIRE_MESSAGE(r, testing::err_of(r));
  BOOST_TEST(r->instructions == "be kind");
  BOOST_TEST(!r->store);
  BOOST_TEST(r->previous_response_id == "resp_1");
  BOOST_TEST(r->prompt_cache_key == "k");
  BOOST_TEST(r->conversation == "conv_1");
  BOOST_TEST(r->user == "ann");
  BOOST_TEST(r->turn.set_tools);
  auto tools = json::parse(r->turn.tools_json);
  BOOST_TEST(tools[0]["function"]["name"] == "get_weather");
  BOOST_TEST(tools[0]["function"]["strict"] == true);
  BOOST_TEST(r->turn.options.has_max_tokens);
  BOOST_TEST(r->turn.options.max_tokens == 64);
  BOOST_TEST(r->turn.options.temperature == 0.5);
  auto extra = json::parse(r->turn.options.extra_json);
  BOOST_TEST(extra["tool_choice"]["function"]["name"] == "get_weather");
  BOOST_TEST(extra["parallel_tool_calls"] == false);
  BOOST_TEST(extra["top_p"] == 0.9);
  BOOST_TEST(extra["response_format"]["json_schema"]["name"] == "s");
  BOOST_TEST(r->echo["tools"][0]["name"] == "get_weather");
  BOOST_TEST(r->echo["metadata"]["a"] == "b");
  BOOST_TEST(r->echo["max_output_tokens"] == 64);
}

BOOST_AUTO_TEST_CASE(a_response_object_holds_the_message_then_the_calls) {
  api::responses_answer a;
  a.id = "resp_abc";
  a.created_at = 1700000000;
  a.model = "fake-chat";
  a.content = "calling";
  a.tool_calls = {{"call_1", "get_weather", "{\"city\":\"Oslo\"}"}};
  a.usage = {10, 4};
  a.previous_response_id = "resp_prev";
  a.echo = {{"store", true}};
  auto r = api::to_response_object(a);
  BOOST_TEST(r["object"] == "response");
  BOOST_TEST(r["status"] == "completed");
  BOOST_TEST(r["store"] == true);
  BOOST_TEST(r["previous_response_id"] == "resp_prev");
  BOOST_TEST(r["conversation"].is_null());
  BOOST_TEST(r["usage"]["total_tokens"] == 14);
  BOOST_REQUIRE(r["output"].size() == 2u);
  BOOST_TEST(r["output"][0]["type"] == "message");
  BOOST_TEST(r["output"][0]["id"] == "msg_abc");
  BOOST_TEST(r["output"][0]["content"][0]["type"] == "output_text");
  BOOST_TEST(r["output"][0]["content"][0]["text"] == "calling");
  BOOST_TEST(r["output"][1]["type"] == "function_call");
  BOOST_TEST(r["output"][1]["call_id"] == "call_1");
  BOOST_TEST(r["output"][1]["id"] == "fc_abc_0");
  // Calls alone: no message item; an answer of length: incomplete.
  a.content.clear();
  a.status = "incomplete";
  a.incomplete_by_length = true;
  r = api::to_response_object(a);
  BOOST_TEST(r["output"].size() == 1u);
  BOOST_TEST(r["incomplete_details"]["reason"] == "max_output_tokens");
  // Sent back as input, the output is the one stored assistant row again.
  a.content = "calling";
  auto back = api::decode_response_items(api::response_output(a), "input");
  BOOST_REQUIRE(back);
  BOOST_REQUIRE(back->size() == 1u);
  BOOST_TEST((back->front().role == msg_role::assistant));
  BOOST_TEST(back->front().content == "calling");
  BOOST_TEST((back->front().tool_calls == a.tool_calls));
}

BOOST_AUTO_TEST_CASE(the_output_items_sent_back_name_the_response_they_came_from) {
  const std::vector<std::pair<std::string, std::string>> table{
    {R"("text")", ""},
    {R"([{"role":"user","content":"a"}])", ""},
    {R"([{"type":"message","id":"msg_abc","role":"assistant","content":"x"}])", "resp_abc"},
    {R"([{"type":"function_call","id":"fc_abc_1","call_id":"c","name":"f"},
         {"type":"function_call_output","call_id":"c","output":"o"}])", "resp_abc"},
    {R"([{"type":"message","id":"msg_old","role":"assistant","content":"x"},
         {"type":"function_call","id":"fc_new_0","call_id":"c","name":"f"}])", "resp_new"},
    {R"([{"type":"reasoning","id":"rs_1"},{"type":"message","id":"msg_","role":"user",
         "content":"x"}])", ""},
  };
  for (const auto& [input, want] : table)
    BOOST_TEST(api::referenced_response_id(json::parse(input)) == want, input);
  // What the door answers names its response.
  api::responses_answer a;
  a.id = "resp_f00d";
  a.tool_calls = {{"c", "f", "{}"}};
  BOOST_TEST(api::referenced_response_id(api::response_output(a)) == "resp_f00d");
}

BOOST_AUTO_TEST_SUITE_END() // responses_wire_test
