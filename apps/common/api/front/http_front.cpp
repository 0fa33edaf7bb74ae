// The daemon's event-driven HTTP/1.1 front; see http_front.hpp.
//
// Every connection's handlers run on its own strand, so a connection's members are
// touched by one thread at a time; the reply sinks and streams reach it only through
// net::post onto that strand.
#include "apps/common/api/front/http_front.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "apps/common/api/front/connection_slots.hpp"
#include "apps/common/api/front/http_listen.hpp"
#include "apps/common/api/front/http_strict.hpp"
#include "messages/errc.hpp"

namespace mneme::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

// How long an error answer that closes the connection keeps reading (and dropping)
// what the client still sends, and how much of it at most.
constexpr auto linger_time = 2s;
constexpr int64_t linger_max_bytes = 64 * 1024 * 1024;

} // namespace

const char* default_retry_after(int status) {
  return status == 429 || status == 503 || status == 529 ? "1" : "";
}

std::chrono::milliseconds body_deadline(const front_limits& limits, int64_t bytes) {
  auto rate = std::max<int64_t>(1, limits.body_min_bytes_per_second);
  auto extra_ms = (std::max<int64_t>(0, bytes) * 1000 + rate - 1) / rate;
  return limits.body_timeout + std::chrono::milliseconds{extra_ms};
}

class connection;

struct http_front::impl {
  front_limits limits;
  front_handler handler;
  size_t n_threads = 1;
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  front_counters counters;
  std::atomic<int64_t> open{0};
  std::atomic<int64_t> writing{0}; // connections with an answer on the way to the socket
  std::atomic<bool> accepting{false};
  std::mutex mu; // guards conns, started, stopped
  std::unordered_map<const connection*, std::weak_ptr<connection>> conns;
  bool started = false;
  bool stopped = false;
  connection_slots slots;

  impl(front_limits l, front_handler h, size_t n)
    : limits(l), handler(std::move(h)), n_threads(std::max<size_t>(1, n)),
      slots(policies::connection_limits{l.max_connections, l.max_connections_per_address,
                                        l.reserved_connections}) {}

  void accept_next(const std::shared_ptr<impl>& self);
};

