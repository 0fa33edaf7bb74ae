// One request on its way; see call.hpp.
#include "apps/common/api/plumbing/call.hpp"

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/route_registry.hpp"
#include "policies/client_text.hpp"
#include "policies/lease_policy.hpp"

namespace mneme::api {

call::~call() {
  if (api && !reply.completed())
    finish(error_response(500, "internal", "the request ended without an answer"));
}

void call::finish(http_response res) {
  reshape_refusal(res, shape);
  api->pending.complete(id, reply, std::move(res));
}

std::chrono::milliseconds call::read_timeout() const { return api->opt.read_timeout; }

void call::on_exception(const std::exception& e) {
  api->log->error("method={} path={} event=exception what={}", req.method,
                  log_quoted(raw_path_of(req.target)), log_quoted(e.what()));
  send_error(shared_from_this(), 500, "internal", "internal error");
}

void call::streamed() { api->pending.forget(id); }

void call::refused_for_scope() { api->refused_by_scope.fetch_add(1); }

// Node mode: a key served by another node (errc::lease_elsewhere, whose context carries
// the owner's URL) sends the request there; true when it did (the owner's answer
// completes the request).
bool call::forward_elsewhere(const caf::error& err) {
  auto& a = *api;
  if (!a.forwarder || err != errc::lease_elsewhere || a.shutting_down.load())
    return false;
  const auto& ctx = err.context();
  if (ctx.size() < 2 || !ctx.match_element<std::string>(1))
    return false;
  const auto& owner_url = ctx.get_as<std::string>(1);
  if (!should_forward(!req.header(forwarded_by_header).empty(), owner_url, a.advertise_url))
    return false;
  a.metrics->requests_forwarded.fetch_add(1, std::memory_order_relaxed);
  forward_sink sink;
  sink.answer = [c = shared_from_this()](http_response res) {
    if (res.status == 503 && res.body.find("lease_owner_unreachable") != std::string::npos)
      c->api->metrics->forward_failures.fetch_add(1, std::memory_order_relaxed);
    c->finish(std::move(res));
  };
  // The owner's stream completes the request (nothing is left for fail_pending to end).
  sink.open_stream = [c = shared_from_this()](int status, std::string content_type,
                                              header_list headers) {
    auto stream = c->reply.stream(status, std::move(content_type), std::move(headers));
    c->api->pending.forget(c->id);
    return stream;
  };
  a.forwarder->forward(req, owner_url, std::move(sink));
  return true;
}

} // namespace mneme::api
