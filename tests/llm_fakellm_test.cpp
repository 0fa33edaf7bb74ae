// The LLM pool against the in-process fake LLM server (apps/common/fakellm): every
// fault the server injects comes back as its project error code before a generous
// bound; a purpose-targeted fault hits summary traffic only; a real answer round-trips.
// Streamed calls: the pieces handed on make the answer, text and tool calls alike; a
// stream cut or stalled mid-way fails after some pieces were handed on. Over Anthropic's
// Messages API (api: anthropic, the fake's POST /v1/messages) every fault yields the
// same code as over chat completions, whole and streamed.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "actors/llm/llm_pool.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "messages/llm_errc.hpp"
#include "tests/recording_stream.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(llm_fakellm_test)

namespace bdata = boost::unit_test::data;
using namespace std::chrono_literals;
using namespace mneme;

namespace {

using steady = std::chrono::steady_clock;

chat_request request(llm_purpose purpose, const std::string& text) {
  chat_request req;
  req.purpose = purpose;
  message m;
  m.session_id = "s-fake";
  m.role = msg_role::user;
  m.content = text;
  req.messages.push_back(m);
  return req;
}

struct fake_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fakellm::fake_llm_server server;

  fake_fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    auto port = server.start();
    BOOST_REQUIRE_MESSAGE(port, "fake server did not start");
  }

  llm::llm_pool_config pool_config(std::chrono::milliseconds idle,
                                    std::chrono::milliseconds total) {
    llm::llm_pool_config c;
    c.name = "fake";
    c.endpoint.url = llm::chat_completions_url(server.base_url());
    c.endpoint.model = "fake-model";
    c.endpoint.idle_timeout = idle;
    c.endpoint.total_timeout = total;
    c.max_concurrency = 4;
    c.max_queue = 16;
    return c;
  }

  // The same pool speaking Anthropic's Messages API to the fake's POST /v1/messages.
  llm::llm_pool_config messages_api(llm::llm_pool_config c) {
    c.endpoint.api = llm_api::anthropic;
    c.endpoint.url = llm::endpoint_url(server.base_url(), llm_api::anthropic);
    return c;
  }

  void set_fault(const std::string& kind, fakellm::purpose_filter purpose) {
    fakellm::fault_rule rule;
    rule.kind = *fakellm::parse_fault_kind(kind);
    rule.purpose = purpose;
    if (rule.kind == fakellm::fault_kind::refuse)
      rule.end_s = 600;
    if (rule.kind == fakellm::fault_kind::payload_too_large)
      rule.max_body_bytes = 10;
    if (rule.kind == fakellm::fault_kind::trickle)
      rule.silence_ms = 5000;
    fakellm::scenario s;
    s.plan.rules.push_back(rule);
    auto err = server.set_scenario(s);
    BOOST_REQUIRE_MESSAGE(!err, render_error(err));
  }

  caf::expected<chat_answer> call(const llm::llm_pool_config& c, chat_request req,
                                  std::chrono::milliseconds* elapsed = nullptr) {
    auto pool = llm::spawn_llm_pool(*sys, c);
    caf::scoped_actor self{*sys};
    caf::expected<chat_answer> out{caf::error{}};
    auto start = steady::now();
    self->request(pool, llm::caller_timeout(c), llm_call_atom_v, std::move(req))
      .receive([&](chat_answer& a) { out = std::move(a); },
               [&](caf::error& err) { out = std::move(err); });
    if (elapsed)
      *elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
    self->send_exit(pool, caf::exit_reason::user_shutdown);
    return out;
  }
};

std::string describe(const caf::expected<chat_answer>& r) {
  return r ? "answer: " + r->content : render_error(r.error());
}

int count_threads() {
  int n = 0;
  if (auto* dir = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(dir))
      n += e->d_name[0] != '.';
    ::closedir(dir);
  }
  return n;
}

errc code_of(const caf::expected<chat_answer>& r) {
  return r ? errc{} : static_cast<errc>(r.error().code());
}

