// The Anthropic Messages door of the daemon (issue 44 part 1, docs/api.md "Anthropic
// door"): `POST /v1/messages` and `POST /v1/messages/count_tokens`, routes of the same
// HTTP front (anthropic_routes.cpp), translated onto mneme's chat requests and the same
// gateway and session messages as the chat-completions door; the upstream is the
// configured chat model, OpenAI-compatible or speaking the Messages API (model.api:
// anthropic), which decides what becomes of content blocks other than text
// (policies/content_blocks.hpp).
//
// A request names its session as on the chat door (door_session_key: X-Mneme-Session,
// X-Session-Id, X-Session-Affinity); without one it is passed through statelessly to the
// chat pool. With one, the sent messages, decoded by anthropic_wire.hpp into session
// messages, go through the wire-neutral door_conversations
// (doors/door_conversation.hpp): only what is new is stored, a contradicting history is
// the client's branch (rolled back, `X-Mneme-Rebased: N`), and the model sees the
// session's own (compacted) live context. `X-Mneme-Session-Id`, `X-Mneme-Compactions`
// as on the chat door; `X-Mneme-Ignored` names the request's fields (and the
// `anthropic-beta` header, the `beta` query parameter) accepted and not used. Errors in
// Anthropic's shape and statuses (policies/anthropic_errors.hpp).
//
// Threads: messages() and count_tokens() run inside the request's actor
// (door_request::actor()); metrics_text() from any thread.
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

struct anthropic_door_config {
  conversation_config conversation;    // the session side
  llm_pool_actor chat;                 // stateless pass-through
  std::string model_name;              // model.name
  // The chat pool speaks Anthropic's Messages API (model.api: anthropic): every content
  // block type is passed on (policies/content_blocks.hpp), not only text and images.
  bool upstream_messages_api = false;
  std::chrono::milliseconds turn_timeout{330000};
  std::shared_ptr<spdlog::logger> log; // null = no logging
};

// An Anthropic-shaped error answer of mneme's (status and code as mneme's API has them).
http_response anthropic_error_response(int status, const std::string& code,
                                       const std::string& message);

class anthropic_door {
 public:
  explicit anthropic_door(anthropic_door_config cfg);

  void messages(const door_request_ptr& r);
  void count_tokens(const door_request_ptr& r);
  std::string metrics_text() const;

  struct counters {
    std::atomic<int64_t> stateless{0}, errors{0}, counted{0};
  };

  // The door's state shared with its requests' continuations (anthropic_door.cpp).
  struct shared;

 private:
  std::shared_ptr<shared> s_;
};

} // namespace mneme::api
