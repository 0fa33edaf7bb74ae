// The routes of the Conversations API and of GET /v1/responses/{id}/input_items
// (docs/api.md "Conversations API"), added beside the Responses door's own rows
// (responses_routes.cpp calls add_openai_conversations_routes). Every row but the create
// answers another user's id as unknown (the door checks the owner), in OpenAI's shape;
// the API's counters in GET /metrics.
#include "apps/common/api/doors/openai_responses/conversations_door.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_openai_conversations_routes(route_registry& r, const api_state& s,
                                     const door_conversations& responses) {
  conversations_config cfg;
  cfg.responses = responses;
  cfg.conversation = conversation_config_of(s);
  cfg.default_user = s.rt.config().gateway.default_user;
  cfg.clock = s.clock;
  cfg.log = s.log;
  auto door = std::make_shared<conversations_door>(std::move(cfg));
  auto refusal = [](int status, const std::string& code, const std::string& message) {
    return openai_error_response(status, code, message).body;
  };
  auto row = [&r, &refusal](const char* method, const char* pattern, route_handler h) {
    r.add(method, pattern, std::move(h), route_access::open, route_kind::actor, refusal);
  };
  r.add("POST", "/v1/conversations", [door](const call_ptr& c) { door->create(c); },
        route_access::user_named, route_kind::actor, refusal);
  row("GET", "/v1/conversations/{}", [door](const call_ptr& c) { door->fetch(c, c->path.at(0)); });
  row("POST", "/v1/conversations/{}",
      [door](const call_ptr& c) { door->update(c, c->path.at(0)); });
  row("DELETE", "/v1/conversations/{}",
      [door](const call_ptr& c) { door->remove(c, c->path.at(0)); });
  row("GET", "/v1/conversations/{}/items",
      [door](const call_ptr& c) { door->list_items(c, c->path.at(0)); });
  row("POST", "/v1/conversations/{}/items",
      [door](const call_ptr& c) { door->add_items(c, c->path.at(0)); });
  row("GET", "/v1/conversations/{}/items/{}",
      [door](const call_ptr& c) { door->fetch_item(c, c->path.at(0), c->path.at(1)); });
  row("DELETE", "/v1/conversations/{}/items/{}",
      [door](const call_ptr& c) { door->remove_item(c, c->path.at(0), c->path.at(1)); });
  row("GET", "/v1/responses/{}/input_items",
      [door](const call_ptr& c) { door->input_items(c, c->path.at(0)); });
  r.add_metrics([door] { return door->metrics_text(); });
}

} // namespace mneme::api
