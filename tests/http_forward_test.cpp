// Tests of the request forwarder of node mode (apps/common/api/front/http_forward.hpp)
// against a hand-written owner node on a loopback socket, no mneme runtime: the
// request arrives as sent plus X-Mneme-Forwarded-By; a whole answer comes back with
// its status, body and headers; a streamed answer is relayed piece by piece (the
// owner sends its second piece only after the client got the first, so a forwarder
// that waited for the end would never finish); a stream the owner cuts ends the
// client's stream after what arrived; a streamed answer goes whole when the caller
// cannot stream; an owner nobody answers for is a 503 lease_owner_unreachable with
// Retry-After.
//
// Time never decides pass/fail: every wait has a generous bound and the assertions
// are about what arrived.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/front/http_forward.hpp"

BOOST_AUTO_TEST_SUITE(http_forward_test)

using namespace std::chrono_literals;
using namespace mneme::api;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

namespace {

constexpr auto bound = 20s;

// What the owner node saw of the forwarded request.
struct seen_request {
  std::string method, target, body, forwarded_by, session_header;
};

// An owner node that serves one connection with `serve` (given the socket after the
// request was read) on a thread of its own.
class fake_owner {
 public:
  using serve_fn = std::function<void(tcp::socket&)>;

  explicit fake_owner(serve_fn serve) : acceptor_(io_, {net::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this, serve = std::move(serve)] {
      tcp::socket s{io_};
      acceptor_.accept(s);
      beast::flat_buffer buffer;
      bhttp::request<bhttp::string_body> req;
      bhttp::read(s, buffer, req);
      seen_.set_value(seen_request{std::string{req.method_string()}, std::string{req.target()},
                                   req.body(), std::string{req[forwarded_by_header]},
                                   std::string{req["X-Mneme-Session"]}});
      serve(s);
      beast::error_code ignored;
      s.shutdown(tcp::socket::shutdown_both, ignored);
    });
  }
  ~fake_owner() { thread_.join(); }

  std::string url() const {
    return fmt::format("http://127.0.0.1:{}", acceptor_.local_endpoint().port());
  }
  seen_request seen() {
    auto f = seen_.get_future();
    BOOST_REQUIRE(f.wait_for(bound) == std::future_status::ready);
    return f.get();
  }

 private:
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::promise<seen_request> seen_;
  std::thread thread_;
};

void write_raw(tcp::socket& s, const std::string& bytes) { net::write(s, net::buffer(bytes)); }

std::string chunk(const std::string& data) {
  return fmt::format("{:x}\r\n{}\r\n", data.size(), data);
}

const std::string stream_head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                "Transfer-Encoding: chunked\r\nX-Mneme-Session-Id: s-1\r\n\r\n";

