// The chat-completions door's routes (docs/api.md "OpenAI door"): its rows, its refusals
// in OpenAI's error shape, and its counters in GET /metrics.
#include "apps/common/api/doors/openai_chat/openai_door.hpp"
#include "apps/common/api/doors/openai_shape.hpp"
#include "apps/common/api/plumbing/call.hpp"
#include "apps/common/api/routes/route_groups.hpp"

namespace mneme::api {

void add_openai_chat_routes(route_registry& r, const api_state& s) {
  openai_door_config cfg;
  cfg.conversation = conversation_config_of(s);
  cfg.chat = s.rt.chat_pool();
  cfg.model_name = s.rt.config().model.name;
  cfg.turn_timeout = s.turn_timeout;
  cfg.clock = s.clock;
  cfg.log = s.log;
  auto door = std::make_shared<openai_door>(std::move(cfg));
  auto refusal = [](int status, const std::string& code, const std::string& message) {
    return openai_error_response(status, code, message).body;
  };
  auto chat = [door](const call_ptr& c) { door->chat(c); };
  auto models = [door](const call_ptr& c) { door->models(c); };
  r.add("POST", "/v1/chat/completions", chat, route_access::user_named, route_kind::actor, refusal);
  r.add("GET", "/v1/models", models, route_access::user_named, route_kind::actor, refusal);
  r.add_metrics([door] { return door->metrics_text(); });
}

} // namespace mneme::api
