// Idempotency-Key on the door requests (issue 47 item 8; docs/api.md "Idempotency-Key"),
// through the daemon's HTTP server against the fake LLM, on each door (chat completions,
// Responses, Anthropic Messages), for a full-history re-send and a stateful one: the
// same request again answers the first answer in the door's own format (whole and
// streamed) with Idempotent-Replayed: true, and neither a row is stored nor the model
// called nor anything rolled back (where the same re-send without the key rolls back);
// another request under the key is 422 idempotency_key_reused, one sent while the first
// runs 409 idempotency_in_flight with Retry-After: 1, one after a first that stored its
// message without an answer 409 idempotency_unanswered, each in the door's error shape;
// a key on a stateless pass-through is accepted and ignored.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(door_idempotency_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct door_idem_fixture : test::http_api_fixture {
  struct reply : answer {
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto i = headers.find(name);
      return i == headers.end() ? std::string{} : i->second;
    }
  };

  reply post_door(httplib::Client& via, const std::string& path, const json& body,
                  httplib::Headers headers) {
    if (path == "/v1/messages")
      headers.emplace("anthropic-version", "2023-06-01");
    auto r = via.Post(path.c_str(), headers, body.dump(), "application/json");
    reply a;
    static_cast<answer&>(a) = read(r);
    a.headers = r->headers;
    return a;
  }
  // A door request on session `key` ("" = none) with Idempotency-Key `idem` ("" = none).
  reply door(const std::string& path, const std::string& key, const std::string& idem,
             json body) {
    httplib::Headers h;
    if (!key.empty())
      h.emplace("X-Mneme-Session", key);
    if (!idem.empty())
      h.emplace("Idempotency-Key", idem);
    if (path == "/v1/messages") {
      body["model"] = "claude-sonnet-4-5";
      body["max_tokens"] = 1024;
    }
    return post_door(*client, path, body, h);
  }
  reply chat(const std::string& key, const std::string& idem, json messages, bool stream = false) {
    json body{{"messages", std::move(messages)}};
    if (stream)
      body["stream"] = true;
    return door("/v1/chat/completions", key, idem, body);
  }
  reply anthropic(const std::string& key, const std::string& idem, json messages,
                  bool stream = false) {
    json body{{"messages", std::move(messages)}};
    if (stream)
      body["stream"] = true;
    return door("/v1/messages", key, idem, body);
  }

  static json msg(const std::string& role, const std::string& content) {
    return {{"role", role}, {"content", content}};
  }
  static std::string chat_text(const reply& a) {
    return a.body["choices"][0]["message"]["content"].get<std::string>();
  }
  static std::string anthropic_text(const reply& a) {
    std::string out;
    for (const auto& b : a.body["content"])
      if (b["type"] == "text")
        out += b["text"].get<std::string>();
    return out;
  }
  static std::string responses_text(const json& response) {
    for (const auto& item : response["output"])
      if (item["type"] == "message")
        return item["content"][0]["text"].get<std::string>();
    return {};
  }
  // The `data:` payloads of a stream, "[DONE]" included.
  static std::vector<std::string> payloads_of(const std::string& text) {
    std::vector<std::string> out;
    size_t at = 0;
    while ((at = text.find("data: ", at)) != std::string::npos) {
      auto end = text.find("\n\n", at);
      out.push_back(text.substr(at + 6, end - at - 6));
      at = end;
    }
    return out;
  }

  // Every stored row of the key's session, any state; the model's chat calls so far.
  size_t rows_of(const std::string& key) { return all_rows(snapshot(key).record.id).size(); }
  int64_t model_calls() { return llm.stats().chat_requests; }

  // The first request under a key is never replayed; the second one is, and costs
  // nothing: no row, no model call, no rebase.
  reply expect_replay(const std::string& key, const std::function<reply()>& send) {
    auto rows = rows_of(key);
    auto calls = model_calls();
    auto again = send();
    BOOST_TEST(again.status == 200, again.text);
    BOOST_TEST(again.header("Idempotent-Replayed") == "true");
    BOOST_TEST(again.header("X-Mneme-Rebased").empty());
    BOOST_TEST(rows_of(key) == rows);
    BOOST_TEST(model_calls() == calls);
    return again;
  }
};

