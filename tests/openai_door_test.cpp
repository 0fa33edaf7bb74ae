// In-process tests of the OpenAI door (apps/common/api/doors/openai_chat/openai_door.hpp, issue 27 items 1
// and 4) through the daemon's HTTP server against the fake LLM: answers in OpenAI's
// shape (whole and streamed), the session header's precedence, the stateful and the
// full-history styles storing each message once, a branch rolled back with
// X-Mneme-Rebased, a resent answered transcript replayed, the stateless pass-through,
// the model choice, /v1/models, and errors as {"error":{"message","type","param","code"}}.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "policies/tool_loop.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(openai_door_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct door_fixture : test::http_api_fixture {
  struct door_answer {
    int status = 0;
    json body;
    std::string text;
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto i = headers.find(name);
      return i == headers.end() ? std::string{} : i->second;
    }
  };

  door_answer chat(const json& body, httplib::Headers headers = {}) {
    auto r = client->Post("/v1/chat/completions", headers, body.dump(), "application/json");
    BOOST_REQUIRE_MESSAGE(r, "no HTTP answer: " + httplib::to_string(r.error()));
    door_answer a;
    a.status = r->status;
    a.text = r->body;
    a.headers = r->headers;
    if (r->get_header_value("Content-Type") == "application/json")
      a.body = json::parse(r->body);
    return a;
  }
  door_answer chat_on(const std::string& key, const json& body) {
    return chat(body, {{"X-Mneme-Session", key}});
  }
  // chat_on through a client of its own (for requests on other threads).
  door_answer chat_apart(const std::string& key, const json& body) {
    auto a = send_apart("POST", "/v1/chat/completions", body, {{"X-Mneme-Session", key}});
    return {a.status, std::move(a.body), std::move(a.text), std::move(a.headers)};
  }

  static json msg(const std::string& role, const std::string& content) {
    return {{"role", role}, {"content", content}};
  }
  static json assistant_of(const door_answer& a) {
    return a.body["choices"][0]["message"];
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

json weather_tools() {
  return json::parse(R"([{"type":"function","function":{"name":"get_weather",
    "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])");
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(openai_door, door_fixture)

BOOST_AUTO_TEST_CASE(a_stateful_exchange_answers_chat_completions_and_stores_each_message_once) {
  serve();
  auto a = chat_on("oa-1", {{"model", "mneme"}, {"messages", {msg("user", "hello there")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["object"] == "chat.completion");
  BOOST_TEST(a.body["id"].get<std::string>().rfind("chatcmpl-", 0) == 0u);
  // the prefix and 128 bits from the kernel (32 hex digits)
  BOOST_TEST(a.body["id"].get<std::string>().size() == 9u + 32u);
  BOOST_TEST(a.body["id"].get<std::string>().find_first_not_of("0123456789abcdef", 9u)
             == std::string::npos);
  BOOST_TEST(a.body["model"] == "fake-chat");
  BOOST_TEST(a.body["choices"][0]["finish_reason"] == "stop");
  BOOST_TEST(assistant_of(a)["role"] == "assistant");
  BOOST_TEST(!assistant_of(a)["content"].get<std::string>().empty());
  BOOST_TEST(a.body["usage"]["total_tokens"].get<int64_t>() > 0);
  auto sid = session_of("oa-1");
  BOOST_TEST(a.header("X-Mneme-Session-Id") == sid);
  BOOST_TEST(a.header("X-Mneme-Compactions") == "0");
  auto b = chat_on("oa-1", {{"messages", {msg("user", "and again")}}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  auto rows = kept_rows(sid);
  BOOST_REQUIRE(rows.size() == 4u);
  BOOST_TEST(rows[0].content == "hello there");
  BOOST_TEST(rows[1].content == assistant_of(a)["content"].get<std::string>());
  BOOST_TEST(rows[2].content == "and again");
  BOOST_TEST(metric("mneme_openai_requests_total{style=\"stateful\"}") == 2);
}

BOOST_AUTO_TEST_CASE(a_full_history_client_stores_only_the_unseen_suffix) {
  serve();
  json history = json::array({msg("system", "You answer briefly."), msg("user", "first")});
  for (int turn = 0; turn < 6; ++turn) {
    auto a = chat_on("oa-full", {{"messages", history}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    BOOST_TEST(a.header("X-Mneme-Rebased").empty());
    history.push_back(assistant_of(a));
    history.push_back(msg("user", "message " + std::to_string(turn)));
  }
  auto rows = kept_rows(session_of("oa-full"));
  // The client's system row is stored too (after the daemon's own prompt).
  auto sys = all_rows(session_of("oa-full"));
  BOOST_TEST(sys[1].content == "You answer briefly.");
  BOOST_TEST(rows.size() == history.size() - 2); // minus its system row and the unsent last
  for (size_t i = 0; i < rows.size(); ++i)
    BOOST_TEST(rows[i].content == history[i + 1]["content"].get<std::string>());
  BOOST_TEST(metric("mneme_openai_rebased_total") == 0);
  // Only the first request of an unseen session read its rows (the prints did the rest).
  BOOST_TEST(metric("mneme_openai_history_reads_total") == 0);
}

BOOST_AUTO_TEST_CASE(an_edited_earlier_message_is_a_branch_rolled_back_with_the_rebase_header) {
  serve();
  json history = json::array({msg("user", "plan a trip to Oslo")});
  for (int turn = 0; turn < 3; ++turn) {
    auto a = chat_on("oa-branch", {{"messages", history}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    history.push_back(assistant_of(a));
    history.push_back(msg("user", "more " + std::to_string(turn)));
  }
  auto sid = session_of("oa-branch");
  auto before = kept_rows(sid); // 6 rows: u a u a u a
  BOOST_REQUIRE(before.size() == 6u);
  // The client edits its second user message and drops what followed it.
  json edited = json::array({history[0], history[1], msg("user", "actually, Bergen")});
  auto b = chat_on("oa-branch", {{"messages", edited}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Rebased") == "4");
  auto after = kept_rows(sid);
  BOOST_REQUIRE(after.size() == 4u);
  BOOST_TEST(after[2].content == "actually, Bergen");
  // The rows after the common prefix are rolled back, kept and searchable as such.
  int64_t rolled_back = 0;
  for (const auto& m : all_rows(sid))
    rolled_back += m.state() == row_state::rolled_back ? 1 : 0;
  BOOST_TEST(rolled_back == 4);
  BOOST_TEST(metric("mneme_openai_rebased_total") == 1);
  // The next request of the branch matches again without a rebase.
  edited.push_back(assistant_of(b));
  edited.push_back(msg("user", "thanks"));
  auto c = chat_on("oa-branch", {{"messages", edited}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.header("X-Mneme-Rebased").empty());
  BOOST_TEST(kept_rows(sid).size() == 6u);
}

BOOST_AUTO_TEST_CASE(a_resent_answered_transcript_is_answered_again_without_a_model_call) {
  serve();
  json history = json::array({msg("user", "what is 2+2?")});
  auto a = chat_on("oa-replay", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  auto calls = llm.stats().chat_requests;
  history.push_back(assistant_of(a));
  auto again = chat_on("oa-replay", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(again.status == 200, again.text);
  BOOST_TEST(assistant_of(again)["content"] == assistant_of(a)["content"]);
  BOOST_TEST(llm.stats().chat_requests == calls);
  BOOST_TEST(kept_rows(session_of("oa-replay")).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_builtin_tool_round_stays_out_of_the_clients_history) {
  serve();
  json history = json::array({msg("user", "Please remember that my city is Oslo.")});
  auto a = chat_on("oa-builtin", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["choices"][0]["finish_reason"] == "stop");
  BOOST_TEST(!assistant_of(a).contains("tool_calls"));
  auto sid = session_of("oa-builtin");
  BOOST_TEST(kept_rows(sid).size() == 4u); // user, the memory call, its result, the answer
  history.push_back(assistant_of(a));
  history.push_back(msg("user", "thanks"));
  auto b = chat_on("oa-builtin", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Rebased").empty());
  BOOST_TEST(kept_rows(sid).size() == 6u);
  BOOST_TEST(metric("mneme_openai_history_reads_total") == 0);
}

BOOST_AUTO_TEST_CASE(a_request_can_turn_the_builtin_tools_off) {
  serve();
  json history = json::array({msg("user", "Please remember that my city is Oslo.")});
  auto a = chat(json{{"messages", history}},
                {{"X-Mneme-Session", "oa-no-builtin"}, {"X-Mneme-Builtin-Tools", "off"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(kept_rows(session_of("oa-no-builtin")).size() == 2u); // no memory round
  auto bad = chat(json{{"messages", history}},
                  {{"X-Mneme-Session", "oa-no-builtin-2"}, {"X-Mneme-Builtin-Tools", "maybe"}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.body["error"]["message"].get<std::string>().find("X-Mneme-Builtin-Tools")
             != std::string::npos);
  // The next request without the header offers them again.
  auto b = chat_on("oa-no-builtin-3", {{"messages", history}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(kept_rows(session_of("oa-no-builtin-3")).size() == 4u);
}

BOOST_AUTO_TEST_CASE(the_session_header_precedence_and_the_body_metadata_name_the_session) {
  serve();
  auto a = chat({{"messages", {msg("user", "one")}}},
                {{"X-Session-Affinity", "oa-aff"}, {"X-Session-Id", "oa-sid"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("X-Mneme-Session-Id") == session_of("oa-sid"));
  auto b = chat({{"messages", {msg("user", "two")}}, {"metadata", {{"session_id", "oa-meta"}}}},
                {{"X-Mneme-Session", "oa-head"}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Session-Id") == session_of("oa-head"));
  auto c = chat({{"messages", {msg("user", "three")}}, {"metadata", {{"session_id", "oa-meta"}}}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.header("X-Mneme-Session-Id") == session_of("oa-meta"));
}

BOOST_AUTO_TEST_CASE(without_a_session_the_request_passes_through_statelessly) {
  serve();
  auto a = chat({{"model", ""}, {"messages", {msg("user", "just once")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["object"] == "chat.completion");
  BOOST_TEST(a.header("X-Mneme-Session-Id").empty());
  BOOST_TEST(get("/v1/sessions").body["sessions"].empty());
  BOOST_TEST(metric("mneme_openai_requests_total{style=\"stateless\"}") == 1);
}

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_chunks_with_usage_then_done) {
  serve();
  // The head of a stream goes before the turn: the session id is there once the key has
  // a session.
  BOOST_REQUIRE(chat_on("oa-stream", {{"messages", {msg("user", "open it")}}}).status == 200);
  auto a = chat_on("oa-stream", {{"stream", true},
                                 {"stream_options", {{"include_usage", true}}},
                                 {"messages", {msg("user", "stream it")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("Content-Type") == "text/event-stream");
  BOOST_TEST(a.header("X-Mneme-Session-Id") == session_of("oa-stream"));
  std::vector<json> chunks;
  bool done = false;
  size_t at = 0;
  while ((at = a.text.find("data: ", at)) != std::string::npos) {
    auto end = a.text.find("\n\n", at);
    auto payload = a.text.substr(at + 6, end - at - 6);
    at = end;
    if (payload == "[DONE]") {
      done = true;
      continue;
    }
    chunks.push_back(json::parse(payload));
  }
  BOOST_TEST(done);
  BOOST_REQUIRE(chunks.size() >= 3u);
  std::string text;
  for (const auto& c : chunks) {
    BOOST_TEST(c["object"] == "chat.completion.chunk");
    if (!c["choices"].empty() && c["choices"][0]["delta"].contains("content"))
      text += c["choices"][0]["delta"]["content"].get<std::string>();
  }
  BOOST_TEST(chunks.front()["choices"][0]["delta"]["role"] == "assistant");
  auto finish = chunks[chunks.size() - 2];
  BOOST_TEST(finish["choices"][0]["finish_reason"] == "stop");
  BOOST_TEST(chunks.back()["choices"].empty());
  BOOST_TEST(chunks.back()["usage"]["prompt_tokens"].get<int64_t>() > 0);
  auto rows = kept_rows(session_of("oa-stream"));
  BOOST_REQUIRE(rows.size() == 4u);
  BOOST_TEST(rows[3].content == text.substr(text.find_first_not_of(" \n")));
}

BOOST_AUTO_TEST_CASE(a_tool_loop_in_both_styles_returns_calls_and_continues_with_results) {
  fakellm::scenario s;
  s.plan.seed = 27;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  serve();
  set_scenario(s);
  for (bool full : {false, true}) {
    std::string key = full ? "oa-tools-full" : "oa-tools";
    json history = json::array({msg("user", "weather in Oslo?")});
    auto a = chat_on(key, {{"tools", weather_tools()}, {"messages", history}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    BOOST_TEST(a.body["choices"][0]["finish_reason"] == "tool_calls");
    auto m = assistant_of(a);
    BOOST_REQUIRE(!m["tool_calls"].empty());
    BOOST_TEST(m["tool_calls"][0]["type"] == "function");
    json results = json::array();
    for (const auto& c : m["tool_calls"])
      results.push_back({{"role", "tool"}, {"tool_call_id", c["id"]}, {"content", "cold"}});
    json next = results;
    if (full) {
      history.push_back(m);
      for (const auto& r : results)
        history.push_back(r);
      next = history;
    }
    auto b = chat_on(key, {{"tools", weather_tools()}, {"messages", next}});
    BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
    BOOST_TEST(b.body["choices"][0]["finish_reason"] == "stop");
    BOOST_TEST(kept_rows(session_of(key)).size() == 2u + results.size() + 1u);
  }
}

BOOST_AUTO_TEST_CASE(pending_calls_have_the_doors_own_way_out_and_a_refusal_stores_nothing) {
  fakellm::scenario s;
  s.plan.seed = 27;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  serve();
  set_scenario(s);
  // The model's calls never reach the client (a stream it aborted): they stay pending.
  auto a = chat_on("oa-pending", {{"tools", weather_tools()},
                                  {"messages", {msg("user", "weather in Oslo?")}}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_REQUIRE(!assistant_of(a)["tool_calls"].empty());
  auto sid = session_of("oa-pending");
  auto stored = all_rows(sid).size();
  auto refused = chat_on("oa-pending", {{"messages", {msg("user", "never mind")}}});
  BOOST_TEST(refused.status == 400);
  auto text = refused.body["error"]["message"].get<std::string>();
  BOOST_TEST(text.find("role 'tool'") != std::string::npos, text);
  BOOST_TEST(text.find("X-Mneme-Abandon-Pending") != std::string::npos, text);
  BOOST_TEST(text.find("abandon_pending: true") == std::string::npos, text);
  BOOST_TEST(all_rows(sid).size() == stored);
  // The header answers them with a stub and the new message goes on.
  llm.clear_faults();
  auto on = chat({{"messages", {msg("user", "never mind")}}},
                 {{"X-Mneme-Session", "oa-pending"}, {"X-Mneme-Abandon-Pending", "1"}});
  BOOST_REQUIRE_MESSAGE(on.status == 200, on.text);
  bool stub = false;
  for (auto& m : all_rows(sid))
    stub = stub || (m.role == msg_role::tool && m.content == std::string{abandoned_call_result});
  BOOST_TEST(stub);
  // A full-history transcript leaving a call without its result is refused before anything
  // of it is stored (the call included).
  json call = {{"role", "assistant"},
               {"content", nullptr},
               {"tool_calls", json::array({{{"id", "call_x"},
                                            {"type", "function"},
                                            {"function", {{"name", "get_weather"},
                                                          {"arguments", "{}"}}}}})}};
  auto partial = chat_on("oa-pending-full",
                         {{"tools", weather_tools()},
                          {"messages", {msg("user", "first"), call, msg("user", "second")}}});
  BOOST_TEST(partial.status == 400);
  BOOST_TEST(partial.body["error"]["message"].get<std::string>().find("call_x")
             != std::string::npos);
  BOOST_TEST(get("/v1/sessions/oa-pending-full").status == 404);
}

BOOST_AUTO_TEST_CASE(errors_have_openai_shape_and_status) {
  serve();
  auto bad = chat_on("oa-err", {{"model", "mneme"}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.body["error"]["type"] == "invalid_request_error");
  BOOST_TEST(bad.body["error"]["param"] == "messages");
  BOOST_TEST(bad.body["error"]["code"] == "bad_request");
  BOOST_TEST(!bad.body["error"]["message"].get<std::string>().empty());
  auto role = chat_on("oa-err", {{"messages", {msg("robot", "x")}}});
  BOOST_TEST(role.status == 400);
  BOOST_TEST(role.body["error"]["param"] == "messages[0].role");
  // A session named by a number is refused, not served statelessly.
  auto numeric = chat({{"messages", {msg("user", "x")}}, {"metadata", {{"session_id", 42}}}});
  BOOST_TEST(numeric.status == 400);
  BOOST_TEST(numeric.body["error"]["message"].get<std::string>().find("metadata.session_id")
             != std::string::npos);
  BOOST_TEST(llm.stats().chat_requests == 0);
  auto last = chat_on("oa-err", {{"messages", {msg("user", "x"), msg("assistant", "y")}}});
  BOOST_TEST(last.status == 400);
  // The model named in the body goes upstream: a fault on that model only is a 5xx.
  fakellm::scenario s;
  auto r = rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::any);
  r.model = "other-model";
  s.plan.rules = {r};
  set_scenario(s);
  auto down = chat_on("oa-err", {{"model", "other-model"}, {"messages", {msg("user", "hi")}}});
  BOOST_TEST(down.status >= 500);
  BOOST_TEST(down.body["error"]["type"] == "api_error");
  auto fine = chat_on("oa-err", {{"model", "mneme"}, {"messages", {msg("user", "hi again")}}});
  BOOST_TEST(fine.status == 200);
}

BOOST_AUTO_TEST_CASE(stop_still_stops_and_the_upstreams_retry_after_reaches_the_client) {
  serve();
  // `stop` reaches the model: the answer ends before the first stop string, "stop".
  auto stopped = chat_on("oa-stop", {{"messages", {msg("user", "tell me about the river")}},
                                     {"stop", json::array({"river"})}});
  BOOST_REQUIRE_MESSAGE(stopped.status == 200, stopped.text);
  BOOST_TEST(stopped.body["choices"][0]["finish_reason"] == "stop");
  auto content = stopped.body["choices"][0]["message"]["content"].get<std::string>();
  BOOST_TEST(content.rfind("Reply to: tell me about the", 0) == 0u, content);
  BOOST_TEST(content.find("river") == std::string::npos, content);
  // An upstream 429 with Retry-After: the client's 429 carries the upstream's wait.
  auto r = rule(fakellm::fault_kind::rate_limit_429, fakellm::purpose_filter::chat, 1);
  r.retry_after = "42";
  faults({r});
  auto limited = chat_on("oa-wait", {{"messages", {msg("user", "hi")}}});
  BOOST_TEST(limited.status == 429);
  BOOST_TEST(limited.body["error"]["type"] == "rate_limit_error");
  BOOST_TEST(limited.header("Retry-After") == "42");
  // A 503 whose Retry-After is a date a century ahead: the door's 502, the wait capped.
  r.kind = fakellm::fault_kind::unavailable;
  r.retry_after = "Fri, 31 Dec 2100 23:59:59 GMT";
  faults({r});
  auto down = chat_on("oa-wait", {{"messages", {msg("user", "hi")}}});
  BOOST_TEST(down.status == 502);
  BOOST_TEST(down.header("Retry-After") == "600");
  // No header upstream: the front's own 1 s on a 429, none on a 502.
  r.retry_after.clear();
  faults({r});
  BOOST_TEST(chat_on("oa-wait", {{"messages", {msg("user", "hi")}}}).header("Retry-After").empty());
  r.kind = fakellm::fault_kind::rate_limit_429;
  faults({r});
  BOOST_TEST(chat_on("oa-wait", {{"messages", {msg("user", "hi")}}}).header("Retry-After") == "1");
  // The stateless pass-through passes it on too.
  r.retry_after = "7";
  faults({r});
  auto once = chat({{"messages", {msg("user", "just once")}}});
  BOOST_TEST(once.status == 429);
  BOOST_TEST(once.header("Retry-After") == "7");
  auto fine = chat_on("oa-wait", {{"messages", {msg("user", "hi")}}});
  BOOST_TEST(fine.status == 200);
}

BOOST_AUTO_TEST_CASE(a_request_on_a_key_whose_request_is_on_its_way_is_refused_at_once_storing_nothing) {
  // The held request waits on the fake until the fake stops (no timeout ends it first).
  rc.chat.endpoint.idle_timeout = std::chrono::seconds(600);
  rc.chat.endpoint.total_timeout = std::chrono::seconds(900);
  serve();
  auto first = chat_on("oa-busy", {{"messages", {msg("user", "first question")}}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  auto sid = session_of("oa-busy");
  faults({rule(fakellm::fault_kind::silence, fakellm::purpose_filter::chat)});
  auto upstream_calls = llm.stats().chat_requests;
  json held = {msg("user", "first question"), assistant_of(first), msg("user", "held")};
  door_answer held_answer;
  std::thread held_client([&] { held_answer = chat_apart("oa-busy", {{"messages", held}}); });
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return llm.stats().chat_requests > upstream_calls; }),
                        "the held request never reached the model");
  auto rows_while_held = all_rows(sid);
  // A diverging transcript and a stateful message: both refused, nothing stored or rolled back.
  json branch = {msg("user", "first question"), assistant_of(first), msg("user", "a branch")};
  for (const auto& body : {json{{"messages", branch}},
                           json{{"messages", {msg("user", "a stateful message")}}}}) {
    auto busy = chat_on("oa-busy", body);
    BOOST_TEST(busy.status == 429);
    BOOST_TEST(busy.body["error"]["code"] == "session_busy");
    BOOST_TEST(busy.body["error"]["type"] == "rate_limit_error");
    BOOST_TEST(busy.header("Retry-After") == "1"); // mneme's own refusal: its own 1 s
  }
  auto rows_after = all_rows(sid);
  BOOST_REQUIRE(rows_after.size() == rows_while_held.size());
  for (size_t i = 0; i < rows_after.size(); ++i)
    BOOST_TEST((rows_after[i].state() == rows_while_held[i].state()));
  BOOST_TEST(metric("mneme_openai_rebased_total") == 0);
  // Another key is not held.
  llm.clear_faults();
  auto other = chat_on("oa-busy-other", {{"messages", {msg("user", "unrelated")}}});
  BOOST_TEST(other.status == 200);
  // The held upstream call fails when the fake stops; its request ends and frees the key.
  llm.stop();
  held_client.join();
  BOOST_TEST(held_answer.status >= 500);
  auto after = chat_on("oa-busy", {{"messages", branch}});
  BOOST_TEST(after.status != 429);
  BOOST_TEST(after.body["error"]["code"] != "session_busy");
}

BOOST_AUTO_TEST_CASE(a_request_sent_as_soon_as_the_previous_is_answered_is_never_busy) {
  serve();
  json history = json::array({msg("user", "count with me")});
  for (int turn = 0; turn < 40; ++turn) {
    auto a = chat_on("oa-sequential", {{"messages", history}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, "turn " << turn << ": " << a.text);
    history.push_back(assistant_of(a));
    history.push_back(msg("user", "next " + std::to_string(turn)));
  }
}

BOOST_AUTO_TEST_CASE(diverging_transcripts_sent_together_never_hang_nor_break_the_live_context) {
  serve();
  auto slow = rule(fakellm::fault_kind::latency, fakellm::purpose_filter::chat);
  slow.latency_ms = 20; // the window in which the two requests meet
  faults({slow});
  auto first = chat_on("oa-race", {{"messages", {msg("user", "where do we start?")}}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  const json base = {msg("user", "where do we start?"), assistant_of(first)};
  int answered = 0, refused = 0;
  const int tries = 25;
  for (int t = 0; t < tries; ++t) {
    door_answer a, b;
    auto branch = [&](const char* which) {
      auto sent = base;
      sent.push_back(msg("user", std::string{"branch "} + which + " of try " + std::to_string(t)));
      return json{{"messages", sent}};
    };
    std::thread ta([&] { a = chat_apart("oa-race", branch("A")); });
    std::thread tb([&] { b = chat_apart("oa-race", branch("B")); });
    ta.join();
    tb.join();
    int ok_here = 0;
    for (const auto* x : {&a, &b}) {
      if (x->status == 200) {
        ++ok_here;
        continue;
      }
      BOOST_TEST(x->status == 429, "try " << t << ": " << x->status << " " << x->text);
      BOOST_TEST(x->body["error"]["code"] == "session_busy");
      ++refused;
    }
    BOOST_TEST(ok_here >= 1, "try " << t << ": neither request was answered");
    answered += ok_here;
    // The live context alternates: never two user or two assistant rows in a row.
    std::vector<msg_role> live;
    for (auto& m : all_rows(session_of("oa-race")))
      if (m.state() == row_state::live && !m.is_summary && m.role != msg_role::system)
        live.push_back(m.role);
    for (size_t i = 1; i < live.size(); ++i)
      BOOST_TEST(live[i] != live[i - 1], "try " << t << ": two " << live[i] << " rows in a row");
  }
  BOOST_TEST_MESSAGE("diverging pairs: " << tries << " tries, " << answered << " answered, "
                                          << refused << " refused session_busy");
  BOOST_TEST(answered + refused == 2 * tries);
}

BOOST_AUTO_TEST_CASE(refusals_before_the_route_are_in_openai_shape_and_models_lists_the_model) {
  api::http_api_options opt;
  opt.auth_token = "sekret";
  serve(opt);
  auto models = get("/v1/models");
  BOOST_REQUIRE(models.status == 200);
  BOOST_TEST(models.body["object"] == "list");
  BOOST_TEST(models.body["data"][0]["id"] == "fake-chat");
  httplib::Client anonymous("127.0.0.1", port);
  auto r = anonymous.Post("/v1/chat/completions", "{}", "application/json");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 401);
  auto body = json::parse(r->body);
  BOOST_TEST(body["error"]["type"] == "authentication_error");
  BOOST_TEST(body["error"]["code"] == "unauthorized");
  BOOST_TEST(body["error"].contains("param"));
  // The front's own 413 takes the door's shape; mneme's routes keep theirs.
  httplib::Client authed("127.0.0.1", port);
  authed.set_bearer_token_auth("sekret");
  std::string big(opt.max_body_bytes + 1, 'x');
  auto large = authed.Post("/v1/chat/completions", big, "application/json");
  BOOST_REQUIRE(large);
  BOOST_TEST(large->status == 413);
  auto shaped = json::parse(large->body);
  BOOST_TEST(shaped["error"]["type"] == "invalid_request_error");
  BOOST_TEST(shaped["error"]["code"] == "payload_too_large");
  BOOST_TEST(shaped["error"].contains("param"));
  auto own = authed.Post("/v1/sessions/x/messages", big, "application/json");
  BOOST_REQUIRE(own);
  BOOST_TEST(own->status == 413);
  BOOST_TEST(!json::parse(own->body)["error"].contains("type"));
}

BOOST_AUTO_TEST_CASE(only_errors_in_mnemes_shape_are_reshaped_for_a_door) {
  api::route_row row;
  row.refusal = [](int status, const std::string& code, const std::string& message) {
    return json{{"door", status}, {"code", code}, {"message", message}}.dump();
  };
  auto shaped = [&](int status, const std::string& body) {
    api::http_response r;
    r.status = status;
    r.body = body;
    api::reshape_refusal(r, &row);
    return r.body;
  };
  auto mneme_body = json{{"error", {{"code", "shutting_down"}, {"message", "bye"}}}}.dump();
  BOOST_TEST(json::parse(shaped(503, mneme_body))
             == (json{{"door", 503}, {"code", "shutting_down"}, {"message", "bye"}}));
  BOOST_TEST(shaped(200, mneme_body) == mneme_body); // not an error
  auto door_body =
    json{{"error", {{"code", "x"}, {"message", "m"}, {"type", "api_error"}}}}.dump();
  BOOST_TEST(shaped(500, door_body) == door_body); // the door's own answer
  BOOST_TEST(shaped(500, "not json") == "not json");
  api::http_response r;
  r.status = 503;
  r.body = mneme_body;
  api::reshape_refusal(r, nullptr); // no route at the path
  BOOST_TEST(r.body == mneme_body);
}

BOOST_AUTO_TEST_SUITE_END() // openai_door

// decode_openai_chat takes common messages by a path that builds no field names and
// moves their strings; every message must come out as decode_openai_message makes it,
// and every refusal must stay the one that names the field.
BOOST_AUTO_TEST_CASE(the_request_decoder_answers_what_the_message_decoder_answers) {
  auto messages = json::parse(R"([
    {"role":"system","content":"sys \" \\ \n"},
    {"role":"developer","content":"dev"},
    {"role":"user","content":"h\u00e9llo 中文 😀","name":"ann"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","index":0,
      "function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"c2","function":{"name":"g"}}]},
    {"role":"tool","tool_call_id":"c1","content":"r1","name":"f"},
    {"role":"tool","tool_call_id":"c2","content":""},
    {"role":"assistant","content":"text","refusal":null,"tool_calls":[]},
    {"role":"assistant","content":"both","tool_calls":null,"reasoning_content":"r"}
  ])");
  auto decoded = api::decode_openai_chat(json{{"messages", messages}}.dump());
  BOOST_REQUIRE(decoded);
  BOOST_REQUIRE(decoded->messages.size() == messages.size());
  for (size_t i = 0; i < messages.size(); ++i) {
    auto one = api::decode_openai_message(messages[i], "messages[" + std::to_string(i) + "]");
    BOOST_REQUIRE(one);
    const auto& got = decoded->messages[i];
    BOOST_TEST((got.role == one->role), "message " << i);
    BOOST_TEST(got.content == one->content, "message " << i);
    BOOST_TEST((got.tool_calls == one->tool_calls), "message " << i);
    BOOST_TEST(got.tool_call_id == one->tool_call_id, "message " << i);
    BOOST_TEST(got.tool_name == one->tool_name, "message " << i);
  }
  BOOST_TEST(decoded->messages[4].tool_calls.size() == 2u);
  BOOST_TEST(decoded->messages[5].tool_name == "f");
  const std::vector<std::pair<std::string, std::string>> refused{
    {R"({"role":"user","content":"a","name":null})", "field 'messages[1].name' must be a string"},
    {R"({"role":"user","content":"a","extra":1})", "unknown field 'messages[1].extra'"},
    {R"({"role":"tool","content":"a"})", "field 'messages[1].tool_call_id' is missing or empty"},
    {R"({"role":"user","content":"a","tool_call_id":"c"})", "belongs to tool messages only"},
    {R"({"role":"assistant"})", "field 'messages[1].content' is missing"},
    {R"({"role":"assistant","tool_calls":[{"id":"c","type":"x","function":{"name":"f"}}]})",
     "field 'messages[1].tool_calls[0].type' must be \"function\""},
    {R"({"role":"robot","content":"a"})", "unknown role 'robot'"},
    {R"({"role":"user","content":7})", "field 'messages[1].content' must be a string"},
  };
  for (const auto& [bad, expected] : refused) {
    auto body = R"({"messages":[{"role":"user","content":"ok"},)" + bad + "]}";
    auto r = api::decode_openai_chat(body);
    BOOST_REQUIRE_MESSAGE(!r, bad);
    BOOST_TEST(render_error(r.error()).find(expected) != std::string::npos,
               render_error(r.error()) << " should hold " << expected);
  }
}

BOOST_AUTO_TEST_SUITE_END() // openai_door_test
