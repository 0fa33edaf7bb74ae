// Tests of the daemon's event-driven HTTP/1.1 front (apps/common/api/front/http_front.hpp)
// against a test handler, no mneme runtime: slow clients, strict HTTP, the admit
// verdict before the body, the size limits and deadlines (header, body, write), the
// connection cap, keep-alive, pipelining, 100-continue, streamed answers and their
// back-pressure, start/stop_accepting, HEAD and the answer-once contract of http_reply.
//
// The client is a raw socket (tests/raw_http_client.hpp) so every byte is ours. Time
// never decides pass/fail: each wait has a generous bound and the assertions are about
// what arrived (or that the server closed), counters and what the handler saw.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/front/http_front.hpp"
#include "messages/errc.hpp"
#include "tests/raw_http_client.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(http_front_test)

namespace data = boost::unit_test::data;
using namespace std::chrono_literals;
using mneme::api::body_deadline;
using mneme::api::event_stream;
using mneme::api::front_handler;
using mneme::api::front_limits;
using mneme::api::http_front;
using mneme::api::http_reply;
using mneme::api::http_request;
using mneme::api::http_response;
using mneme::testing::err_of;
using mneme::testing::raw_client;
using mneme::testing::raw_response;
using mneme::testing::to_string;
using ms = std::chrono::milliseconds;

