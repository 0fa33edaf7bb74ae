// The daemon's API under many clients at once, in process (a runtime on a temporary
// SQLite file, the fake LLM answering after 100 ms, the API on the event-driven front
// with 2 I/O threads): 1,000 turns in flight at the same moment on 1,000 connections are
// all answered, each in its own session, and the process gains no thread per client;
// the bearer token is checked before a body is read.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/raw_http_client.hpp"
// Named here, not only through the fixture: CMakeLists.txt links mneme_core to a test
// that includes an apps/ header itself.
#include "apps/common/api/http_server.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_concurrency_test)

using namespace mneme;
using namespace std::chrono_literals;
using json = nlohmann::json;
using testing::raw_client;

namespace {

size_t thread_count() {
  size_t n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

std::string turn_request(const std::string& key, const std::string& text,
                         const std::string& auth = "") {
  auto body = json{{"user", "load"}, {"content", text}}.dump();
  return "POST /v1/sessions/" + key + "/turns HTTP/1.1\r\nHost: t\r\n" + auth
         + "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size())
         + "\r\n\r\n" + body;
}

struct load_fixture : test::http_api_fixture {
  void serve(api::http_api_options opt = {}) { http_api_fixture::serve(opt, 2); }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(a_thousand_concurrent_turns_are_all_answered_without_a_thread_each,
                        load_fixture) {
  constexpr int clients = 1000;
  rc.chat.max_concurrency = 256;
  rc.chat.max_queue = 4096;
  serve();
  auto slow = rule(fakellm::fault_kind::latency, fakellm::purpose_filter::chat);
  slow.latency_ms = 100;
  faults({slow});
  auto threads_before = thread_count();

  std::vector<std::unique_ptr<raw_client>> conns;
  for (int i = 0; i < clients; ++i) {
    conns.push_back(std::make_unique<raw_client>(port));
    BOOST_REQUIRE(conns.back()->connected());
  }
  for (int i = 0; i < clients; ++i)
    BOOST_REQUIRE(conns[i]->send(turn_request("load-" + std::to_string(i),
                                              "question number " + std::to_string(i))));
  auto threads_max = thread_count();
  int answered = 0;
  std::set<std::string> sessions;
  for (int i = 0; i < clients; ++i) {
    auto r = conns[i]->read_response(120s);
    threads_max = std::max(threads_max, thread_count());
    BOOST_REQUIRE_MESSAGE(r, "client " << i << ": " << to_string(conns[i]->last_end()));
    BOOST_TEST(r->status == 200, "client " << i << ": " << r->body);
    if (r->status != 200)
      continue;
    ++answered;
    auto body = json::parse(r->body);
    sessions.insert(body["session_id"].get<std::string>());
    BOOST_TEST(!body["answer"].get<std::string>().empty());
  }
  BOOST_TEST(answered == clients);
  BOOST_TEST(sessions.size() == static_cast<size_t>(clients));
  BOOST_TEST(llm.stats().chat_requests == clients);
  // 1,000 requests in flight cost no thread each (a few for the pools' lazy starts).
  BOOST_TEST(threads_max <= threads_before + 8,
             "threads before " << threads_before << ", at most " << threads_max);
  BOOST_TEST_MESSAGE("threads before " << threads_before << ", during " << threads_max);
}

BOOST_FIXTURE_TEST_CASE(a_request_without_the_token_is_401_before_its_body_is_read,
                        load_fixture) {
  api::http_api_options opt;
  opt.auth_token = "tok-front";
  serve(opt);
  raw_client c{port};
  BOOST_REQUIRE(c.connected());
  // A body of 1 MB is announced and never sent: the answer cannot wait for it.
  BOOST_REQUIRE(c.send("POST /v1/sessions/k/messages HTTP/1.1\r\nHost: t\r\n"
                       "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"));
  auto r = c.read_response(20s);
  BOOST_REQUIRE_MESSAGE(r, to_string(c.last_end()));
  BOOST_TEST(r->status == 401);
  BOOST_TEST(r->header("WWW-Authenticate") == "Bearer");
  BOOST_TEST(json::parse(r->body)["error"]["code"] == "unauthorized");
  BOOST_TEST(c.wait_closed(20s));
  // With the token the same route works.
  raw_client ok{port};
  BOOST_REQUIRE(ok.send(turn_request("k", "hello", "Authorization: Bearer tok-front\r\n")));
  auto t = ok.read_response(60s);
  BOOST_REQUIRE(t);
  BOOST_TEST(t->status == 200, t->body);
}

BOOST_AUTO_TEST_SUITE_END() // http_concurrency_test