// One client connection. Lives as long as its I/O operations, its pending reply and
// its stream hold it.
class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(std::shared_ptr<http_front::impl> front, tcp::socket socket)
    : front_(std::move(front)), stream_(std::move(socket)) {
    front_->open.fetch_add(1);
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    if (!ec) {
      address_ = ep.address().to_string();
      remote_ = address_ + ":" + std::to_string(ep.port());
    }
    // A streamed answer is many small writes: without this, Nagle holds each one until
    // the client acknowledged the last, which a delayed ACK stretches to ~40 ms.
    stream_.socket().set_option(tcp::no_delay(true), ec);
  }

  ~connection() {
    front_->slots.release(address_, ticket_);
    front_->open.fetch_sub(1);
    std::lock_guard lock{front_->mu};
    front_->conns.erase(this);
  }

  const std::string& address() const { return address_; }

  // REQUIRES: before start(); `t` is not a refusal.
  void start(connection_slots::ticket t) {
    ticket_ = t;
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_head(); });
  }

  void close_from_outside() {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

  // --- called through the reply sink / stream (any thread): hop onto the strand
  void post_answer(uint64_t generation, http_response res) {
    net::post(stream_.get_executor(),
              [self = shared_from_this(), generation, res = std::move(res)]() mutable {
                if (generation == self->generation_ && self->phase_ == phase::handling)
                  self->write_answer(std::move(res));
              });
  }

  class stream_impl;
  std::shared_ptr<event_stream> post_stream(uint64_t generation, int status,
                                            std::string content_type, header_list headers);

 private:
  enum class phase { reading, handling, writing, streaming, closing, closed };

  // --- reading a request
  void await_next_request() {
    phase_ = phase::reading;
    if (buffer_.size() > 0)
      return read_head();
    stream_.expires_after(front_->limits.keep_alive_timeout);
    auto room = buffer_.prepare(4096);
    stream_.async_read_some(room, [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) {
        if (ec == beast::error::timeout)
          self->front_->counters.idle_closed.fetch_add(1);
        return self->close();
      }
      self->buffer_.commit(n);
      self->read_head();
    });
  }

  void read_head() {
    phase_ = phase::reading;
    head_request_ = false;
    keep_alive_ = false;
    head_.emplace();
    head_->header_limit(static_cast<std::uint32_t>(front_->limits.max_header_bytes));
    // The declared size is checked after admit(), as a 413. (Not boost::none: Beast 1.74
    // compares the length with the optional, and every length is greater than none.)
    head_->body_limit(std::numeric_limits<std::uint64_t>::max());
    head_->eager(false);
    stream_.expires_after(in_reserve() ? std::min(front_->limits.header_timeout,
                                                  front_->limits.reserve_header_timeout)
                                       : front_->limits.header_timeout);
    http::async_read_header(stream_, buffer_, *head_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->on_head(ec);
                            });
  }

  void on_head(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == net::error::eof
        || ec == net::error::connection_reset || ec == net::error::operation_aborted)
      return close();
    if (ec == beast::error::timeout) {
      front_->counters.header_timeouts.fetch_add(1);
      return close(); // the socket is closed already: a silent client gets no answer
    }
    if (ec == http::error::header_limit)
      return refuse(closing_error_response(431, "bad_request",
                                   "the request headers are larger than "
                                     + std::to_string(front_->limits.max_header_bytes)
                                     + " bytes"));
    if (ec) {
      front_->counters.bad_requests.fetch_add(1);
      return refuse(closing_error_response(400, "bad_request", "malformed HTTP request: " + ec.message()));
    }
    if (auto problem = strict_head_problem(*head_); !problem.empty()) {
      front_->counters.bad_requests.fetch_add(1);
      return refuse(closing_error_response(400, "bad_request", problem));
    }
    const auto& h = head_->get();
    request_ = http_request{};
    request_.method = std::string{h.method_string()};
    request_.target = std::string{h.target()};
    request_.remote = remote_;
    for (const auto& f : h)
      request_.headers.emplace_back(std::string{f.name_string()}, std::string{f.value()});
    head_request_ = h.method() == http::verb::head;
    keep_alive_ = h.keep_alive();
    auto declared = head_->content_length();
    bool has_body = (declared && *declared > 0) || head_->chunked();
    if (in_reserve() && !admit_on_reserve())
      return refuse(reserve_refusal());
    if (auto verdict = front_->handler.admit(request_)) {
      if (has_body || verdict->close)
        return refuse(std::move(*verdict));
      head_.reset();
      return write_answer(std::move(*verdict)); // nothing left unread: keep the connection
    }
    if (declared && *declared > static_cast<uint64_t>(front_->limits.max_body_bytes))
      return refuse(too_large());
    if (beast::iequals(request_.header("Expect"), "100-continue")) {
      auto cont = std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n");
      stream_.expires_after(front_->limits.write_timeout);
      return net::async_write(stream_, net::buffer(*cont),
                              [self = shared_from_this(), cont](beast::error_code e, size_t) {
                                if (e)
                                  return self->close();
                                self->read_body();
                              });
    }
    read_body();
  }

  bool in_reserve() const { return ticket_.id != 0; }

  // A reserve connection serves one request, and only one the handler reserves for.
  bool admit_on_reserve() {
    front_->slots.head_arrived(ticket_);
    keep_alive_ = false;
    bool reserved = front_->handler.reserved && front_->handler.reserved(request_);
    (reserved ? front_->counters.reserve_served : front_->counters.reserve_refused).fetch_add(1);
    return reserved;
  }

  http_response reserve_refusal() const {
    auto r = closing_error_response(
      503, "overloaded",
      "the server holds its connection limit (gateway.max_connections in all, "
      "gateway.max_connections_per_address from one address); its reserve serves only "
      "GET /v1/health, GET /metrics and admin requests");
    if (front_->handler.reshape)
      front_->handler.reshape(request_, r);
    return r;
  }

  http_response too_large() const {
    auto r = closing_error_response(413, "payload_too_large",
                            "the body is larger than "
                              + std::to_string(front_->limits.max_body_bytes) + " bytes");
    if (front_->handler.reshape)
      front_->handler.reshape(request_, r);
    return r;
  }

  void read_body() {
    auto declared = head_->content_length();
    int64_t size = declared ? static_cast<int64_t>(*declared)
                            : (head_->chunked() ? front_->limits.max_body_bytes : 0);
    body_.emplace(std::move(*head_));
    head_.reset();
    body_->body_limit(static_cast<std::uint64_t>(front_->limits.max_body_bytes));
    stream_.expires_after(body_deadline(front_->limits, size));
    http::async_read(stream_, buffer_, *body_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->on_body(ec);
                     });
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return refuse(too_large());
    if (ec == beast::error::timeout) {
      front_->counters.body_timeouts.fetch_add(1);
      return close();
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof
        || ec == net::error::connection_reset || ec == net::error::operation_aborted)
      return close();
    if (ec) {
      front_->counters.bad_requests.fetch_add(1);
      return refuse(closing_error_response(400, "bad_request", "malformed HTTP body: " + ec.message()));
    }
    request_.body = std::move(body_->get().body());
    body_.reset();
    stream_.expires_never(); // the runtime's own deadlines bound the answer
    phase_ = phase::handling;
    ++generation_;
    try {
      front_->handler.handle(std::move(request_), make_reply());
    } catch (const std::exception& e) {
      write_answer(closing_error_response(500, "internal", "internal error"));
    }
  }

  http_reply make_reply();

  // --- writing
  void write_answer(http_response r) {
    phase_ = phase::writing;
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    if (!r.content_type.empty())
      res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers)
      res->set(k, v);
    if (*default_retry_after(r.status) && res->find(http::field::retry_after) == res->end())
      res->set(http::field::retry_after, default_retry_after(r.status));
    res->body() = std::move(r.body);
    bool keep = keep_alive_ && !r.close;
    res->keep_alive(keep);
    res->prepare_payload();
    if (head_request_)
      res->body().clear(); // Content-Length stays that of the GET answer
    front_->writing.fetch_add(1);
    stream_.expires_after(front_->limits.write_timeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, keep, linger = r.close](
                        beast::error_code ec, size_t) {
                        self->front_->writing.fetch_sub(1);
                        if (ec)
                          return self->close();
                        if (linger)
                          return self->linger_close();
                        if (!keep)
                          return self->close();
                        self->await_next_request();
                      });
  }

  // An answer that ends the connection before (all of) the body was read.
  void refuse(http_response r) {
    r.close = true;
    head_.reset();
    body_.reset();
    write_answer(std::move(r));
  }

  // Half-closes and reads what the client still sends for a moment, so it sees the
  // answer rather than a reset.
  void linger_close() {
    phase_ = phase::closing;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    buffer_.consume(buffer_.size());
    scratch_ = std::make_unique<char[]>(scratch_size);
    stream_.expires_after(linger_time);
    discard();
  }

  void discard() {
    stream_.async_read_some(net::buffer(scratch_.get(), scratch_size),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->discarded_ += static_cast<int64_t>(n);
                              if (ec || self->discarded_ > linger_max_bytes)
                                return self->close();
                              self->discard();
                            });
  }

 public:
  void close() {
    if (phase_ == phase::closed)
      return;
    phase_ = phase::closed;
    mark_stream_gone();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
    scratch_.reset();
  }

 private:
  // --- streaming (see stream_impl)
  void start_stream(const std::shared_ptr<stream_impl>& s, std::string head);
  void pump_stream(const std::shared_ptr<stream_impl>& s);
  void watch_client(const std::shared_ptr<stream_impl>& s);
  void finish_stream(const std::shared_ptr<stream_impl>& s);
  void mark_stream_gone();

  static constexpr size_t scratch_size = 16 * 1024;

  std::shared_ptr<http_front::impl> front_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> head_;
  std::optional<http::request_parser<http::string_body>> body_;
  http_request request_;
  std::string address_;     // the client's address, without its port
  std::string remote_;      // address:port
  connection_slots::ticket ticket_; // refuse until start(); id != 0 on the reserve
  bool keep_alive_ = false;
  bool head_request_ = false;
  phase phase_ = phase::reading;
  uint64_t generation_ = 0; // requests handed to the handler so far
  std::unique_ptr<char[]> scratch_;
  int64_t discarded_ = 0;
  bool watching_ = false;   // a read that detects a vanished client is pending
  bool stream_writing_ = false; // a chunk write of the stream is on the way
  std::weak_ptr<stream_impl> active_stream_;
  bool stream_done_ = false;
};

