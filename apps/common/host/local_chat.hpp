// The chat_channel (apps/common/cli/chat_loop.hpp) of `mneme chat` without --server: the
// session KEY of the runtime in this process, its turns sent to the gateway with a stream
// receiver that hands the text on as the model writes it. Thread: turn() blocks the
// caller (never a CAF thread) until the turn ends; on_text runs on the LLM transport thread.
#pragma once

#include <string>

#include "actors/runtime.hpp"
#include "apps/common/cli/chat_loop.hpp"

namespace mneme {

class local_chat_channel final : public cli::chat_channel {
 public:
  local_chat_channel(caf::actor_system& sys, runtime& rt, std::string key, std::string user);
  cli::maybe_failure turn(const std::string& content,
                          const std::function<void(std::string_view)>& on_text,
                          nlohmann::json& reply) override;

 private:
  caf::actor_system& sys_;
  runtime& rt_;
  std::string key_, user_;
};

} // namespace mneme