// A chat request asking for a stream into `sink`, offering one tool when `tools`.
chat_request streamed(const std::shared_ptr<test::recording_stream>& sink, bool tools = false) {
  auto req = request(llm_purpose::chat, "tell me about the 数据库 migration plan in detail");
  req.stream = true;
  req.sink = sink;
  if (tools)
    req.tools_json = R"([{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}}}])";
  return req;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(llm_fakellm, fake_fixture)

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_handed_on_in_pieces_that_make_the_stored_content) {
  auto sink = std::make_shared<test::recording_stream>();
  auto res = call(pool_config(5s, 10s), streamed(sink));
  BOOST_REQUIRE_MESSAGE(res, describe(res));
  BOOST_TEST(res->content.size() > 64u); // more than one piece of the fake's stream
  BOOST_TEST(sink->text_pieces().size() > 1u);
  BOOST_TEST(sink->text() == res->content);
  BOOST_TEST(res->prompt_tokens > 0); // usage asked for with stream_options
  BOOST_TEST(res->finish_reason == "stop");
}

BOOST_AUTO_TEST_CASE(streamed_tool_calls_assemble_from_their_fragments) {
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  BOOST_REQUIRE(!server.set_scenario(s));
  auto sink = std::make_shared<test::recording_stream>();
  auto res = call(pool_config(5s, 10s), streamed(sink, true));
  BOOST_REQUIRE_MESSAGE(res, describe(res));
  BOOST_REQUIRE(!res->tool_calls.empty());
  BOOST_TEST(res->finish_reason == "tool_calls");
  std::vector<tool_call> assembled;
  for (const auto& f : sink->call_fragments()) {
    if (assembled.size() <= f.index)
      assembled.resize(f.index + 1);
    assembled[f.index].id += f.id;
    assembled[f.index].name += f.name;
    assembled[f.index].arguments += f.arguments;
  }
  BOOST_TEST(assembled == res->tool_calls);
  BOOST_TEST(sink->call_fragments().size() > res->tool_calls.size()); // arguments come apart
}

BOOST_DATA_TEST_CASE_F(fake_fixture, a_stream_cut_or_stalled_mid_way_fails_after_pieces_were_handed_on,
                       bdata::make({std::string{"truncated_body"}, std::string{"trickle"}})
                         ^ bdata::make({errc::llm_network, errc::llm_idle_timeout}),
                       kind, want) {
  set_fault(kind, fakellm::purpose_filter::chat);
  auto sink = std::make_shared<test::recording_stream>();
  auto res = call(pool_config(800ms, 10s), streamed(sink));
  BOOST_REQUIRE_MESSAGE(!res, "fault " << kind << " gave " << describe(res));
  BOOST_TEST(code_of(res) == want, describe(res));
  BOOST_TEST(sink->relayed()); // the client saw the first half
}

BOOST_AUTO_TEST_CASE(a_summary_from_the_fake_server_keeps_identifiers_and_reports_usage) {
  auto res = call(pool_config(5s, 10s),
                  request(llm_purpose::summary,
                          "Summarize, target about 200 tokens. We edited /srv/app/config.yaml "
                          "and fixed ERR_CONN_42 in build 1.2.3."));
  BOOST_REQUIRE_MESSAGE(res, describe(res));
  BOOST_TEST(res->content.find("/srv/app/config.yaml") != std::string::npos);
  BOOST_TEST(res->prompt_tokens > 0);
  BOOST_TEST(res->completion_tokens > 0);
  BOOST_TEST(server.stats().summary_requests == 1);
  BOOST_TEST(server.stats().chat_requests == 0);
}

BOOST_DATA_TEST_CASE_F(
  fake_fixture, every_fault_of_the_fake_server_yields_its_code_in_time,
  bdata::make({std::string{"refuse"}, std::string{"reset"}, std::string{"silence"},
               std::string{"unavailable"}, std::string{"payload_too_large"},
               std::string{"long_context_429"}, std::string{"overflow_400"},
               std::string{"malformed_json"}, std::string{"truncated_body"},
               std::string{"empty_content"}, std::string{"reasoning_only"},
               std::string{"trickle"}, std::string{"output_too_large_400"},
               std::string{"rate_limit_429"}})
    ^ bdata::make({errc::llm_refused, errc::llm_network, errc::llm_idle_timeout,
                   errc::llm_server_error, errc::llm_payload_too_large,
                   errc::llm_long_context_rate_limit, errc::llm_context_overflow,
                   errc::llm_malformed, errc::llm_network, errc::llm_empty_answer,
                   errc::llm_empty_answer, errc::llm_idle_timeout,
                   errc::llm_output_too_large, errc::llm_rate_limited}),
  kind, want) {
  set_fault(kind, fakellm::purpose_filter::any);
  std::chrono::milliseconds elapsed{0};
  // idle 800 ms, total 10 s: only silence and trickle may wait, and only for the idle.
  auto res = call(pool_config(800ms, 10s), request(llm_purpose::summary, "hello"), &elapsed);
  BOOST_REQUIRE_MESSAGE(!res, "fault " << kind << " gave " << describe(res));
  BOOST_TEST(code_of(res) == want, "fault " << kind << " gave " << describe(res));
  if (want == errc::llm_idle_timeout)
    BOOST_TEST(elapsed.count() >= 750);
}

