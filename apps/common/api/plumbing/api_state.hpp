// What every route of the API shares (http_api.hpp): the runtime's actor handles and
// settings copied at construction, the route table, who may call (token_auth), the
// requests in flight (pending_requests), the forwarder of node mode, and the shutdown
// flag. Built once by http_api; each request holds it through its call (call.hpp).
//
// Threads: the members are set at construction and read from any thread afterwards,
// except the atomics and the objects that say otherwise (token_auth, pending_requests:
// any thread). `blocking` runs the blocking routes, one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/thread_pool.hpp>
#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/runtime.hpp"
#include "apps/common/api/front/http_forward.hpp"
#include "apps/common/api/http_api.hpp"
#include "apps/common/api/plumbing/pending_requests.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "apps/common/api/plumbing/token_auth.hpp"

namespace mneme::api {

struct api_state {
  // REQUIRES: rt was started on sys and outlives every request served with this state.
  api_state(caf::actor_system& sys, const runtime& rt, http_api_options opt);
  api_state(const api_state&) = delete;
  api_state& operator=(const api_state&) = delete;

  caf::actor_system& sys;
  const runtime& rt; // read by /metrics only (served before the runtime stops)
  http_api_options opt;
  gateway_actor gateway;
  storage_actor storage;
  supervisor_actor supervisor;
  recall_actor recall;
  std::shared_ptr<runtime_metrics> metrics;
  std::chrono::milliseconds turn_timeout;
  std::function<time_ms()> clock;
  std::shared_ptr<spdlog::logger> log;
  std::atomic<bool> shutting_down{false};
  std::atomic<int64_t> refused_by_scope{0}; // 403s and hidden 404s of user tokens
  token_auth auth;
  route_registry routes;
  pending_requests pending;
  boost::asio::thread_pool blocking{1};
  // Node mode: sends a request to the node serving its key (front/http_forward.hpp);
  // null with one daemon per database.
  std::unique_ptr<request_forwarder> forwarder;
  std::string advertise_url; // this node's (gateway.advertise_url)
};

} // namespace mneme::api
