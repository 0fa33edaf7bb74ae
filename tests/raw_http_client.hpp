// A blocking HTTP/1.1 client over a raw loopback socket, for tests of HTTP servers.
// It writes exactly the bytes it is given and reports exactly what the wire did: one
// whole response (status line, headers, body by Content-Length, chunked decoding or
// until close), a bare head (a 100 Continue, the start of a stream), or the peer
// closing (EOF or ECONNRESET). Every wait has a bound; nothing waits forever.
//
// Bytes received past one response stay buffered for the next read (keep-alive and
// pipelining). Test-only; one client per thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace mneme::testing {

using ms = std::chrono::milliseconds;

// Why the last read ended.
enum class wire_end { none, response, closed, reset, timed_out, malformed };

inline const char* to_string(wire_end e) {
  switch (e) {
    case wire_end::none: return "none";
    case wire_end::response: return "response";
    case wire_end::closed: return "closed";
    case wire_end::reset: return "reset";
    case wire_end::timed_out: return "timed_out";
    case wire_end::malformed: return "malformed";
  }
  return "?";
}

struct raw_response {
  int status = 0;
  std::string head; // the status line and headers, up to and including the empty line
  std::string body; // de-chunked when the answer was chunked

  // The first header of that name (ASCII case-insensitive), "" when absent.
  std::string header(std::string_view name) const {
    size_t at = head.find("\r\n");
    while (at != std::string::npos && at + 2 < head.size()) {
      size_t line = at + 2;
      size_t eol = head.find("\r\n", line);
      if (eol == std::string::npos || eol == line)
        break;
      auto colon = head.find(':', line);
      if (colon != std::string::npos && colon < eol && colon - line == name.size()
          && std::equal(name.begin(), name.end(), head.begin() + static_cast<long>(line),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a))
                                 == std::tolower(static_cast<unsigned char>(b));
                        })) {
        auto v = head.substr(colon + 1, eol - colon - 1);
        auto first = v.find_first_not_of(" \t");
        auto last = v.find_last_not_of(" \t");
        return first == std::string::npos ? "" : v.substr(first, last - first + 1);
      }
      at = eol;
    }
    return {};
  }
};

