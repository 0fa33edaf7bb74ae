// Forwarding to a key's owner node; see http_forward.hpp.
#include "apps/common/api/front/http_forward.hpp"

#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "apps/common/api/json_codec.hpp"
#include "policies/http_url.hpp"

namespace mneme::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Hop-by-hop headers and those the client library sets itself: never copied across.
bool hop_by_hop(beast::string_view name) {
  for (const char* h : {"Connection", "Keep-Alive", "Transfer-Encoding", "TE", "Trailer",
                        "Upgrade", "Proxy-Authorization", "Proxy-Connection", "Host",
                        "Content-Length", "Expect"})
    if (beast::iequals(name, h))
      return true;
  return false;
}

http_response unreachable(const std::string& url, const std::string& what,
                          int64_t retry_after_seconds) {
  http_response r;
  r.status = 503;
  r.content_type = "application/json";
  r.body = dump_json(error_json(
    "lease_owner_unreachable",
    "the node serving this session key (" + url + ") did not answer (" + what
      + "); its lease expires within " + std::to_string(retry_after_seconds)
      + " s, then any node takes the key over: retry"));
  r.headers.emplace_back("Retry-After", std::to_string(retry_after_seconds));
  return r;
}

// The owner's answer headers a client gets: all but the hop-by-hop ones and those the
// front sets itself.
header_list relayed_headers(const http::response_header<>& res) {
  header_list out;
  for (const auto& f : res)
    if (!hop_by_hop(f.name_string()) && !beast::iequals(f.name_string(), "Content-Type")
        && !beast::iequals(f.name_string(), "Date") && !beast::iequals(f.name_string(), "Server"))
      out.emplace_back(std::string{f.name_string()}, std::string{f.value()});
  return out;
}

bool is_event_stream(beast::string_view content_type) {
  constexpr beast::string_view sse = "text/event-stream";
  return content_type.size() >= sse.size()
         && beast::iequals(content_type.substr(0, sse.size()), sse);
}

// Bytes read from the owner per piece of a relayed stream.
constexpr size_t relay_piece_bytes = 16 * 1024;

// One forwarded request: resolve, connect, write, read the header, then the whole
// body (answer) or the stream piece by piece (relay).
struct forward_op : std::enable_shared_from_this<forward_op> {
  forward_op(net::io_context& io, const forward_limits& limits, std::string url,
             forward_sink sink)
    : resolver(io), stream(io), limits(limits), url(std::move(url)), sink(std::move(sink)) {}

  tcp::resolver resolver;
  beast::tcp_stream stream;
  forward_limits limits;
  std::string url;
  forward_sink sink;
  bool answered = false; // the sink was called
  http::request<http::string_body> out;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  // Relaying a stream: the parser of its body, and where its pieces land.
  std::optional<http::response_parser<http::buffer_body>> piece_parser;
  std::shared_ptr<event_stream> client;
  char piece[relay_piece_bytes];

  void fail(const std::string& what) {
    if (answered)
      return;
    answered = true;
    sink.answer(unreachable(url, what, limits.retry_after_seconds));
  }

  void start(const http_url& to) {
    resolver.async_resolve(to.host, to.port,
                           [self = shared_from_this()](beast::error_code ec,
                                                       tcp::resolver::results_type found) {
                             if (ec)
                               return self->fail("resolve: " + ec.message());
                             self->stream.expires_after(self->limits.connect_timeout);
                             self->stream.async_connect(
                               found, [self](beast::error_code e, const tcp::endpoint&) {
                                 self->on_connect(e);
                               });
                           });
  }

  void on_connect(beast::error_code ec) {
    if (ec)
      return fail("connect: " + ec.message());
    stream.expires_after(limits.total_timeout);
    http::async_write(stream, out, [self = shared_from_this()](beast::error_code e, size_t) {
      if (e)
        return self->fail("write: " + e.message());
      self->parser.body_limit(static_cast<uint64_t>(self->limits.max_answer_bytes));
      http::async_read_header(self->stream, self->buffer, self->parser,
                              [self](beast::error_code e2, size_t) { self->on_header(e2); });
    });
  }

  void on_header(beast::error_code ec) {
    if (ec)
      return fail("read: " + ec.message());
    auto& res = parser.get();
    if (!sink.open_stream || !is_event_stream(res[http::field::content_type]))
      return http::async_read(stream, buffer, parser,
                              [self = shared_from_this()](beast::error_code e, size_t) {
                                self->on_read(e);
                              });
    answered = true;
    client = sink.open_stream(static_cast<int>(res.result_int()),
                              std::string{res[http::field::content_type]}, relayed_headers(res));
    if (!client)
      return close();
    piece_parser.emplace(std::move(parser));
    piece_parser->body_limit(static_cast<uint64_t>(limits.max_answer_bytes));
    read_piece();
  }

  void on_read(beast::error_code ec) {
    if (ec)
      return fail("read: " + ec.message());
    auto& res = parser.get();
    http_response r;
    r.status = static_cast<int>(res.result_int());
    r.content_type = std::string{res[http::field::content_type]};
    r.body = std::move(res.body());
    r.headers = relayed_headers(res);
    close();
    answered = true;
    sink.answer(std::move(r));
  }

  void read_piece() {
    auto& body = piece_parser->get().body();
    body.data = piece;
    body.size = sizeof piece;
    http::async_read_some(stream, buffer, *piece_parser,
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            self->on_piece(ec);
                          });
  }

  // Invariant: every byte the owner sent is pushed before the client's stream ends.
  void on_piece(beast::error_code ec) {
    if (ec == http::error::need_buffer)
      ec = {};
    auto& body = piece_parser->get().body();
    const size_t got = sizeof piece - body.size;
    // A client gone (or too slow) stops the relay; the owner's turn goes on without it.
    if (got > 0 && !client->push(std::string{piece, got}))
      return close();
    if (ec || piece_parser->is_done()) {
      client->end();
      return close();
    }
    read_piece();
  }

  void close() {
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.socket().close(ignored);
  }
};

} // namespace

struct request_forwarder::impl {
  std::string self_node;
  forward_limits limits;
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work{io.get_executor()};
  std::thread thread;

  impl(std::string node, forward_limits l) : self_node(std::move(node)), limits(l) {
    thread = std::thread([this] { io.run(); });
  }
  ~impl() {
    work.reset();
    io.stop();
    if (thread.joinable())
      thread.join();
  }
};

request_forwarder::request_forwarder(std::string self_node, forward_limits limits)
  : impl_(std::make_unique<impl>(std::move(self_node), limits)) {}

request_forwarder::~request_forwarder() = default;

void request_forwarder::forward(const http_request& req, const std::string& owner_url,
                                forward_sink sink) {
  auto to = parse_http_url(owner_url);
  auto op = std::make_shared<forward_op>(impl_->io, impl_->limits, owner_url, std::move(sink));
  if (!to) {
    op->fail("not an http:// URL");
    return;
  }
  auto& out = op->out;
  out.method_string(req.method);
  out.target(to->base + req.target);
  out.version(11);
  for (const auto& [name, value] : req.headers)
    if (!hop_by_hop(name) && !beast::iequals(name, forwarded_by_header))
      out.insert(name, value);
  out.set(http::field::host, to->host + ":" + to->port);
  out.set(forwarded_by_header, impl_->self_node);
  out.set(http::field::connection, "close");
  out.body() = req.body;
  out.prepare_payload();
  net::post(impl_->io, [op, to = *to] { op->start(to); });
}

} // namespace mneme::api
