// The Responses door's state shared by its requests (responses_door.cpp,
// responses_lookup.cpp): the configuration, the logger, the counters and the
// conversations of doors/door_conversation.hpp, the streams in flight. Private to this
// folder.
//
// Threads: built once; the counters and conversations are safe from any thread.
#pragma once

#include <memory>
#include <string>

#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/doors/openai_responses/responses_door.hpp"
#include "apps/common/api/doors/openai_responses/responses_inflight.hpp"

namespace mneme::api {

struct responses_door::shared {
  responses_door_config cfg;
  std::shared_ptr<spdlog::logger> log;
  counters count;
  door_conversations conversations;
  responses_inflight inflight; // streamed responses on their way, for cancel

  explicit shared(responses_door_config c)
    : cfg(std::move(c)),
      log(cfg.log ? cfg.log
                  : std::make_shared<spdlog::logger>(
                    "responses", std::make_shared<spdlog::sinks::null_sink_mt>())),
      conversations(cfg.conversation) {}
};

// Whether `scope` may see a response of `owner` (an admin sees every one; a user token
// its own user's; others are answered as unknown ids).
inline bool response_visible_to(const access_scope& scope, const std::string& owner) {
  return scope.is_admin() || scope.user == owner;
}

// The 404 of an unknown (or deleted, or another user's) response id.
inline std::string unknown_response_message(const std::string& id) {
  return "No response found with id '" + id + "'.";
}

} // namespace mneme::api