class raw_client {
 public:
  // Connects to 127.0.0.1:port. `receive_buffer` > 0 sets SO_RCVBUF before connecting
  // (a small window makes a client that never reads fill the server's buffers sooner).
  // `from_host_byte` > 1 connects from 127.0.0.N (another client address on loopback).
  explicit raw_client(int port, int receive_buffer = 0, int from_host_byte = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0)
      return;
    if (receive_buffer > 0)
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    if (from_host_byte > 1) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      from.sin_addr.s_addr = htonl((127u << 24) | static_cast<uint32_t>(from_host_byte));
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~raw_client() { close(); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  bool connected() const { return fd_ >= 0; }
  wire_end last_end() const { return end_; }
  const std::string& pending() const { return buffer_; } // received, not yet consumed

  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

  // Writes all of `bytes` (waits up to `bound` for room); false when the peer is gone.
  bool send(std::string_view bytes, ms bound = ms{10000}) {
    auto deadline = clock::now() + bound;
    size_t sent = 0;
    while (fd_ >= 0 && sent < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + sent, bytes.size() - sent,
                      MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        pollfd p{fd_, POLLOUT, 0};
        if (::poll(&p, 1, remaining(deadline)) <= 0)
          return false;
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      return false;
    }
    return fd_ >= 0;
  }

  // One whole response within `bound`; nullopt otherwise (see last_end()). A 1xx is a
  // whole response too: read it and read again. `head_request`: the answer has no body.
  std::optional<raw_response> read_response(ms bound, bool head_request = false) {
    auto deadline = clock::now() + bound;
    raw_response r;
    size_t at = 0;
    if (!await_head(deadline, r, at))
      return std::nullopt;
    bool no_body = head_request || r.status / 100 == 1 || r.status == 204 || r.status == 304;
    if (no_body)
      return done(r, at);
    std::string te = lower(r.header("Transfer-Encoding"));
    if (!te.empty() && te.find("chunked") != std::string::npos)
      return read_chunked(deadline, r, at);
    std::string cl = r.header("Content-Length");
    if (!cl.empty()) {
      char* endp = nullptr;
      auto length = std::strtoull(cl.c_str(), &endp, 10);
      if (endp == cl.c_str() || *endp != '\0')
        return fail(wire_end::malformed);
      while (buffer_.size() < at + length)
        if (!fill(deadline))
          return std::nullopt;
      r.body = buffer_.substr(at, length);
      return done(r, at + length);
    }
    // Neither: the body runs until the server closes.
    while (fill(deadline)) {
    }
    if (end_ != wire_end::closed)
      return std::nullopt;
    r.body = buffer_.substr(at);
    return done(r, buffer_.size());
  }

  // Only the status line and headers (e.g. "100 Continue", the start of a stream); the
  // bytes after them stay buffered.
  std::optional<raw_response> read_head(ms bound) {
    auto deadline = clock::now() + bound;
    raw_response r;
    size_t at = 0;
    if (!await_head(deadline, r, at))
      return std::nullopt;
    return done(r, at);
  }

  // Reads until the bytes received and not yet consumed hold `needle` (raw wire bytes,
  // chunk framing included), at most `bound`: true when they do.
  bool read_until(std::string_view needle, ms bound) {
    auto deadline = clock::now() + bound;
    while (buffer_.find(needle) == std::string::npos)
      if (!fill(deadline))
        return false;
    return true;
  }

  // Reads and discards until the peer closes (EOF or ECONNRESET): true when that happened
  // within `bound`. discarded() tells how many bytes were dropped on the way.
  bool wait_closed(ms bound) {
    auto deadline = clock::now() + bound;
    discarded_ = 0;
    for (;;) {
      discarded_ += static_cast<int64_t>(buffer_.size());
      buffer_.clear();
      if (!fill(deadline))
        return end_ == wire_end::closed || end_ == wire_end::reset;
    }
  }
  int64_t discarded() const { return discarded_; }

 private:
  using clock = std::chrono::steady_clock;

  static int remaining(clock::time_point deadline) {
    auto left = std::chrono::duration_cast<ms>(deadline - clock::now()).count();
    return static_cast<int>(std::max<long long>(0, left));
  }

  static std::string lower(std::string s) {
    for (auto& c : s)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  std::nullopt_t fail(wire_end why) {
    end_ = why;
    return std::nullopt;
  }

  raw_response done(raw_response& r, size_t used) {
    buffer_.erase(0, used);
    end_ = wire_end::response;
    return r;
  }

  // Appends what arrives before `deadline`; false (and last_end() set) when nothing can.
  bool fill(clock::time_point deadline) {
    if (fd_ < 0) {
      end_ = wire_end::closed;
      return false;
    }
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      int ready = ::poll(&p, 1, remaining(deadline));
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0) {
        end_ = wire_end::timed_out;
        return false;
      }
      char buf[65536];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        buffer_.append(buf, static_cast<size_t>(n));
        return true;
      }
      if (n < 0 && errno == EINTR)
        continue;
      end_ = n == 0 ? wire_end::closed : (errno == ECONNRESET ? wire_end::reset : wire_end::closed);
      return false;
    }
  }

  bool await_head(clock::time_point deadline, raw_response& r, size_t& at) {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill(deadline))
        return false;
    r.head = buffer_.substr(0, end + 4);
    if (r.head.compare(0, 9, "HTTP/1.1 ") != 0 && r.head.compare(0, 9, "HTTP/1.0 ") != 0) {
      end_ = wire_end::malformed;
      return false;
    }
    r.status = std::atoi(r.head.c_str() + 9);
    at = end + 4;
    return true;
  }

  std::optional<raw_response> read_chunked(clock::time_point deadline, raw_response& r,
                                           size_t at) {
    for (;;) {
      size_t eol;
      while ((eol = buffer_.find("\r\n", at)) == std::string::npos)
        if (!fill(deadline))
          return std::nullopt;
      auto line = buffer_.substr(at, eol - at);
      line = line.substr(0, line.find(';'));
      if (line.empty() || line.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        return fail(wire_end::malformed);
      auto size = std::strtoull(line.c_str(), nullptr, 16);
      at = eol + 2;
      if (size == 0) {
        // Trailers (none expected) up to the empty line.
        for (;;) {
          while ((eol = buffer_.find("\r\n", at)) == std::string::npos)
            if (!fill(deadline))
              return std::nullopt;
          bool empty = eol == at;
          at = eol + 2;
          if (empty)
            return done(r, at);
        }
      }
      while (buffer_.size() < at + size + 2)
        if (!fill(deadline))
          return std::nullopt;
      if (buffer_.compare(at + size, 2, "\r\n") != 0)
        return fail(wire_end::malformed);
      r.body += buffer_.substr(at, size);
      at += size + 2;
    }
  }

  int fd_ = -1;
  std::string buffer_;
  wire_end end_ = wire_end::none;
  int64_t discarded_ = 0;
};

} // namespace mneme::testing