namespace {

constexpr size_t flood_chunk_bytes = 16 * 1024;
constexpr int flood_max_chunks = 4096;    // 64 MiB: far above any socket buffering
constexpr int forever_max_events = 3000;  // 20 ms apart: a minute

std::string get(const std::string& target, const std::string& method = "GET") {
  return method + " " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

std::string post(const std::string& target, const std::string& body) {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Chunk i of /bulk: 64 KiB of one letter, led by its number. Larger than a loopback
// socket takes at once from a slow reader, so its write is partial.
constexpr size_t bulk_chunk_bytes = 64 * 1024;
std::string bulk_chunk(int i) {
  std::string c = "chunk " + std::to_string(i) + "\n";
  c.resize(bulk_chunk_bytes, static_cast<char>('a' + i % 26));
  return c;
}

std::string path_of(const std::string& target) { return target.substr(0, target.find('?')); }

int query_int(const std::string& target, const std::string& key, int fallback) {
  auto q = target.find('?');
  if (q == std::string::npos)
    return fallback;
  auto at = target.find(key + "=", q);
  if (at == std::string::npos)
    return fallback;
  return std::atoi(target.c_str() + at + key.size() + 1);
}

http_response text(int status, std::string body) {
  http_response r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

// `bytes` with CR and LF spelled out, for messages.
std::string shown(const std::string& bytes) {
  std::string out;
  for (char c : bytes.substr(0, 200))
    out += c == '\r' ? std::string{"\\r"} : c == '\n' ? std::string{"\\n"} : std::string(1, c);
  return out;
}

// Polls `pred` every 5 ms for up to `bound`; its last value.
template <class Pred>
bool eventually(Pred pred, ms bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return pred();
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// What a producer thread of a streamed answer ended with.
struct producer_outcome {
  bool done = false;
  bool refused = false; // a push() returned false
  int pushes = 0;       // accepted pushes
};

// The front under test with a handler of known routes:
//   /fast          200 "ok" at once
//   /echo          200 with the request body
//   /slow?ms=N     200 "slow" from another thread after N ms
//   /stream?n=K    K events "data: i\n\n" pushed from inside handle(), then end()
//   /flood         16 KiB chunks from a producer thread until push() returns false
//   /forever       a small event every 20 ms until push() returns false
//   /bulk?n=K      K numbered 64 KiB chunks, the first from inside handle(), the rest
//                  from a producer thread, then end()
//   /twice         answers "first", then tries to answer "second" and to stream
//   /status?code=N 200..599 answer with status N; &retry_after=S adds that Retry-After
// admit() answers 401 to a request with the header X-Deny; a request with the header
// X-Reserved may be served on a reserve connection.
struct front_fixture {
  front_limits limits;
  std::unique_ptr<http_front> front;
  int port = 0;

  std::atomic<int> admitted{0};
  std::atomic<int> handled{0};
  std::atomic<int> inside{0};      // requests handed to handle() and not yet answered
  std::atomic<int> max_inside{0};
  std::atomic<bool> admit_saw_body{false};
  std::atomic<bool> stopping{false};

  std::mutex mu; // guards the outcomes, threads
  std::condition_variable cv;
  producer_outcome flood, forever, bulk;
  std::optional<bool> twice_first, twice_second, twice_stream_refused;
  std::vector<std::thread> threads;

  ~front_fixture() {
    stopping = true;
    std::vector<std::thread> joining;
    {
      std::lock_guard lock{mu};
      joining.swap(threads);
    }
    for (auto& t : joining)
      t.join();
    if (front)
      front->stop();
  }

  void start(size_t io_threads = 2) {
    front_handler h;
    h.admit = [this](const http_request& head) { return admit(head); };
    h.handle = [this](http_request req, http_reply reply) {
      handle(std::move(req), std::move(reply));
    };
    h.reserved = [](const http_request& head) { return !head.header("X-Reserved").empty(); };
    front = std::make_unique<http_front>(limits, std::move(h), io_threads);
    auto bound = front->start("127.0.0.1", 0);
    BOOST_REQUIRE_MESSAGE(bound, "the front did not start: " << err_of(bound));
    port = *bound;
  }

  const mneme::api::front_counters& counters() const { return front->counters(); }

  // Waits up to `bound` for `pred` over the outcomes (under mu).
  template <class Pred>
  bool wait_outcome(Pred pred, ms bound) {
    std::unique_lock lock{mu};
    return cv.wait_for(lock, bound, pred);
  }

 private:
  std::optional<http_response> admit(const http_request& head) {
    ++admitted;
    if (!head.body.empty())
      admit_saw_body = true;
    if (head.header("X-Deny").empty())
      return std::nullopt;
    http_response r;
    r.status = 401;
    r.content_type = "application/json";
    r.body = R"({"error":{"code":"unauthorized","message":"denied"}})";
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }

  void enter() {
    int now = ++inside;
    int seen = max_inside.load();
    while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
    }
  }

  // Called just before the answer, so that the next pipelined request (which the front
  // may hand over as soon as the answer is written) never counts this one.
  void leave() { --inside; }

  void spawn(std::function<void()> f) {
    std::lock_guard lock{mu};
    threads.emplace_back(std::move(f));
  }

  void handle(http_request req, http_reply reply) {
    ++handled;
    enter();
    auto path = path_of(req.target);
    if (path == "/fast") {
      leave();
      reply.answer(text(200, "ok"));
    } else if (path == "/status") {
      leave();
      auto r = text(query_int(req.target, "code", 200), "status");
      if (int s = query_int(req.target, "retry_after", -1); s >= 0)
        r.headers.emplace_back("Retry-After", std::to_string(s));
      reply.answer(std::move(r));
    } else if (path == "/echo") {
      leave();
      reply.answer(text(200, std::move(req.body)));
    } else if (path == "/slow") {
      int delay = query_int(req.target, "ms", 100);
      spawn([this, reply, delay] {
        std::this_thread::sleep_for(ms{delay});
        leave();
        reply.answer(text(200, "slow"));
      });
    } else if (path == "/stream") {
      int n = query_int(req.target, "n", 3);
      auto s = reply.stream(200, "text/event-stream");
      for (int i = 0; i < n; ++i)
        s->push("data: " + std::to_string(i) + "\n\n");
      s->end();
      leave();
    } else if (path == "/flood") {
      auto s = reply.stream(200, "text/event-stream");
      leave();
      spawn([this, s] { produce(s, std::string(flood_chunk_bytes, 'f'), 0ms,
                                flood_max_chunks, flood); });
    } else if (path == "/forever") {
      auto s = reply.stream(200, "text/event-stream");
      leave();
      spawn([this, s] { produce(s, "data: tick\n\n", 20ms, forever_max_events, forever); });
    } else if (path == "/bulk") {
      int n = query_int(req.target, "n", 4);
      auto s = reply.stream(200, "application/octet-stream");
      s->push(bulk_chunk(0));
      leave();
      spawn([this, s, n] {
        int pushes = 1;
        bool refused = false;
        for (int i = 1; i < n && !stopping; ++i, ++pushes)
          if (!s->push(bulk_chunk(i))) {
            refused = true;
            break;
          }
        s->end();
        {
          std::lock_guard lock{mu};
          bulk.done = true;
          bulk.refused = refused;
          bulk.pushes = pushes;
        }
        cv.notify_all();
      });
    } else if (path == "/twice") {
      leave();
      bool first = reply.answer(text(200, "first"));
      bool second = reply.answer(text(200, "second"));
      bool stream_refused = reply.stream(200, "text/plain") == nullptr;
      std::lock_guard lock{mu};
      twice_first = first;
      twice_second = second;
      twice_stream_refused = stream_refused;
    } else {
      leave();
      reply.answer(text(404, "no route"));
    }
  }

  // Pushes `event` every `pause` until push() refuses, `max` pushes, or the fixture ends.
  void produce(const std::shared_ptr<event_stream>& s, const std::string& event, ms pause,
               int max, producer_outcome& out) {
    int pushes = 0;
    bool refused = false;
    while (pushes < max && !stopping) {
      if (!s->push(event)) {
        refused = true;
        break;
      }
      ++pushes;
      if (pause > 0ms)
        std::this_thread::sleep_for(pause);
    }
    s->end();
    {
      std::lock_guard lock{mu};
      out.done = true;
      out.refused = refused;
      out.pushes = pushes;
    }
    cv.notify_all();
  }
};

void require_json_error(const raw_response& r, const std::string& code) {
  BOOST_TEST(r.header("Content-Type") == "application/json");
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  BOOST_REQUIRE_MESSAGE(!j.is_discarded(), "the body is not JSON: " << r.body);
  BOOST_REQUIRE_MESSAGE(j.contains("error") && j["error"].is_object(),
                        "no error object: " << r.body);
  BOOST_TEST(j["error"].value("code", "") == code);
  BOOST_TEST(!j["error"].value("message", "").empty());
}

// One raw request that the front must refuse with 400 before the handler sees it.
struct bad_request_case {
  const char* name;
  std::string bytes;
};

std::ostream& operator<<(std::ostream& os, const bad_request_case& c) { return os << c.name; }

const std::vector<bad_request_case> bad_requests{
  {"Content-Length then Transfer-Encoding: chunked",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
   "5\r\nhello\r\n0\r\n\r\n"},
  {"Transfer-Encoding: chunked then Content-Length",
   "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
   "5\r\nhello\r\n0\r\n\r\n"},
  {"two equal Content-Length headers",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"},
  {"two different Content-Length headers",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"},
  {"a Content-Length list",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\nhello!"},
  {"a Content-Length list of equal values",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello"},
  {"a Content-Length with a sign",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello"},
  {"Transfer-Encoding: gzip",
   "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nhello"},
  {"Transfer-Encoding: gzip, chunked",
   "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
   "5\r\nhello\r\n0\r\n\r\n"},
  {"a chunk size that is not hex",
   "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"},
  {"a malformed request line", "NOT A REQUEST LINE\r\nHost: x\r\n\r\n"},
  {"a header line without a colon", "GET /fast HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n"},
  {"white space between a header name and the colon",
   "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n"
   "hello"},
  {"a negative Content-Length",
   "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"},
};

} // namespace

// --- pure logic ------------------------------------------------------------------

struct deadline_case {
  int64_t body_timeout_ms;
  int64_t bytes_per_second;
  int64_t bytes;
  int64_t want_ms;
};

std::ostream& operator<<(std::ostream& os, const deadline_case& c) {
  return os << c.body_timeout_ms << " ms + " << c.bytes << " B at " << c.bytes_per_second
            << " B/s = " << c.want_ms << " ms";
}

BOOST_DATA_TEST_CASE(the_body_deadline_adds_one_second_per_rate_bytes_rounded_up,
                     data::make(std::vector<deadline_case>{
                       {10000, 65536, 65536, 11000},
                       {10000, 65536, 0, 10000},
                       {10000, 65536, 1, 10001},     // 0.015 ms rounds up to 1
                       {10000, 65536, 65537, 11001}, // 1000.015 ms rounds up
                       {10000, 65536, 4 * 1024 * 1024, 74000},
                       {1000, 1000, 1500, 2500},
                       {0, 1, 1, 1000},
                       {1000, 65536, -5, 1000},      // a negative size adds nothing
                       {1000, 0, 2, 3000},           // a rate below 1 counts as 1 B/s
                     }),
                     c) {
  front_limits limits;
  limits.body_timeout = ms{c.body_timeout_ms};
  limits.body_min_bytes_per_second = c.bytes_per_second;
  BOOST_TEST(body_deadline(limits, c.bytes).count() == c.want_ms);
}

// --- slow clients ------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(more_slow_connections_than_io_threads_do_not_stop_a_fast_request,
                        front_fixture) {
  limits.header_timeout = 2s;
  start(1);
  constexpr int n_slow = 50;
  std::vector<std::unique_ptr<raw_client>> slow;
  for (int i = 0; i < n_slow; ++i) {
    slow.push_back(std::make_unique<raw_client>(port));
    BOOST_REQUIRE(slow.back()->connected());
    BOOST_REQUIRE(slow.back()->send("GET /fast HTTP/1.1\r\nHost: x\r\nX-Slow: "));
  }
  for (auto& c : slow)
    c->send("a");

  raw_client fast{port};
  BOOST_REQUIRE(fast.send(get("/fast")));
  // A front that served the 50 heads one after the other would answer after 50 x 2 s.
  auto r = fast.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer to the fast request: " << to_string(fast.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->body == "ok");

  // A byte more now and then does not extend the header deadline: all are closed.
  std::vector<bool> closed(n_slow, false);
  auto deadline = std::chrono::steady_clock::now() + 15s;
  while (std::count(closed.begin(), closed.end(), true) < n_slow
         && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < n_slow; ++i) {
      if (closed[i])
        continue;
      slow[i]->send("a", 0ms);
      closed[i] = slow[i]->wait_closed(0ms);
    }
    std::this_thread::sleep_for(100ms);
  }
  BOOST_TEST(std::count(closed.begin(), closed.end(), true) == n_slow);
  BOOST_TEST(eventually([&] { return counters().header_timeouts >= n_slow; }, 5s));
  BOOST_TEST(counters().header_timeouts.load() >= n_slow);
  BOOST_TEST(handled == 1); // only the fast request reached the handler
}

// --- strict HTTP -------------------------------------------------------------------

BOOST_DATA_TEST_CASE_F(front_fixture,
                       a_request_that_is_not_strict_http_is_400_and_closes_the_connection,
                       data::make(bad_requests), c) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(c.bytes));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 400);
  require_json_error(*r, "bad_request");
  BOOST_TEST(r->header("Connection") == "close");
  BOOST_TEST(client.wait_closed(10s));
  BOOST_TEST(handled == 0);
  BOOST_TEST(counters().bad_requests == 1);
}

BOOST_AUTO_TEST_CASE(retry_after_is_one_second_on_429_503_and_529_only) {
  for (int status : {429, 503, 529})
    BOOST_TEST(std::string{mneme::api::default_retry_after(status)} == "1", status);
  for (int status : {200, 201, 400, 401, 404, 409, 413, 500, 502, 504})
    BOOST_TEST(std::string{mneme::api::default_retry_after(status)}.empty(), status);
}

BOOST_FIXTURE_TEST_CASE(an_answer_asking_to_come_back_carries_retry_after, front_fixture) {
  start();
  struct want {
    std::string target;
    int status;
    std::string retry_after;
  };
  for (const auto& w : std::vector<want>{{"/status?code=429", 429, "1"},
                                         {"/status?code=503", 503, "1"},
                                         {"/status?code=529", 529, "1"},
                                         {"/status?code=503&retry_after=30", 503, "30"},
                                         {"/status?code=500", 500, ""},
                                         {"/status?code=200", 200, ""}}) {
    raw_client client{port};
    BOOST_REQUIRE(client.send(get(w.target)));
    auto r = client.read_response(10s);
    BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
    BOOST_TEST(r->status == w.status, w.target);
    BOOST_TEST(r->header("Retry-After") == w.retry_after, w.target);
    BOOST_TEST(r->head.find("Retry-After") == r->head.rfind("Retry-After"), w.target);
  }
}

BOOST_FIXTURE_TEST_CASE(a_header_section_above_max_header_bytes_is_431, front_fixture) {
  limits.max_header_bytes = 4096;
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send("GET /fast HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(5000, 'b')
                            + "\r\n\r\n"));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 431);
  BOOST_TEST(client.wait_closed(10s));
  BOOST_TEST(handled == 0);

  // The same request just under the limit is served: the limit is what refused it.
  raw_client under{port};
  BOOST_REQUIRE(under.send("GET /fast HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(3000, 'b')
                           + "\r\n\r\n"));
  auto ok = under.read_response(10s);
  BOOST_REQUIRE_MESSAGE(ok, "no answer: " << to_string(under.last_end()));
  BOOST_TEST(ok->status == 200);
}

// --- admit, size limits, deadlines -------------------------------------------------------

// 1 000 000 is under Beast's own default body limit (1 MiB), 100 000 000 above it and
// above max_body_bytes: admit() is asked first either way.
BOOST_DATA_TEST_CASE_F(front_fixture, admit_answers_before_the_body_is_read,
                       data::make(std::vector<int64_t>{1000000, 100000000}), declared) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send("POST /echo HTTP/1.1\r\nHost: x\r\nX-Deny: yes\r\nContent-Length: "
                            + std::to_string(declared) + "\r\n\r\n")); // and no body byte
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer without the body: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 401);
  BOOST_TEST(r->header("WWW-Authenticate") == "Bearer");
  BOOST_TEST(client.wait_closed(10s)); // a body was announced: the connection cannot go on
  BOOST_TEST(admitted == 1);
  BOOST_TEST(!admit_saw_body);
  BOOST_TEST(handled == 0);
}