// The reply sink of one request: completes it once, on the connection's strand.
class request_sink : public reply_sink {
 public:
  request_sink(std::shared_ptr<connection> conn, uint64_t generation)
    : conn_(std::move(conn)), generation_(generation) {}
  void deliver(http_response res) override { conn_->post_answer(generation_, std::move(res)); }
  std::shared_ptr<event_stream> open_stream(int status, std::string content_type,
                                            header_list headers) override {
    auto s = conn_->post_stream(generation_, status, std::move(content_type), std::move(headers));
    std::lock_guard lock{mu_};
    stream_ = s;
    return s;
  }
  void cut_stream() override {
    std::shared_ptr<event_stream> s;
    {
      std::lock_guard lock{mu_};
      s = stream_.lock();
    }
    if (s)
      s->cut();
  }

 private:
  std::shared_ptr<connection> conn_;
  uint64_t generation_;
  std::mutex mu_; // guards stream_
  std::weak_ptr<event_stream> stream_;
};

http_reply connection::make_reply() {
  return http_reply{std::make_shared<request_sink>(shared_from_this(), generation_)};
}

// A streamed answer: chunks queued by any thread, written by the connection's strand.
class connection::stream_impl : public event_stream {
 public:
  stream_impl(std::shared_ptr<connection> conn, int64_t cap)
    : conn_(std::move(conn)), cap_(cap) {}

