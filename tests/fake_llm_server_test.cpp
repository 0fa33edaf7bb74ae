// Loopback tests of the fake LLM server (apps/common/fakellm/fake_llm_server):
// answers and usage, summaries, SSE framing, the context window, every fault kind
// as a plain client sees it, targeting by model / purpose / fraction / time window
// end to end, the refuse window, the control API and stats, and bad input.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "caf/all.hpp"
#include "fake_llm_test_client.hpp"
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_server_test)

using namespace mneme;
using namespace mneme::fakellm;
using namespace mneme::fakellm::testing;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

namespace {

constexpr int64_t test_window = 2000;

std::string chat_body(const std::string& text, const std::string& model = "gpt-test",
                      bool stream = false) {
  json doc = {{"model", model},
              {"stream", stream},
              {"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                        {{"role", "user"}, {"content", text}}})}};
  return doc.dump();
}

std::string chat(const std::string& text, const std::string& model = "gpt-test",
                 bool stream = false, const std::string& headers = "") {
  return post_request("/v1/chat/completions", chat_body(text, model, stream), headers);
}

std::string content_of(const raw_result& r) {
  return json::parse(r.body)["choices"][0]["message"]["content"].get<std::string>();
}

struct server_fixture {
  fake_llm_server server{[] {
    fake_llm_options o;
    o.answers.window_tokens = test_window;
    o.limits.max_body_bytes = 256 * 1024;
    return o;
  }()};
  uint16_t port = 0;

  server_fixture() {
    auto p = server.start();
    BOOST_TEST_REQUIRE(static_cast<bool>(p));
    port = *p;
  }

  void faults(std::vector<fault_rule> rules, uint64_t seed = 1) {
    scenario s;
    s.plan.seed = seed;
    s.plan.rules = std::move(rules);
    BOOST_TEST_REQUIRE(!server.set_scenario(std::move(s)));
  }
};

fault_rule rule(fault_kind k) {
  fault_rule r;
  r.kind = k;
  return r;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(fake_llm_server_suite, server_fixture)

BOOST_AUTO_TEST_CASE(health_answers_ok_and_a_second_start_is_refused) {
  auto r = roundtrip(port, get_request("/health"));
  BOOST_TEST(r.status == 200);
  BOOST_TEST(json::parse(r.body)["status"] == "ok");
  auto again = server.start();
  BOOST_TEST_REQUIRE(!again);
  BOOST_TEST((again.error() == errc::bad_request));
}

BOOST_AUTO_TEST_CASE(a_chat_answer_reports_the_estimators_usage_and_is_deterministic) {
  auto r = roundtrip(port, chat("Where is /srv/data.db?"));
  BOOST_TEST_REQUIRE(r.status == 200);
  auto doc = json::parse(r.body);
  std::vector<message> sent(2);
  sent[0].role = msg_role::system;
  sent[0].content = "Be brief.";
  sent[1].content = "Where is /srv/data.db?";
  BOOST_TEST(doc["usage"]["prompt_tokens"].get<int64_t>() == estimate_messages_tokens(sent));
  auto content = content_of(r);
  BOOST_TEST(doc["usage"]["completion_tokens"].get<int64_t>() == estimate_text_tokens(content));
  BOOST_TEST(content.find("/srv/data.db") != std::string::npos);
  BOOST_TEST(content_of(roundtrip(port, chat("Where is /srv/data.db?"))) == content);
}

BOOST_AUTO_TEST_CASE(summary_requests_are_recognized_by_header_or_by_prompt_and_respect_the_target) {
  std::string transcript;
  for (int i = 0; i < 80; ++i)  // about 1,500 tokens: inside the 2,000-token test window
    transcript += "user: step " + std::to_string(i) + " touched lib/mod_" + std::to_string(i) +
                  ".cpp and all was well in the end.\n";
  auto by_prompt = roundtrip(port, chat("Summarize; target about 300 tokens.\n" + transcript));
  auto by_header = roundtrip(port, chat("Condense this.\n" + transcript, "gpt-test", false,
                                       "X-Mneme-Purpose: summary\r\n"));
  BOOST_TEST_REQUIRE(by_prompt.status == 200);
  BOOST_TEST_REQUIRE(by_header.status == 200);
  BOOST_TEST(estimate_text_tokens(content_of(by_prompt)) <= 300);
  BOOST_TEST(estimate_text_tokens(content_of(by_prompt)) >= 150);
  BOOST_TEST(content_of(by_prompt).find("lib/mod_") != std::string::npos);
  // Without a target in the prompt the default (2000) applies: the whole input fits.
  BOOST_TEST(estimate_text_tokens(content_of(by_header)) > 300);
  auto st = server.stats();
  BOOST_TEST(st.summary_requests == 2);
  BOOST_TEST(st.chat_requests == 0);
}

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_framed_as_sse_and_matches_the_plain_answer) {
  auto plain = content_of(roundtrip(port, chat("tell me about streams")));
  auto r = roundtrip(port, chat("tell me about streams", "gpt-test", true));
  BOOST_TEST_REQUIRE(r.complete);
  BOOST_TEST(r.head.find("text/event-stream") != std::string::npos);
  BOOST_TEST(r.head.find("Transfer-Encoding: chunked") != std::string::npos);
  std::string joined;
  size_t at = 0;
  std::vector<std::string> events;
  while (at < r.body.size()) {
    auto end = r.body.find("\n\n", at);
    BOOST_TEST_REQUIRE(end != std::string::npos);
    events.push_back(r.body.substr(at, end - at));
    at = end + 2;
  }
  BOOST_TEST_REQUIRE(events.size() >= 3u);
  BOOST_TEST(events.back() == "data: [DONE]");
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    BOOST_TEST_REQUIRE(events[i].rfind("data: ", 0) == 0u);
    auto j = json::parse(events[i].substr(6));
    auto& delta = j["choices"][0]["delta"];
    if (delta.contains("content")) joined += delta["content"].get<std::string>();
  }
  BOOST_TEST(joined == plain);
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_window_gets_the_provider_overflow_400) {
  auto r = roundtrip(port, chat(std::string(test_window * 4 + 100, 'a')));
  BOOST_TEST(r.status == 400);
  auto err = json::parse(r.body)["error"];
  BOOST_TEST(err["code"] == "context_length_exceeded");
  BOOST_TEST(err["message"].get<std::string>().find("maximum context length is 2000 tokens") !=
             std::string::npos);
  BOOST_TEST(roundtrip(port, chat("short")).status == 200);
  BOOST_TEST(server.stats().window_overflows == 1);
}

BOOST_DATA_TEST_CASE(every_answer_fault_is_visible_to_a_plain_client,
                     data::make({fault_kind::unavailable, fault_kind::payload_too_large,
                                 fault_kind::long_context_429, fault_kind::overflow_400,
                                 fault_kind::malformed_json, fault_kind::truncated_body,
                                 fault_kind::empty_content, fault_kind::reasoning_only,
                                 fault_kind::reset, fault_kind::silence, fault_kind::trickle,
                                 fault_kind::latency, fault_kind::output_too_large_400}),
                     kind) {
  server_fixture f;
  auto r0 = rule(kind);
  r0.max_body_bytes = 10;
  r0.silence_ms = 3000;
  r0.latency_ms = 300;
  f.faults({r0});
  auto r = roundtrip(f.port, chat("hello"), ms(400));
  switch (kind) {
    case fault_kind::unavailable: BOOST_TEST(r.status == 503); break;
    case fault_kind::payload_too_large: BOOST_TEST(r.status == 413); break;
    case fault_kind::long_context_429:
      BOOST_TEST(r.status == 429);
      BOOST_TEST(r.body.find("long context") != std::string::npos);
      break;
    case fault_kind::overflow_400:
      BOOST_TEST(r.status == 400);
      BOOST_TEST(r.body.find("context_length_exceeded") != std::string::npos);
      break;
    case fault_kind::output_too_large_400:
      BOOST_TEST(r.status == 400);
      BOOST_TEST(r.body.find("max_tokens_exceeded") != std::string::npos);
      break;
    case fault_kind::malformed_json:
      BOOST_TEST(r.status == 200);
      BOOST_TEST(json::parse(r.body, nullptr, false).is_discarded());
      break;
    case fault_kind::truncated_body:
      BOOST_TEST(r.status == 200);
      BOOST_TEST(r.eof);
      BOOST_TEST(!r.complete);
      break;
    case fault_kind::empty_content:
      BOOST_TEST(content_of(r) == "");
      break;
    case fault_kind::reasoning_only:
      BOOST_TEST(content_of(r) == "");
      BOOST_TEST(!json::parse(r.body)["choices"][0]["message"]["reasoning_content"]
                      .get<std::string>().empty());
      break;
    case fault_kind::reset:
      BOOST_TEST(r.reset);
      BOOST_TEST(r.raw.empty());
      break;
    case fault_kind::silence:
      BOOST_TEST(r.idle_timeout);
      BOOST_TEST(r.raw.empty());
      break;
    case fault_kind::trickle:
      BOOST_TEST(r.idle_timeout);
      BOOST_TEST(!r.raw.empty());
      BOOST_TEST(!r.complete);
      break;
    case fault_kind::latency:
      BOOST_TEST(r.status == 200);
      // The injected 300 ms, less the millisecond a whole-millisecond timer and
      // reading may each round away (a lower bound, never an upper one).
      BOOST_TEST(r.elapsed.count() >= 298);
      break;
    default: BOOST_FAIL("kind not covered");
  }
  BOOST_TEST(f.server.stats().injected_of(kind) == 1);
}

BOOST_AUTO_TEST_CASE(a_trickle_completes_when_the_client_waits_longer_than_the_silence) {
  auto t = rule(fault_kind::trickle);
  t.silence_ms = 200;
  faults({t});
  auto r = roundtrip(port, chat("slowly"), ms(5000));
  BOOST_TEST(r.complete);
  BOOST_TEST(r.elapsed.count() >= 200);
  BOOST_TEST(!content_of(r).empty());
}

BOOST_DATA_TEST_CASE(streamed_faults_break_the_stream,
                     data::make({fault_kind::truncated_body, fault_kind::malformed_json,
                                 fault_kind::trickle}),
                     kind) {
  server_fixture f;
  auto r0 = rule(kind);
  r0.silence_ms = 3000;
  f.faults({r0});
  auto r = roundtrip(f.port, chat("a streamed request", "gpt-test", true), ms(400));
  BOOST_TEST(r.status == 200);
  if (kind == fault_kind::malformed_json) {
    BOOST_TEST_REQUIRE(r.complete);
    bool saw_bad = false;
    size_t at = 0;
    while ((at = r.body.find("data: ", at)) != std::string::npos) {
      auto end = r.body.find("\n\n", at);
      auto payload = r.body.substr(at + 6, end - at - 6);
      if (payload != "[DONE]") saw_bad = saw_bad || json::parse(payload, nullptr, false).is_discarded();
      at = end;
    }
    BOOST_TEST(saw_bad);
  } else {
    BOOST_TEST(!r.complete);
    BOOST_TEST(r.raw.find("data: [DONE]") == std::string::npos);
    BOOST_TEST(r.raw.find("data: {") != std::string::npos);
    BOOST_TEST((kind == fault_kind::truncated_body ? r.eof : r.idle_timeout));
  }
}

BOOST_AUTO_TEST_CASE(faults_target_a_model_by_substring) {
  auto u = rule(fault_kind::unavailable);
  u.model = "gpt";
  faults({u});
  BOOST_TEST(roundtrip(port, chat("hi", "my-gpt-4")).status == 503);
  BOOST_TEST(roundtrip(port, chat("hi", "claude-3")).status == 200);
}

BOOST_AUTO_TEST_CASE(faults_target_summaries_or_chat) {
  auto u = rule(fault_kind::unavailable);
  u.purpose = purpose_filter::summary;
  faults({u});
  BOOST_TEST(roundtrip(port, chat("hi")).status == 200);
  BOOST_TEST(roundtrip(port, chat("Summarize, target about 100 tokens: hi")).status == 503);
  BOOST_TEST(roundtrip(port, chat("hi", "m", false, "X-Mneme-Purpose: summary\r\n")).status == 503);
  BOOST_TEST(roundtrip(port, chat("target about 100 tokens", "m", false,
                                 "X-Mneme-Purpose: chat\r\n")).status == 200);
}

BOOST_AUTO_TEST_CASE(a_fraction_hits_exactly_the_requests_the_pure_plan_predicts) {
  auto u = rule(fault_kind::unavailable);
  u.fraction = 0.4;
  faults({u}, 1234);
  fault_plan plan;
  plan.seed = 1234;
  plan.rules = {u};
  raw_connection c{port};
  int hits = 0;
  for (uint64_t seq = 0; seq < 60; ++seq) {
    request_facts rf;
    rf.seq = seq;
    bool predicted = decide(plan, rf, {}).answer.has_value();
    auto r = c.exchange(chat("n" + std::to_string(seq)));
    BOOST_TEST_REQUIRE(r.complete);
    BOOST_TEST((r.status == 503) == predicted, "request " << seq);
    hits += predicted;
  }
  BOOST_TEST(hits > 10);
  BOOST_TEST(hits < 40);
  BOOST_TEST(server.stats().injected_of(fault_kind::unavailable) == hits);
}

// The scenario clock moves by hand (fake_llm_options::clock): a request is placed in the
// window by the clock, not by how fast the test runs.
BOOST_AUTO_TEST_CASE(a_time_window_starts_injecting_once_it_opens) {
  auto offset_ms = std::make_shared<std::atomic<int64_t>>(0);
  const auto base = std::chrono::steady_clock::now();
  fake_llm_options o;
  o.clock = [base, offset_ms] { return base + ms(offset_ms->load()); };
  fake_llm_server manual{o};
  auto p = manual.start();
  BOOST_TEST_REQUIRE(static_cast<bool>(p));
  auto u = rule(fault_kind::unavailable);
  u.start_s = 0.3;
  scenario sc;
  sc.plan.rules = {u};
  BOOST_TEST_REQUIRE(!manual.set_scenario(std::move(sc)));
  BOOST_TEST(roundtrip(*p, chat("early")).status == 200);
  offset_ms->store(299);
  BOOST_TEST(roundtrip(*p, chat("still early")).status == 200);
  offset_ms->store(300); // the window opens at its instant
  BOOST_TEST(roundtrip(*p, chat("late")).status == 503);
  BOOST_TEST(manual.stats().injected_of(fault_kind::unavailable) == 1);
}

BOOST_AUTO_TEST_CASE(a_refuse_window_refuses_connects_resets_open_connections_and_ends) {
  raw_connection before{port};
  BOOST_TEST_REQUIRE(before.connected());
  auto r = rule(fault_kind::refuse);
  r.end_s = 0.5;
  faults({r});
  raw_connection during{port};
  BOOST_TEST(!during.connected());
  BOOST_TEST(during.connect_errno() == ECONNREFUSED);
  auto on_old = before.exchange(chat("still there?"));
  BOOST_TEST(on_old.reset);
  BOOST_TEST(server.stats().injected_of(fault_kind::refuse) == 1);
  // The listener reopens after the window: poll (bounded) until it answers.
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    std::this_thread::sleep_for(ms(50));
    back = roundtrip(port, get_request("/health")).status == 200;
  }
  BOOST_TEST(back);
}

BOOST_AUTO_TEST_CASE(the_control_api_sets_shows_and_clears_faults_over_http) {
  auto bad = roundtrip(port, post_request("/control/faults", R"({"faults":[{"kind":"latency"}]})"));
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.body.find("scenario.faults[0]") != std::string::npos);
  auto set = roundtrip(port, post_request("/control/faults",
                                         R"({"seed":9,"faults":[{"kind":"unavailable","max_count":1}]})"));
  BOOST_TEST_REQUIRE(set.status == 200);
  auto shown = json::parse(roundtrip(port, get_request("/control/faults")).body);
  BOOST_TEST(shown["seed"] == 9);
  BOOST_TEST(shown["faults"][0]["kind"] == "unavailable");
  BOOST_TEST(roundtrip(port, chat("one")).status == 503);
  BOOST_TEST(roundtrip(port, chat("two")).status == 200);  // max_count reached
  auto u = rule(fault_kind::unavailable);
  faults({u});
  BOOST_TEST(roundtrip(port, get_request("/control/faults", "DELETE")).status == 200);
  BOOST_TEST(json::parse(roundtrip(port, get_request("/control/faults")).body)["faults"].empty());
  BOOST_TEST(roundtrip(port, chat("three")).status == 200);
  BOOST_TEST(server.current_scenario().plan.rules.empty());
}