BOOST_FIXTURE_TEST_CASE(a_body_within_max_body_bytes_is_read_whole_even_above_one_mebibyte,
                        front_fixture) {
  limits.max_body_bytes = 4 * 1024 * 1024;
  start();
  std::string body(2 * 1024 * 1024, 'x');
  for (size_t i = 0; i < body.size(); i += 4096)
    body[i] = static_cast<char>('a' + (i / 4096) % 26);
  raw_client client{port};
  BOOST_REQUIRE(client.send(post("/echo", body), 30s));
  auto r = client.read_response(30s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->body.size() == body.size());
  BOOST_TEST((r->body == body), "the echoed body differs");
}

BOOST_FIXTURE_TEST_CASE(a_declared_body_above_max_body_bytes_is_413_before_it_is_read,
                        front_fixture) {
  limits.max_body_bytes = 1024;
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2048\r\n\r\n"));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer without the body: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 413);
  require_json_error(*r, "payload_too_large");
  BOOST_TEST(client.wait_closed(10s));
  BOOST_TEST(handled == 0);

  // At the limit exactly, the body is read and handled.
  raw_client at_limit{port};
  BOOST_REQUIRE(at_limit.send(post("/echo", std::string(1024, 'e'))));
  auto ok = at_limit.read_response(10s);
  BOOST_REQUIRE_MESSAGE(ok, "no answer: " << to_string(at_limit.last_end()));
  BOOST_TEST(ok->status == 200);
  BOOST_TEST(ok->body == std::string(1024, 'e'));
}