  bool push(std::string bytes) override {
    if (bytes.empty())
      return open();
    bool schedule = false;
    {
      std::lock_guard lock{mu_};
      if (gone_ || ended_)
        return false;
      if (buffered_ + static_cast<int64_t>(bytes.size()) > cap_) {
        gone_ = true;
        overflowed_ = true;
      } else {
        buffered_ += static_cast<int64_t>(bytes.size());
        queue_.push_back(std::move(bytes));
        schedule = !scheduled_;
        scheduled_ = true;
      }
    }
    if (overflowed_once()) {
      conn_->front_->counters.streams_dropped.fetch_add(1);
      conn_->close_from_outside();
      return false;
    }
    if (schedule)
      net::post(conn_->stream_.get_executor(),
                [c = conn_, s = self()] { c->pump_stream(s); });
    return true;
  }

  void end() override {
    bool schedule = false;
    {
      std::lock_guard lock{mu_};
      if (ended_)
        return;
      ended_ = true;
      schedule = !scheduled_;
      scheduled_ = true;
    }
    if (schedule)
      net::post(conn_->stream_.get_executor(),
                [c = conn_, s = self()] { c->pump_stream(s); });
  }

  bool open() const override {
    std::lock_guard lock{mu_};
    return !gone_ && !ended_;
  }

  void set_cut_ending(std::string bytes) override {
    std::lock_guard lock{mu_};
    cut_ending_ = std::move(bytes);
  }

  void cut() override {
    std::string last;
    {
      std::lock_guard lock{mu_};
      if (gone_ || ended_)
        return;
      last.swap(cut_ending_);
    }
    if (!last.empty())
      push(std::move(last));
    end();
  }

  std::shared_ptr<stream_impl> self() {
    return std::static_pointer_cast<stream_impl>(weak_self_.lock());
  }

 private:
  friend class connection;

  bool overflowed_once() {
    std::lock_guard lock{mu_};
    if (!overflowed_ || reported_)
      return false;
    reported_ = true;
    return true;
  }

  std::shared_ptr<connection> conn_;
  int64_t cap_;
  mutable std::mutex mu_;
  std::deque<std::string> queue_;
  int64_t buffered_ = 0;  // queued + being written
  bool scheduled_ = false; // a pump is posted or a write is on the way
  bool gone_ = false;
  bool ended_ = false;
  std::string cut_ending_; // sent by cut()
  bool overflowed_ = false;
  bool reported_ = false;
  std::weak_ptr<event_stream> weak_self_;
  std::string head_;      // the status line and headers, written first
  bool head_written_ = false;
};