// The client's side of a relayed stream: what was pushed, and whether it ended.
class recording_stream final : public event_stream {
 public:
  bool push(std::string bytes) override {
    std::lock_guard lock{mu_};
    if (ended_)
      return false;
    got_ += bytes;
    cv_.notify_all();
    return true;
  }
  void end() override {
    std::lock_guard lock{mu_};
    ended_ = true;
    cv_.notify_all();
  }
  bool open() const override {
    std::lock_guard lock{mu_};
    return !ended_;
  }
  // Waits (bounded) until the bytes received contain `text`, or the stream ended.
  bool wait_for_text(const std::string& text) {
    std::unique_lock lock{mu_};
    return cv_.wait_for(lock, bound,
                        [&] { return got_.find(text) != std::string::npos || ended_; })
           && got_.find(text) != std::string::npos;
  }
  bool wait_for_end() {
    std::unique_lock lock{mu_};
    return cv_.wait_for(lock, bound, [&] { return ended_; });
  }
  std::string got() const {
    std::lock_guard lock{mu_};
    return got_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string got_;
  bool ended_ = false;
};

// What the forwarder handed the sink.
struct sink_record {
  std::promise<http_response> answered;
  std::promise<int> stream_opened; // the owner's status
  std::string content_type;
  header_list headers;
  std::shared_ptr<recording_stream> stream = std::make_shared<recording_stream>();
};

forward_sink sink_into(sink_record& r, bool can_stream = true) {
  forward_sink sink;
  sink.answer = [&r](http_response res) { r.answered.set_value(std::move(res)); };
  if (can_stream)
    sink.open_stream = [&r](int status, std::string content_type, header_list headers) {
      r.content_type = std::move(content_type);
      r.headers = std::move(headers);
      r.stream_opened.set_value(status);
      return std::static_pointer_cast<event_stream>(r.stream);
    };
  return sink;
}

http_request turn_request() {
  http_request req;
  req.method = "POST";
  req.target = "/v1/sessions/k-1/turns";
  req.headers = {{"Content-Type", "application/json"}, {"X-Mneme-Session", "k-1"}};
  req.body = R"({"content":"hello","stream":true})";
  return req;
}

std::string header_of(const header_list& h, const std::string& name) {
  for (const auto& [n, v] : h)
    if (beast::iequals(n, name))
      return v;
  return {};
}

forward_limits limits() {
  forward_limits l;
  l.connect_timeout = 5s;
  l.total_timeout = 60s;
  l.retry_after_seconds = 7;
  return l;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_streamed_answer_is_relayed_piece_by_piece_as_the_owner_writes_it) {
  std::promise<void> go; // the owner's second piece waits for the first to arrive
  auto go_said = go.get_future();
  fake_owner owner{[&](tcp::socket& s) {
    write_raw(s, stream_head + chunk("data: {\"delta\":\"first\"}\n\n"));
    if (go_said.wait_for(bound) != std::future_status::ready)
      return; // the client never saw the first piece: the test fails below
    write_raw(s, chunk("data: {\"delta\":\"second\"}\n\n") + chunk("data: [DONE]\n\n")
                   + "0\r\n\r\n");
  }};
  request_forwarder forwarder{"node-a", limits()};
  sink_record r;
  forwarder.forward(turn_request(), owner.url(), sink_into(r));

  auto opened = r.stream_opened.get_future();
  BOOST_REQUIRE(opened.wait_for(bound) == std::future_status::ready);
  BOOST_TEST(opened.get() == 200);
  BOOST_TEST(r.content_type == "text/event-stream");
  BOOST_TEST(header_of(r.headers, "X-Mneme-Session-Id") == "s-1");
  BOOST_TEST(header_of(r.headers, "Transfer-Encoding").empty()); // hop by hop
  BOOST_REQUIRE_MESSAGE(r.stream->wait_for_text("first"),
                        "the first piece reached the client before the owner's end");
  BOOST_TEST(r.stream->open());
  go.set_value();
  BOOST_REQUIRE(r.stream->wait_for_end());
  BOOST_TEST(r.stream->got()
             == "data: {\"delta\":\"first\"}\n\ndata: {\"delta\":\"second\"}\n\ndata: [DONE]\n\n");
  BOOST_TEST((r.answered.get_future().wait_for(0s) == std::future_status::timeout),
             "a streamed answer never goes through answer() too");

  auto seen = owner.seen();
  BOOST_TEST(seen.method == "POST");
  BOOST_TEST(seen.target == "/v1/sessions/k-1/turns");
  BOOST_TEST(seen.body == turn_request().body);
  BOOST_TEST(seen.forwarded_by == "node-a");
  BOOST_TEST(seen.session_header == "k-1");
}

BOOST_AUTO_TEST_CASE(a_whole_answer_comes_back_with_its_status_body_and_headers) {
  const std::string body = R"({"error":{"code":"bad_request","message":"field 'content'"}})";
  fake_owner owner{[&](tcp::socket& s) {
    write_raw(s, fmt::format("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                             "Content-Length: {}\r\nX-Mneme-Compactions: 2\r\n\r\n{}",
                             body.size(), body));
  }};
  request_forwarder forwarder{"node-a", limits()};
  sink_record r;
  forwarder.forward(turn_request(), owner.url(), sink_into(r));
  auto answered = r.answered.get_future();
  BOOST_REQUIRE(answered.wait_for(bound) == std::future_status::ready);
  auto res = answered.get();
  BOOST_TEST(res.status == 400);
  BOOST_TEST(res.content_type == "application/json");
  BOOST_TEST(res.body == body);
  BOOST_TEST(header_of(res.headers, "X-Mneme-Compactions") == "2");
  BOOST_TEST(header_of(res.headers, "Content-Length").empty());
  BOOST_TEST(r.stream->got().empty());
}

BOOST_AUTO_TEST_CASE(a_caller_that_cannot_stream_gets_the_stream_whole) {
  fake_owner owner{[&](tcp::socket& s) {
    write_raw(s, stream_head + chunk("data: a\n\n") + chunk("data: [DONE]\n\n") + "0\r\n\r\n");
  }};
  request_forwarder forwarder{"node-a", limits()};
  sink_record r;
  forwarder.forward(turn_request(), owner.url(), sink_into(r, false));
  auto answered = r.answered.get_future();
  BOOST_REQUIRE(answered.wait_for(bound) == std::future_status::ready);
  auto res = answered.get();
  BOOST_TEST(res.status == 200);
  BOOST_TEST(res.content_type == "text/event-stream");
  BOOST_TEST(res.body == "data: a\n\ndata: [DONE]\n\n");
}

BOOST_AUTO_TEST_CASE(a_stream_the_owner_cuts_ends_the_clients_stream_after_what_arrived) {
  fake_owner owner{[&](tcp::socket& s) {
    write_raw(s, stream_head + chunk("data: {\"delta\":\"partial\"}\n\n"));
    // then the owner dies: no more chunks, no last chunk
  }};
  request_forwarder forwarder{"node-a", limits()};
  sink_record r;
  forwarder.forward(turn_request(), owner.url(), sink_into(r));
  BOOST_REQUIRE(r.stream->wait_for_end());
  BOOST_TEST(r.stream->got() == "data: {\"delta\":\"partial\"}\n\n");
  BOOST_TEST(r.stream->got().find("[DONE]") == std::string::npos);
  BOOST_TEST((r.answered.get_future().wait_for(0s) == std::future_status::timeout));
}

BOOST_AUTO_TEST_CASE(an_owner_that_cannot_be_reached_is_a_503_with_retry_after) {
  std::string url;
  {
    net::io_context io;
    tcp::acceptor closed{io, {net::ip::make_address("127.0.0.1"), 0}};
    url = fmt::format("http://127.0.0.1:{}", closed.local_endpoint().port());
  } // nothing listens there any more
  request_forwarder forwarder{"node-a", limits()};
  sink_record r;
  forwarder.forward(turn_request(), url, sink_into(r));
  auto answered = r.answered.get_future();
  BOOST_REQUIRE(answered.wait_for(bound) == std::future_status::ready);
  auto res = answered.get();
  BOOST_TEST(res.status == 503);
  BOOST_TEST(res.body.find("lease_owner_unreachable") != std::string::npos, res.body);
  BOOST_TEST(res.body.find(url) != std::string::npos, res.body);
  BOOST_TEST(header_of(res.headers, "Retry-After") == "7");
}

BOOST_AUTO_TEST_SUITE_END()
