// The OpenAI Responses door of the daemon (issue 43, docs/api.md "Responses door"):
// `POST /v1/responses`, served by mneme's sessions over the same gateway as the turns
// API and the chat-completions door (responses_routes.cpp registers it).
//
// Session mapping, decided per request:
//   - a session named by a header (X-Mneme-Session, X-Session-Id, X-Session-Affinity,
//     session-id, session_id), else by `conversation`, else by `prompt_cache_key`:
//     without `previous_response_id` or `conversation` the input is the client's whole
//     transcript (instructions first), matched against the stored rows as on the chat
//     door (doors/door_conversation.hpp): only what is new is stored, a contradicting
//     transcript is the client's branch (rolled back, `X-Mneme-Rebased: N`); with them
//     the input is only what is new;
//   - `previous_response_id`: the session of that response (its record, store/
//     response_records.hpp); when later rows of the session follow it (the client
//     continues from an older response of its chain), they are rolled back first, as
//     the chat door's rebase (`X-Mneme-Rebased: N`);
//   - nothing named and `store` not false: the session of the stored response whose
//     output items the input holds back (their ids name it), else a new session keyed
//     by the response's id, so the chain can continue; nothing named and `store: false`: passed through
//     statelessly to the chat pool (nothing stored).
// Each stored response (`store` not false) is recorded with its session and the last
// row it answered; GET /v1/responses/{id} answers it again, DELETE makes it
// unreachable (its rows stay).
// The upstream stays the configured model: items are translated to and from session
// messages (responses_wire.hpp), and every session rule — triggers, window guard,
// failure protection, built-in tools — applies. Errors are OpenAI's shape and statuses
// (doors/openai_shape.hpp).
//
// Threads: create() runs inside the request's actor (door_request::actor());
// metrics_text() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "actors/llm/llm_pool.hpp"
#include "apps/common/api/doors/door_conversation.hpp"
#include "apps/common/api/doors/door_request.hpp"

namespace mneme::api {

struct responses_door_config {
  conversation_config conversation;    // the session side
  llm_pool_actor chat;                 // stateless pass-through
  std::string model_name;              // model.name
  std::string default_user = "default"; // gateway.default_user: the owner of a new key
  std::chrono::milliseconds turn_timeout{330000};
  std::function<time_ms()> clock = system_clock_ms;
  std::shared_ptr<spdlog::logger> log; // null = no logging
};

// The session key a Responses request names by a header: door_session_key's headers,
// then session-id and session_id; "" when none.
std::string responses_header_key(const http_request& req);

class responses_door {
 public:
  explicit responses_door(responses_door_config cfg);

  void create(const door_request_ptr& r); // POST /v1/responses
  void fetch(const door_request_ptr& r, const std::string& id);  // GET /v1/responses/{id}
  void remove(const door_request_ptr& r, const std::string& id); // DELETE /v1/responses/{id}
  void compact(const door_request_ptr& r); // POST /v1/responses/compact (responses_compact.cpp)
  // POST /v1/responses/{id}/cancel (responses_lookup.cpp): a streamed response in flight
  // stops (its turn's model call is aborted) and ends `cancelled`, the items it began
  // `incomplete`; a finished one is a 400 as OpenAI answers a response that was not
  // created in the background. A stream whose client is gone stops the same way.
  void cancel(const door_request_ptr& r, const std::string& id);
  std::string metrics_text() const;
  // The door's conversations (a copy sharing their key holds): the Conversations API
  // holds a key against them while it changes the key's rows.
  door_conversations conversations() const;

  struct counters {
    std::atomic<int64_t> stateless{0}, branched{0}, errors{0};
    std::atomic<int64_t> compacted{0}; // POST /v1/responses/compact answered
    std::atomic<int64_t> cancelled{0}; // streams stopped by a cancel or their client gone
  };

  // The door's state shared with its requests' continuations (responses_door.cpp).
  struct shared;

 private:
  std::shared_ptr<shared> s_;
};

} // namespace mneme::api
