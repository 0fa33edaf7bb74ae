// The load of `mneme-bench http`; see http_load.hpp.
#include "apps/mneme-bench/http_load.hpp"

#include <dirent.h>

#include <algorithm>
#include <cassert>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/mneme-bench/bench_stats.hpp"

namespace mneme::bench {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;
using error_code = boost::system::error_code;

double ms_since(steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(steady::now() - t0).count();
}

// What the turn clients share; touched on the client thread only.
struct client_context {
  asio::io_context& ioc;
  tcp::endpoint server;
  std::string host_header;
  std::string token;
  const http_load_options& opt;
  http_load_result& out;
  int active = 0;          // clients not finished
  bool stopping = false;   // the deadline passed: every client stops
  std::function<void()> on_all_done;
};

// One keep-alive client doing its turns one after another (see http_load.hpp).
class turn_client {
 public:
  turn_client(client_context& ctx, int index)
    : ctx_(ctx), index_(index), stream_(ctx.ioc), think_(ctx.ioc) {}
  turn_client(const turn_client&) = delete;
  turn_client& operator=(const turn_client&) = delete;

  void start() { next(); }

  // The deadline passed (ctx.stopping is set): ends the wait or the turn in flight.
  void abort() {
    think_.cancel();
    stream_.close();
  }

 private:
  void next() {
    if (turn_ == ctx_.opt.turns)
      return finish();
    if (ctx_.stopping) {
      ctx_.out.turns_not_run += ctx_.opt.turns - turn_;
      return finish();
    }
    if (!connected_)
      return connect();
    send();
  }

  void connect() {
    if (opened_)
      ++ctx_.out.reconnects;
    opened_ = true;
    buf_.consume(buf_.size());
    stream_.expires_after(ctx_.opt.turn_timeout);
    stream_.async_connect(ctx_.server, [this](error_code ec) {
      if (ec)
        return fail(ec, "connect");
      connected_ = true;
      send();
    });
  }

  void send() {
    req_ = {};
    req_.method(http::verb::post);
    req_.target(fmt::format("/v1/sessions/bench-{}/turns", index_));
    req_.version(11);
    req_.set(http::field::host, ctx_.host_header);
    req_.set(http::field::content_type, "application/json");
    if (!ctx_.token.empty())
      req_.set(http::field::authorization, "Bearer " + ctx_.token);
    req_.keep_alive(true);
    // A short sentence that differs per client and turn.
    req_.body() = nlohmann::json{{"user", "bench"},
                                 {"content", fmt::format("Client {} asks question {}: what is "
                                                         "{} plus {}?",
                                                         index_, turn_ + 1, index_, turn_)}}
                    .dump();
    req_.prepare_payload();
    stream_.expires_after(ctx_.opt.turn_timeout);
    t0_ = steady::now();
    http::async_write(stream_, req_, [this](error_code ec, size_t) {
      if (ec)
        return fail(ec, "connection");
      res_ = {};
      http::async_read(stream_, buf_, res_, [this](error_code ec, size_t) { answered(ec); });
    });
  }

  void answered(error_code ec) {
    if (ec)
      return fail(ec, "connection");
    auto& out = ctx_.out;
    if (res_.result_int() == 200) {
      ++out.turns_ok;
      out.turn_ms.push_back(ms_since(t0_));
    } else {
      ++out.turns_failed;
      ++out.failed_by_status[std::to_string(res_.result_int())];
    }
    if (!res_.keep_alive())
      disconnect();
    ++turn_;
    after_turn();
  }

  // The turn in flight failed; `kind` unless the deadline or the turn timeout ended it.
  void fail(error_code ec, const char* kind) {
    auto& out = ctx_.out;
    ++out.turns_failed;
    ++out.failed_by_error[ctx_.stopping                  ? "deadline"
                          : ec == beast::error::timeout ? "timeout"
                                                        : kind];
    disconnect();
    ++turn_;
    after_turn();
  }

  void after_turn() {
    if (ctx_.opt.think.count() > 0 && turn_ < ctx_.opt.turns && !ctx_.stopping) {
      think_.expires_after(ctx_.opt.think);
      think_.async_wait([this](error_code) { next(); });
      return;
    }
    next();
  }

  void disconnect() {
    stream_.close();
    connected_ = false;
  }

  void finish() {
    disconnect();
    if (--ctx_.active == 0 && ctx_.on_all_done)
      ctx_.on_all_done();
  }

  client_context& ctx_;
  const int index_;
  int turn_ = 0;
  bool connected_ = false;
  bool opened_ = false;
  beast::tcp_stream stream_;
  asio::steady_timer think_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
  steady::time_point t0_;
};

// What the slow connections, the prober and the sampler share; touched on the side
// thread only.
struct side_context {
  asio::io_context& ioc;
  tcp::endpoint server;
  const http_target& target;
  const http_load_options& opt;
  http_load_result& out;
  bool stopping = false;   // the clients are done
  int slow_pending = 0;    // slow connections not yet open (or failed to open)
  std::promise<void> slow_ready;
};

// A connection that never finishes its request header, or (idle) never sends a byte
// and is opened again on the next tick after the server closed it (see http_load.hpp).
class slow_connection {
 public:
  slow_connection(side_context& ctx, bool idle) : ctx_(ctx), stream_(ctx.ioc), idle_(idle) {}
  slow_connection(const slow_connection&) = delete;
  slow_connection& operator=(const slow_connection&) = delete;

