// The Anthropic Messages door's routes (docs/api.md "Anthropic door"): its rows, its
// refusals in Anthropic's error shape, and its counters in GET /metrics.
#include "apps/common/api/doors/anthropic_messages/anthropic_door.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_anthropic_messages_routes(route_registry& r, const api_state& s) {
  anthropic_door_config cfg;
  cfg.conversation = conversation_config_of(s);
  cfg.chat = s.rt.chat_pool();
  cfg.model_name = s.rt.config().model.name;
  cfg.upstream_messages_api = s.rt.config().chat.endpoint.api == llm_api::anthropic;
  cfg.turn_timeout = s.turn_timeout;
  cfg.log = s.log;
  auto door = std::make_shared<anthropic_door>(std::move(cfg));
  auto refusal = [](int status, const std::string& code, const std::string& message) {
    return anthropic_error_response(status, code, message).body;
  };
  auto messages = [door](const call_ptr& c) { door->messages(c); };
  auto count = [door](const call_ptr& c) { door->count_tokens(c); };
  r.add("POST", "/v1/messages", messages, route_access::user_named, route_kind::actor, refusal);
  r.add("POST", "/v1/messages/count_tokens", count, route_access::user_named, route_kind::actor,
        refusal);
  r.add_metrics([door] { return door->metrics_text(); });
}

} // namespace mneme::api
