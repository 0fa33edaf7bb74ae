// Tests of the LLM pool over loopback: every transport and HTTP fault yields its
// project error code before a generous bound and nothing hangs; bounded concurrency,
// overload at once, queue deadlines, and the caller's timeout letting the precise
// error win. Timing never decides pass/fail: a call must end with its own code
// before the caller's timeout (else the code is request_timeout), and a timeout
// may not fire before it is due.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>

#include <nlohmann/json.hpp>

#include "actors/llm/llm_pool.hpp"
#include "tests/llm_loopback_server.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(llm_pool_test)

namespace bdata = boost::unit_test::data;
using namespace std::chrono_literals;
using namespace mneme;
using mneme::test::loopback_server;
using nlohmann::json;

namespace {

using steady = std::chrono::steady_clock;

std::string ok_body(const std::string& content) {
  return json{{"choices", json::array({{{"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", content}}},
                                        {"finish_reason", "stop"}}})},
              {"usage", {{"prompt_tokens", 42}, {"completion_tokens", 7}}}}
    .dump();
}

chat_request summary_request(const std::string& text = "please summarize") {
  chat_request req;
  req.purpose = llm_purpose::summary;
  message m;
  m.session_id = "s-test";
  m.role = msg_role::user;
  m.content = text;
  req.messages.push_back(m);
  return req;
}

llm::llm_pool_config pool_config(const std::string& base_url, std::chrono::milliseconds idle,
                                 std::chrono::milliseconds total, size_t concurrency = 4,
                                 size_t queue = 16) {
  llm::llm_pool_config cfg;
  cfg.name = "test";
  cfg.endpoint.url = llm::chat_completions_url(base_url);
  cfg.endpoint.api_key = "sk-test-key";
  cfg.endpoint.model = "fake-summary";
  cfg.endpoint.purpose = llm_purpose::summary;
  cfg.endpoint.idle_timeout = idle;
  cfg.endpoint.total_timeout = total;
  cfg.max_concurrency = concurrency;
  cfg.max_queue = queue;
  return cfg;
}

// Timers of curl and of the loop may fire a few ms early relative to the caller's clock.
constexpr auto timer_slack = 50ms;

struct call_result {
  caf::expected<chat_answer> answer{caf::error{}};
  std::chrono::milliseconds elapsed{0};
  errc code() const { return answer ? errc{} : static_cast<errc>(answer.error().code()); }
  std::string describe() const { return answer ? "answer: " + answer->content : render_error(answer.error()); }
};

