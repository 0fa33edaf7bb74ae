// An Anthropic Messages answer streamed as server-sent events (`"stream": true`, model.api:
// anthropic), read while it arrives: text pieces go to the answer_stream at once (reasoning
// blocks filtered as for OpenAI), tool_use blocks as tool-call fragments indexed by their
// order among the calls; at the end the pieces are one chat_answer, exactly what
// parse_messages_answer makes of the same answer sent whole.
//
// Events (each `event: <name>` + `data: {"type": <name>, ...}`; the type in the data wins):
//   message_start        message.usage.input_tokens (+ cache tokens) -> prompt_tokens
//   content_block_start  a text block, or a tool_use block {id, name}: a new call
//   content_block_delta  text_delta (text), input_json_delta (partial_json of the call),
//                        thinking_delta / signature_delta (reasoning, not content)
//   content_block_stop   nothing to do
//   message_delta        delta.stop_reason -> finish_reason (stop_sequence: and
//                        delta.stop_sequence -> stop_sequence), usage.output_tokens
//   message_stop         the end
//   ping                 ignored
//   error                {"error": {"type", "message"}}: the upstream failed mid-stream,
//                        classified by policies/messages_api_errors.hpp (no status)
// Unknown event types are ignored (the API may add some). A stream is complete when it
// sent message_stop or a stop_reason; one that ended without either was cut
// (llm_error_kind::network), and its partial answer is never returned. A tool_use block
// whose input had no delta has arguments "{}".
//
// Not thread-safe: one transfer feeds it, on the transport thread, then finish() runs
// once on that same thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "actors/llm/sse_answer.hpp"
#include "actors/llm/streamed_answer.hpp"
#include "messages/answer_stream.hpp"
#include "policies/sse_reader.hpp"

namespace mneme::llm {

class messages_sse_answer final : public streamed_answer {
 public:
  // `sink` may be null: the answer is then only assembled.
  explicit messages_sse_answer(answer_stream_ptr sink);
  messages_sse_answer(const messages_sse_answer&) = delete; // the reader calls back into this
  messages_sse_answer& operator=(const messages_sse_answer&) = delete;

  void feed(std::string_view bytes) override;
  bool saw_events() const override { return events_ > 0; }
  parsed_answer finish(llm_purpose purpose) override;
  void relay_whole(const chat_answer& answer) override;

 private:
  struct call_parts {
    std::string id, name, arguments;
  };
  void event(const sse_event_view& e);
  void fail(llm_error_kind kind, std::string detail);

  answer_stream_ptr sink_;
  reasoning_filter filter_;
  sse_reader reader_;
  size_t events_ = 0;
  bool stopped_ = false;           // message_stop read
  bool has_stop_reason_ = false;
  std::string content_;            // raw, reasoning blocks included
  bool had_reasoning_ = false;
  std::vector<call_parts> calls_;
  // The call each content block index feeds (-1: a text or other block).
  std::vector<long> call_of_block_;
  chat_answer answer_;             // finish_reason, usage
  llm_error_kind failure_ = llm_error_kind::none;
  std::string failure_detail_;
};

} // namespace mneme::llm