BOOST_FIXTURE_TEST_CASE(a_chunked_body_that_grows_above_max_body_bytes_is_413,
                        front_fixture) {
  limits.max_body_bytes = 1024;
  start();
  // Under the limit, a chunked body is decoded and handled.
  raw_client small{port};
  BOOST_REQUIRE(small.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  auto ok = small.read_response(10s);
  BOOST_REQUIRE_MESSAGE(ok, "no answer: " << to_string(small.last_end()));
  BOOST_TEST(ok->status == 200);
  BOOST_TEST(ok->body == "hello world");

  // Four chunks of 512 bytes and no last chunk: the 413 comes without the body's end.
  raw_client big{port};
  std::string chunks;
  for (int i = 0; i < 4; ++i)
    chunks += "200\r\n" + std::string(512, 'c') + "\r\n";
  BOOST_REQUIRE(big.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + chunks));
  auto r = big.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(big.last_end()));
  BOOST_TEST(r->status == 413);
  require_json_error(*r, "payload_too_large");
  BOOST_TEST(big.wait_closed(10s));
  BOOST_TEST(handled == 1); // the small one only
}

BOOST_FIXTURE_TEST_CASE(a_body_that_stops_arriving_is_dropped_at_its_deadline,
                        front_fixture) {
  limits.body_timeout = 1s;
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                            + std::string(10, 'b')));
  BOOST_TEST(client.wait_closed(15s));
  BOOST_TEST(eventually([&] { return counters().body_timeouts == 1; }, 5s));
  BOOST_TEST(counters().body_timeouts == 1);
  BOOST_TEST(counters().header_timeouts == 0);
  BOOST_TEST(handled == 0);
  BOOST_TEST(eventually([&] { return front->open_connections() == 0; }, 5s));
}

