// Test seam for the LLM client tests: a tiny HTTP/1.1 server on 127.0.0.1 whose every
// connection is answered by one scripted behaviour (canned answer, silence, trickle,
// truncated body, reset). One thread per connection: tests only, a few connections.
// It records each request's raw head and body and the peak number of requests waiting
// for their answer (counted from the request's arrival to the first byte of its answer,
// so a client that sends its next request on the answer is never counted twice).
// stop() (or the destructor) wakes every connection thread and joins them.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace mneme::test {

struct recorded_request {
  std::string head; // request line + headers
  std::string body;
};

class loopback_server {
public:
  // What to do with a connection once its request is read. `fd` is the socket;
  // `srv` gives access to wait_or_stop() for sleeps that end early on stop().
  using behaviour = std::function<void(int fd, loopback_server& srv)>;

  // `read_request_first` false: the behaviour runs as soon as a connection is accepted
  // (e.g. to answer a TLS handshake with plain HTTP).
  explicit loopback_server(behaviour b, bool read_request_first = true)
    : behaviour_(std::move(b)), read_first_(read_request_first) {
    if (::pipe(stop_pipe_) != 0)
      throw std::runtime_error("pipe failed");
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(listen_fd_, 128);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread{[this] { accept_loop(); }};
  }

  ~loopback_server() { stop(); }
  loopback_server(const loopback_server&) = delete;
  loopback_server& operator=(const loopback_server&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<recorded_request> requests() {
    std::lock_guard<std::mutex> guard{mtx_};
    return requests_;
  }
  int peak_waiting_requests() const { return peak_; }

  // Called by a behaviour right before it answers (and by the server after the
  // behaviour, for those that do not): the connection's request stops waiting.
  void begin_answer() {
    if (waiting_here_) {
      waiting_here_ = false;
      --waiting_;
    }
  }

  // Sleeps `d` or until stop(); false when stopped.
  bool wait_or_stop(std::chrono::milliseconds d) {
    pollfd p{stop_pipe_[0], POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(d.count())) == 0;
  }

  // Waits until the peer closes or stop() is called.
  void wait_for_close(int fd) {
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    char buf[256];
    for (;;) {
      if (::poll(p, 2, -1) <= 0 || (p[1].revents & POLLIN))
        return;
      if (::recv(fd, buf, sizeof(buf), 0) <= 0)
        return;
    }
  }

  void stop() {
    if (stopped_.exchange(true))
      return;
    if (::write(stop_pipe_[1], "x", 1) != 1)
      std::abort();
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      threads.swap(threads_);
    }
    for (auto& t : threads)
      t.join();
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }

  static void send_all(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      auto n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        return;
      off += static_cast<size_t>(n);
    }
  }

  static std::string http_answer(int status, const std::string& body,
                                 const std::string& content_type = "application/json") {
    return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type
           + "\r\nContent-Length: " + std::to_string(body.size())
           + "\r\nConnection: close\r\n\r\n" + body;
  }

  // --- behaviours
  static behaviour canned(int status, std::string body) {
    return [status, body](int fd, loopback_server& srv) {
      srv.begin_answer();
      send_all(fd, http_answer(status, body));
    };
  }
  static behaviour delayed(std::chrono::milliseconds delay, int status, std::string body) {
    return [=](int fd, loopback_server& srv) {
      if (srv.wait_or_stop(delay)) {
        srv.begin_answer();
        send_all(fd, http_answer(status, body));
      }
    };
  }
  static behaviour silent() {
    return [](int fd, loopback_server& srv) { srv.wait_for_close(fd); };
  }
  // Headers and `body` one byte every `gap`: never idle for long, always slow.
  static behaviour trickle(std::string body, std::chrono::milliseconds gap) {
    return [=](int fd, loopback_server& srv) {
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n");
      for (char c : body) {
        if (!srv.wait_or_stop(gap))
          return;
        send_all(fd, std::string(1, c));
      }
    };
  }
  // Headers and the first `first` bytes of `body`, then silence until closed.
  static behaviour stall_after(std::string body, size_t first) {
    return [=](int fd, loopback_server& srv) {
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n"
                     + body.substr(0, first));
      srv.wait_for_close(fd);
    };
  }
  // Announces the whole body, sends half of it, closes.
  static behaviour truncated(std::string body) {
    return [=](int fd, loopback_server&) {
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n"
                     + body.substr(0, body.size() / 2));
    };
  }
  // Closes the connection with RST right after reading the request.
  static behaviour reset() {
    return [](int fd, loopback_server&) {
      linger lg{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    };
  }

private:
  void accept_loop() {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    for (;;) {
      if (::poll(p, 2, -1) <= 0 || (p[1].revents & POLLIN))
        return;
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0)
        continue;
      std::lock_guard<std::mutex> guard{mtx_};
      threads_.emplace_back([this, fd] { serve(fd); });
    }
  }

  bool read_request(int fd, recorded_request& req) {
    std::string data;
    char buf[4096];
    size_t head_end = std::string::npos;
    size_t want = 0;
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    for (;;) {
      if (head_end != std::string::npos && data.size() >= head_end + 4 + want)
        break;
      if (::poll(p, 2, -1) <= 0 || (p[1].revents & POLLIN))
        return false;
      auto n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0)
        return false;
      data.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
        std::string head = data.substr(0, head_end);
        std::string lower = head;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        if (auto cl = lower.find("content-length:"); cl != std::string::npos)
          want = std::stoul(lower.substr(cl + 15));
      }
    }
    req.head = data.substr(0, head_end);
    req.body = data.substr(head_end + 4, want);
    return true;
  }

  void start_waiting() {
    waiting_here_ = true;
    int now_waiting = ++waiting_;
    int peak = peak_.load();
    while (now_waiting > peak && !peak_.compare_exchange_weak(peak, now_waiting)) {
    }
  }

  void serve(int fd) {
    recorded_request req;
    if (!read_first_) {
      start_waiting();
      behaviour_(fd, *this);
    } else if (read_request(fd, req)) {
      {
        std::lock_guard<std::mutex> guard{mtx_};
        requests_.push_back(req);
      }
      start_waiting();
      behaviour_(fd, *this);
    }
    begin_answer();
    ::close(fd);
  }

  behaviour behaviour_;
  bool read_first_ = true;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<bool> stopped_{false};
  std::atomic<int> waiting_{0};
  std::atomic<int> peak_{0};
  // Whether this connection's thread (one per connection) has a request waiting.
  static inline thread_local bool waiting_here_ = false;
  std::thread acceptor_;
  std::mutex mtx_;
  std::vector<std::thread> threads_;
  std::vector<recorded_request> requests_;
};

// A port on 127.0.0.1 with nothing listening (bound, then closed).
inline int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

} // namespace mneme::test