BOOST_AUTO_TEST_CASE(stats_count_requests_by_purpose_and_faults_by_kind) {
  auto u = rule(fault_kind::empty_content);
  u.purpose = purpose_filter::chat;
  faults({u});
  roundtrip(port, chat("a"));
  roundtrip(port, chat("b"));
  roundtrip(port, chat("c", "m", false, "X-Mneme-Purpose: summary\r\n"));
  roundtrip(port, post_request("/v1/chat/completions", "{broken"));
  auto st = json::parse(roundtrip(port, get_request("/control/stats")).body);
  BOOST_TEST(st["requests"]["chat"] == 2);
  BOOST_TEST(st["requests"]["summary"] == 1);
  BOOST_TEST(st["requests"]["bad"] == 1);
  BOOST_TEST(st["injected"]["empty_content"] == 2);
  BOOST_TEST(st["injected"]["unavailable"] == 0);
  BOOST_TEST(st["server_threads"] == 1);
}

BOOST_AUTO_TEST_CASE(stats_count_orphan_tool_rows_of_the_requests_received) {
  auto call = [](const std::string& id) {
    return json{{"role", "assistant"}, {"content", nullptr},
                {"tool_calls", json::array({{{"id", id}, {"type", "function"},
                                             {"function", {{"name", "f"}, {"arguments", "{}"}}}}})}};
  };
  auto result = [](const std::string& id) {
    return json{{"role", "tool"}, {"tool_call_id", id}, {"content", "r"}};
  };
  auto send = [&](json msgs) {
    return roundtrip(port, post_request("/v1/chat/completions",
                                        json{{"model", "m"}, {"messages", std::move(msgs)}}.dump()));
  };
  json user = {{"role", "user"}, {"content", "q"}};
  send(json::array({user, call("a"), result("a")}));                      // paired
  BOOST_TEST(server.stats().requests_with_orphans == 0);
  // A call without its result, and a result whose call is not in the request: each is
  // counted, and the request is still answered.
  BOOST_TEST(send(json::array({user, call("b")})).status == 200);
  BOOST_TEST(send(json::array({user, result("ghost")})).status == 200);
  auto st = server.stats();
  BOOST_TEST(st.orphan_tool_calls == 1);
  BOOST_TEST(st.orphan_tool_results == 1);
  BOOST_TEST(st.requests_with_orphans == 2);
  auto doc = json::parse(roundtrip(port, get_request("/control/stats")).body);
  BOOST_TEST(doc["tool_pairing"]["orphan_calls"] == 1);
  BOOST_TEST(doc["tool_pairing"]["orphan_results"] == 1);
  BOOST_TEST(doc["tool_pairing"]["requests_with_orphans"] == 2);
}

