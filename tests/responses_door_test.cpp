// In-process tests of the Responses door
// (apps/common/api/doors/openai_responses/responses_door.hpp, issue 43) through the
// daemon's HTTP server against the fake LLM: the `response` object, the session named
// by a header or prompt_cache_key, a whole transcript resent with its instructions
// storing each message once, a function-tool loop, a branch rolled back with
// X-Mneme-Rebased, the stateless pass-through, and errors in OpenAI's shape.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/sse_events.hpp"

BOOST_AUTO_TEST_SUITE(responses_door_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct responses_fixture : test::http_api_fixture {
  struct reply {
    int status = 0;
    json body;
    std::string text;
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto i = headers.find(name);
      return i == headers.end() ? std::string{} : i->second;
    }
  };

  reply respond(const json& body, httplib::Headers headers = {}) {
    auto r = client->Post("/v1/responses", headers, body.dump(), "application/json");
    BOOST_REQUIRE_MESSAGE(r, "no HTTP answer: " + httplib::to_string(r.error()));
    reply a;
    a.status = r->status;
    a.text = r->body;
    a.headers = r->headers;
    if (r->get_header_value("Content-Type") == "application/json")
      a.body = json::parse(r->body);
    return a;
  }
  reply respond_on(const std::string& key, const json& body) {
    return respond(body, {{"session-id", key}});
  }

  static json user(const std::string& text) {
    return {{"type", "message"}, {"role", "user"}, {"content", text}};
  }
  static std::string text_of(const reply& a) {
    for (const auto& item : a.body["output"])
      if (item["type"] == "message")
        return item["content"][0]["text"].get<std::string>();
    return {};
  }

  // The events of a streamed answer, in order ("data: [DONE]" left out).
  static std::vector<json> events_of(const std::string& text) {
    return test::sse_data_events(text);
  }

  std::string session_of(const std::string& key) { return snapshot(key).record.id; }

  // The visible stored rows (no system, no summary), active or archived.
  std::vector<message> kept_rows(const std::string& sid) {
    std::vector<message> out;
    for (auto& m : all_rows(sid))
      if (m.state() != row_state::rolled_back && !m.is_summary && m.role != msg_role::system)
        out.push_back(m);
    return out;
  }

};

