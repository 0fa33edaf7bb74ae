// The context service (docs/api.md "Context service"): an agent that calls its model
// itself asks the session what to send (/context), reports the answer and its usage
// (/usage) and the model's refusals (/model_error). Bodies and answers:
// routes/context_service.hpp.
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/checks.hpp"
#include "apps/common/api/plumbing/session_lookup.hpp"
#include "apps/common/api/routes/context_service.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

namespace {

using context_decoder = caf::expected<context_call> (*)(std::string_view);

void context_route(const call_ptr& c, context_decoder decode) {
  auto in = keyed_body(c, decode);
  if (!in || !check_optional_user(c, "field 'user'", in->user))
    return;
  auto k = key_of_call(c, in->user);
  if (!k)
    return;
  auto key = k->stored;
  in->user = k->user;
  auto op = in->rq.op;
  ask<context_reply>(c, c->api->gateway, c->api->turn_timeout, gw_context_atom_v, key,
                     std::move(in->user), std::move(in->rq))
    .then([c, op](caf::expected<context_reply> reply) {
      if (!reply)
        return fail(c, reply.error());
      send_json(c, 200, context_reply_json(*reply, op));
    });
}

void context_of(const call_ptr& c) { context_route(c, decode_context_call); }
void usage_of(const call_ptr& c) { context_route(c, decode_usage_call); }
void model_error_of(const call_ptr& c) { context_route(c, decode_model_error_call); }

} // namespace

void add_context_routes(route_registry& r, const api_state&) {
  r.add("POST", "/v1/sessions/{}/context", context_of, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/usage", usage_of, route_access::key_owned);
  r.add("POST", "/v1/sessions/{}/model_error", model_error_of, route_access::key_owned);
}

} // namespace mneme::api
