// A plain blocking HTTP/1.1 client over raw loopback sockets, for the fake LLM
// server tests: unlike a library client it reports exactly what the wire did
// (refused, reset, closed early, silent for the idle timeout, bytes so far).
// Test-only; one client per thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>

namespace mneme::fakellm::testing {

using ms = std::chrono::milliseconds;

struct raw_result {
  bool connected = false;
  int connect_errno = 0;
  bool reset = false;         // ECONNRESET while waiting
  bool eof = false;           // the server closed the connection
  bool idle_timeout = false;  // no byte for the idle timeout
  bool complete = false;      // a whole response arrived
  int status = 0;
  std::string head;           // status line and headers of the final response
  std::string body;           // de-chunked when chunked
  std::string raw;            // every byte received
  ms elapsed{0};              // from sending to the end of the wait
};

inline std::string post_request(const std::string& path, const std::string& body,
                                const std::string& extra_headers = "", bool keep_alive = true) {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
         extra_headers + (keep_alive ? "" : "Connection: close\r\n") +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline std::string get_request(const std::string& path, const std::string& method = "GET") {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

// Parses the first complete final response at the start of `raw` (skipping
// 1xx responses). Returns the bytes it used, 0 when incomplete.
inline size_t parse_response(const std::string& raw, raw_result& r) {
  size_t at = 0;
  for (;;) {
    auto head_end = raw.find("\r\n\r\n", at);
    if (head_end == std::string::npos) return 0;
    auto head = raw.substr(at, head_end + 4 - at);
    r.status = std::atoi(head.c_str() + 9);
    r.head = head;
    at = head_end + 4;
    if (r.status >= 200) break;
  }
  auto lower = r.head;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("transfer-encoding: chunked") != std::string::npos) {
    std::string body;
    for (;;) {
      auto eol = raw.find("\r\n", at);
      if (eol == std::string::npos) return 0;
      auto size = std::stoul(raw.substr(at, eol - at), nullptr, 16);
      if (raw.size() < eol + 2 + size + 2) return 0;
      body += raw.substr(eol + 2, size);
      at = eol + 2 + size + 2;
      if (size == 0) {
        r.body = body;
        return at;
      }
    }
  }
  auto cl = lower.find("content-length: ");
  size_t length = cl == std::string::npos ? 0 : std::stoul(lower.substr(cl + 16));
  if (raw.size() < at + length) {
    r.body = raw.substr(at);
    return 0;
  }
  r.body = raw.substr(at, length);
  return at + length;
}

// One client connection; keeps unread bytes between responses (keep-alive).
class raw_connection {
 public:
  explicit raw_connection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      connect_errno_ = errno;
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int connect_errno() const { return connect_errno_; }

  bool send_all(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Waits for one whole response, the server closing, a reset, or `idle` without a byte.
  raw_result read_response(ms idle) {
    raw_result r;
    r.connected = connected();
    r.connect_errno = connect_errno_;
    if (!connected()) return r;
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      if (auto used = parse_response(buffer_, r); used > 0) {
        r.complete = true;
        r.raw += buffer_.substr(0, used);
        buffer_.erase(0, used);
        break;
      }
      pollfd p{fd_, POLLIN, 0};
      int ready = ::poll(&p, 1, static_cast<int>(idle.count()));
      if (ready == 0) {
        r.idle_timeout = true;
        r.raw += buffer_;
        break;
      }
      char buf[65536];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        buffer_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) r.eof = true;
      else r.reset = errno == ECONNRESET;
      r.raw += buffer_;
      parse_response(buffer_, r);  // status/head of a partial answer, if any
      break;
    }
    r.elapsed = std::chrono::duration_cast<ms>(std::chrono::steady_clock::now() - start);
    return r;
  }

  raw_result exchange(const std::string& request, ms idle = ms(5000)) {
    if (connected() && !send_all(request)) {
      raw_result r;
      r.connected = true;
      r.reset = true;
      return r;
    }
    return read_response(idle);
  }

 private:
  int fd_ = -1;
  int connect_errno_ = 0;
  std::string buffer_;
};

// One request on a fresh connection.
inline raw_result roundtrip(uint16_t port, const std::string& request, ms idle = ms(5000)) {
  raw_connection c{port};
  return c.exchange(request, idle);
}

} // namespace mneme::fakellm::testing