// The fake model answers no chat call; the chat client gives up after 1 s.
struct silent_door_fixture : door_idem_fixture {
  silent_door_fixture() {
    rc.chat.endpoint.idle_timeout = std::chrono::seconds(1);
    rc.chat.endpoint.total_timeout = std::chrono::seconds(2);
    serve();
    faults({rule(fakellm::fault_kind::silence, fakellm::purpose_filter::chat)});
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(door_idempotency, door_idem_fixture)

BOOST_AUTO_TEST_CASE(chat_a_full_history_resend_replays_the_first_answer_without_a_rebase) {
  serve();
  json first{msg("system", "Be brief."), msg("user", "plan a trip to Oslo")};
  auto a = chat("c-full", "trip-1", first);
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("Idempotent-Replayed").empty());
  // The client went on without a key...
  json later = first;
  later.push_back(msg("assistant", chat_text(a)));
  later.push_back(msg("user", "by train"));
  BOOST_REQUIRE(chat("c-full", "", later).status == 200);
  // ...and re-sends its first request: the first answer, the later turn kept.
  auto again = expect_replay("c-full", [&] { return chat("c-full", "trip-1", first); });
  BOOST_TEST(chat_text(again) == chat_text(a));
  BOOST_TEST(again.body["object"] == "chat.completion");
  BOOST_TEST(again.body["choices"][0]["finish_reason"] == "stop");
  // Streamed: a valid chunk stream carrying the whole answer, then [DONE].
  auto streamed = expect_replay("c-full", [&] { return chat("c-full", "trip-1", first, true); });
  BOOST_TEST(streamed.header("Content-Type") == "text/event-stream");
  auto payloads = payloads_of(streamed.text);
  BOOST_REQUIRE(payloads.size() >= 3u);
  BOOST_TEST(payloads.back() == "[DONE]");
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 1 < payloads.size(); ++i) {
    auto c = json::parse(payloads[i]);
    BOOST_TEST(c["object"] == "chat.completion.chunk");
    if (c["choices"].empty())
      continue;
    if (c["choices"][0]["delta"].contains("content"))
      text += c["choices"][0]["delta"]["content"].get<std::string>();
    if (c["choices"][0]["finish_reason"].is_string())
      finish = c["choices"][0]["finish_reason"].get<std::string>();
  }
  BOOST_TEST(text == chat_text(a));
  BOOST_TEST(finish == "stop");
  // Another last message under the key: 422 in OpenAI's shape, nothing stored or called.
  auto rows = rows_of("c-full");
  auto calls = model_calls();
  json other{msg("system", "Be brief."), msg("user", "plan a trip to Bergen")};
  auto reused = chat("c-full", "trip-1", other);
  BOOST_TEST(reused.status == 422, reused.text);
  BOOST_TEST(reused.body["error"]["code"] == "idempotency_key_reused");
  BOOST_TEST(reused.body["error"]["type"] == "invalid_request_error");
  BOOST_TEST(reused.body["error"]["message"].get<std::string>().find("'trip-1'")
               != std::string::npos);
  BOOST_TEST(rows_of("c-full") == rows);
  BOOST_TEST(model_calls() == calls);
  // Without the key the same re-send is a branch: rolled back and asked again.
  auto plain = chat("c-full", "", first);
  BOOST_REQUIRE_MESSAGE(plain.status == 200, plain.text);
  BOOST_TEST(!plain.header("X-Mneme-Rebased").empty());
  BOOST_TEST(model_calls() == calls + 1);
}

