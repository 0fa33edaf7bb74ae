// Socket side of the fake LLM server (see server_impl.hpp): the listener (closed
// and reopened by refuse windows), accepting, reading, parsing and executing
// response plans with timers. Runs on the loop thread only.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "apps/common/fakellm/http_response.hpp"
#include "apps/common/fakellm/server_impl.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"

namespace mneme::fakellm {

namespace {

constexpr uint32_t read_events = EPOLLIN | EPOLLRDHUP;
constexpr auto listener_tick = std::chrono::milliseconds(20);
constexpr auto accept_pause = std::chrono::milliseconds(100);
constexpr int max_accepts_per_event = 512;
constexpr size_t read_chunk = 64 * 1024;

} // namespace

caf::error fake_llm_server::impl::open_listener() {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(bound_port.load() != 0 ? bound_port.load() : opts.port);
  auto host = opts.host == "localhost" ? std::string("127.0.0.1") : opts.host;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    return caf::make_error(errc::bad_request, "host must be an IPv4 address: " + opts.host);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return caf::make_error(errc::internal, std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, opts.listen_backlog) != 0) {
    auto err = std::string("bind/listen ") + host + ":" + std::to_string(ntohs(addr.sin_port)) +
               ": " + std::strerror(errno);
    ::close(fd);
    return caf::make_error(errc::internal, std::move(err));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.sin_port);
  listen_fd = fd;
  loop.add(fd, EPOLLIN, [this](uint32_t) { on_accept(); });
  return {};
}

void fake_llm_server::impl::close_listener() {
  if (listen_fd < 0) return;
  loop.remove(listen_fd);
  ::close(listen_fd);
  listen_fd = -1;
}

void fake_llm_server::impl::sync_listener() {
  bool refused = false;
  {
    std::lock_guard<std::mutex> guard{mtx};
    refused = listener_refused(scn.plan, elapsed_locked());
  }
  if (refused && listen_fd >= 0) {
    log->info("port={} event=listener_closed reason=refuse_window", bound_port.load());
    close_listener();
  } else if (!refused && listen_fd < 0 && steady::now() >= accept_paused_until) {
    if (auto err = open_listener())
      log->warn("port={} event=listener_reopen_failed error={}", bound_port.load(), render_error(err));
    else
      log->info("port={} event=listener_open", bound_port.load());
  }
}

void fake_llm_server::impl::tick_listener() {
  sync_listener();
  loop.schedule(listener_tick, [this] { tick_listener(); });
}

void fake_llm_server::impl::on_accept() {
  for (int i = 0; i < max_accepts_per_event; ++i) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: stop accepting for a moment instead of spinning.
        log->warn("port={} event=accept_paused error={}", bound_port.load(), std::strerror(errno));
        close_listener();
        accept_paused_until = steady::now() + accept_pause;
      }
      return;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<connection>();
    c->id = next_conn_id++;
    c->fd = fd;
    if (!loop.add(fd, read_events, [this, fd](uint32_t ev) { on_connection_event(fd, ev); })) {
      ::close(fd);
      continue;
    }
    conns[fd] = std::move(c);
    std::lock_guard<std::mutex> guard{mtx};
    ++counters.connections_accepted;
    ++counters.connections_open;
  }
}

connection* fake_llm_server::impl::find(int fd, uint64_t id) {
  auto it = conns.find(fd);
  return it != conns.end() && it->second->id == id ? it->second.get() : nullptr;
}

void fake_llm_server::impl::close_connection(connection& c, bool reset) {
  if (reset) {
    linger lg{1, 0};  // RST instead of FIN
    ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  }
  if (c.timer != 0) loop.cancel(c.timer);
  int fd = c.fd;
  loop.remove(fd);
  ::close(fd);
  conns.erase(fd);  // destroys c
  std::lock_guard<std::mutex> guard{mtx};
  --counters.connections_open;
}

void fake_llm_server::impl::on_connection_event(int fd, uint32_t events) {
  auto it = conns.find(fd);
  if (it == conns.end()) return;
  auto& c = *it->second;
  if (events & (EPOLLERR | EPOLLHUP)) {
    close_connection(c, false);
    return;
  }
  if ((events & EPOLLOUT) && !flush(c)) return;
  if (!(events & (EPOLLIN | EPOLLRDHUP))) return;
  char buf[read_chunk];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      if (!c.silenced) c.in.append(buf, static_cast<size_t>(n));
      if (c.in.size() > opts.limits.max_header_bytes + opts.limits.max_body_bytes + read_chunk) {
        close_connection(c, true);  // a client pipelining without reading answers
        return;
      }
      continue;
    }
    if (n == 0) {
      // The client is done sending: answer what is complete, then close.
      auto id = c.id;
      c.peer_closed = true;
      if (c.silenced) {
        close_connection(c, false);
        return;
      }
      if (!c.busy) process_input(c);
      auto* still = find(fd, id);
      if (still != nullptr && !still->busy) close_connection(*still, false);
      else if (still != nullptr) loop.modify(fd, still->out_off < still->out.size() ? uint32_t{EPOLLOUT} : 0u);
      return;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    close_connection(c, false);
    return;
  }
  if (!c.busy) process_input(c);
}