  void open() {
    connecting_ = true;
    stream_.expires_after(std::chrono::seconds{5});
    stream_.async_connect(ctx_.server, [this](error_code ec) {
      connecting_ = false;
      if (ec)
        return ready();
      opened_at_ = steady::now();
      if (idle_) {
        stream_.expires_never();
        open_ = true;
        ++ctx_.out.idle_connected;
        read();
        return ready();
      }
      static const std::string head = "GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ";
      asio::async_write(stream_, asio::buffer(head), [this](error_code ec, size_t) {
        stream_.expires_never();
        if (!ec) {
          open_ = true;
          ++ctx_.out.slow_connected;
          read();
        }
        ready();
      });
    });
  }

  // One more header byte; an idle connection the server closed opens again.
  void tick() {
    if (idle_) {
      if (!open_ && !connecting_ && !ctx_.stopping)
        open();
      return;
    }
    if (!open_ || writing_)
      return;
    writing_ = true;
    static const char byte = 'a';
    asio::async_write(stream_, asio::buffer(&byte, 1), [this](error_code ec, size_t) {
      writing_ = false;
      if (ec)
        closed(ec);
    });
  }

  // The clients are done (ctx.stopping is set).
  void stop() {
    open_ = false;
    stream_.close();
  }

 private:
  // The first open of each connection counts down to slow_ready; reopens do not.
  void ready() {
    if (counted_)
      return;
    counted_ = true;
    if (--ctx_.slow_pending == 0)
      ctx_.slow_ready.set_value();
  }

  // Whatever the server sends (an error answer) is read until it closes.
  void read() {
    stream_.async_read_some(asio::buffer(scratch_), [this](error_code ec, size_t) {
      if (!ec)
        return read();
      closed(ec);
    });
  }

  // The connection ended before the clients were done: closed or reset by the server,
  // or given up by TCP (timed_out: the server's kernel never acknowledged our bytes, as
  // when its listen queue overflowed and the connect only completed by a SYN cookie).
  void closed(error_code ec) {
    if (!open_ || ctx_.stopping)
      return;
    open_ = false;
    if (idle_) {
      ++ctx_.out.idle_closed_by_server;
    } else if (ec == asio::error::timed_out) {
      ++ctx_.out.slow_timed_out;
    } else {
      ++ctx_.out.slow_closed_by_server;
      ctx_.out.slow_closed_after_s.push_back(
        std::chrono::duration<double>(steady::now() - opened_at_).count());
    }
    stream_.close();
  }

  side_context& ctx_;
  beast::tcp_stream stream_;
  bool idle_ = false;
  bool open_ = false;
  bool connecting_ = false;
  bool counted_ = false; // ready() was called once
  bool writing_ = false;
  steady::time_point opened_at_;
  std::array<char, 1024> scratch_{};
};

// One GET /v1/health on a new connection.
struct health_probe {
  explicit health_probe(asio::io_context& ioc) : stream(ioc) {}
  beast::tcp_stream stream;
  beast::flat_buffer buf;
  http::request<http::empty_body> req;
  http::response<http::string_body> res;
  steady::time_point t0 = steady::now();
};

void probe_done(side_context& ctx, health_probe& p, bool ok) {
  if (ok)
    ctx.out.health_ms.push_back(ms_since(p.t0));
  else
    ++ctx.out.health_failed;
  p.stream.close();
}

void start_probe(side_context& ctx) {
  auto p = std::make_shared<health_probe>(ctx.ioc);
  ++ctx.out.health_probes;
  p->stream.expires_after(ctx.opt.health_timeout);
  p->stream.async_connect(ctx.server, [&ctx, p](error_code ec) {
    if (ec)
      return probe_done(ctx, *p, false);
    p->req.method(http::verb::get);
    p->req.target("/v1/health");
    p->req.version(11);
    p->req.set(http::field::host, ctx.target.host);
    p->req.keep_alive(false);
    http::async_write(p->stream, p->req, [&ctx, p](error_code ec, size_t) {
      if (ec)
        return probe_done(ctx, *p, false);
      http::async_read(p->stream, p->buf, p->res, [&ctx, p](error_code ec, size_t) {
        probe_done(ctx, *p, !ec && p->res.result_int() == 200);
      });
    });
  });
}

void sample(side_context& ctx) {
  if (ctx.target.proc_dir.empty())
    return;
  // A read that fails (no file descriptor left) keeps the previous figures.
  auto& out = ctx.out;
  out.max_threads = std::max(out.max_threads, count_threads(ctx.target.proc_dir));
  out.max_fds = std::max(out.max_fds, count_fds(ctx.target.proc_dir));
  if (auto rss = proc_status_bytes(ctx.target.proc_dir, "VmRSS:"); rss > 0)
    out.rss_bytes = rss;
  out.peak_rss_bytes = std::max(out.peak_rss_bytes, out.rss_bytes);
}

// Calls `fn` every `period` on `timer` until ctx.stopping.
void every(side_context& ctx, asio::steady_timer& timer, std::chrono::milliseconds period,
           std::function<void()> fn) {
  timer.expires_after(period);
  timer.async_wait([&ctx, &timer, period, fn = std::move(fn)](error_code ec) mutable {
    if (ec || ctx.stopping)
      return;
    fn();
    every(ctx, timer, period, std::move(fn));
  });
}

} // namespace

