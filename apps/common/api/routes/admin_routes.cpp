// The daemon's own state (docs/api.md "GET /v1/health", "GET /metrics"): health for
// probes (open: no token needed), and the Prometheus text of the runtime, the front and
// the doors (admin only; it blocks on SQLite and on scoped asks, so it runs on the API's
// blocking thread).
#include <unistd.h>

#include <fstream>

#include "apps/common/api/metrics_exporter.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

namespace {

void metrics_route(const call_ptr& c) {
  auto& api = *c->api;
  auto text = render_metrics_text(api.sys, api.rt);
  if (api.opt.extra_metrics)
    text += api.opt.extra_metrics();
  text += api.routes.metrics_text();
  text += "# HELP mneme_http_unauthorized_total Requests refused for a missing or wrong token\n"
          "# TYPE mneme_http_unauthorized_total counter\n"
          "mneme_http_unauthorized_total "
          + std::to_string(api.auth.unauthorized_count()) + "\n"
          "# HELP mneme_http_forbidden_total Requests of user tokens refused for their scope "
          "(403, and 404 for another user's session)\n"
          "# TYPE mneme_http_forbidden_total counter\n"
          "mneme_http_forbidden_total "
          + std::to_string(api.refused_by_scope.load()) + "\n";
  c->finish(http_response{200, "text/plain; version=0.0.4", std::move(text), {}, false});
}

// The daemon's resident memory from /proc/self/statm (mneme soak --server checks that it
// plateaus); -1 when unknown.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident))
    return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void health_route(const call_ptr& c) {
  auto& api = *c->api;
  ask<supervisor_stats>(c, api.supervisor, api.opt.read_timeout, sv_stats_atom_v)
    .then([c](caf::expected<supervisor_stats> stats) {
      json body{{"status", "ok"}, {"version", c->api->opt.version}};
      // "auth_failed" from a summarizer answer of 401/403/quota until the next
      // summarizer answer (policies/summary_failure.hpp).
      body["summarizer"] = std::string{to_string(
        c->api->metrics ? c->api->metrics->summarizer() : summarizer_health::ok)};
      body["sessions_hosted"] = stats ? stats->hosted : int64_t{-1};
      body["rss_bytes"] = resident_bytes();
      send_json(c, 200, body);
    });
}

} // namespace

void add_admin_routes(route_registry& r, const api_state&) {
  r.add("GET", "/v1/health", health_route, route_access::open);
  r.add("GET", "/metrics", metrics_route, route_access::admin_only, route_kind::blocking);
}

} // namespace mneme::api