struct pool_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  pool_fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  call_result call(const llm_pool_actor& pool, chat_request req,
                   std::chrono::milliseconds timeout) {
    caf::scoped_actor self{*sys};
    call_result out;
    auto start = steady::now();
    self->request(pool, timeout, llm_call_atom_v, std::move(req))
      .receive([&](chat_answer& a) { out.answer = std::move(a); },
               [&](caf::error& err) { out.answer = std::move(err); });
    out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
    return out;
  }

  llm_pool_stats stats(const llm_pool_actor& pool) {
    caf::scoped_actor self{*sys};
    llm_pool_stats out;
    self->request(pool, 5s, llm_stats_atom_v)
      .receive([&](llm_pool_stats& s) { out = s; },
               [&](caf::error& err) { BOOST_FAIL("stats failed: " << sys->render(err)); });
    return out;
  }

  // Calls once through a fresh pool and checks the code (a hang would end in the
  // caller's timeout instead) and that the call did not end before `at_least` (the
  // timeout that should fire).
  void expect_failure(const llm::llm_pool_config& c, errc want,
                      std::chrono::milliseconds at_least) {
    auto pool = llm::spawn_llm_pool(*sys, c);
    auto res = call(pool, summary_request(), llm::caller_timeout(c));
    BOOST_REQUIRE_MESSAGE(!res.answer, "expected " << to_string(want) << ", got an answer");
    BOOST_TEST(res.code() == want, "got " << res.describe());
    BOOST_TEST(res.elapsed.count() >= (at_least - timer_slack).count());
    caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(llm_pool, pool_fixture)

BOOST_AUTO_TEST_CASE(a_good_answer_arrives_with_usage_and_the_request_carries_key_purpose_and_path) {
  loopback_server srv{loopback_server::canned(200, ok_body("<think>hm</think>The summary."))};
  auto c = pool_config(srv.base_url(), 5s, 10s);
  auto pool = llm::spawn_llm_pool(*sys, c);
  auto res = call(pool, summary_request(), llm::caller_timeout(c));
  BOOST_REQUIRE_MESSAGE(res.answer, res.describe());
  BOOST_TEST(res.answer->content == "The summary.");
  BOOST_TEST(res.answer->prompt_tokens == 42);
  BOOST_TEST(res.answer->completion_tokens == 7);
  auto reqs = srv.requests();
  BOOST_REQUIRE(reqs.size() == 1u);
  BOOST_TEST(reqs[0].head.rfind("POST /v1/chat/completions HTTP/1.1", 0) == 0u);
  BOOST_TEST(reqs[0].head.find("Authorization: Bearer sk-test-key") != std::string::npos);
  BOOST_TEST(reqs[0].head.find("X-Mneme-Purpose: summary") != std::string::npos);
  auto body = json::parse(reqs[0].body);
  BOOST_TEST(body["model"] == "fake-summary");
  BOOST_TEST(!body.contains("max_tokens"));
  BOOST_TEST(body["stream"] == false);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

// ------------------------------------------------------------ HTTP answers

BOOST_DATA_TEST_CASE_F(
  pool_fixture, every_http_fault_answer_yields_its_code,
  bdata::make({413, 429, 429, 400, 400, 400, 401, 403, 402, 503, 500, 404, 200, 200, 200, 200})
    ^ bdata::make({std::string{R"({"error":{"message":"Request entity too large"}})"},
                   std::string{R"({"error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}})"},
                   std::string{R"({"error":{"message":"Rate limit reached, retry in 2s"}})"},
                   std::string{R"({"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens"}})"},
                   std::string{R"({"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model."}})"},
                   std::string{R"({"error":{"message":"max_tokens is too large: 100000. This model supports at most 4096 completion tokens"}})"},
                   std::string{R"({"error":{"message":"invalid api key"}})"},
                   std::string{R"({"error":{"message":"forbidden"}})"},
                   std::string{R"({"error":{"message":"payment required"}})"},
                   std::string{R"({"error":{"message":"service unavailable"}})"},
                   std::string{R"({"error":{"message":"internal"}})"},
                   std::string{R"({"error":{"message":"no such route"}})"},
                   std::string{"this is {not json"},
                   ok_body(""),
                   json{{"choices", json::array({{{"message", {{"role", "assistant"}, {"content", ""}, {"reasoning_content", "thinking only"}}}, {"finish_reason", "stop"}}})}}.dump(),
                   ok_body("<think>all of it is thinking</think>")})
    ^ bdata::make({errc::llm_payload_too_large, errc::llm_long_context_rate_limit,
                   errc::llm_rate_limited, errc::llm_context_overflow,
                   errc::llm_unsupported_parameter, errc::llm_output_too_large, errc::llm_auth,
                   errc::llm_auth, errc::llm_quota, errc::llm_server_error,
                   errc::llm_server_error, errc::llm_bad_request, errc::llm_malformed,
                   errc::llm_empty_answer, errc::llm_empty_answer, errc::llm_empty_answer}),
  status, body, want) {
  loopback_server srv{loopback_server::canned(status, body)};
  expect_failure(pool_config(srv.base_url(), 5s, 10s), want, 0ms);
}

// ------------------------------------------------------------ transport faults

BOOST_AUTO_TEST_CASE(a_closed_port_is_refused) {
  auto c = pool_config("http://127.0.0.1:" + std::to_string(test::closed_port()), 5s, 10s);
  expect_failure(c, errc::llm_refused, 0ms);
}

BOOST_AUTO_TEST_CASE(an_unresolvable_host_is_a_dns_error) {
  expect_failure(pool_config("http://mneme-test.invalid", 5s, 10s), errc::llm_dns, 0ms);
}

