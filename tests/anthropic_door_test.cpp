// In-process tests of the Anthropic Messages door
// (apps/common/api/doors/anthropic_messages/anthropic_door.hpp, issue 44 part 1) through
// the daemon's HTTP server against the fake LLM: a `message` answer, x-api-key and
// bearer credentials, a full-history tool_use / tool_result loop with compactions between
// calls storing each message once and never rebasing, refused block types and ignored
// fields, the streamed events, count_tokens, the stateless pass-through and errors in
// Anthropic's shape and statuses.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "policies/tool_loop.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(anthropic_door_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct messages_fixture : test::http_api_fixture {
  struct messages_answer {
    int status = 0;
    json body;
    std::string text;
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto i = headers.find(name);
      return i == headers.end() ? std::string{} : i->second;
    }
  };

  messages_answer post_messages(const std::string& path, const json& body,
                                httplib::Headers headers = {}) {
    headers.emplace("anthropic-version", "2023-06-01");
    auto r = client->Post(path.c_str(), headers, body.dump(), "application/json");
    BOOST_REQUIRE_MESSAGE(r, "no HTTP answer: " + httplib::to_string(r.error()));
    messages_answer a;
    a.status = r->status;
    a.text = r->body;
    a.headers = r->headers;
    if (r->get_header_value("Content-Type") == "application/json")
      a.body = json::parse(r->body);
    return a;
  }
  messages_answer on_key(const std::string& key, json body) {
    if (!body.contains("model"))
      body["model"] = "claude-sonnet-4-5";
    if (!body.contains("max_tokens"))
      body["max_tokens"] = 1024;
    return post_messages("/v1/messages", body, {{"X-Mneme-Session", key}});
  }

  static json user_text(const std::string& text) { return {{"role", "user"}, {"content", text}}; }
  // The answer as the client keeps it in its transcript.
  static json kept(const messages_answer& a) {
    return {{"role", "assistant"}, {"content", a.body["content"]}};
  }

  std::string session_of(const std::string& key) { return snapshot(key).record.id; }

  // The rows a client would send back (not rolled back, no summary, no system).
  std::vector<message> visible_rows(const std::string& key) {
    std::vector<message> out;
    for (auto& m : all_rows(session_of(key)))
      if (m.state() != row_state::rolled_back && !m.is_summary && m.role != msg_role::system)
        out.push_back(m);
    return out;
  }


  // The events of a stream body: (event name, payload).
  static std::vector<std::pair<std::string, json>> events_of(const std::string& text) {
    std::vector<std::pair<std::string, json>> out;
    size_t at = 0;
    while ((at = text.find("event: ", at)) != std::string::npos) {
      auto eol = text.find('\n', at);
      auto name = text.substr(at + 7, eol - at - 7);
      BOOST_REQUIRE(text.compare(eol + 1, 6, "data: ") == 0);
      auto end = text.find("\n\n", eol);
      out.emplace_back(name, json::parse(text.substr(eol + 7, end - eol - 7)));
      at = end;
    }
    return out;
  }
};

json anthropic_weather_tools() {
  return json::parse(R"([{"name":"get_weather","description":"The weather of a city",
    "input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}])");
}

