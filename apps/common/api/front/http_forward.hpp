// Forwarding a request to the node that serves its session key (node mode, issue 26
// item 4; docs/scale-out.md "Forwarding"): when the gateway refuses a key with
// errc::lease_elsewhere, the HTTP API sends the very request it received (method,
// target, headers, body) to the owner's advertise URL and answers the client with the
// owner's answer. The request gets `X-Mneme-Forwarded-By: <this node>`; a node never
// forwards a request that arrived with it (policies/lease_policy should_forward).
//
// Asynchronous: one I/O thread of its own (Boost.Beast client), no thread per request;
// a connection per forwarded request. A whole answer is relayed once read; a streamed
// one (Content-Type text/event-stream: streamed turns, the OpenAI door's streams) is
// relayed piece by piece as the owner writes it, so the client's first byte waits for
// the owner's, not for its end. An owner that cannot be reached or does not answer
// within the deadline yields 503 `lease_owner_unreachable` with Retry-After: its
// lease expires within gateway.lease_seconds, after which any node takes the key over.
// An owner whose stream breaks after it began ends the client's stream there (no
// final event, no [DONE]: the client sees the cut).
//
// Threads: forward() from any thread; the sink's functions run on the forwarder's
// thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

inline constexpr const char* forwarded_by_header = "X-Mneme-Forwarded-By";

struct forward_limits {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds total_timeout{330000}; // a turn may wait for the model
  int64_t max_answer_bytes = 256 * 1024 * 1024;
  int64_t retry_after_seconds = 10;                // gateway.lease_seconds
};

// Where a forwarded request's answer goes. Exactly one of the two is called once.
struct forward_sink {
  // A whole answer, or the 503 of a failure before the owner's status line arrived.
  std::function<void(http_response)> answer;
  // A streamed answer: the owner's status, content type and headers; returns the
  // client's stream, or nullptr when the client's request is over (the forward stops).
  // Null: streamed answers are relayed whole through `answer`.
  std::function<std::shared_ptr<event_stream>(int status, std::string content_type,
                                              header_list headers)>
    open_stream;
};

class request_forwarder {
 public:
  // `self_node`: this node's id, sent in forwarded_by_header.
  request_forwarder(std::string self_node, forward_limits limits);
  ~request_forwarder(); // stops the thread; forwards in flight end with their 503
  request_forwarder(const request_forwarder&) = delete;
  request_forwarder& operator=(const request_forwarder&) = delete;

  // Sends `req` to `owner_url` (http://host:port[/base]); `sink` gets the owner's
  // answer (whole or streamed), or a 503 naming what failed.
  void forward(const http_request& req, const std::string& owner_url, forward_sink sink);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mneme::api
