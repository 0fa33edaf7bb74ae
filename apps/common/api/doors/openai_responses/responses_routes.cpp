// The Responses door's routes (docs/api.md "Responses door"): its rows, its refusals in
// OpenAI's error shape, and its counters in GET /metrics.
#include "apps/common/api/doors/openai_responses/conversations_door.hpp"
#include "apps/common/api/doors/openai_responses/responses_door.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_openai_responses_routes(route_registry& r, const api_state& s) {
  responses_door_config cfg;
  cfg.conversation = conversation_config_of(s);
  cfg.chat = s.rt.chat_pool();
  cfg.model_name = s.rt.config().model.name;
  cfg.default_user = s.rt.config().gateway.default_user;
  cfg.turn_timeout = s.turn_timeout;
  cfg.clock = s.clock;
  cfg.log = s.log;
  auto door = std::make_shared<responses_door>(std::move(cfg));
  auto refusal = [](int status, const std::string& code, const std::string& message) {
    return openai_error_response(status, code, message).body;
  };
  auto create = [door](const call_ptr& c) { door->create(c); };
  auto fetch = [door](const call_ptr& c) { door->fetch(c, c->path.at(0)); };
  auto remove = [door](const call_ptr& c) { door->remove(c, c->path.at(0)); };
  r.add("POST", "/v1/responses", create, route_access::user_named, route_kind::actor, refusal);
  auto compact = [door](const call_ptr& c) { door->compact(c); };
  r.add("POST", "/v1/responses/compact", compact, route_access::user_named, route_kind::actor,
        refusal);
  // The record's user is checked by the door (another user's id is answered as unknown).
  r.add("GET", "/v1/responses/{}", fetch, route_access::open, route_kind::actor, refusal);
  r.add("DELETE", "/v1/responses/{}", remove, route_access::open, route_kind::actor, refusal);
  auto cancel = [door](const call_ptr& c) { door->cancel(c, c->path.at(0)); };
  r.add("POST", "/v1/responses/{}/cancel", cancel, route_access::open, route_kind::actor, refusal);
  r.add_metrics([door] { return door->metrics_text(); });
  // /v1/conversations..., /v1/responses/{id}/input_items; an item delete or add holds its
  // key against this door's conversations
  add_openai_conversations_routes(r, s, door->conversations());
}

} // namespace mneme::api