fakellm::scenario always_calls_tools(int64_t rounds) {
  fakellm::scenario s;
  s.plan.seed = 44;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = rounds;
  return s;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(anthropic_door, messages_fixture)

BOOST_AUTO_TEST_CASE(a_plain_request_answers_a_message_and_stores_each_message_once) {
  serve();
  auto a = on_key("an-1", {{"messages", {user_text("hello there")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["type"] == "message");
  BOOST_TEST(a.body["id"].get<std::string>().rfind("msg_", 0) == 0u);
  // the prefix and 128 bits from the kernel (32 hex digits)
  BOOST_TEST(a.body["id"].get<std::string>().size() == 4u + 32u);
  BOOST_TEST(a.body["id"].get<std::string>().find_first_not_of("0123456789abcdef", 4u)
             == std::string::npos);
  BOOST_TEST(a.body["role"] == "assistant");
  BOOST_TEST(a.body["model"] == "fake-chat"); // a Claude model name is model.name
  BOOST_TEST(a.body["stop_reason"] == "end_turn");
  BOOST_TEST(a.body["stop_sequence"].is_null());
  BOOST_REQUIRE(a.body["content"].size() == 1u);
  BOOST_TEST(a.body["content"][0]["type"] == "text");
  BOOST_TEST(!a.body["content"][0]["text"].get<std::string>().empty());
  BOOST_TEST(a.body["usage"]["input_tokens"].get<int64_t>() > 0);
  BOOST_TEST(a.body["usage"]["output_tokens"].get<int64_t>() > 0);
  BOOST_TEST(a.header("X-Mneme-Session-Id") == session_of("an-1"));
  BOOST_TEST(a.header("X-Mneme-Compactions") == "0");
  BOOST_TEST(a.header("X-Mneme-Ignored").empty());
  auto rows = visible_rows("an-1");
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].content == "hello there");
  BOOST_TEST(rows[1].content == a.body["content"][0]["text"].get<std::string>());
  BOOST_TEST(metric("mneme_anthropic_requests_total{style=\"stateful\"}") == 1);
}

BOOST_AUTO_TEST_CASE(a_full_history_tool_loop_with_compactions_stores_each_message_once) {
  rc.compression.threshold_tokens = 3000;
  rc.compression.protect_last_n = 4;
  serve();
  set_scenario(always_calls_tools(2));
  json history = json::array();
  int64_t compactions = 0;
  int tool_rounds = 0;
  for (int turn = 0; turn < 12; ++turn) {
    history.push_back(user_text("Turn " + std::to_string(turn) + ": how is the weather in city "
                                + std::to_string(turn) + "? " + std::string(400, 'w')));
    for (int step = 0; step < 4; ++step) {
      auto a = on_key("an-loop", {{"system", "You are a weather agent."},
                                  {"tools", anthropic_weather_tools()},
                                  {"messages", history}});
      BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
      BOOST_TEST(a.header("X-Mneme-Rebased").empty(), "turn " << turn);
      compactions += std::stoll(a.header("X-Mneme-Compactions"));
      history.push_back(kept(a));
      if (a.body["stop_reason"] != "tool_use")
        break;
      ++tool_rounds;
      json results = json::array();
      bool first = true;
      for (const auto& block : a.body["content"]) {
        if (block["type"] != "tool_use")
          continue;
        BOOST_TEST(block["input"].is_object());
        json r = {{"type", "tool_result"}, {"tool_use_id", block["id"]},
                  {"content", "cold and windy " + std::string(300, 'c')}};
        if (first)
          r["is_error"] = true; // stored with the error prefix, matched when resent
        first = false;
        results.push_back(r);
      }
      history.push_back({{"role", "user"}, {"content", results}});
    }
  }
  BOOST_TEST(tool_rounds >= 12);
  BOOST_TEST(compactions > 0);
  BOOST_TEST(metric("mneme_anthropic_rebased_total") == 0);
  // Every message the client holds is stored once, in order (one tool row per result).
  auto rows = visible_rows("an-loop");
  size_t at = 0;
  for (const auto& m : history) {
    if (m["content"].is_string()) {
      BOOST_REQUIRE(at < rows.size());
      BOOST_TEST(rows[at++].content == m["content"].get<std::string>());
      continue;
    }
    for (const auto& block : m["content"]) {
      BOOST_REQUIRE(at < rows.size());
      if (block["type"] == "tool_result") {
        BOOST_TEST(rows[at].tool_call_id == block["tool_use_id"].get<std::string>());
        auto want = block["content"].get<std::string>();
        if (block.value("is_error", false))
          want = std::string{tool_error_prefix} + want;
        BOOST_TEST(rows[at++].content == want);
      }
    }
    if (m["role"] == "assistant")
      ++at;
  }
  BOOST_TEST(at == rows.size());
}

BOOST_AUTO_TEST_CASE(credentials_come_as_x_api_key_or_bearer_and_refusals_take_anthropics_shape) {
  api::http_api_options opt;
  opt.auth_token = "sekret";
  serve(opt);
  httplib::Client anonymous("127.0.0.1", port);
  json body = {{"model", "claude-x"}, {"max_tokens", 10}, {"messages", {user_text("hi")}}};
  auto denied = anonymous.Post("/v1/messages", {{"x-api-key", "wrong"}}, body.dump(),
                               "application/json");
  BOOST_REQUIRE(denied);
  BOOST_TEST(denied->status == 401);
  auto refusal = json::parse(denied->body);
  BOOST_TEST(refusal["type"] == "error");
  BOOST_TEST(refusal["error"]["type"] == "authentication_error");
  auto allowed = anonymous.Post("/v1/messages", {{"x-api-key", "sekret"}}, body.dump(),
                                "application/json");
  BOOST_REQUIRE(allowed);
  BOOST_TEST(allowed->status == 200);
  BOOST_TEST(json::parse(allowed->body)["type"] == "message");
  auto bearer = post_messages("/v1/messages", body); // the fixture's client: Bearer sekret
  BOOST_TEST(bearer.status == 200);
  auto wrong_method = read(client->Get("/v1/messages"));
  BOOST_TEST(wrong_method.status == 405);
  BOOST_TEST(wrong_method.body["type"] == "error");
  BOOST_TEST(wrong_method.body["error"]["type"] == "invalid_request_error");
}

BOOST_AUTO_TEST_CASE(unsupported_blocks_are_refused_and_unused_fields_named_as_ignored) {
  serve();
  auto doc = on_key("an-bad", {{"messages", {{{"role", "user"}, {"content", json::parse(R"([
    {"type":"document","source":{"type":"text","media_type":"text/plain","data":"memo"}}])")}}}}});
  BOOST_TEST(doc.status == 400);
  BOOST_TEST(doc.body["type"] == "error");
  BOOST_TEST(doc.body["error"]["type"] == "invalid_request_error");
  auto why = doc.body["error"]["message"].get<std::string>();
  BOOST_TEST(why.find("messages[0].content[0].type") != std::string::npos, why);
  BOOST_TEST(why.find("\"document\"") != std::string::npos, why);
  auto no_max = post_messages("/v1/messages", {{"model", "m"}, {"messages", {user_text("x")}}});
  BOOST_TEST(no_max.status == 400);
  BOOST_TEST(no_max.body["error"]["message"].get<std::string>().find("max_tokens")
             != std::string::npos);
  BOOST_TEST(metric("mneme_anthropic_errors_total") == 2);
  json body = {{"model", "claude-x"},
               {"max_tokens", 64},
               {"messages", {user_text("hi")}},
               {"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}},
               {"context_management", {{"edits", json::array()}}},
               {"output_config", {{"effort", "low"}}}};
  auto a = post_messages("/v1/messages?beta=true", body,
                         {{"X-Mneme-Session", "an-ignored"},
                          {"anthropic-beta", "context-management-2025-06-27"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("X-Mneme-Ignored")
             == "context_management, output_config, thinking, anthropic-beta, beta");
}

BOOST_AUTO_TEST_CASE(an_image_is_kept_in_its_row_and_thinking_in_history_is_dropped_and_named) {
  serve();
  json image = json::parse(R"({"type":"image","source":{"type":"base64","media_type":"image/png",
    "data":"iVBORw0KGgo="}})");
  json history = json::array({{{"role", "user"},
                               {"content", json::array({{{"type", "text"}, {"text", "what is in the picture?"}},
                                                        image})}}});
  auto first = on_key("an-img", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  BOOST_TEST(first.header("X-Mneme-Ignored").empty());
  auto rows = visible_rows("an-img");
  BOOST_REQUIRE(rows.size() == 2u);
  // The text stays searchable text; the block is kept whole on its own line.
  BOOST_TEST(rows[0].content == "what is in the picture?\n[image] " + image.dump());
  // The client resends the history with a thinking block another model gave it: the
  // block is dropped, named in X-Mneme-Ignored, and the history still matches.
  auto answer = kept(first);
  json thinking = {{"type", "thinking"}, {"thinking", "hm"}, {"signature", "s"}};
  answer["content"].insert(answer["content"].begin(), thinking);
  history.push_back(answer);
  history.push_back(user_text("and the colours?"));
  auto second = on_key("an-img", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(second.status == 200, second.text);
  BOOST_TEST(second.header("X-Mneme-Ignored") == "messages[1].content[0]:thinking");
  BOOST_TEST(second.header("X-Mneme-Rebased").empty());
  BOOST_TEST(visible_rows("an-img").size() == 4u);
}

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_anthropics_event_sequence) {
  serve();
  set_scenario(always_calls_tools(1));
  json history = json::array({user_text("weather in Oslo?")});
  auto a = on_key("an-stream", {{"stream", true}, {"tools", anthropic_weather_tools()},
                                {"messages", history}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("Content-Type") == "text/event-stream");
  auto events = events_of(a.text);
  BOOST_REQUIRE(events.size() >= 6u);
  for (const auto& event : events)
    BOOST_TEST(event.second["type"] == event.first);
  BOOST_TEST(events[0].first == "message_start");
  BOOST_TEST(events[0].second["message"]["id"].get<std::string>().rfind("msg_", 0) == 0u);
  BOOST_TEST(events[1].first == "ping");
  BOOST_TEST(events[events.size() - 2].first == "message_delta");
  BOOST_TEST(events[events.size() - 2].second["delta"]["stop_reason"] == "tool_use");
  BOOST_TEST(events.back().first == "message_stop");
  // Blocks open, take their deltas and close in order; the tool's input is valid JSON.
  int64_t open = -1;
  int64_t blocks = 0;
  std::string input;
  std::string tool_id;
  for (size_t i = 2; i + 2 < events.size(); ++i) {
    const auto& name = events[i].first;
    const auto& e = events[i].second;
    if (name == "content_block_start") {
      BOOST_TEST(open == -1);
      open = e["index"].get<int64_t>();
      BOOST_TEST(open == blocks++);
      if (e["content_block"]["type"] == "tool_use")
        tool_id = e["content_block"]["id"].get<std::string>();
    } else if (name == "content_block_delta") {
      BOOST_TEST(e["index"].get<int64_t>() == open);
      if (e["delta"]["type"] == "input_json_delta")
        input += e["delta"]["partial_json"].get<std::string>();
      else
        BOOST_TEST(e["delta"]["type"] == "text_delta");
    } else {
      BOOST_TEST(name == "content_block_stop");
      BOOST_TEST(e["index"].get<int64_t>() == open);
      open = -1;
    }
  }
  BOOST_TEST(open == -1);
  BOOST_REQUIRE(!tool_id.empty());
  auto parsed = json::parse(input);
  BOOST_TEST(parsed.contains("city"));
  // The stored call is the streamed one: resent, it continues without a rebase.
  history.push_back({{"role", "assistant"},
                     {"content", {{{"type", "tool_use"}, {"id", tool_id}, {"name", "get_weather"},
                                   {"input", parsed}}}}});
  history.push_back({{"role", "user"},
                     {"content", {{{"type", "tool_result"}, {"tool_use_id", tool_id},
                                   {"content", "cold"}}}}});
  auto b = on_key("an-stream", {{"tools", anthropic_weather_tools()}, {"messages", history}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Rebased").empty());
  BOOST_TEST(b.body["stop_reason"] == "end_turn");
}

BOOST_AUTO_TEST_CASE(count_tokens_estimates_what_mneme_would_send) {
  serve();
  json body = {{"model", "claude-x"}, {"messages", {user_text(std::string(4000, 'a') + " b")}}};
  auto alone = post_messages("/v1/messages/count_tokens", body);
  BOOST_REQUIRE_MESSAGE(alone.status == 200, alone.text);
  auto n = alone.body["input_tokens"].get<int64_t>();
  BOOST_TEST(n > 100);
  body["tools"] = anthropic_weather_tools();
  auto with_tools = post_messages("/v1/messages/count_tokens", body);
  BOOST_TEST(with_tools.body["input_tokens"].get<int64_t>() > n);
  // A key's session: its live context plus what is new.
  auto a = on_key("an-count", {{"messages", {user_text("short question")}}});
  BOOST_REQUIRE(a.status == 200);
  json next = json::array({user_text("short question"), kept(a), user_text("next")});
  auto counted = post_messages("/v1/messages/count_tokens",
                               {{"model", "claude-x"}, {"messages", next}},
                               {{"X-Mneme-Session", "an-count"}});
  BOOST_REQUIRE_MESSAGE(counted.status == 200, counted.text);
  auto live = snapshot("an-count").live_tokens;
  BOOST_TEST(counted.body["input_tokens"].get<int64_t>() > live);
  BOOST_TEST(counted.body["input_tokens"].get<int64_t>() < live + 20);
  BOOST_TEST(metric("mneme_anthropic_count_tokens_total") == 3);
}

BOOST_AUTO_TEST_CASE(without_a_session_the_request_passes_through_statelessly) {
  serve();
  auto a = post_messages("/v1/messages", {{"model", "claude-x"}, {"max_tokens", 50},
                                          {"system", "Be brief."},
                                          {"messages", {user_text("just once")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["type"] == "message");
  BOOST_TEST(a.header("X-Mneme-Session-Id").empty());
  BOOST_TEST(get("/v1/sessions").body["sessions"].empty());
  BOOST_TEST(metric("mneme_anthropic_requests_total{style=\"stateless\"}") == 1);
}

BOOST_AUTO_TEST_CASE(upstream_failures_are_overloaded_and_rate_limit_errors) {
  serve();
  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::chat, 1)});
  auto down = on_key("an-fail", {{"messages", {user_text("hi")}}});
  BOOST_TEST(down.status == 529);
  BOOST_TEST(down.body["type"] == "error");
  BOOST_TEST(down.body["error"]["type"] == "overloaded_error");
  // The retry of the same request: answered, the failed message stored once.
  auto again = on_key("an-fail", {{"messages", {user_text("hi")}}});
  BOOST_REQUIRE_MESSAGE(again.status == 200, again.text);
  BOOST_TEST(visible_rows("an-fail").size() == 2u);
  // An upstream 429 reaches the client of a pass-through (in a session, mneme answers a
  // long-context 429 itself: it compacts and calls again).
  faults({rule(fakellm::fault_kind::long_context_429, fakellm::purpose_filter::chat, 1)});
  auto limited = post_messages("/v1/messages", {{"model", "claude-x"}, {"max_tokens", 50},
                                                {"messages", {user_text("hi")}}});
  BOOST_TEST(limited.status == 429);
  BOOST_TEST(limited.body["type"] == "error");
  BOOST_TEST(limited.body["error"]["type"] == "rate_limit_error");
}

BOOST_AUTO_TEST_CASE(an_answer_cut_by_a_stop_sequence_names_it_whole_streamed_and_stateless) {
  // The fake (an OpenAI-compatible upstream here) gets the sequences as `stop` and names
  // the one it stopped on as vLLM does.
  serve();
  json stops = json::array({"nowhere", "river"});
  auto a = on_key("an-stop", {{"stop_sequences", stops},
                              {"messages", {user_text("tell me about the river")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["stop_reason"] == "stop_sequence");
  BOOST_TEST(a.body["stop_sequence"] == "river");
  auto text = a.body["content"][0]["text"].get<std::string>();
  BOOST_TEST(text.rfind("Reply to: tell me about the", 0) == 0u, text);
  BOOST_TEST(text.find("river") == std::string::npos, text);
  // Streamed: message_delta carries both.
  auto s = on_key("an-stop-stream", {{"stream", true}, {"stop_sequences", stops},
                                     {"messages", {user_text("a river story")}}});
  BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
  auto events = events_of(s.text);
  BOOST_REQUIRE(events.size() >= 2u);
  const auto& delta = events[events.size() - 2];
  BOOST_REQUIRE(delta.first == "message_delta");
  BOOST_TEST(delta.second["delta"]["stop_reason"] == "stop_sequence");
  BOOST_TEST(delta.second["delta"]["stop_sequence"] == "river");
  // Stateless, and an answer that did not meet a sequence: end_turn, null.
  auto once = post_messages("/v1/messages", {{"model", "claude-x"}, {"max_tokens", 200},
                                             {"stop_sequences", stops},
                                             {"messages", {user_text("the river again")}}});
  BOOST_REQUIRE_MESSAGE(once.status == 200, once.text);
  BOOST_TEST(once.body["stop_reason"] == "stop_sequence");
  BOOST_TEST(once.body["stop_sequence"] == "river");
  auto plain = on_key("an-stop", {{"stop_sequences", stops},
                                  {"messages", {user_text("tell me about the river"), kept(a),
                                                user_text("and the sea")}}});
  BOOST_REQUIRE_MESSAGE(plain.status == 200, plain.text);
  BOOST_TEST(plain.body["stop_reason"] == "end_turn");
  BOOST_TEST(plain.body["stop_sequence"].is_null());
}

BOOST_AUTO_TEST_CASE(the_upstreams_retry_after_reaches_the_client_and_mnemes_own_is_one_second) {
  serve();
  struct waited {
    fakellm::fault_kind kind;   // the upstream's answer (the fake: 429 or 503)
    const char* retry_after;    // its Retry-After
    bool stateless;
    int want_status;
    const char* want_type;
    const char* want_header;    // the client's Retry-After
  };
  const waited rows[] = {
    {fakellm::fault_kind::rate_limit_429, "42", false, 429, "rate_limit_error", "42"},
    // a date a century ahead: capped
    {fakellm::fault_kind::unavailable, "Fri, 31 Dec 2100 23:59:59 GMT", false, 529,
     "overloaded_error", "600"},
    // unreadable: the front's own 1 s
    {fakellm::fault_kind::unavailable, "soon", false, 529, "overloaded_error", "1"},
    {fakellm::fault_kind::rate_limit_429, "9", true, 429, "rate_limit_error", "9"},
  };
  for (const auto& w : rows) {
    auto r = rule(w.kind, fakellm::purpose_filter::chat, 1);
    r.retry_after = w.retry_after;
    faults({r});
    json body = {{"model", "claude-x"}, {"max_tokens", 50}, {"messages", {user_text("hi")}}};
    auto a = w.stateless ? post_messages("/v1/messages", body) : on_key("an-wait", body);
    BOOST_TEST(a.status == w.want_status, w.retry_after);
    BOOST_TEST(a.body["error"]["type"] == w.want_type, w.retry_after);
    BOOST_TEST(a.header("Retry-After") == w.want_header, w.retry_after);
  }
  auto fine = on_key("an-wait", {{"messages", {user_text("hi")}}});
  BOOST_TEST(fine.status == 200);
  BOOST_TEST(fine.header("Retry-After").empty());
}

BOOST_AUTO_TEST_SUITE_END() // anthropic_door

BOOST_AUTO_TEST_SUITE_END() // anthropic_door_test
