// Tests of the LLM transport (actors/llm/curl_multi_loop): each call completes exactly
// once, the in-flight count returns to zero, a completion may submit the next call,
// and stopping the loop completes what is still running.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "actors/llm/curl_multi_loop.hpp"
#include "tests/llm_loopback_server.hpp"

BOOST_AUTO_TEST_SUITE(llm_transport_test)

using namespace std::chrono_literals;
using namespace mneme;
using namespace mneme::llm;
using mneme::test::loopback_server;

namespace {

// Collects outcomes from the loop thread; wait_for(n) blocks the test thread only.
struct collector {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<http_outcome> outcomes;

  curl_multi_loop::completion sink() {
    return [this](http_outcome out) {
      std::lock_guard<std::mutex> guard{mtx};
      outcomes.push_back(std::move(out));
      cv.notify_all();
    };
  }
  bool wait_for(size_t n, std::chrono::seconds bound = 10s) {
    std::unique_lock<std::mutex> lock{mtx};
    return cv.wait_for(lock, bound, [&] { return outcomes.size() >= n; });
  }
};

http_call call_to(const std::string& base, std::chrono::milliseconds idle = 5s,
                  std::chrono::milliseconds total = 10s) {
  http_call c;
  c.url = base + "/v1/chat/completions";
  c.body = "{}";
  c.idle_timeout = idle;
  c.total_timeout = total;
  return c;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_call_completes_once_and_in_flight_returns_to_zero) {
  loopback_server srv{loopback_server::canned(200, "{\"ok\":true}")};
  curl_multi_loop loop{"llm-test"};
  collector got;
  for (int i = 0; i < 5; ++i)
    loop.submit(call_to(srv.base_url()), got.sink());
  BOOST_REQUIRE(got.wait_for(5));
  for (const auto& out : got.outcomes) {
    BOOST_TEST(out.transport == llm_error_kind::none);
    BOOST_TEST(out.status == 200);
    BOOST_TEST(out.body == "{\"ok\":true}");
  }
  BOOST_TEST(loop.in_flight() == 0u);
  BOOST_TEST(srv.requests().size() == 5u);
}

BOOST_AUTO_TEST_CASE(a_completion_may_submit_the_next_call) {
  loopback_server srv{loopback_server::canned(503, "busy")};
  curl_multi_loop loop;
  collector got;
  std::atomic<int> chained{0};
  loop.submit(call_to(srv.base_url()), [&](http_outcome out) {
    ++chained;
    got.sink()(std::move(out));
    loop.submit(call_to(srv.base_url()), got.sink()); // runs on the loop thread
  });
  BOOST_REQUIRE(got.wait_for(2));
  BOOST_TEST(chained.load() == 1);
  BOOST_TEST(got.outcomes[0].status == 503);
  BOOST_TEST(got.outcomes[1].status == 503);
}

BOOST_AUTO_TEST_CASE(stopping_the_loop_completes_running_calls_as_network_errors) {
  loopback_server srv{loopback_server::silent()};
  collector got;
  {
    curl_multi_loop loop;
    for (int i = 0; i < 3; ++i)
      loop.submit(call_to(srv.base_url(), 30s, 60s), got.sink());
    // Let the calls reach the server before stopping.
    for (int i = 0; i < 100 && srv.requests().size() < 3; ++i)
      std::this_thread::sleep_for(20ms);
  } // destructor: stop + join
  BOOST_REQUIRE(got.outcomes.size() == 3u);
  for (const auto& out : got.outcomes) {
    BOOST_TEST(out.transport == llm_error_kind::network);
    BOOST_TEST(out.transport_detail == "transport stopped");
  }
}

BOOST_AUTO_TEST_CASE(the_idle_clock_counts_from_the_last_byte_not_from_the_start) {
  // Headers and 10 body bytes arrive at once, then nothing: idle fires 600 ms later.
  loopback_server srv{loopback_server::stall_after(std::string(100, 'x'), 10)};
  curl_multi_loop loop;
  collector got;
  loop.submit(call_to(srv.base_url(), 600ms, 20s), got.sink());
  BOOST_REQUIRE(got.wait_for(1));
  const auto& out = got.outcomes[0];
  BOOST_TEST(out.transport == llm_error_kind::idle_timeout);
  BOOST_TEST(out.body == std::string(10, 'x')); // what arrived is kept for the excerpt
  BOOST_TEST(out.elapsed.count() >= 550000); // not before it was due (the total is 20 s)
}

BOOST_AUTO_TEST_SUITE_END() // llm_transport_test