json weather_tool() {
  return json::parse(R"([{"type":"function","name":"get_weather","description":"weather",
    "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}])");
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(responses_door, responses_fixture)

BOOST_AUTO_TEST_CASE(a_named_session_answers_a_response_object_and_stores_each_message_once) {
  serve();
  json input = json::array({user("hello there")});
  for (int turn = 0; turn < 4; ++turn) {
    auto a = respond_on("rs-full", {{"model", "mneme"}, {"instructions", "Answer briefly."},
                                    {"input", input}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    BOOST_TEST(a.body["object"] == "response");
    BOOST_TEST(a.body["id"].get<std::string>().rfind("resp_", 0) == 0u);
    // the prefix and 128 bits from the kernel (32 hex digits)
    BOOST_TEST(a.body["id"].get<std::string>().size() == 5u + 32u);
    BOOST_TEST(a.body["id"].get<std::string>().find_first_not_of("0123456789abcdef", 5u)
               == std::string::npos);
    BOOST_TEST(a.body["status"] == "completed");
    BOOST_TEST(a.body["model"] == "fake-chat");
    BOOST_TEST(a.body["instructions"] == "Answer briefly.");
    BOOST_TEST(a.body["usage"]["input_tokens"].get<int64_t>() > 0);
    BOOST_TEST(a.header("X-Mneme-Session-Id") == session_of("rs-full"));
    BOOST_TEST(a.header("X-Mneme-Rebased").empty());
    BOOST_REQUIRE(!text_of(a).empty());
    for (const auto& item : a.body["output"])
      input.push_back(item); // the output items, resent as they came
    input.push_back(user("message " + std::to_string(turn)));
  }
  auto sid = session_of("rs-full");
  auto all = all_rows(sid);
  BOOST_TEST(all[1].content == "Answer briefly."); // after the daemon's own prompt
  auto rows = kept_rows(sid);
  BOOST_REQUIRE(rows.size() == input.size() - 1); // the last user message is not sent yet
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& item = input[i];
    auto text = item["content"].is_string() ? item["content"].get<std::string>()
                                            : item["content"][0]["text"].get<std::string>();
    BOOST_TEST(rows[i].content == text);
  }
  BOOST_TEST(metric("mneme_responses_requests_total{style=\"full_history\"}") == 4);
  BOOST_TEST(metric("mneme_responses_rebased_total") == 0);
}

BOOST_AUTO_TEST_CASE(a_function_tool_loop_returns_calls_and_continues_with_their_outputs) {
  fakellm::scenario s;
  s.plan.seed = 43;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  serve();
  set_scenario(s);
  json input = json::array({user("weather in Oslo?")});
  auto a = respond_on("rs-tools", {{"tools", weather_tool()}, {"input", input}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  json calls = json::array();
  for (const auto& item : a.body["output"]) {
    input.push_back(item);
    if (item["type"] == "function_call")
      calls.push_back(item);
  }
  BOOST_REQUIRE(!calls.empty());
  BOOST_TEST(calls[0]["name"] == "get_weather");
  BOOST_TEST(calls[0]["id"].get<std::string>().rfind("fc_", 0) == 0u);
  for (const auto& c : calls)
    input.push_back({{"type", "function_call_output"}, {"call_id", c["call_id"]},
                     {"output", "cold"}});
  auto b = respond_on("rs-tools", {{"tools", weather_tool()}, {"input", input}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(!text_of(b).empty());
  BOOST_TEST(b.header("X-Mneme-Rebased").empty());
  auto rows = kept_rows(session_of("rs-tools"));
  BOOST_REQUIRE(rows.size() == 2u + calls.size() + 1u); // user, calls, outputs, answer
  BOOST_TEST(rows[1].tool_calls.size() == calls.size());
  BOOST_TEST(rows[2].tool_call_id == calls[0]["call_id"].get<std::string>());
  BOOST_TEST(rows[2].tool_name == "get_weather");
}

BOOST_AUTO_TEST_CASE(an_edited_transcript_is_a_branch_rolled_back_with_the_rebase_header) {
  serve();
  json input = json::array({user("plan a trip to Oslo")});
  for (int turn = 0; turn < 2; ++turn) {
    auto a = respond_on("rs-branch", {{"input", input}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    for (const auto& item : a.body["output"])
      input.push_back(item);
    input.push_back(user("more " + std::to_string(turn)));
  }
  json edited = json::array({input[0], input[1], user("actually, Bergen")});
  auto b = respond_on("rs-branch", {{"input", edited}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Rebased") == "2");
  auto rows = kept_rows(session_of("rs-branch"));
  BOOST_REQUIRE(rows.size() == 4u);
  BOOST_TEST(rows[2].content == "actually, Bergen");
  BOOST_TEST(metric("mneme_responses_rebased_total") == 1);
}

BOOST_AUTO_TEST_CASE(headers_name_the_session_before_prompt_cache_key) {
  serve();
  auto a = respond({{"input", "one"}, {"prompt_cache_key", "rs-cache"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("X-Mneme-Session-Id") == session_of("rs-cache"));
  auto b = respond({{"input", "two"}, {"prompt_cache_key", "rs-cache-2"}},
                   {{"X-Mneme-Session", "rs-head"}, {"session_id", "rs-underscore"}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Session-Id") == session_of("rs-head"));
  auto c = respond({{"input", "three"}}, {{"session_id", "rs-underscore"}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.header("X-Mneme-Session-Id") == session_of("rs-underscore"));
}

BOOST_AUTO_TEST_CASE(without_a_session_and_store_false_the_request_passes_through) {
  serve();
  auto a = respond({{"input", "just once"}, {"store", false}, {"instructions", "Be brief."}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["object"] == "response");
  BOOST_TEST(!text_of(a).empty());
  BOOST_TEST(a.header("X-Mneme-Session-Id").empty());
  BOOST_TEST(get("/v1/sessions").body["sessions"].empty());
  BOOST_TEST(metric("mneme_responses_requests_total{style=\"stateless\"}") == 1);
}

BOOST_AUTO_TEST_CASE(errors_have_openai_shape_and_status) {
  serve();
  auto missing = respond_on("rs-err", {{"model", "mneme"}});
  BOOST_TEST(missing.status == 400);
  BOOST_TEST(missing.body["error"]["type"] == "invalid_request_error");
  BOOST_TEST(missing.body["error"]["param"] == "input");
  BOOST_TEST(missing.body["error"]["code"] == "bad_request");
  auto tool = respond_on("rs-err", {{"input", "x"}, {"tools", {{{"type", "web_search"}}}}});
  BOOST_TEST(tool.status == 400);
  BOOST_TEST(tool.body["error"]["param"] == "tools[0].type");
  BOOST_TEST(tool.body["error"]["message"].get<std::string>().find("web_search")
             != std::string::npos);
  auto last = respond_on("rs-err", {{"input", {user("x"), {{"role", "assistant"},
                                                           {"content", "y"}}}}});
  BOOST_TEST(last.status == 400);
  BOOST_TEST(last.body["error"]["param"] == "input");
  // Nothing of the refused requests was stored.
  BOOST_TEST(get("/v1/sessions").body["sessions"].empty());
  httplib::Client anonymous("127.0.0.1", port);
  auto wrong = anonymous.Get("/v1/responses");
  BOOST_REQUIRE(wrong);
  BOOST_TEST(wrong->status == 405);
  BOOST_TEST(json::parse(wrong->body)["error"]["type"] == "invalid_request_error");
}

BOOST_AUTO_TEST_CASE(an_upstream_rate_limit_passes_its_retry_after_on) {
  serve();
  auto r = rule(fakellm::fault_kind::rate_limit_429, fakellm::purpose_filter::chat, 1);
  r.retry_after = "35";
  faults({r});
  auto waited = respond_on("rs-wait", {{"input", "hello"}});
  BOOST_TEST(waited.status == 429);
  BOOST_TEST(waited.header("Retry-After") == "35");
  BOOST_TEST(respond_on("rs-wait", {{"input", "hello"}}).status == 200); // one fault only
}

BOOST_AUTO_TEST_CASE(a_chain_of_previous_response_ids_is_one_session_sending_only_what_is_new) {
  serve();
  auto a = respond({{"input", "first question"}, {"instructions", "Be brief."}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto first_id = a.body["id"].get<std::string>();
  // Nothing named: the chain's session is keyed by its first response's id.
  auto sid = session_of(first_id);
  BOOST_TEST(a.header("X-Mneme-Session-Id") == sid);
  auto prev = first_id;
  for (int turn = 0; turn < 3; ++turn) {
    auto b = respond({{"input", "question " + std::to_string(turn)},
                      {"previous_response_id", prev}});
    BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
    BOOST_TEST(b.body["previous_response_id"] == prev);
    BOOST_TEST(b.header("X-Mneme-Session-Id") == sid);
    BOOST_TEST(b.header("X-Mneme-Rebased").empty());
    prev = b.body["id"].get<std::string>();
  }
  auto rows = kept_rows(sid);
  BOOST_REQUIRE(rows.size() == 8u);
  BOOST_TEST(rows[0].content == "first question");
  BOOST_TEST(rows[6].content == "question 2");
  BOOST_TEST(all_rows(sid)[1].content == "Be brief.");
  BOOST_TEST(metric("mneme_responses_requests_total{style=\"stateful\"}") == 3);
  // The response is fetched again as it was answered.
  auto got = get("/v1/responses/" + prev);
  BOOST_REQUIRE_MESSAGE(got.status == 200, got.text);
  BOOST_TEST(got.body["id"] == prev);
  BOOST_TEST(got.body["output"][0]["content"][0]["text"].get<std::string>() == rows[7].content);
}

BOOST_AUTO_TEST_CASE(a_tool_loop_continues_with_function_call_outputs_only) {
  fakellm::scenario s;
  s.plan.seed = 7;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 2;
  serve();
  set_scenario(s);
  auto a = respond({{"tools", weather_tool()}, {"input", "weather in Oslo and Bergen?"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto sid = session_of(a.body["id"].get<std::string>());
  auto last = a;
  int rounds = 0;
  for (; rounds < 6; ++rounds) {
    json outputs = json::array();
    for (const auto& item : last.body["output"])
      if (item["type"] == "function_call")
        outputs.push_back({{"type", "function_call_output"}, {"call_id", item["call_id"]},
                           {"output", "cold"}});
    if (outputs.empty())
      break;
    last = respond({{"tools", weather_tool()}, {"input", outputs},
                    {"previous_response_id", last.body["id"]}});
    BOOST_REQUIRE_MESSAGE(last.status == 200, last.text);
    BOOST_TEST(last.header("X-Mneme-Session-Id") == sid);
  }
  BOOST_TEST(rounds == 2);
  BOOST_TEST(!text_of(last).empty());
  auto rows = kept_rows(sid);
  BOOST_TEST(rows.back().content == text_of(last));
  for (const auto& m : rows)
    BOOST_TEST((m.state() == row_state::live));
}

BOOST_AUTO_TEST_CASE(a_whole_transcript_naming_no_session_continues_the_response_it_resends) {
  serve();
  json input = json::array({user("first")});
  auto a = respond({{"input", input}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto sid = session_of(a.body["id"].get<std::string>());
  for (const auto& item : a.body["output"])
    input.push_back(item);
  input.push_back(user("second"));
  auto b = respond({{"input", input}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Session-Id") == sid);
  BOOST_TEST(b.header("X-Mneme-Rebased").empty());
  BOOST_TEST(kept_rows(sid).size() == 4u);
  BOOST_TEST(metric("mneme_responses_requests_total{style=\"full_history\"}") == 2);
  // A transcript naming an unknown response opens a chain of its own.
  json foreign = json::array({user("elsewhere"), {{"type", "message"}, {"id", "msg_unknown"},
                                                  {"role", "assistant"}, {"content", "hi"}},
                              user("and here")});
  auto c = respond({{"input", foreign}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.header("X-Mneme-Session-Id") == session_of(c.body["id"].get<std::string>()));
  BOOST_TEST(kept_rows(session_of(c.body["id"].get<std::string>())).size() == 4u);
}

BOOST_AUTO_TEST_CASE(continuing_an_older_response_rolls_back_the_rows_after_it) {
  serve();
  auto a = respond({{"input", "trip to Oslo"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto b = respond({{"input", "by train"}, {"previous_response_id", a.body["id"]}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  auto c = respond({{"input", "in winter"}, {"previous_response_id", b.body["id"]}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  auto sid = session_of(a.body["id"].get<std::string>());
  BOOST_REQUIRE(kept_rows(sid).size() == 6u);
  auto branch = respond({{"input", "by plane"}, {"previous_response_id", a.body["id"]}});
  BOOST_REQUIRE_MESSAGE(branch.status == 200, branch.text);
  BOOST_TEST(branch.header("X-Mneme-Rebased") == "4");
  auto rows = kept_rows(sid);
  BOOST_REQUIRE(rows.size() == 4u);
  BOOST_TEST(rows[0].content == "trip to Oslo");
  BOOST_TEST(rows[2].content == "by plane");
  int64_t rolled_back = 0;
  for (const auto& m : all_rows(sid))
    rolled_back += m.state() == row_state::rolled_back ? 1 : 0;
  BOOST_TEST(rolled_back == 4); // kept, searchable as rolled back
  BOOST_TEST(metric("mneme_responses_branched_total") == 1);
  // The newest response of the branch continues without a rollback.
  auto on = respond({{"input", "thanks"}, {"previous_response_id", branch.body["id"]}});
  BOOST_REQUIRE_MESSAGE(on.status == 200, on.text);
  BOOST_TEST(on.header("X-Mneme-Rebased").empty());
  BOOST_TEST(kept_rows(sid).size() == 6u);
}

BOOST_AUTO_TEST_CASE(a_deleted_response_is_gone_for_the_api_and_its_rows_stay) {
  serve();
  auto a = respond({{"input", "remember this"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto id = a.body["id"].get<std::string>();
  auto sid = session_of(id);
  auto del = send("DELETE", "/v1/responses/" + id, "");
  BOOST_REQUIRE_MESSAGE(del.status == 200, del.text);
  BOOST_TEST(del.body["deleted"] == true);
  BOOST_TEST(del.body["id"] == id);
  auto got = get("/v1/responses/" + id);
  BOOST_TEST(got.status == 404);
  BOOST_TEST(got.body["error"]["type"] == "not_found_error");
  BOOST_TEST(send("DELETE", "/v1/responses/" + id, "").status == 404);
  auto on = respond({{"input", "and now?"}, {"previous_response_id", id}});
  BOOST_TEST(on.status == 400);
  BOOST_TEST(on.body["error"]["code"] == "previous_response_not_found");
  BOOST_TEST(on.body["error"]["param"] == "previous_response_id");
  BOOST_TEST(kept_rows(sid).size() == 2u);
  // store: false keeps the transcript of a named session but no response to fetch.
  auto unstored = respond_on("rs-unstored", {{"input", "x"}, {"store", false}});
  BOOST_REQUIRE_MESSAGE(unstored.status == 200, unstored.text);
  BOOST_TEST(get("/v1/responses/" + unstored.body["id"].get<std::string>()).status == 404);
  BOOST_TEST(kept_rows(session_of("rs-unstored")).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_openais_event_sequence_ending_in_the_stored_response) {
  serve();
  auto a = respond({{"input", "stream it"}, {"stream", true}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("Content-Type") == "text/event-stream");
  auto events = events_of(a.text);
  BOOST_REQUIRE(events.size() >= 8u);
  for (size_t i = 0; i < events.size(); ++i)
    BOOST_TEST(events[i]["sequence_number"] == i);
  std::vector<std::string> types;
  std::string deltas;
  for (const auto& e : events) {
    auto type = e["type"].get<std::string>();
    if (type == "response.output_text.delta")
      deltas += e["delta"].get<std::string>();
    else
      types.push_back(type);
  }
  const std::vector<std::string> expected{
    "response.created",          "response.in_progress",       "response.output_item.added",
    "response.content_part.added", "response.output_text.done", "response.content_part.done",
    "response.output_item.done", "response.completed"};
  BOOST_TEST(types == expected, boost::test_tools::per_element());
  BOOST_TEST(!deltas.empty());
  BOOST_TEST(a.text.find("event: response.created\n") != std::string::npos);
  const auto& done = events.back()["response"];
  BOOST_TEST(done["status"] == "completed");
  auto id = done["id"].get<std::string>();
  auto text = done["output"][0]["content"][0]["text"].get<std::string>();
  BOOST_TEST(text == deltas.substr(deltas.find_first_not_of(" \n")));
  auto rows = kept_rows(session_of(id));
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[1].content == text);
  // A stored streamed response is fetched like any other and continued.
  BOOST_TEST(get("/v1/responses/" + id).body["output"] == done["output"]);
  auto b = respond({{"input", "again"}, {"previous_response_id", id}, {"stream", true}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Session-Id") == session_of(id));
  BOOST_TEST(events_of(b.text).back()["type"] == "response.completed");
}

BOOST_AUTO_TEST_CASE(a_streamed_tool_call_is_announced_then_its_arguments_streamed) {
  fakellm::scenario s;
  s.plan.seed = 11;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  serve();
  set_scenario(s);
  auto a = respond({{"input", "weather?"}, {"tools", weather_tool()}, {"stream", true},
                    {"store", false}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto events = events_of(a.text);
  std::string args;
  std::string done_args;
  bool added = false;
  for (const auto& e : events) {
    if (e["type"] == "response.output_item.added" && e["item"]["type"] == "function_call") {
      added = true;
      BOOST_TEST(e["item"]["name"] == "get_weather");
    }
    if (e["type"] == "response.function_call_arguments.delta")
      args += e["delta"].get<std::string>();
    if (e["type"] == "response.function_call_arguments.done")
      done_args = e["arguments"].get<std::string>();
  }
  BOOST_TEST(added);
  BOOST_TEST(!done_args.empty());
  BOOST_TEST(args == done_args);
  const auto& done = events.back()["response"];
  BOOST_TEST(done["output"].back()["type"] == "function_call");
  BOOST_TEST(done["output"].back()["arguments"] == done_args);
}

BOOST_AUTO_TEST_CASE(a_stream_refused_before_its_first_event_answers_with_its_status) {
  serve();
  auto a = respond({{"input", "x"}, {"stream", true}, {"previous_response_id", "resp_missing"}});
  BOOST_TEST(a.status == 400);
  BOOST_TEST(a.body["error"]["code"] == "previous_response_not_found");
  // The upstream down before any piece: the HTTP error, in OpenAI's shape.
  fakellm::scenario down;
  down.plan.rules = {rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::any)};
  set_scenario(down);
  auto b = respond({{"input", "y"}, {"stream", true}, {"store", false}});
  BOOST_TEST(b.status >= 500);
  BOOST_TEST(b.body["error"]["type"] == "api_error");
  // The upstream's stream cut after some pieces: response.failed, then error, the end.
  fakellm::scenario cut;
  cut.plan.rules = {rule(fakellm::fault_kind::truncated_body, fakellm::purpose_filter::any)};
  set_scenario(cut);
  auto c = respond({{"input", "tell me a long story"}, {"stream", true}, {"store", false}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  auto events = events_of(c.text);
  BOOST_REQUIRE(events.size() >= 3u);
  BOOST_TEST(events[0]["type"] == "response.created");
  BOOST_TEST(events[events.size() - 2]["type"] == "response.failed");
  BOOST_TEST(events[events.size() - 2]["response"]["status"] == "failed");
  BOOST_TEST(!events[events.size() - 2]["response"]["error"]["code"].get<std::string>().empty());
  BOOST_TEST(events.back()["type"] == "error");
}

BOOST_AUTO_TEST_SUITE_END() // responses_door

BOOST_AUTO_TEST_SUITE_END() // responses_door_test
