// The requests of the API not yet completed, for the daemon's shutdown (docs/api.md
// "Shutdown"): each is tracked from handle() until its answer (or the end of its
// stream), with the actor that serves it once spawned, so fail_all() can answer every
// one at once and end the actors that may wait for an answer that never comes.
//
// Threads: every member from any thread (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "caf/actor_addr.hpp"

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

struct route_row;

class pending_requests {
 public:
  // A new request; its id for the calls below. `shape`: the route at its path, whose
  // refusals' shape fail_all() answers in (reshape_refusal); null = mneme's.
  uint64_t track(http_reply reply, const route_row* shape = nullptr);
  // Remembers the request's actor, so fail_all() can end it (unless it is done).
  void served_by(uint64_t id, caf::actor_addr actor);
  // Answers the request and forgets it.
  void complete(uint64_t id, const http_reply& reply, http_response res);
  // The request was completed another way (a stream that ended, a forwarded answer).
  void forget(uint64_t id);

  int64_t count() const;
  // Answers every tracked request with `answer` and ends its actor; how many were
  // answered (a request its own answer completed meanwhile is not counted). A request
  // whose stream is under way is cut instead (http_reply::cut_stream: the stream's error
  // event, then its end).
  size_t fail_all(const http_response& answer);

 private:
  struct pending {
    http_reply reply;
    caf::actor_addr actor;
    const route_row* shape = nullptr;
  };
  mutable std::mutex mu_; // guards requests_, next_id_
  std::unordered_map<uint64_t, pending> requests_;
  uint64_t next_id_ = 0;
};

} // namespace mneme::api