BOOST_DATA_TEST_CASE_F(server_fixture, bad_input_gets_a_json_error_and_the_server_lives_on,
                       data::make({std::string("NONSENSE\r\n\r\n"),
                                   std::string("POST /v1/chat/completions HTTP/1.1\r\n"
                                               "Content-Length: 999999999\r\n\r\n"),
                                   post_request("/v1/chat/completions", "{\"model\":"),
                                   post_request("/v1/chat/completions", R"({"model":"m","messages":"x"})"),
                                   get_request("/nowhere"),
                                   get_request("/v1/chat/completions"),
                                   std::string("POST /v1/chat/completions HTTP/1.1\r\n"
                                               "Transfer-Encoding: chunked\r\n\r\n"),
                                   std::string("GET /\xff\xfe HTTP/1.1\r\n\r\n"),
                                   std::string("GET / HTTP/1.\xff\r\n\r\n")}) ^
                           data::make({400, 413, 400, 400, 404, 405, 411, 404, 400}),
                       wire, status) {
  auto r = roundtrip(port, wire);
  BOOST_TEST(r.status == status);
  BOOST_TEST(json::parse(r.body, nullptr, false).contains("error"));
  BOOST_TEST(roundtrip(port, get_request("/health")).status == 200);
}

BOOST_AUTO_TEST_CASE(expect_continue_gets_a_100_before_the_answer) {
  auto body = chat_body("with expect");
  raw_connection c{port};
  c.send_all("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n");
  auto interim = c.read_response(ms(300));
  BOOST_TEST(interim.raw.rfind("HTTP/1.1 100 Continue", 0) == 0u);
  auto r = c.exchange(body);
  BOOST_TEST(r.status == 200);
}

