// Load test of the fake LLM server: thousands of concurrent connections, each
// request delayed by an injected latency, are all answered by a server that runs
// at most 3 threads. The client is a single-threaded epoll loop in this test, so
// the process's thread count minus the baseline is the server's. Pass/fail is
// decided by completion and thread counts, never by time (wall time is logged).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "fake_llm_test_client.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_load_test)

using namespace mneme::fakellm;
using namespace mneme::fakellm::testing;
namespace data = boost::unit_test::data;

namespace {

constexpr int max_server_threads = 3;
constexpr int64_t injected_latency_ms = 500;

int process_threads() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

void raise_fd_limit() {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &lim);
}

struct pending {
  int fd = -1;
  std::string out;
  size_t sent = 0;
  std::string in;
  int status = 0;
  bool done = false;
};

struct load_result {
  int answered = 0;
  int ok = 0;
  int max_threads_in_flight = 0;
  double wall_s = 0;
};

// Opens `n` connections at once, sends one chat request on each, and waits
// (bounded by a safety cap, not a timing assertion) until every one is answered.
load_result run_load(uint16_t port, int n) {
  load_result res;
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<pending> conns(static_cast<size_t>(n));
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    auto& c = conns[static_cast<size_t>(i)];
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // EINPROGRESS
    c.out = post_request("/v1/chat/completions",
                         R"({"model":"load","messages":[{"role":"user","content":"request )" +
                             std::to_string(i) + R"("}]})");
    epoll_event ev{};
    ev.events = EPOLLOUT | EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    ::epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  std::vector<epoll_event> events(1024);
  auto cap = start + std::chrono::seconds(120);
  while (res.answered < n && std::chrono::steady_clock::now() < cap) {
    int k = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    res.max_threads_in_flight = std::max(res.max_threads_in_flight, process_threads());
    for (int e = 0; e < k; ++e) {
      auto& c = conns[events[e].data.u32];
      if (c.done) continue;
      if ((events[e].events & EPOLLOUT) && c.sent < c.out.size()) {
        auto w = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (w > 0) c.sent += static_cast<size_t>(w);
        if (c.sent == c.out.size()) {
          epoll_event ev{};
          ev.events = EPOLLIN;
          ev.data.u32 = events[e].data.u32;
          ::epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
        }
      }
      if (events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        char buf[8192];
        auto r = ::recv(c.fd, buf, sizeof buf, 0);
        if (r > 0) c.in.append(buf, static_cast<size_t>(r));
        raw_result parsed;
        bool finished = parse_response(c.in, parsed) > 0;
        if (finished || r == 0 || (r < 0 && errno != EAGAIN)) {
          c.done = true;
          c.status = finished ? parsed.status : 0;
          ++res.answered;
          res.ok += c.status == 200;
          ::close(c.fd);
        }
      }
    }
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& c : conns)
    if (!c.done) ::close(c.fd);
  ::close(ep);
  return res;
}

} // namespace

BOOST_DATA_TEST_CASE(thousands_of_concurrent_delayed_requests_are_all_answered_by_three_threads,
                     data::make({1000, 3000}), concurrency) {
  raise_fd_limit();
  int baseline = process_threads();
  fake_llm_server server;
  auto port = server.start();
  BOOST_TEST_REQUIRE(static_cast<bool>(port));
  scenario s;
  fault_rule latency;
  latency.kind = fault_kind::latency;
  latency.latency_ms = injected_latency_ms;
  s.plan.rules.push_back(latency);
  BOOST_TEST_REQUIRE(!server.set_scenario(s));

  auto res = run_load(*port, concurrency);
  BOOST_TEST_MESSAGE("concurrency=" << concurrency << " latency_ms=" << injected_latency_ms
                                    << " wall_s=" << res.wall_s << " answered=" << res.answered
                                    << " server_threads=" << res.max_threads_in_flight - baseline);
  BOOST_TEST(res.answered == concurrency);
  BOOST_TEST(res.ok == concurrency);
  BOOST_TEST(res.max_threads_in_flight - baseline <= max_server_threads);
  BOOST_TEST(server.thread_count() <= max_server_threads);
  auto st = server.stats();
  BOOST_TEST(st.chat_requests == concurrency);
  BOOST_TEST(st.injected_of(fault_kind::latency) == concurrency);
  BOOST_TEST(st.connections_accepted == concurrency);
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_load_test
