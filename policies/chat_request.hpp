// A chat-completions request and answer as plain values: what policies build
// (the summary request) and what the LLM client serializes to the OpenAI wire
// format. Standard library only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

enum class llm_purpose : uint8_t { chat, summary };

struct chat_request {
  std::string model;
  std::vector<message> messages;     // role, content, tool fields are sent
  std::optional<int64_t> max_tokens; // summary requests never set it (SPEC §3)
  std::optional<double> temperature;
  bool stream = false;
  llm_purpose purpose = llm_purpose::chat;
};

struct chat_answer {
  std::string content;               // <think> blocks and reasoning fields stripped
  std::string finish_reason;
  int64_t prompt_tokens = 0;         // usage.prompt_tokens, 0 if absent
  int64_t completion_tokens = 0;
  std::vector<tool_call> tool_calls;
};

} // namespace mneme