// --- connections -------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(connections_over_max_connections_are_closed_at_once,
                        front_fixture) {
  limits.max_connections = 3;
  limits.reserved_connections = 0;
  start();
  std::vector<std::unique_ptr<raw_client>> admitted_clients;
  for (int i = 0; i < 3; ++i) {
    admitted_clients.push_back(std::make_unique<raw_client>(port));
    auto& c = *admitted_clients.back();
    BOOST_REQUIRE(c.send(get("/fast")));
    auto r = c.read_response(10s);
    BOOST_REQUIRE_MESSAGE(r, "client " << i << ": " << to_string(c.last_end()));
    BOOST_TEST(r->status == 200);
  }
  raw_client fourth{port};
  BOOST_REQUIRE(fourth.connected()); // the kernel accepts; the front closes it
  BOOST_TEST(fourth.wait_closed(10s));
  BOOST_TEST(eventually([&] { return counters().refused == 1; }, 5s));
  BOOST_TEST(counters().refused == 1);

  for (int i = 0; i < 3; ++i) {
    auto& c = *admitted_clients[i];
    BOOST_REQUIRE(c.send(get("/fast")));
    auto r = c.read_response(10s);
    BOOST_REQUIRE_MESSAGE(r, "client " << i << " after the refusal: "
                                       << to_string(c.last_end()));
    BOOST_TEST(r->status == 200);
    BOOST_TEST(r->body == "ok");
  }
  BOOST_TEST(handled == 6);
}

BOOST_FIXTURE_TEST_CASE(one_address_holds_at_most_max_connections_per_address,
                        front_fixture) {
  limits.max_connections = 10;
  limits.max_connections_per_address = 2;
  limits.reserved_connections = 0;
  start();
  std::vector<std::unique_ptr<raw_client>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<raw_client>(port));
    BOOST_REQUIRE(held.back()->send(get("/fast")));
    auto r = held.back()->read_response(10s);
    BOOST_REQUIRE_MESSAGE(r, "client " << i << ": " << to_string(held.back()->last_end()));
    BOOST_TEST(r->status == 200);
  }
  raw_client third{port};
  BOOST_REQUIRE(third.connected());
  BOOST_TEST(third.wait_closed(10s));
  BOOST_TEST(eventually([&] { return counters().refused == 1; }, 5s));

  raw_client elsewhere{port, 0, 2}; // 127.0.0.2: another address, the total has room
  BOOST_REQUIRE(elsewhere.connected());
  BOOST_REQUIRE(elsewhere.send(get("/fast")));
  auto r = elsewhere.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "another address: " << to_string(elsewhere.last_end()));
  BOOST_TEST(r->status == 200);

  held.front()->close(); // its slot comes back to the address
  BOOST_REQUIRE(eventually([&] { return front->open_connections() == 2; }, 10s));
  raw_client again{port};
  BOOST_REQUIRE(again.send(get("/fast")));
  auto r2 = again.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r2, "after a slot came back: " << to_string(again.last_end()));
  BOOST_TEST(r2->status == 200);
  BOOST_TEST(counters().refused == 1);
}

// A GET the test handler lets a reserve connection serve (header X-Reserved).
std::string reserved_get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\nX-Reserved: 1\r\n\r\n";
}

// The status of the answer to `request` sent on `client`, or 0 when none came.
int status_of(raw_client& client, const std::string& request) {
  if (!client.send(request))
    return 0;
  auto r = client.read_response(10s);
  BOOST_TEST_INFO("no answer: " << to_string(client.last_end()));
  return r ? r->status : 0;
}