BOOST_AUTO_TEST_CASE(a_server_that_does_not_speak_tls_is_a_tls_error) {
  loopback_server srv{loopback_server::canned(200, ok_body("plain http")), false};
  auto c = pool_config("https://127.0.0.1:" + std::to_string(srv.port()), 5s, 10s);
  expect_failure(c, errc::llm_tls, 0ms);
}

BOOST_AUTO_TEST_CASE(a_silent_listener_trips_the_idle_timeout_not_the_total) {
  loopback_server srv{loopback_server::silent()};
  expect_failure(pool_config(srv.base_url(), 700ms, 20s), errc::llm_idle_timeout, 700ms);
}

BOOST_AUTO_TEST_CASE(a_silent_listener_trips_the_total_timeout_when_it_is_shorter) {
  loopback_server srv{loopback_server::silent()};
  expect_failure(pool_config(srv.base_url(), 20s, 800ms), errc::llm_total_timeout, 800ms);
}

BOOST_AUTO_TEST_CASE(an_answer_that_stalls_midway_trips_the_idle_timeout) {
  loopback_server srv{loopback_server::stall_after(ok_body("a long enough summary"), 10)};
  expect_failure(pool_config(srv.base_url(), 700ms, 20s), errc::llm_idle_timeout, 700ms);
}

BOOST_AUTO_TEST_CASE(a_trickle_keeps_the_idle_timer_alive_until_the_total_timeout) {
  // One byte every 150 ms: never 700 ms without a byte, so only the total can end it.
  loopback_server srv{loopback_server::trickle(ok_body(std::string(200, 'x')), 150ms)};
  expect_failure(pool_config(srv.base_url(), 700ms, 2000ms), errc::llm_total_timeout, 2000ms);
}

BOOST_AUTO_TEST_CASE(a_truncated_body_is_a_network_error) {
  loopback_server srv{loopback_server::truncated(ok_body("the whole summary text"))};
  expect_failure(pool_config(srv.base_url(), 5s, 10s), errc::llm_network, 0ms);
}

BOOST_AUTO_TEST_CASE(a_reset_connection_is_a_network_error) {
  loopback_server srv{loopback_server::reset()};
  expect_failure(pool_config(srv.base_url(), 5s, 10s), errc::llm_network, 0ms);
}

// ------------------------------------------------------------ pool bounds