BOOST_AUTO_TEST_CASE(chat_a_stateful_resend_and_a_tool_result_resend_replay) {
  fakellm::scenario s;
  s.plan.seed = 27;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  serve();
  auto a = chat("c-state", "hello-1", json::array({msg("user", "hello")}));
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto again = expect_replay("c-state",
                             [&] { return chat("c-state", "hello-1", json::array({msg("user", "hello")})); });
  BOOST_TEST(chat_text(again) == chat_text(a));
  // Without the key a stateful re-send is a new message.
  auto rows = rows_of("c-state");
  BOOST_REQUIRE(chat("c-state", "", json::array({msg("user", "hello")})).status == 200);
  BOOST_TEST(rows_of("c-state") == rows + 2);
  // Tool results: the key is kept with the last result's row.
  set_scenario(s);
  json tools = json::parse(R"([{"type":"function","function":{"name":"get_weather",
    "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}])");
  auto call = door("/v1/chat/completions", "c-state", "",
                   {{"tools", tools}, {"messages", json::array({msg("user", "weather?")})}});
  BOOST_REQUIRE_MESSAGE(call.status == 200, call.text);
  const auto& calls = call.body["choices"][0]["message"]["tool_calls"];
  BOOST_REQUIRE(!calls.empty());
  json results = json::array();
  for (const auto& c : calls)
    results.push_back({{"role", "tool"}, {"tool_call_id", c["id"]}, {"content", "cold"}});
  auto b = door("/v1/chat/completions", "c-state", "results-1",
                {{"tools", tools}, {"messages", results}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.body["choices"][0]["finish_reason"] == "stop");
  auto replayed = expect_replay("c-state", [&] {
    return door("/v1/chat/completions", "c-state", "results-1",
                {{"tools", tools}, {"messages", results}});
  });
  BOOST_TEST(chat_text(replayed) == chat_text(b));
}

BOOST_AUTO_TEST_CASE(anthropic_resends_replay_in_its_own_format_and_refusals_take_its_shape) {
  serve();
  // Stateful.
  auto a = anthropic("an-state", "hi-1", json::array({msg("user", "hi")}));
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto again = expect_replay("an-state",
                             [&] { return anthropic("an-state", "hi-1", json::array({msg("user", "hi")})); });
  BOOST_TEST(again.body["type"] == "message");
  BOOST_TEST(again.body["stop_reason"] == "end_turn");
  BOOST_TEST(anthropic_text(again) == anthropic_text(a));
  // Full history: the client's transcript with the first answer, then a question.
  json history{msg("user", "plan a trip"), msg("assistant", "Where to?"), msg("user", "Oslo")};
  auto b = anthropic("an-full", "oslo-1", history);
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  json later = history;
  later.push_back({{"role", "assistant"}, {"content", b.body["content"]}});
  later.push_back(msg("user", "by train"));
  BOOST_REQUIRE(anthropic("an-full", "", later).status == 200);
  auto replayed = expect_replay("an-full", [&] { return anthropic("an-full", "oslo-1", history); });
  BOOST_TEST(anthropic_text(replayed) == anthropic_text(b));
  // Streamed: Anthropic's event sequence carrying the whole answer.
  auto streamed = expect_replay("an-full",
                                [&] { return anthropic("an-full", "oslo-1", history, true); });
  BOOST_TEST(streamed.header("Content-Type") == "text/event-stream");
  auto payloads = payloads_of(streamed.text);
  BOOST_REQUIRE(payloads.size() >= 5u);
  std::vector<std::string> types;
  std::string text;
  for (const auto& p : payloads) {
    auto e = json::parse(p);
    types.push_back(e["type"].get<std::string>());
    if (e["type"] == "content_block_delta" && e["delta"]["type"] == "text_delta")
      text += e["delta"]["text"].get<std::string>();
  }
  BOOST_TEST(types.front() == "message_start");
  BOOST_TEST(types.back() == "message_stop");
  BOOST_TEST(text == anthropic_text(b));
  // Another request under the key: 422 in Anthropic's shape.
  auto rows = rows_of("an-full");
  json other{msg("user", "plan a trip"), msg("assistant", "Where to?"), msg("user", "Rome")};
  auto reused = anthropic("an-full", "oslo-1", other);
  BOOST_TEST(reused.status == 422, reused.text);
  BOOST_TEST(reused.body["type"] == "error");
  BOOST_TEST(reused.body["error"]["type"] == "invalid_request_error");
  BOOST_TEST(reused.body["error"]["message"].get<std::string>().find("different request")
               != std::string::npos);
  BOOST_TEST(rows_of("an-full") == rows);
  // An unusable header is Anthropic's 400 naming it.
  auto bad = anthropic("an-full", "tab\there", history);
  BOOST_TEST(bad.status == 400, bad.text);
  BOOST_TEST(bad.body["type"] == "error");
  BOOST_TEST(bad.text.find("Idempotency-Key") != std::string::npos, bad.text);
}

BOOST_AUTO_TEST_CASE(responses_resends_replay_without_rolling_the_chain_back) {
  serve();
  auto respond = [&](const std::string& idem, json body, httplib::Headers h = {}) {
    if (!idem.empty())
      h.emplace("Idempotency-Key", idem);
    return post_door(*client, "/v1/responses", body, h);
  };
  // A named session's whole transcript (the full-history style).
  json whole{{"instructions", "Be brief."},
             {"input", json::array({{{"role", "user"}, {"content", "trip to Oslo"}}})}};
  auto a = respond("rs-1", whole, {{"session-id", "rs-named"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto again = expect_replay("rs-named", [&] { return respond("rs-1", whole, {{"session-id", "rs-named"}}); });
  BOOST_TEST(again.body["object"] == "response");
  BOOST_TEST(again.body["status"] == "completed");
  BOOST_TEST(responses_text(again.body) == responses_text(a.body));
  // The answer sent again can be continued like the first.
  auto on = respond("", {{"input", "thanks"}, {"previous_response_id", again.body["id"]}});
  BOOST_REQUIRE_MESSAGE(on.status == 200, on.text);
  // A chain (stateful): continuing the first response under a key...
  auto first = respond("", {{"input", "plan a trip"}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  auto chain = first.body["id"].get<std::string>();
  json next{{"input", "by train"}, {"previous_response_id", chain}};
  auto b = respond("train-1", next);
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  // ...re-sent: the first answer again; the rows after `chain` are not rolled back.
  auto replayed = expect_replay(chain, [&] { return respond("train-1", next); });
  BOOST_TEST(responses_text(replayed.body) == responses_text(b.body));
  BOOST_TEST(replayed.body["previous_response_id"] == chain);
  // Streamed: the event sequence ending in the completed response.
  auto streamed = expect_replay(chain, [&] {
    auto s = next;
    s["stream"] = true;
    return respond("train-1", s);
  });
  auto payloads = payloads_of(streamed.text);
  BOOST_REQUIRE(payloads.size() >= 3u);
  BOOST_TEST(payloads.back() == "[DONE]");
  auto last = json::parse(payloads[payloads.size() - 2]);
  BOOST_TEST(json::parse(payloads.front())["type"] == "response.created");
  BOOST_TEST(last["type"] == "response.completed");
  std::string deltas; // what a stream's reader adds up
  for (size_t i = 0; i + 1 < payloads.size(); ++i) {
    auto e = json::parse(payloads[i]);
    if (e["type"] == "response.output_text.delta")
      deltas += e["delta"].get<std::string>();
  }
  BOOST_TEST(deltas == responses_text(b.body));
  BOOST_TEST(responses_text(last["response"]) == responses_text(b.body));
  // A different input under the key: 422 in OpenAI's shape, nothing rolled back.
  auto rows = rows_of(chain);
  auto reused = respond("train-1", {{"input", "by plane"}, {"previous_response_id", chain}});
  BOOST_TEST(reused.status == 422, reused.text);
  BOOST_TEST(reused.body["error"]["code"] == "idempotency_key_reused");
  BOOST_TEST(rows_of(chain) == rows);
  // Without the key the re-send is a branch: the rows after `chain` rolled back.
  auto plain = respond("", next);
  BOOST_REQUIRE_MESSAGE(plain.status == 200, plain.text);
  BOOST_TEST(plain.header("X-Mneme-Rebased") == "2");
}

BOOST_AUTO_TEST_CASE(a_key_on_a_stateless_request_is_accepted_and_ignored) {
  serve();
  auto calls = model_calls();
  for (std::string idem : {"same", "same", "tab\there"}) {
    auto a = chat("", idem, json::array({msg("user", "hello")}));
    BOOST_TEST(a.status == 200, a.text);
    BOOST_TEST(a.header("Idempotent-Replayed").empty());
  }
  BOOST_TEST(model_calls() == calls + 3);
  // With a session, the unusable header is OpenAI's 400 naming it; nothing is stored.
  auto bad = chat("c-bad", "tab\there", json::array({msg("user", "hello")}));
  BOOST_TEST(bad.status == 400, bad.text);
  BOOST_TEST(bad.body["error"]["message"].get<std::string>().find("Idempotency-Key")
               != std::string::npos);
  BOOST_TEST(model_calls() == calls + 3);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_CASE(chat_a_resend_while_running_is_409_then_unanswered_after_a_failure,
                        silent_door_fixture) {
  auto first = std::async(std::launch::async, [this] {
    httplib::Client own{"127.0.0.1", port};
    own.set_read_timeout(60, 0);
    return post_door(own, "/v1/chat/completions",
                     {{"messages", json::array({msg("user", "hello")})}},
                     {{"X-Mneme-Session", "c-run"}, {"Idempotency-Key", "run-1"}})
      .status;
  });
  for (int i = 0; i < 6000 && model_calls() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_REQUIRE(model_calls() >= 1);
  auto running = chat("c-run", "run-1", json::array({msg("user", "hello")}));
  BOOST_TEST(running.status == 409, running.text);
  BOOST_TEST(running.body["error"]["code"] == "idempotency_in_flight");
  BOOST_TEST(running.header("Retry-After") == "1");
  // The marks are the turns' own: the turns route under the same keys is refused too.
  auto turn = post_door(*client, "/v1/sessions/c-run/turns", {{"content", "hello"}},
                        {{"Idempotency-Key", "run-1"}});
  BOOST_TEST(turn.status == 409, turn.text);
  BOOST_TEST(turn.body["error"]["code"] == "idempotency_in_flight");
  BOOST_TEST(first.get() >= 500);
  auto rows = rows_of("c-run");
  auto calls = model_calls();
  auto after = chat("c-run", "run-1", json::array({msg("user", "hello")}));
  BOOST_TEST(after.status == 409, after.text);
  BOOST_TEST(after.body["error"]["code"] == "idempotency_unanswered");
  BOOST_TEST(rows_of("c-run") == rows);
  BOOST_TEST(model_calls() == calls);
  // The Anthropic door answers the same refusal in its shape.
  auto an = anthropic("c-run", "run-1", json::array({msg("user", "hello")}));
  BOOST_TEST(an.status == 409, an.text);
  BOOST_TEST(an.body["type"] == "error");
  BOOST_TEST(an.body["error"]["message"].get<std::string>().find("no answer followed")
               != std::string::npos);
  BOOST_TEST(model_calls() == calls);
  // A new key asks again.
  faults({});
  auto fresh = chat("c-run", "run-2", json::array({msg("user", "hello")}));
  BOOST_TEST(fresh.status == 200, fresh.text);
}

BOOST_AUTO_TEST_SUITE_END()
