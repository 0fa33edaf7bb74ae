// One request on its way through the API (http_api::handle): the request, its route's
// decoded captures and query, the scope of its token, the reply to complete, and the
// request's actor while a route runs in it. Routes take it as `const call_ptr&`; a door
// sees it as a door_request (doors/door_request.hpp).
//
// Contract: the request is completed exactly once — by finish() (or answer()), by a
// stream that ended (streamed()), or by a forwarded answer; a call destroyed without
// that answers 500 internal, so a route that forgets to answer is still answered.
//
// Threads: a call belongs to its request: the route and its continuations run in the
// request's actor (or on the blocking thread for a blocking route), one at a time.
// `self` is valid inside the request actor only.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "caf/all.hpp"

#include "apps/common/api/doors/door_request.hpp"
#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "policies/access_scope.hpp"

namespace mneme::api {

struct api_state;
struct route_row;

struct call final : door_request, std::enable_shared_from_this<call> {
  std::shared_ptr<api_state> api;
  http_request req;
  query_params query;
  std::vector<std::string> path; // the decoded captures of the route
  access_scope who;               // the scope of the request's token
  uint64_t id = 0;                // in api->pending
  const route_row* shape = nullptr; // the route at the path: its errors' shape (finish)
  http_reply reply;
  caf::event_based_actor* self = nullptr;

  call() = default;
  call(const call&) = delete;
  call& operator=(const call&) = delete;
  ~call() override;

  // Completes the request; an error in mneme's shape takes the shape of the route's
  // refusals (reshape_refusal).
  void finish(http_response res);
  // The deadline of a read (gateway state, lists, export, search): http_api_options.
  std::chrono::milliseconds read_timeout() const;
  // A continuation threw: logged, answered 500 internal (the asks of ask.hpp call it).
  void on_exception(const std::exception& e);

  const http_request& request() const override { return req; }
  const access_scope& scope() const override { return who; }
  caf::event_based_actor* actor() const override { return self; }
  const http_reply& reply_channel() const override { return reply; }
  void answer(http_response res) override { finish(std::move(res)); }
  void streamed() override;
  void refused_for_scope() override;
  bool forward_elsewhere(const caf::error& err) override;
};
using call_ptr = std::shared_ptr<call>;

} // namespace mneme::api
