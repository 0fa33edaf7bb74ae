// What the LLM pool needs of a streamed answer's reader, whatever the wire: bytes fed as
// they arrive (on the transport thread), then finish() once on that same thread. The
// readers: sse_answer (OpenAI chat-completions chunks) and messages_sse_answer
// (Anthropic Messages events). Not thread-safe.
#pragma once

#include <string_view>

#include "actors/llm/llm_wire.hpp"

namespace mneme::llm {

class streamed_answer {
 public:
  virtual ~streamed_answer() = default;

  virtual void feed(std::string_view bytes) = 0;
  // At least one event was read: the body was a stream, not a JSON answer.
  virtual bool saw_events() const = 0;
  // The assembled answer of a transfer that ended without a transport error, checked as
  // a whole answer is.
  virtual parsed_answer finish(llm_purpose purpose) = 0;
  // An upstream that ignored "stream" answered whole: the answer goes to the sink in one
  // piece.
  virtual void relay_whole(const chat_answer& answer) = 0;
};

} // namespace mneme::llm
