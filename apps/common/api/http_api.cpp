// The daemon's API; see http_api.hpp. What a route shares is in plumbing/, the routes
// are in routes/ (one file per resource) and the doors in doors/ (one folder per wire
// format); this file builds them and dispatches: the verdict on a head, the scope of a
// route, the request's actor.
#include "apps/common/api/http_api.hpp"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/route_run.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

namespace {

using route_group = void (*)(route_registry&, const api_state&);

constexpr route_group route_groups[] = {
  add_admin_routes,   add_session_routes, add_turn_routes,        add_context_routes,
  add_search_routes,  add_fact_routes,    add_openai_chat_routes,
  add_mcp_routes,
  add_openai_responses_routes,
  add_anthropic_messages_routes,
  add_console_routes,
};

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

http_response shutting_down_response() {
  return error_response(503, "shutting_down", "the daemon is shutting down");
}

// The verdict on a head, in mneme's shape.
std::optional<http_response> verdict_on(const api_state& api, const http_request& head,
                                        const route_registry::found& found) {
  auto path = raw_path_of(head.target);
  bool is_health = (head.method == "GET" || head.method == "HEAD") && path == "/v1/health";
  bool token_free = is_health || (found.row && found.row->token_free);
  if (!token_free && !api.auth.scope_of(head))
    return api.auth.unauthorized(head);
  if (api.shutting_down.load())
    return shutting_down_response();
  if (found.row)
    return std::nullopt;
  auto shown = percent_decode(path);
  if (found.allowed.empty())
    return error_response(404, "not_found", "no route " + head.method + " " + shown);
  http_response r;
  if (head.method == "OPTIONS") {
    r.status = 204;
  } else {
    r = error_response(405, "method_not_allowed",
                       head.method + " is not allowed on " + shown
                         + " (allowed: " + joined(found.allowed) + ")");
  }
  r.headers.emplace_back("Allow", joined(found.allowed));
  return r;
}

} // namespace

http_api::http_api(caf::actor_system& sys, const runtime& rt, http_api_options opt)
  : state_(std::make_shared<api_state>(sys, rt, std::move(opt))) {
  for (auto add_group : route_groups)
    add_group(state_->routes, *state_);
}

http_api::~http_api() { state_->blocking.join(); }

std::optional<http_response> http_api::admit(const http_request& head) const {
  auto found = state_->routes.find(head.method, raw_path_of(head.target));
  auto verdict = verdict_on(*state_, head, found);
  if (verdict)
    reshape_refusal(*verdict, found.at_path);
  return verdict;
}

bool http_api::reserved(const http_request& head) const {
  auto path = raw_path_of(head.target);
  bool reading = head.method == "GET" || head.method == "HEAD";
  if (reading && (path == "/v1/health" || path == "/metrics"))
    return true;
  auto who = state_->auth.scope_of(head);
  return who && who->is_admin();
}

void http_api::reshape(const http_request& head, http_response& r) const {
  reshape_refusal(r, state_->routes.find(head.method, raw_path_of(head.target)).at_path);
}

void http_api::handle(http_request req, http_reply reply) {
  auto api = state_;
  auto found = api->routes.find(req.method, raw_path_of(req.target));
  auto c = std::make_shared<call>();
  c->api = api;
  c->shape = found.at_path;
  c->id = api->pending.track(reply, found.at_path);
  c->reply = std::move(reply);
  c->req = std::move(req);
  if (api->shutting_down.load())
    return c->finish(shutting_down_response());
  if (!found.row) // admit() let it through, so this is a race with nothing: answer 404
    return send_error(c, 404, "not_found", "no route " + c->req.method);
  c->path = std::move(found.args);
  c->query = parse_query(c->req.target);
  const auto& row = *found.row;
  // The token again: a reload between admit() and now may have revoked it.
  auto who = api->auth.scope_of(c->req);
  switch (row_verdict(row, who, c->path)) {
    case access_verdict::allow: break;
    case access_verdict::unauthorized: return c->finish(api->auth.unauthorized(c->req));
    case access_verdict::forbidden:
    case access_verdict::hidden:
      c->who = *who;
      return refuse_scope(c, scope_refusal_message(row, *who));
  }
  c->who = who ? *who : access_scope::admin();
  if (row.kind == route_kind::blocking) {
    boost::asio::post(api->blocking, [c, &row] { guarded(c, row.handler, c); });
    return;
  }
  auto id = c->id;
  auto actor = api->sys.spawn([c, &row](caf::event_based_actor* self) {
    c->self = self;
    run_row(c, row);
  });
  api->pending.served_by(id, actor.address());
}

void http_api::begin_shutdown() { state_->shutting_down.store(true); }
bool http_api::shutting_down() const { return state_->shutting_down.load(); }
int64_t http_api::in_flight() const { return state_->pending.count(); }
size_t http_api::fail_pending() { return state_->pending.fail_all(shutting_down_response()); }
const http_api_options& http_api::options() const { return state_->opt; }

void http_api::set_tokens(std::shared_ptr<const token_set> tokens) {
  state_->auth.set_tokens(std::move(tokens));
}

} // namespace mneme::api
