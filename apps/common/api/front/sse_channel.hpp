// The text/event-stream answer of one request (docs/api.md "Streamed turns", "OpenAI
// door"): the bytes of server-sent events pushed as a producer makes them, the HTTP head
// (200, `Content-Type: text/event-stream`, `X-Accel-Buffering: no` and the headers given)
// sent with the first event, so a request refused before its first event still answers
// with its own status; "data: [DONE]" and the end once. A stream the daemon's shutdown
// cuts ends with an error event (shutdown_ending() or the format's own), never silently.
// Each stream format (a turn's events, a door's chunks) writes its own event bytes into
// one.
//
// Threads: not locked; its owner orders the calls (the relays hold a mutex).
#pragma once

#include <memory>
#include <string>

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

class sse_channel {
 public:
  explicit sse_channel(http_reply reply, header_list headers = {},
                       std::string cut_ending = shutdown_ending())
    : reply_(std::move(reply)), headers_(std::move(headers)),
      cut_ending_(std::move(cut_ending)) {}

  // What a stream cut by the daemon's shutdown ends with (event_stream::cut), unless the
  // format gives its own: `event: error` with {"error":{"code":"shutting_down",
  // "message":...}} (the OpenAI and Anthropic SDKs raise an error on an `error` event),
  // then `data: [DONE]`.
  static std::string shutdown_ending();

  void push(std::string bytes); // opens the stream at the first event
  void end();                   // [DONE] and the end, when open and not ended
  void end_with(std::string last); // `last` (a wire's own final event) and the end, likewise
  bool opened() const { return stream_ != nullptr; }
  // The stream opened and can no longer be written, before end(): its client closed the
  // connection, the front dropped it for reading too slowly, or a shutdown cut it.
  bool client_gone() const { return stream_ && !ended_ && !stream_->open(); }
  // Headers sent when the stream opens (only before the first push).
  void add_header(std::string name, std::string value) {
    headers_.emplace_back(std::move(name), std::move(value));
  }

 private:
  http_reply reply_;
  header_list headers_;
  std::string cut_ending_;
  std::shared_ptr<event_stream> stream_;
  bool ended_ = false;
};

} // namespace mneme::api