std::shared_ptr<event_stream> connection::post_stream(uint64_t generation, int status,
                                                      std::string content_type,
                                                      header_list headers) {
  auto s = std::make_shared<stream_impl>(shared_from_this(), front_->limits.stream_buffer_bytes);
  s->weak_self_ = s;
  std::string head = "HTTP/1.1 " + std::to_string(status) + " "
                     + std::string{http::obsolete_reason(static_cast<http::status>(status))}
                     + "\r\n";
  if (!content_type.empty())
    head += "Content-Type: " + content_type + "\r\n";
  head += "Cache-Control: no-cache\r\n";
  for (auto& [k, v] : headers)
    head += k + ": " + v + "\r\n";
  head += "Transfer-Encoding: chunked\r\n";
  net::post(stream_.get_executor(),
            [self = shared_from_this(), s, generation, head = std::move(head)]() mutable {
              if (generation != self->generation_ || self->phase_ != phase::handling) {
                std::lock_guard lock{s->mu_};
                s->gone_ = true;
                return;
              }
              self->start_stream(s, std::move(head));
            });
  return s;
}

void connection::mark_stream_gone() {
  if (auto s = active_stream_.lock()) {
    std::lock_guard lock{s->mu_};
    s->gone_ = true;
  }
}

void connection::start_stream(const std::shared_ptr<stream_impl>& s, std::string head) {
  phase_ = phase::streaming;
  stream_done_ = false;
  stream_writing_ = false;
  active_stream_ = s;
  head += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  s->head_ = std::move(head);
  {
    std::lock_guard lock{s->mu_};
    s->scheduled_ = true;
  }
  watch_client(s);
  pump_stream(s);
}

// Writes the head, then every queued chunk, then (after end()) the last chunk.
void connection::pump_stream(const std::shared_ptr<stream_impl>& s) {
  if (phase_ != phase::streaming) {
    std::lock_guard lock{s->mu_};
    s->gone_ = true; // closed meanwhile
    return;
  }
  if (stream_writing_)
    return; // the write on the way pumps again when it completes
  auto out = std::make_shared<std::string>();
  bool last = false;
  int64_t payload_bytes = 0;
  {
    std::lock_guard lock{s->mu_};
    if (!s->head_written_) {
      *out = std::move(s->head_);
      s->head_written_ = true;
    }
    std::string payload;
    while (!s->queue_.empty()) {
      payload += s->queue_.front();
      s->queue_.pop_front();
    }
    payload_bytes = static_cast<int64_t>(payload.size());
    if (!payload.empty())
      *out += chunk_size_hex(payload.size()) + "\r\n" + payload + "\r\n";
    if (s->ended_ && !s->gone_) {
      *out += "0\r\n\r\n";
      last = true;
    }
    if (out->empty()) {
      s->scheduled_ = false;
      return;
    }
  }
  front_->writing.fetch_add(1);
  stream_writing_ = true;
  // A client that stops reading is dropped at the write deadline even when the producer
  // has nothing more to push (the buffer cap alone would never fire then).
  stream_.expires_after(front_->limits.write_timeout);
  net::async_write(stream_, net::buffer(*out),
                   [self = shared_from_this(), s, out, last, payload_bytes](beast::error_code ec,
                                                                            size_t) {
                     self->front_->writing.fetch_sub(1);
                     self->stream_writing_ = false;
                     {
                       std::lock_guard lock{s->mu_};
                       s->buffered_ -= payload_bytes;
                       if (ec)
                         s->gone_ = true;
                     }
                     if (ec)
                       return self->close();
                     if (last)
                       return self->finish_stream(s);
                     self->pump_stream(s);
                   });
}

// A read while streaming: EOF or an error means the client went away.
void connection::watch_client(const std::shared_ptr<stream_impl>& s) {
  watching_ = true;
  stream_.expires_never();
  auto room = buffer_.prepare(4096);
  stream_.async_read_some(room, [self = shared_from_this(), s](beast::error_code ec, size_t n) {
    self->watching_ = false;
    if (!ec) {
      self->buffer_.commit(n); // a next request: kept for after the stream
      if (self->buffer_.size() > static_cast<size_t>(self->front_->limits.max_header_bytes))
        return self->close();
    }
    if (self->stream_done_) // finish_stream cancelled this read: go on with the next request
      return self->keep_alive_ ? self->await_next_request() : self->close();
    if (ec) {
      std::lock_guard lock{s->mu_};
      s->gone_ = true;
    }
    if (ec)
      return self->close();
    self->watch_client(s);
  });
}

