// A chat-completions answer streamed as server-sent events (`"stream": true`), read
// while it arrives: each piece is handed to an answer_stream at once (text with reasoning
// blocks filtered out, tool-call fragments by index), and at the end the pieces are one
// chat_answer, exactly what parse_chat_answer makes of a whole JSON answer.
//
// Rules of the stream (OpenAI's, which compatible servers follow):
//   - events are separated by a blank line; `data:` lines carry the payload (several are
//     joined by "\n"), `:` lines are comments, `event: error` marks an error payload;
//     lines end with \n, \r\n or \r, and may be split anywhere between two feeds;
//   - a payload is `[DONE]` (the end) or a chunk {"choices":[{"delta":{content,
//     tool_calls:[{index, id?, function:{name?, arguments?}}]}, "finish_reason",
//     "stop_reason"?}] (vLLM: a string stop_reason with finish_reason "stop" is the stop
//     sequence that matched),
//     "usage"?, "compaction"?}; usage may come on a last chunk with empty choices;
//   - a payload {"error": {...}} is the upstream failing mid-stream: classified like an
//     HTTP error answer with the status in error.code (server_error without one).
// A stream is complete when it sent [DONE] or a finish_reason; one that ended without
// either was cut (llm_error_kind::network), and its partial answer is never returned.
//
// Not thread-safe: one transfer feeds it, on the transport thread, then finish() runs
// once on that same thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "actors/llm/llm_wire.hpp"
#include "actors/llm/streamed_answer.hpp"
#include "messages/answer_stream.hpp"
#include "policies/sse_reader.hpp"

namespace mneme::llm {

// Removes <think>/<thinking>/<reasoning> blocks from text that arrives in pieces: what
// feed() returns is safe to show now; a possible start of a tag is held back until the
// next piece decides it. Leading whitespace of the whole text is dropped (as
// strip_reasoning_blocks trims it). Differs from strip_reasoning_blocks only for a stray
// closing tag without its opening one: the text before it was already shown (the
// stored answer, made by strip_reasoning_blocks, drops it).
class reasoning_filter {
 public:
  std::string feed(std::string_view piece);
  // The text ended: what was held back as a possible tag start is text after all (empty
  // inside an unclosed block, whose rest is dropped).
  std::string flush();

 private:
  std::string held_;            // not yet shown: may be (the start of) a tag
  std::string_view closing_;    // inside a block: the tag that ends it; empty outside
  bool started_ = false;        // something other than whitespace was shown
};

class sse_answer final : public streamed_answer {
 public:
  // `sink` may be null: the answer is then only assembled.
  explicit sse_answer(answer_stream_ptr sink);
  sse_answer(const sse_answer&) = delete; // the reader calls back into this object
  sse_answer& operator=(const sse_answer&) = delete;

  void feed(std::string_view bytes) override;

  // At least one data payload was read: the body was a stream, not a JSON answer.
  bool saw_events() const override { return events_ > 0; }

  // The assembled answer of a transfer that ended without a transport error; the same
  // checks as parse_chat_answer (empty content without tool calls -> empty_answer).
  parsed_answer finish(llm_purpose purpose) override;

  // An upstream that ignored "stream" answered whole: its answer goes to the sink in one
  // piece (the content, then each call whole), so the client still sees it before the end.
  void relay_whole(const chat_answer& answer) override;

 private:
  struct call_parts {
    std::string id, name, arguments;
  };
  void event(const sse_event_view& e);
  void chunk(std::string_view payload, bool error_event);

  answer_stream_ptr sink_;
  reasoning_filter filter_;
  sse_reader reader_;
  size_t events_ = 0;
  bool done_ = false;           // [DONE] read
  bool has_finish_ = false;
  std::string content_;         // raw, reasoning blocks included
  bool had_reasoning_ = false;
  std::vector<call_parts> calls_;
  chat_answer answer_;          // finish_reason, usage, server_compacted
  llm_error_kind failure_ = llm_error_kind::none;
  std::string failure_detail_;
};

} // namespace mneme::llm
