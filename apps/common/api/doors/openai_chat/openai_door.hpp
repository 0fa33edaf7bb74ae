// The OpenAI chat-completions door of the daemon (issue 27 items 1 and 4, docs/api.md
// "OpenAI door"): `POST /v1/chat/completions` and `GET /v1/models`, routes of the same
// HTTP front (openai_routes.cpp), mapped onto the same gateway and session messages as
// the turns API.
//
// A request names its session by the first non-empty of the headers X-Mneme-Session,
// X-Session-Id, X-Session-Affinity, then the body's metadata.session_id
// (door_session_key); without one it is passed through statelessly to the chat pool (no
// session, counted in /metrics). With one, the sent messages, decoded by openai_wire.hpp
// into session messages, go through the wire-neutral door_conversations
// (doors/door_conversation.hpp): only what is new is stored, a contradicting history is
// the client's branch (rollback to the last common row, `X-Mneme-Rebased: N`), and the
// model sees the session's own (compacted) live context. Compactions never reach the
// answer's text: `X-Mneme-Compactions` (how many this request committed) and
// `X-Mneme-Session-Id` say what happened (a streamed answer sends its headers before
// the turn, so it carries the session id and the rebase only). Errors in OpenAI's shape
// with OpenAI's statuses (policies/openai_errors.hpp).
//
// Threads: chat() and models() run inside the request's actor (door_request::actor());
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

struct openai_door_config {
  conversation_config conversation;    // the session side
  llm_pool_actor chat;                 // stateless pass-through
  std::string model_name;              // model.name
  std::chrono::milliseconds turn_timeout{330000};
  std::function<time_ms()> clock = system_clock_ms;
  std::shared_ptr<spdlog::logger> log; // null = no logging
};

class openai_door {
 public:
  explicit openai_door(openai_door_config cfg);

  void chat(const door_request_ptr& r);
  void models(const door_request_ptr& r);
  std::string metrics_text() const;

  struct counters {
    std::atomic<int64_t> stateless{0}, errors{0};
  };

  // The door's state shared with its requests' continuations (openai_door.cpp).
  struct shared;

 private:
  std::shared_ptr<shared> s_;
};

} // namespace mneme::api