// A front with one regular slot, held by the returned client (answered once), and
// `reserved` reserve slots.
struct one_slot_fixture : front_fixture {
  std::unique_ptr<raw_client> regular;

  void start_with_reserve(int64_t reserved) {
    limits.max_connections = 1;
    limits.reserved_connections = reserved;
    start();
    regular = std::make_unique<raw_client>(port);
    BOOST_REQUIRE(status_of(*regular, get("/fast")) == 200);
  }
};

BOOST_FIXTURE_TEST_CASE(the_reserve_serves_only_reserved_requests_one_each, one_slot_fixture) {
  start_with_reserve(2);
  raw_client plain{port}; // on the reserve, without the handler's blessing
  BOOST_REQUIRE(plain.send(get("/fast")));
  auto refused = plain.read_response(10s);
  BOOST_REQUIRE_MESSAGE(refused, "no answer: " << to_string(plain.last_end()));
  BOOST_TEST(refused->status == 503);
  BOOST_TEST(refused->header("Retry-After") == "1");
  BOOST_TEST(refused->body.find("reserve") != std::string::npos);
  BOOST_TEST(plain.wait_closed(10s));

  raw_client health{port};
  BOOST_REQUIRE(health.send(reserved_get("/fast")));
  auto served = health.read_response(10s);
  BOOST_REQUIRE_MESSAGE(served, "no answer: " << to_string(health.last_end()));
  BOOST_TEST(served->status == 200);
  BOOST_TEST(served->header("Connection") == "close");
  BOOST_TEST(health.wait_closed(10s)); // one request per reserve connection

  BOOST_TEST(counters().reserve_accepted == 2);
  BOOST_TEST(counters().reserve_refused == 1);
  BOOST_TEST(counters().reserve_served == 1);
  BOOST_TEST(counters().refused == 0);
  BOOST_TEST(status_of(*regular, get("/fast")) == 200); // the regular one is untouched
}

BOOST_FIXTURE_TEST_CASE(a_reserve_full_of_idle_sockets_gives_way_to_a_new_connection,
                        one_slot_fixture) {
  start_with_reserve(2);
  raw_client idle_first{port};
  BOOST_REQUIRE(eventually([&] { return counters().reserve_accepted == 1; }, 5s));
  raw_client idle_second{port};
  BOOST_REQUIRE(eventually([&] { return counters().reserve_accepted == 2; }, 5s));

  raw_client checker{port}; // the reserve is full of idle sockets: the oldest gives way
  BOOST_TEST(status_of(checker, reserved_get("/fast")) == 200);
  BOOST_TEST(idle_first.wait_closed(10s));
  BOOST_TEST(counters().reserve_displaced == 1);
  BOOST_TEST(counters().refused == 0);
  // The younger idle socket kept its place and is still served.
  BOOST_TEST(status_of(idle_second, reserved_get("/fast")) == 200);
}

BOOST_FIXTURE_TEST_CASE(a_reserve_whose_connections_are_all_served_refuses_at_once,
                        one_slot_fixture) {
  start_with_reserve(1);
  raw_client busy{port}; // a reserved request in flight: it cannot be displaced
  BOOST_REQUIRE(busy.send(reserved_get("/forever")));
  auto head = busy.read_head(10s);
  BOOST_REQUIRE_MESSAGE(head, "no stream head: " << to_string(busy.last_end()));
  BOOST_TEST(head->status == 200);
  raw_client late{port};
  BOOST_REQUIRE(late.connected());
  BOOST_TEST(late.wait_closed(10s));
  BOOST_TEST(eventually([&] { return counters().refused == 1; }, 5s));
  BOOST_TEST(counters().reserve_displaced == 0);
  busy.close();
  BOOST_TEST(wait_outcome([&] { return forever.done; }, 10s));
}

BOOST_FIXTURE_TEST_CASE(an_idle_keep_alive_connection_is_closed_after_keep_alive_timeout,
                        front_fixture) {
  limits.keep_alive_timeout = 1s;
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/fast")));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->header("Connection") != "close");
  BOOST_TEST(client.wait_closed(15s));
  BOOST_TEST(client.discarded() == 0); // closed without a word
  BOOST_TEST(eventually([&] { return counters().idle_closed == 1; }, 5s));
  BOOST_TEST(counters().idle_closed == 1);
  BOOST_TEST(counters().header_timeouts == 0);
}

BOOST_FIXTURE_TEST_CASE(an_answer_the_client_does_not_read_is_dropped_at_write_timeout,
                        front_fixture) {
  limits.write_timeout = 1s;
  limits.max_body_bytes = 16 * 1024 * 1024;
  start();
  // 8 MiB back to a client with a small window that reads nothing: far more than the
  // socket buffers hold, so the write stalls.
  raw_client client{port, 4096};
  BOOST_REQUIRE(client.send(post("/echo", std::string(8 * 1024 * 1024, 'w')), 30s));
  BOOST_TEST(eventually([&] { return handled == 1; }, 10s));
  BOOST_TEST(eventually([&] { return front->open_connections() == 0; }, 15s));
  auto r = client.read_response(30s);
  BOOST_TEST(!r); // cut short: never a whole answer
}

