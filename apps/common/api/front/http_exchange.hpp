// One HTTP request between the daemon's front (http_front.hpp, the connections) and a
// handler (http_api.hpp, the routes): the parsed request, the answer, and the reply
// handle through which the handler completes the request later, from any thread.
//
// Contract of http_reply:
//   1. A request is completed exactly once: by answer(), or by stream() followed by the
//      stream's end(). Every later answer()/stream() returns false/nullptr and does
//      nothing, so a late actor answer after a shutdown's 503 is dropped safely.
//   2. Nothing blocks: answer() and push() hand bytes to the connection's I/O thread
//      and return.
//   3. A stream buffers at most front_limits::stream_buffer_bytes not yet written to
//      the socket; past that the connection is dropped (the client reads too slowly)
//      and push() returns false from then on, as it does once the client went away.
//      The producer (a turn) is never cancelled by that: it may stop pushing.
//
// Threads: http_request and http_response are plain values; http_reply and
// event_stream are safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mneme::api {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::string method;   // as sent ("GET", "POST", ...)
  std::string target;   // the raw request target, still percent-encoded ("/v1/x?q=1")
  header_list headers;  // as sent, in order
  std::string body;     // empty until the front read it (admit() sees no body)
  std::string remote;   // the client's address ("127.0.0.1:50312")

  // The first header of that name (ASCII case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
  // How many headers of that name were sent (ASCII case-insensitive).
  size_t header_count(std::string_view name) const;
};

struct http_response {
  int status = 200;
  std::string content_type;  // empty: no Content-Type (e.g. 204)
  std::string body;
  header_list headers;       // extra headers (Allow, WWW-Authenticate, ...)
  bool close = false;        // close the connection after this response
};

// A streamed answer (e.g. text/event-stream): bytes pushed as the producer makes them.
class event_stream {
 public:
  virtual ~event_stream() = default;
  // Queues `bytes` for the client; false (and nothing queued) once the client is gone,
  // the connection was dropped for a full buffer, or end() was called.
  virtual bool push(std::string bytes) = 0;
  // Ends the answer; the connection then serves its next request. Idempotent.
  virtual void end() = 0;
  // False once push() would return false.
  virtual bool open() const = 0;
  // The bytes cut() sends before the end (e.g. an SSE error event); none by default.
  virtual void set_cut_ending(std::string bytes) { (void)bytes; }
  // The server ends the answer before its producer did (a shutdown's fail_pending): the
  // cut ending, then the end; later pushes return false. Idempotent; a no-op once ended.
  virtual void cut() { end(); }
};

// The connection's side of a reply (implemented by http_front's connection).
class reply_sink {
 public:
  virtual ~reply_sink() = default;
  virtual void deliver(http_response res) = 0;
  virtual std::shared_ptr<event_stream> open_stream(int status, std::string content_type,
                                                    header_list headers) = 0;
  // Cuts the stream open_stream() opened, if any (event_stream::cut).
  virtual void cut_stream() {}
  std::atomic<bool> completed{false};
};

class http_reply {
 public:
  http_reply() = default;
  explicit http_reply(std::shared_ptr<reply_sink> sink) : sink_(std::move(sink)) {}

  // Completes the request with `res`; false when it was already completed.
  bool answer(http_response res) const;
  // Starts a streamed answer (the status line and headers are sent now, the body as
  // chunks); nullptr when the request was already completed.
  std::shared_ptr<event_stream> stream(int status, std::string content_type,
                                       header_list headers = {}) const;
  bool completed() const { return !sink_ || sink_->completed.load(); }
  // A streamed answer still open is cut (event_stream::cut); nothing otherwise.
  void cut_stream() const {
    if (sink_)
      sink_->cut_stream();
  }

 private:
  std::shared_ptr<reply_sink> sink_;
};

} // namespace mneme::api