response_plan fake_llm_server::impl::route_guarded(const http_request& req) {
  try {
    return route(req);
  } catch (const std::exception& e) {
    // A bug must cost one request, never the loop thread.
    log->error("port={} event=handler_exception path={} error={}", bound_port.load(),
               std::string(req.path().substr(0, 100)), e.what());
    return json_plan(500, error_body("internal error of the fake server", "server_error", ""),
                     false);
  }
}

void fake_llm_server::impl::process_input(connection& c) {
  while (!c.busy && !c.in.empty()) {
    http_request req;
    auto r = parse_request(c.in, opts.limits, &req);
    switch (r.status) {
      case parse_status::incomplete:
        if (r.headers_complete && r.expects_continue && !c.sent_continue) {
          c.sent_continue = true;
          queue_bytes(c, "HTTP/1.1 100 Continue\r\n\r\n");
        }
        return;
      case parse_status::complete: {
        c.in.erase(0, r.consumed);
        c.sent_continue = false;
        if (!execute(c, route_guarded(req))) return;
        continue;
      }
      case parse_status::bad_request:
      case parse_status::unsupported:
      case parse_status::too_large: {
        {
          std::lock_guard<std::mutex> guard{mtx};
          ++counters.bad_requests;
        }
        int status = r.status == parse_status::too_large ? 413
                     : r.status == parse_status::unsupported ? 411 : 400;
        auto code = r.status == parse_status::too_large ? "request_too_large" : "bad_request";
        log->debug("conn={} event=bad_http status={} error={}", c.id, status, r.error);
        c.in.clear();
        execute(c, json_plan(status, error_body(r.error, "invalid_request_error", code), false));
        return;
      }
    }
  }
}

bool fake_llm_server::impl::execute(connection& c, response_plan plan) {
  if (plan.reset) {
    close_connection(c, true);
    return false;
  }
  c.busy = true;
  if (plan.silence) {
    c.silenced = true;
    c.in.clear();
    return true;
  }
  c.close_after = plan.close_after;
  c.pending_first = std::move(plan.first);
  c.pending_rest = std::move(plan.rest);
  c.pause_ms = plan.pause_ms;
  if (plan.delay_ms <= 0) return deliver_first(c);
  int fd = c.fd;
  auto id = c.id;
  c.timer = loop.schedule(std::chrono::milliseconds(plan.delay_ms), [this, fd, id] {
    if (auto* conn = find(fd, id)) {
      conn->timer = 0;
      deliver_first(*conn);
    }
  });
  return true;
}

bool fake_llm_server::impl::deliver_first(connection& c) {
  auto first = std::move(c.pending_first);
  c.pending_first.clear();
  if (c.pending_rest.empty()) {
    c.response_done = true;
    return queue_bytes(c, first);
  }
  if (!queue_bytes(c, first)) return false;
  int fd = c.fd;
  auto id = c.id;
  c.timer = loop.schedule(std::chrono::milliseconds(c.pause_ms), [this, fd, id] {
    auto* conn = find(fd, id);
    if (conn == nullptr) return;
    conn->timer = 0;
    auto rest = std::move(conn->pending_rest);
    conn->pending_rest.clear();
    conn->response_done = true;
    queue_bytes(*conn, rest);
  });
  return true;
}

bool fake_llm_server::impl::queue_bytes(connection& c, std::string_view bytes) {
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
  }
  c.out.append(bytes);
  return flush(c);
}

bool fake_llm_server::impl::flush(connection& c) {
  while (c.out_off < c.out.size()) {
    auto n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      loop.modify(c.fd, c.peer_closed ? uint32_t{EPOLLOUT} : (read_events | EPOLLOUT));
      return true;
    }
    close_connection(c, false);
    return false;
  }
  loop.modify(c.fd, c.peer_closed ? 0u : read_events);
  return finish_if_done(c);
}

bool fake_llm_server::impl::finish_if_done(connection& c) {
  if (!c.response_done || c.out_off < c.out.size()) return true;
  c.response_done = false;
  c.busy = false;
  if (c.close_after || c.peer_closed) {
    close_connection(c, false);
    return false;
  }
  if (!c.in.empty()) {
    // Requests pipelined behind this one: answer them from a fresh stack frame
    // (a process_input already running on this connection just sees them done).
    int fd = c.fd;
    auto id = c.id;
    loop.schedule(std::chrono::milliseconds(0), [this, fd, id] {
      if (auto* conn = find(fd, id)) process_input(*conn);
    });
  }
  return true;
}

} // namespace mneme::fakellm