BOOST_FIXTURE_TEST_CASE(pipelined_requests_are_handled_one_at_a_time_in_order,
                        front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/slow?ms=300") + get("/fast")));
  auto first = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(first, "no first answer: " << to_string(client.last_end()));
  auto second = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(second, "no second answer: " << to_string(client.last_end()));
  BOOST_TEST(first->body == "slow");
  BOOST_TEST(second->body == "ok");
  BOOST_TEST(handled == 2);
  BOOST_TEST(max_inside == 1);
}

BOOST_FIXTURE_TEST_CASE(expect_100_continue_is_answered_before_the_body_is_sent,
                        front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                            "Expect: 100-continue\r\n\r\n"));
  auto cont = client.read_head(10s);
  BOOST_REQUIRE_MESSAGE(cont, "no 100 Continue: " << to_string(client.last_end()));
  BOOST_TEST(cont->head == "HTTP/1.1 100 Continue\r\n\r\n");
  BOOST_TEST(handled == 0);
  BOOST_REQUIRE(client.send("hello"));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->body == "hello");
}

// --- streams -----------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(a_stream_delivers_its_events_in_order_then_the_connection_serves_on,
                        front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/stream?n=5")));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no stream: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->header("Content-Type") == "text/event-stream");
  BOOST_TEST(r->header("Transfer-Encoding") == "chunked");
  BOOST_TEST(r->body == "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");

  BOOST_REQUIRE(client.send(get("/fast")));
  auto next = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(next, "no answer after the stream: " << to_string(client.last_end())
                                << "; bytes: " << shown(client.pending()));
  BOOST_TEST(next->status == 200);
  BOOST_TEST(next->body == "ok");
  BOOST_TEST(client.pending().empty()); // nothing more than the two answers
}

BOOST_FIXTURE_TEST_CASE(a_request_pipelined_behind_a_stream_is_answered_after_it,
                        front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/stream?n=3") + get("/fast")));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no stream: " << to_string(client.last_end()));
  BOOST_TEST(r->body == "data: 0\n\ndata: 1\n\ndata: 2\n\n");
  auto next = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(next, "no answer to the pipelined request: "
                                << to_string(client.last_end()));
  BOOST_TEST(next->body == "ok");
  BOOST_TEST(handled == 2);
}

BOOST_FIXTURE_TEST_CASE(a_reader_too_slow_for_the_stream_buffer_is_dropped_without_blocking_the_producer,
                        front_fixture) {
  limits.stream_buffer_bytes = 65536;
  start();
  raw_client client{port, 4096}; // a small window: the buffers fill sooner
  BOOST_REQUIRE(client.send(get("/flood")));
  // The client never reads; the producer must end by itself, refused.
  BOOST_REQUIRE_MESSAGE(wait_outcome([&] { return flood.done; }, 60s),
                        "the producer is still pushing");
  {
    std::lock_guard lock{mu};
    BOOST_TEST(flood.refused);
    BOOST_TEST(flood.pushes < flood_max_chunks);
    BOOST_TEST_MESSAGE("flood: " << flood.pushes << " chunks of 16 KiB accepted");
  }
  BOOST_TEST(eventually([&] { return counters().streams_dropped == 1; }, 5s));
  BOOST_TEST(counters().streams_dropped == 1);
  BOOST_TEST(client.wait_closed(30s));
  BOOST_TEST(eventually([&] { return front->open_connections() == 0; }, 5s));
}

BOOST_FIXTURE_TEST_CASE(a_client_that_goes_away_closes_its_stream, front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/forever")));
  auto head = client.read_head(10s);
  BOOST_REQUIRE_MESSAGE(head, "no stream head: " << to_string(client.last_end()));
  BOOST_TEST(head->status == 200);
  client.close();
  BOOST_REQUIRE_MESSAGE(wait_outcome([&] { return forever.done; }, 10s),
                        "the producer still pushes after the client left");
  {
    std::lock_guard lock{mu};
    BOOST_TEST(forever.refused);
    BOOST_TEST(forever.pushes < forever_max_events);
  }
  BOOST_TEST(eventually([&] { return front->open_connections() == 0; }, 5s));
}

BOOST_FIXTURE_TEST_CASE(a_large_stream_pushed_from_another_thread_arrives_intact_and_in_order,
                        front_fixture) {
  limits.stream_buffer_bytes = 64 * 1024 * 1024; // no drop: only the order is at stake
  start();
  constexpr int n = 64;
  raw_client client{port, 4096}; // a small window: writes to the socket are partial
  BOOST_REQUIRE(client.send(get("/bulk?n=" + std::to_string(n))));
  auto r = client.read_response(30s);
  BOOST_REQUIRE_MESSAGE(r, "no whole stream: " << to_string(client.last_end()));
  std::string want;
  for (int i = 0; i < n; ++i)
    want += bulk_chunk(i);
  BOOST_TEST(r->body.size() == want.size());
  BOOST_TEST((r->body == want), "the stream's bytes differ from the chunks pushed");
  std::lock_guard lock{mu};
  BOOST_TEST(bulk.done);
  BOOST_TEST(!bulk.refused);
}