BOOST_AUTO_TEST_CASE(pipelined_requests_are_answered_in_order_on_one_connection) {
  auto l = rule(fault_kind::latency);
  l.latency_ms = 50;
  l.max_count = 1;  // only the first is delayed: order must still hold
  faults({l});
  raw_connection c{port};
  c.send_all(chat("first") + chat("second") + get_request("/health"));
  auto a = c.read_response(ms(5000));
  auto b = c.read_response(ms(5000));
  auto h = c.read_response(ms(5000));
  BOOST_TEST(content_of(a).find("first") != std::string::npos);
  BOOST_TEST(content_of(b).find("second") != std::string::npos);
  BOOST_TEST(h.status == 200);
}

BOOST_AUTO_TEST_CASE(stop_closes_silenced_connections_and_is_idempotent) {
  faults({rule(fault_kind::silence)});
  raw_connection c{port};
  c.send_all(chat("anyone?"));
  // Stop only once the server has read the request and decided to stay silent (the
  // deadline bounds a hang; the verdict is the counter).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.stats().injected_of(fault_kind::silence) == 0
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(ms(1));
  BOOST_TEST_REQUIRE(server.stats().injected_of(fault_kind::silence) == 1);
  server.stop();
  auto r = c.read_response(ms(2000));
  BOOST_TEST((r.eof || r.reset));
  BOOST_TEST(!r.idle_timeout);
  server.stop();
  BOOST_TEST(server.thread_count() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // fake_llm_server_test