void connection::finish_stream(const std::shared_ptr<stream_impl>&) {
  stream_done_ = true;
  if (!keep_alive_)
    return close();
  if (watching_) {
    beast::error_code ec;
    stream_.socket().cancel(ec); // the watch's handler continues with the next request
    return;
  }
  await_next_request();
}

void http_front::impl::accept_next(const std::shared_ptr<impl>& self) {
  if (!accepting.load() || !acceptor)
    return;
  acceptor->async_accept(net::make_strand(ioc), [self](beast::error_code ec, tcp::socket s) {
    if (ec == net::error::operation_aborted || !self->accepting.load())
      return;
    if (ec) {
      // e.g. out of file descriptors: wait a moment instead of spinning
      auto t = std::make_shared<net::steady_timer>(self->ioc, 50ms);
      t->async_wait([self, t](beast::error_code) { self->accept_next(self); });
      return;
    }
    self->counters.accepted.fetch_add(1);
    auto conn = std::make_shared<connection>(self, std::move(s));
    auto ticket = self->slots.take(conn->address(), [weak = std::weak_ptr<connection>(conn)] {
      if (auto c = weak.lock())
        c->close_from_outside();
    });
    using policies::connection_slot;
    if (ticket.slot == connection_slot::refuse) {
      self->counters.refused.fetch_add(1);
      conn->close_from_outside(); // nothing was read: closed without a word
    } else {
      if (ticket.slot == connection_slot::reserve_displacing_oldest)
        self->counters.reserve_displaced.fetch_add(1);
      if (ticket.slot != connection_slot::regular)
        self->counters.reserve_accepted.fetch_add(1);
      {
        std::lock_guard lock{self->mu};
        self->conns.emplace(conn.get(), conn);
      }
      conn->start(ticket);
    }
    self->accept_next(self);
  });
}

http_front::http_front(front_limits limits, front_handler handler, size_t io_threads)
  : impl_(std::make_shared<impl>(limits, std::move(handler), io_threads)) {}

http_front::~http_front() { stop(std::chrono::milliseconds{0}); }

caf::expected<int> http_front::start(const std::string& host, int port) {
  {
    std::lock_guard lock{impl_->mu};
    if (impl_->started)
      return caf::make_error(errc::bad_request, "the HTTP server is already started");
    impl_->started = true;
  }
  auto bound = open_listener(impl_->ioc, impl_->acceptor, host, port);
  if (!bound)
    return bound;
  impl_->accepting.store(true);
  impl_->work.emplace(net::make_work_guard(impl_->ioc));
  impl_->accept_next(impl_);
  for (size_t i = 0; i < impl_->n_threads; ++i)
    impl_->threads.emplace_back([im = impl_] { im->ioc.run(); });
  return *bound;
}

void http_front::stop_accepting() {
  if (!impl_->accepting.exchange(false))
    return;
  net::post(impl_->ioc, [im = impl_] {
    if (im->acceptor) {
      beast::error_code ec;
      im->acceptor->close(ec);
    }
  });
}

void http_front::stop(std::chrono::milliseconds flush) {
  {
    std::lock_guard lock{impl_->mu};
    if (impl_->stopped)
      return;
    impl_->stopped = true;
  }
  stop_accepting();
  if (impl_->threads.empty())
    return;
  auto deadline = std::chrono::steady_clock::now() + flush;
  while (impl_->writing.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::vector<std::shared_ptr<connection>> open;
  {
    std::lock_guard lock{impl_->mu};
    for (auto& [_, weak] : impl_->conns)
      if (auto c = weak.lock())
        open.push_back(std::move(c));
  }
  for (auto& c : open)
    c->close_from_outside();
  open.clear();
  impl_->work.reset();
  // Closing a socket completes its pending operations; give them a moment to run.
  auto closed_by = std::chrono::steady_clock::now() + 1s;
  while (impl_->open.load() > 0 && std::chrono::steady_clock::now() < closed_by)
    std::this_thread::sleep_for(5ms);
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    t.join();
  impl_->threads.clear();
  // Run what the closes made ready, so the handlers that hold connections let go.
  impl_->ioc.restart();
  impl_->ioc.poll();
}

int64_t http_front::open_connections() const { return impl_->open.load(); }
const front_counters& http_front::counters() const { return impl_->counters; }
size_t http_front::io_threads() const { return impl_->n_threads; }

} // namespace mneme::api