// The stream stays under stream_buffer_bytes, so the overflow rule never fires; what
// bounds a client that stopped reading is then the write deadline, as for any answer
// ("a slow client costs a socket and a timer").
BOOST_FIXTURE_TEST_CASE(a_stream_the_client_stops_reading_is_dropped_at_write_timeout,
                        front_fixture) {
  limits.write_timeout = 1s;
  limits.stream_buffer_bytes = 64 * 1024 * 1024;
  start();
  raw_client client{port, 4096}; // reads nothing: 8 MiB cannot all reach its socket
  BOOST_REQUIRE(client.send(get("/bulk?n=128")));
  BOOST_REQUIRE_MESSAGE(wait_outcome([&] { return bulk.done; }, 30s),
                        "the producer is still pushing");
  {
    std::lock_guard lock{mu};
    BOOST_TEST(!bulk.refused); // the buffer was never full: the whole stream was queued
  }
  BOOST_TEST(eventually([&] { return front->open_connections() == 0; }, 15s),
             "the connection of a client that reads nothing is still open");
  BOOST_TEST(front->open_connections() == 0);
}

// --- start and stop_accepting --------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(a_busy_port_or_a_second_start_fails_and_the_first_front_serves_on,
                        front_fixture) {
  start();
  http_front second{limits, front_handler{[](const http_request&) {
                                              return std::optional<http_response>{};
                                            },
                                            [](http_request, http_reply) {}},
                    1};
  auto busy = second.start("127.0.0.1", port);
  BOOST_REQUIRE(!busy);
  auto why = err_of(busy);
  BOOST_TEST(why.find("port " + std::to_string(port) + " is in use") != std::string::npos, why);

  auto again = front->start("127.0.0.1", 0);
  BOOST_TEST(!again);

  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/fast")));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->body == "ok");
}

BOOST_FIXTURE_TEST_CASE(stop_accepting_frees_the_port_while_open_connections_go_on,
                        front_fixture) {
  start();
  raw_client open_before{port};
  BOOST_REQUIRE(open_before.send(get("/fast")));
  BOOST_REQUIRE(open_before.read_response(10s));

  front->stop_accepting();
  BOOST_TEST(eventually([&] { return !raw_client{port}.connected(); }, 5s));

  // The port is free: another front binds it.
  http_front next{limits, front_handler{[](const http_request&) {
                                            return std::optional<http_response>{};
                                          },
                                          [](http_request, http_reply reply) {
                                            reply.answer(text(200, "next"));
                                          }},
                  1};
  auto rebound = next.start("127.0.0.1", port);
  BOOST_REQUIRE_MESSAGE(rebound, err_of(rebound));
  raw_client fresh{port};
  BOOST_REQUIRE(fresh.send(get("/fast")));
  auto n = fresh.read_response(10s);
  BOOST_REQUIRE_MESSAGE(n, "no answer from the next front: " << to_string(fresh.last_end()));
  BOOST_TEST(n->body == "next");

  // The connection opened before goes on with the first front.
  BOOST_REQUIRE(open_before.send(get("/fast")));
  auto r = open_before.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(open_before.last_end()));
  BOOST_TEST(r->body == "ok");
  next.stop();
}

// --- HEAD and answer-once ------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(head_answers_the_headers_without_the_body_and_the_connection_serves_on,
                        front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/fast", "HEAD")));
  auto r = client.read_response(10s, /*head_request=*/true);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->status == 200);
  BOOST_TEST(r->header("Content-Length") == "2");
  BOOST_TEST(r->body.empty());

  BOOST_REQUIRE(client.send(get("/fast")));
  auto next = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(next, "no answer after HEAD: " << to_string(client.last_end())
                                << "; bytes: " << shown(client.pending()));
  BOOST_TEST(next->status == 200);
  BOOST_TEST(next->body == "ok");
}

BOOST_FIXTURE_TEST_CASE(a_reply_answered_twice_delivers_only_the_first, front_fixture) {
  start();
  raw_client client{port};
  BOOST_REQUIRE(client.send(get("/twice")));
  auto r = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(r, "no answer: " << to_string(client.last_end()));
  BOOST_TEST(r->body == "first");
  {
    std::lock_guard lock{mu};
    BOOST_REQUIRE(twice_first && twice_second && twice_stream_refused);
    BOOST_TEST(*twice_first);
    BOOST_TEST(!*twice_second);
    BOOST_TEST(*twice_stream_refused);
  }
  // No second answer waits on the wire: the next request gets its own.
  BOOST_REQUIRE(client.send(get("/fast")));
  auto next = client.read_response(10s);
  BOOST_REQUIRE_MESSAGE(next, "no next answer: " << to_string(client.last_end()));
  BOOST_TEST(next->body == "ok");
  BOOST_TEST(client.pending().empty());
}

BOOST_AUTO_TEST_SUITE_END() // http_front_test
