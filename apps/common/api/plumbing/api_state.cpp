// What every route shares; see api_state.hpp.
#include "apps/common/api/plumbing/api_state.hpp"

#include <spdlog/sinks/null_sink.h>

namespace mneme::api {

namespace {

std::shared_ptr<spdlog::logger> api_logger(const http_api_options& opt) {
  if (opt.log)
    return opt.log;
  return std::make_shared<spdlog::logger>("api", std::make_shared<spdlog::sinks::null_sink_mt>());
}

} // namespace

api_state::api_state(caf::actor_system& s, const runtime& r, http_api_options o)
  : sys(s),
    rt(r),
    opt(std::move(o)),
    gateway(r.gateway()),
    storage(r.storage()),
    supervisor(r.supervisor()),
    recall(r.recall()),
    metrics(r.metrics()),
    turn_timeout(r.turn_timeout()),
    clock(r.config().clock ? r.config().clock : system_clock_ms),
    log(api_logger(opt)),
    auth(opt.auth_token, opt.tokens, opt.unauthorized_logs_per_second, log, clock) {
  const auto& g = r.config().gateway;
  if (!g.node_id.empty()) {
    forward_limits limits;
    limits.total_timeout = turn_timeout;
    limits.retry_after_seconds = g.lease_seconds;
    forwarder = std::make_unique<request_forwarder>(g.node_id, limits);
    advertise_url = g.advertise_url;
  }
}

} // namespace mneme::api