BOOST_AUTO_TEST_CASE(concurrency_never_exceeds_the_bound_and_queued_requests_still_succeed) {
  loopback_server srv{loopback_server::delayed(200ms, 200, ok_body("ok"))};
  auto c = pool_config(srv.base_url(), 5s, 20s, 2, 16);
  auto pool = llm::spawn_llm_pool(*sys, c);
  caf::scoped_actor self{*sys};
  constexpr int n = 6;
  for (int i = 0; i < n; ++i)
    self->send(pool, llm_call_atom_v, summary_request());
  int ok = 0;
  for (int i = 0; i < n; ++i)
    self->receive([&](chat_answer& a) { ok += a.content == "ok"; },
                  [&](caf::error& err) { BOOST_ERROR(sys->render(err)); },
                  caf::after(20s) >> [&] { BOOST_FAIL("pool hung"); });
  BOOST_TEST(ok == n);
  BOOST_TEST(srv.peak_waiting_requests() <= 2);
  auto st = stats(pool);
  BOOST_TEST(st.max_in_flight == 2u);
  BOOST_TEST(st.succeeded == static_cast<uint64_t>(n));
  BOOST_TEST(st.in_flight == 0u);
  BOOST_TEST(st.queued == 0u);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_full_queue_answers_overloaded_before_the_running_calls_end) {
  loopback_server srv{loopback_server::silent()};
  auto c = pool_config(srv.base_url(), 3s, 20s, 1, 1);
  auto pool = llm::spawn_llm_pool(*sys, c);
  caf::scoped_actor self{*sys};
  for (int i = 0; i < 3; ++i) // one runs, one waits, the third finds the queue full
    self->send(pool, llm_call_atom_v, summary_request());
  std::vector<errc> codes;
  for (int i = 0; i < 3; ++i)
    self->receive([&](chat_answer&) { BOOST_ERROR("a silent server cannot answer"); },
                  [&](caf::error& err) { codes.push_back(static_cast<errc>(err.code())); },
                  caf::after(20s) >> [&] { BOOST_FAIL("pool hung"); });
  BOOST_REQUIRE(codes.size() == 3u);
  // The overload comes first, long before the idle timeouts of the other two.
  BOOST_TEST(codes[0] == errc::overloaded);
  BOOST_TEST(codes[1] == errc::llm_idle_timeout);
  BOOST_TEST(codes[2] == errc::llm_idle_timeout);
  auto st = stats(pool);
  BOOST_TEST(st.overloaded == 1u);
  BOOST_TEST(st.failed == 3u);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(a_request_whose_deadline_passes_in_the_queue_fails_with_total_timeout) {
  loopback_server srv{loopback_server::silent()};
  auto c = pool_config(srv.base_url(), 20s, 800ms, 1, 4);
  auto pool = llm::spawn_llm_pool(*sys, c);
  caf::scoped_actor self{*sys};
  self->send(pool, llm_call_atom_v, summary_request()); // occupies the only slot
  self->send(pool, llm_call_atom_v, summary_request()); // waits, then expires
  std::vector<std::string> rendered;
  for (int i = 0; i < 2; ++i)
    self->receive([&](chat_answer&) { BOOST_ERROR("a silent server cannot answer"); },
                  [&](caf::error& err) {
                    BOOST_TEST(static_cast<errc>(err.code()) == errc::llm_total_timeout);
                    rendered.push_back(render_error(err));
                  },
                  caf::after(10s) >> [&] { BOOST_FAIL("pool hung"); });
  BOOST_REQUIRE(rendered.size() == 2u);
  auto queued = std::count_if(rendered.begin(), rendered.end(), [](const std::string& s) {
    return s.find("while queued") != std::string::npos;
  });
  BOOST_TEST(queued == 1);
  BOOST_TEST(stats(pool).expired_in_queue == 1u);
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(the_callers_timeout_is_longer_so_the_precise_error_wins) {
  loopback_server srv{loopback_server::silent()};
  auto c = pool_config(srv.base_url(), 20s, 1s);
  BOOST_TEST(llm::caller_timeout(c).count() > c.endpoint.total_timeout.count());
  auto pool = llm::spawn_llm_pool(*sys, c);
  auto precise = call(pool, summary_request(), llm::caller_timeout(c));
  BOOST_REQUIRE(!precise.answer);
  BOOST_TEST(precise.code() == errc::llm_total_timeout);
  // Control: a caller that waits less than the HTTP deadline only learns "timeout".
  auto vague = call(pool, summary_request(), 300ms);
  BOOST_REQUIRE(!vague.answer);
  BOOST_TEST((vague.answer.error() == caf::sec::request_timeout));
  caf::anon_send_exit(pool, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(stopping_a_pool_answers_running_and_queued_calls_shutting_down) {
  loopback_server srv{loopback_server::silent()};
  auto c = pool_config(srv.base_url(), 30s, 60s, 2, 4);
  auto pool = llm::spawn_llm_pool(*sys, c);
  caf::scoped_actor self{*sys};
  for (int i = 0; i < 4; ++i)
    self->send(pool, llm_call_atom_v, summary_request());
  BOOST_TEST(stats(pool).in_flight == 2u);
  self->send_exit(pool, caf::exit_reason::user_shutdown);
  int errors = 0;
  for (int i = 0; i < 4; ++i)
    self->receive([&](chat_answer&) { BOOST_ERROR("no answer expected"); },
                  [&](caf::error& err) {
                    ++errors;
                    BOOST_TEST(static_cast<errc>(err.code()) == errc::shutting_down,
                               render_error(err));
                  },
                  // Below the 30 s idle timeout: only the stop can answer in time.
                  caf::after(25s) >> [&] { BOOST_FAIL("requesters left hanging"); });
  BOOST_TEST(errors == 4);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // llm_pool_test