BOOST_DATA_TEST_CASE_F(
  fake_fixture, every_fault_over_the_messages_api_yields_the_same_code_as_over_chat_completions,
  bdata::make({std::string{"refuse"}, std::string{"reset"}, std::string{"silence"},
               std::string{"unavailable"}, std::string{"payload_too_large"},
               std::string{"long_context_429"}, std::string{"overflow_400"},
               std::string{"malformed_json"}, std::string{"truncated_body"},
               std::string{"empty_content"}, std::string{"reasoning_only"},
               std::string{"trickle"}, std::string{"output_too_large_400"},
               std::string{"rate_limit_429"}})
    ^ bdata::make({errc::llm_refused, errc::llm_network, errc::llm_idle_timeout,
                   errc::llm_server_error, errc::llm_payload_too_large,
                   errc::llm_long_context_rate_limit, errc::llm_context_overflow,
                   errc::llm_malformed, errc::llm_network, errc::llm_empty_answer,
                   errc::llm_empty_answer, errc::llm_idle_timeout,
                   errc::llm_output_too_large, errc::llm_rate_limited}),
  kind, want) {
  set_fault(kind, fakellm::purpose_filter::any);
  auto res = call(messages_api(pool_config(800ms, 10s)), request(llm_purpose::summary, "hello"));
  BOOST_REQUIRE_MESSAGE(!res, "fault " << kind << " gave " << describe(res));
  BOOST_TEST(code_of(res) == want, "fault " << kind << " gave " << describe(res));
  BOOST_TEST(server.stats().messages_requests >= (kind == "refuse" ? 0 : 1));
}

BOOST_DATA_TEST_CASE_F(fake_fixture, a_messages_stream_broken_mid_way_fails_with_the_same_code,
                       bdata::make({std::string{"truncated_body"}, std::string{"trickle"},
                                    std::string{"malformed_json"}, std::string{"unavailable"}})
                         ^ bdata::make({errc::llm_network, errc::llm_idle_timeout,
                                        errc::llm_malformed, errc::llm_server_error}),
                       kind, want) {
  set_fault(kind, fakellm::purpose_filter::chat);
  auto sink = std::make_shared<test::recording_stream>();
  auto res = call(messages_api(pool_config(800ms, 10s)), streamed(sink, true));
  BOOST_REQUIRE_MESSAGE(!res, "fault " << kind << " gave " << describe(res));
  BOOST_TEST(code_of(res) == want, describe(res));
}

BOOST_AUTO_TEST_CASE(a_streamed_messages_answer_hands_on_pieces_that_make_the_answer) {
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  BOOST_REQUIRE(!server.set_scenario(s));
  auto sink = std::make_shared<test::recording_stream>();
  auto res = call(messages_api(pool_config(5s, 10s)), streamed(sink, true));
  BOOST_REQUIRE_MESSAGE(res, describe(res));
  BOOST_REQUIRE(!res->tool_calls.empty());
  BOOST_TEST(res->finish_reason == "tool_calls");
  std::vector<std::string> args(res->tool_calls.size());
  for (const auto& f : sink->call_fragments()) {
    BOOST_REQUIRE(f.index < args.size());
    args[f.index] += f.arguments;
  }
  for (size_t i = 0; i < args.size(); ++i)
    BOOST_TEST(args[i] == res->tool_calls[i].arguments);
  BOOST_TEST(server.stats().messages_requests == 1);
}

