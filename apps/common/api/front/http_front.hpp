// The daemon's event-driven HTTP/1.1 front (SPEC §8.1, ARCHITECTURE "The HTTP front"):
// Boost.Beast on Asio, a fixed number of I/O threads of its own (never CAF's), no thread
// per connection or per request. A slow client costs a socket and a timer.
//
// What a connection goes through:
//   accept ──(a slot: connection_slots / policies/connection_admission; none: closed at
//   once)──► header read (header_timeout
//   from the first byte of a request; a keep-alive connection may idle keep_alive
//   before that byte) ──► strict checks (400 + close) ──► admit(head): the handler's
//   verdict before any body byte is read (401, 404, 405, 413, 503 + close) ──►
//   body read (deadline body_timeout + size / body_min_bytes_per_second, size from
//   Content-Length or max_body_bytes when chunked; 413 above max_body_bytes) ──►
//   handle(request, reply) ──► the reply completes later from any thread (answer or
//   stream) ──► the next request is read only after the answer was written: at most one
//   request in flight per connection, pipelined bytes wait in the buffer.
//
// Slots: max_connections regular connections, at most max_connections_per_address of
// them from one client address; beyond them reserved_connections more that serve one
// request each, only when handler.reserved(head) says so (else 503 + close), with a
// header deadline of reserve_header_timeout; a full reserve gives the oldest connection
// still waiting for its head's place to a new one.
//
// Strict HTTP (400 and close): a malformed request line or header, Content-Length
// together with Transfer-Encoding, more than one Content-Length (equal or not), a
// Transfer-Encoding other than "chunked", a bad chunk size. A header section above
// max_header_bytes is 431. An error response that closes the connection half-closes it
// and discards what the client still sends for a moment (so the client reads the
// answer instead of a reset).
//
// Threads: start/stop_accepting/stop from one controlling thread; open_connections()
// from any thread. admit() runs on an I/O thread and must not block; handle() too (it
// hands the request to actors and returns).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "caf/expected.hpp"

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

struct front_limits {
  int64_t max_connections = 10000;
  int64_t max_connections_per_address = 2000;
  int64_t reserved_connections = 64;
  std::chrono::milliseconds reserve_header_timeout{2000};
  std::chrono::milliseconds header_timeout{10000};
  std::chrono::milliseconds body_timeout{10000};      // the deadline of an empty body
  int64_t body_min_bytes_per_second = 64 * 1024;      // each such many bytes add 1 s
  std::chrono::milliseconds keep_alive_timeout{60000};// idle between requests
  std::chrono::milliseconds write_timeout{60000};     // one answer to the socket
  int64_t max_body_bytes = 4 * 1024 * 1024;
  int64_t max_header_bytes = 64 * 1024;
  int64_t stream_buffer_bytes = 1024 * 1024;          // per streamed answer, see http_exchange
};

// The deadline for a body of `bytes` bytes: body_timeout + bytes / rate (rounded up).
std::chrono::milliseconds body_deadline(const front_limits& limits, int64_t bytes);

// The Retry-After the front adds to an answer that carries none: "1" (seconds) for 429
// (overloaded), 503 (shutting down, lease lost, the model rate limited) and 529 (the
// Anthropic door's overloaded), "" for every other status. A handler's own Retry-After
// is kept.
const char* default_retry_after(int status);

struct front_handler {
  // The verdict on a request's head (no body yet): a response ends the request (and
  // closes the connection), nullopt lets the front read the body and call handle().
  std::function<std::optional<http_response>(const http_request& head)> admit;
  std::function<void(http_request req, http_reply reply)> handle;
  // Optional: the refusals the front makes itself after admit() (413) pass through it
  // (a door answers them in its own wire's shape).
  std::function<void(const http_request& head, http_response& r)> reshape;
  // Optional: whether a request head may be served on a reserve connection (health,
  // metrics, an admin token). Unset: none is.
  std::function<bool(const http_request& head)> reserved;
};

struct front_counters {
  std::atomic<int64_t> accepted{0};
  std::atomic<int64_t> refused{0};         // no slot: closed at once
  std::atomic<int64_t> reserve_accepted{0};  // connections given a reserve slot
  std::atomic<int64_t> reserve_displaced{0}; // ...of which pushed out a waiting one
  std::atomic<int64_t> reserve_served{0};    // reserve requests handed to the handler
  std::atomic<int64_t> reserve_refused{0};   // reserve requests answered 503
  std::atomic<int64_t> header_timeouts{0};
  std::atomic<int64_t> body_timeouts{0};
  std::atomic<int64_t> idle_closed{0};     // keep-alive idle timeouts
  std::atomic<int64_t> bad_requests{0};    // strict-HTTP refusals
  std::atomic<int64_t> streams_dropped{0}; // a slow reader past stream_buffer_bytes
};

class http_front {
 public:
  // REQUIRES: handler.admit and handler.handle are set; io_threads >= 1.
  http_front(front_limits limits, front_handler handler, size_t io_threads);
  ~http_front(); // stop()
  http_front(const http_front&) = delete;
  http_front& operator=(const http_front&) = delete;

  // Binds host:port (0 = a free port) with SO_REUSEADDR only and starts the I/O
  // threads: the bound port, or errc::internal naming host and port ("port P is in
  // use"), errc::bad_request when already started.
  caf::expected<int> start(const std::string& host, int port);

  // Closes the listener (the port is free from then on); open connections go on.
  // Idempotent.
  void stop_accepting();

  // Waits up to `flush` for answers still being written, then closes every connection
  // and joins the I/O threads. Idempotent.
  void stop(std::chrono::milliseconds flush = std::chrono::milliseconds{2000});

  int64_t open_connections() const;
  const front_counters& counters() const;
  size_t io_threads() const;

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
};

} // namespace mneme::api
