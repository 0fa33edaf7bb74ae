// Recall (docs/api.md "GET /v1/search"): the user's own sessions searched (SPEC §4)
// through the recall actor; unavailable (404) with an in-memory database. `mode`
// (fts, vector, hybrid; default automatic) chooses the legs; the answer names the
// mode that ran and why a wanted vector leg was skipped.
#include <chrono>
#include <limits>

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/routes/route_groups.hpp"
#include "policies/client_text.hpp"
#include "policies/recall_grouping.hpp"
#include "policies/row_replacement.hpp"

namespace mneme::api {

namespace {

void search_sessions(const call_ptr& c) {
  auto& api = *c->api;
  if (!api.recall)
    return send_error(c, 404, "not_found", "search is unavailable: the database is in memory");
  recall_request rq;
  rq.query = c->query.value_or("q", "");
  if (rq.query.empty())
    return send_error(c, 400, "bad_request", "parameter 'q' is missing or empty");
  if (!utf8_param(c, "q", rq.query))
    return;
  const auto* named = c->query.find("user");
  rq.user_id = named ? *named : std::string{};
  // A limit above the maximum is clamped and the answer says so; a limit below
  // 1 or not an integer is a 400 (policies/recall_grouping.hpp).
  int64_t limit = recall_default_sessions;
  if ((named && !check(c, "parameter 'user'", rq.user_id, user_max_bytes))
      || !scoped_user(c, "parameter 'user'", rq.user_id))
    return;
  if (rq.user_id.empty())
    rq.user_id = api.opt.default_user;
  if (!int_param(c, "limit", 1, std::numeric_limits<int64_t>::max(), limit)
      || !bool_param(c, "include_inactive", rq.include_inactive))
    return;
  if (const auto* mode = c->query.find("mode")) {
    auto parsed = parse_recall_mode(*mode);
    if (!parsed)
      return send_error(c, 400, "bad_request",
                        "parameter 'mode' must be one of automatic, fts, vector, hybrid, got '"
                          + one_line_excerpt(*mode, 40) + "'");
    rq.mode = *parsed;
  }
  const auto clamped = clamp_recall_limit(limit, recall_max_sessions);
  rq.max_sessions = clamped.sessions;
  auto started = std::chrono::steady_clock::now();
  ask<recall_result>(c, api.recall, c->read_timeout(), rc_search_atom_v, std::move(rq))
    .then([c, started, limit_clamped = clamped.clamped](caf::expected<recall_result> found) {
      if (auto& m = c->api->metrics)
        m->search_latency.observe_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - started)
                                       .count());
      if (!found)
        return fail(c, found.error());
      found->limit_clamped = limit_clamped;
      send_json(c, 200, to_json(*found));
    });
}

} // namespace

void add_search_routes(route_registry& r, const api_state&) {
  r.add("GET", "/v1/search", search_sessions, route_access::user_named);
}

} // namespace mneme::api