BOOST_AUTO_TEST_CASE(the_upstreams_retry_after_header_rides_on_the_error_over_both_wires) {
  for (bool anthropic : {false, true}) {
    fakellm::fault_rule rule;
    rule.kind = fakellm::fault_kind::rate_limit_429;
    rule.retry_after = "42";
    fakellm::scenario s;
    s.plan.rules = {rule};
    BOOST_REQUIRE(!server.set_scenario(s));
    auto c = anthropic ? messages_api(pool_config(5s, 10s)) : pool_config(5s, 10s);
    auto limited = call(c, request(llm_purpose::chat, "hello"));
    BOOST_REQUIRE(!limited);
    BOOST_TEST(code_of(limited) == errc::llm_rate_limited);
    BOOST_TEST(upstream_retry_after_of(limited.error()).value_or(-1) == 42);
    // The same fault without the header: no wait.
    s.plan.rules[0].retry_after.clear();
    BOOST_REQUIRE(!server.set_scenario(s));
    auto plain = call(c, request(llm_purpose::chat, "hello"));
    BOOST_REQUIRE(!plain);
    BOOST_TEST(!upstream_retry_after_of(plain.error()));
  }
}

BOOST_AUTO_TEST_CASE(a_prompt_over_the_fake_window_is_a_context_overflow) {
  fakellm::scenario s;
  s.window_tokens = 1000;
  BOOST_REQUIRE(!server.set_scenario(s));
  auto res = call(pool_config(5s, 10s), request(llm_purpose::chat, std::string(20000, 'a')));
  BOOST_TEST(code_of(res) == errc::llm_context_overflow, describe(res));
}

BOOST_AUTO_TEST_CASE(a_fault_aimed_at_summaries_leaves_chat_traffic_alone) {
  set_fault("unavailable", fakellm::purpose_filter::summary);
  auto summary = call(pool_config(5s, 10s), request(llm_purpose::summary, "hello"));
  BOOST_TEST(code_of(summary) == errc::llm_server_error, describe(summary));
  auto chat = call(pool_config(5s, 10s), request(llm_purpose::chat, "hello"));
  BOOST_TEST(static_cast<bool>(chat), describe(chat));
}

BOOST_AUTO_TEST_CASE(added_latency_below_the_timeouts_still_answers) {
  fakellm::fault_rule rule;
  rule.kind = fakellm::fault_kind::latency;
  rule.latency_ms = 300;
  fakellm::scenario s;
  s.plan.rules.push_back(rule);
  BOOST_REQUIRE(!server.set_scenario(s));
  std::chrono::milliseconds elapsed{0};
  auto res = call(pool_config(2s, 10s), request(llm_purpose::chat, "hello"), &elapsed);
  BOOST_TEST(static_cast<bool>(res), describe(res));
  BOOST_TEST(elapsed.count() >= 290);
}

BOOST_AUTO_TEST_CASE(two_hundred_concurrent_calls_add_no_thread_beyond_the_pools_one) {
  fakellm::fault_rule rule;
  rule.kind = fakellm::fault_kind::latency;
  rule.latency_ms = 300;
  fakellm::scenario s;
  s.plan.rules.push_back(rule);
  BOOST_REQUIRE(!server.set_scenario(s));
  auto c = pool_config(10s, 30s);
  c.max_concurrency = 200;
  c.max_queue = 0;
  auto pool = llm::spawn_llm_pool(*sys, c);
  caf::scoped_actor self{*sys};
  self->request(pool, llm::caller_timeout(c), llm_call_atom_v,
                request(llm_purpose::summary, "warm-up"))
    .receive([](chat_answer&) {}, [](caf::error& err) { BOOST_FAIL(render_error(err)); });
  auto threads_before = count_threads(); // the pool's transport thread included
  std::atomic<bool> stop{false};
  std::atomic<int> peak{0};
  std::thread sampler{[&] {
    while (!stop) {
      peak = std::max(peak.load(), count_threads() - 1); // minus the sampler itself
      std::this_thread::sleep_for(1ms);
    }
  }};
  constexpr int n = 200;
  for (int i = 0; i < n; ++i)
    self->send(pool, llm_call_atom_v, request(llm_purpose::summary, "call " + std::to_string(i)));
  int ok = 0;
  for (int i = 0; i < n; ++i)
    self->receive([&](chat_answer&) { ++ok; },
                  [&](caf::error& err) { BOOST_ERROR(render_error(err)); },
                  caf::after(30s) >> [&] { BOOST_FAIL("pool hung"); });
  stop = true;
  sampler.join();
  BOOST_TEST(ok == n);
  BOOST_TEST(peak.load() <= threads_before);
  caf::scoped_actor probe{*sys};
  probe->request(pool, 5s, llm_stats_atom_v)
    .receive([&](llm_pool_stats& st) { BOOST_TEST(st.max_in_flight > 1u); },
             [](caf::error& err) { BOOST_FAIL(render_error(err)); });
  self->send_exit(pool, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // llm_fakellm_test