namespace {

// Entries of a /proc directory, "." and ".." aside (0 when unreadable).
int count_entries(const std::string& path) {
  int n = 0;
  if (auto* dir = ::opendir(path.c_str())) {
    while (auto* e = ::readdir(dir))
      n += e->d_name[0] != '.';
    ::closedir(dir);
  }
  return n;
}

} // namespace

int count_threads(const std::string& proc_dir) {
  return count_entries(proc_dir + "/task");
}

int count_fds(const std::string& proc_dir) {
  return count_entries(proc_dir + "/fd");
}


http_load_result run_http_load(const http_target& target, const http_load_options& opt) {
  assert(opt.clients >= 1 && opt.turns >= 1 && opt.slow >= 0 && opt.idle >= 0);
  http_load_result out;
  const tcp::endpoint server{asio::ip::make_address_v4(target.host), target.port};
  assert(server.address().is_loopback());
  if (!target.proc_dir.empty())
    out.threads_before = count_threads(target.proc_dir);

  // The side thread: slow connections first, then (once the clients start) the prober
  // and the sampler, until the clients are done.
  asio::io_context side_ioc{1};
  auto side_work = asio::make_work_guard(side_ioc);
  side_context side{side_ioc, server, target, opt, out, false, 0, {}};
  std::vector<std::unique_ptr<slow_connection>> slow;
  asio::steady_timer slow_timer{side_ioc}, probe_timer{side_ioc}, sample_timer{side_ioc};
  auto slow_ready = side.slow_ready.get_future();
  side.slow_pending = opt.slow + opt.idle;
  if (side.slow_pending == 0)
    side.slow_ready.set_value();
  for (int i = 0; i < opt.slow + opt.idle; ++i)
    slow.push_back(std::make_unique<slow_connection>(side, i >= opt.slow));
  asio::post(side_ioc, [&] {
    for (auto& s : slow)
      s->open();
    every(side, slow_timer, opt.slow_tick, [&] {
      for (auto& s : slow)
        s->tick();
    });
  });
  std::thread side_thread{[&] { side_ioc.run(); }};
  slow_ready.wait_for(std::chrono::seconds{10});
  asio::post(side_ioc, [&] {
    sample(side);
    every(side, sample_timer, opt.sample_every, [&] { sample(side); });
    start_probe(side);
    every(side, probe_timer, opt.health_every, [&] { start_probe(side); });
  });
  auto stop_side = [&] {
    side.stopping = true;
    slow_timer.cancel();
    probe_timer.cancel();
    sample_timer.cancel();
    for (auto& s : slow)
      s->stop();
    side_work.reset(); // probes in flight end by their own timeout
  };

  // The client thread: every turn client, and the deadline.
  asio::io_context client_ioc{1};
  client_context ctx{client_ioc, server, fmt::format("{}:{}", target.host, target.port),
                     target.token, opt, out, 0, false, {}};
  std::vector<std::unique_ptr<turn_client>> clients;
  for (int i = 0; i < opt.clients; ++i)
    clients.push_back(std::make_unique<turn_client>(ctx, i));
  asio::steady_timer deadline{client_ioc};
  const auto begin = steady::now();
  ctx.active = opt.clients;
  ctx.on_all_done = [&] {
    out.wall_seconds = std::chrono::duration<double>(steady::now() - begin).count();
    deadline.cancel();
    asio::post(side_ioc, stop_side);
  };
  deadline.expires_after(opt.max_duration);
  deadline.async_wait([&](error_code ec) {
    if (ec || ctx.active == 0)
      return;
    out.deadline_hit = true;
    ctx.stopping = true;
    for (auto& c : clients)
      c->abort();
  });
  for (auto& c : clients)
    asio::post(client_ioc, [&c] { c->start(); });
  std::thread client_thread{[&] { client_ioc.run(); }};

  client_thread.join();
  side_thread.join();
  if (!target.proc_dir.empty())
    out.peak_rss_bytes =
      std::max(out.peak_rss_bytes, proc_status_bytes(target.proc_dir, "VmHWM:"));
  return out;
}

} // namespace mneme::bench
