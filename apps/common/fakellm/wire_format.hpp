// The OpenAI chat-completions wire format as the fake LLM speaks it: parsing a
// request body into transcript messages, and building answer bodies, SSE events
// and provider-style error bodies. Pure functions over nlohmann-json; no I/O.
// Safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"
#include "messages/transcript.hpp"

namespace mneme::fakellm {

// A function tool a request offers (its "tools" entries).
struct offered_tool {
  std::string name;
  std::string parameters_json; // the JSON schema of its arguments; "" = none
  int64_t schema_bytes = 0;    // the size of the whole tool entry as sent
};

struct chat_call {
  std::string model;
  std::vector<offered_tool> tools;
  std::vector<message> messages;
  bool stream = false;
  std::optional<int64_t> max_tokens;  // max_tokens or max_completion_tokens
  // context_management: [{"type": "compaction", "compact_threshold": N}] (the
  // Responses API's server-side compaction request; server_compaction.hpp).
  std::optional<int64_t> compact_threshold;
  // The stop sequences (`stop`: a string or an array of strings; the Messages API's
  // `stop_sequences`): a text answer ends before the first of them it contains
  // (apply_stop_sequences).
  std::vector<std::string> stop;
};

// Parses a chat-completions body. Errors are errc::bad_request naming the field.
caf::expected<chat_call> parse_chat_call(std::string_view body);

// One answer, as every encoding below needs it.
struct completion {
  std::string id;                 // "chatcmpl-..."
  std::string model;
  int64_t created = 0;            // seconds since the epoch
  std::string content;
  std::string reasoning_content;  // sent only when non-empty
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string finish_reason = "stop";
  // The stop sequence the answer ended on ("" = none): sent as vLLM sends it, the string
  // choices[0].stop_reason beside finish_reason "stop" (the Messages API: stop_reason
  // "stop_sequence" and stop_sequence).
  std::string stop_sequence;
  // Tool calls: the message carries "tool_calls" (content null when empty) and the
  // finish_reason should be "tool_calls"; a stream sends each call as OpenAI does: a
  // first delta with index, id and name, then the arguments in pieces.
  std::vector<tool_call> tool_calls;
  // Set when the server compacted during this request: the answer carries
  // "compaction": {"type": "compaction", "id", "encrypted_content",
  // "tokens_before", "tokens_after"} (top level; in a stream, on the final chunk).
  bool report_usage = true;       // false: no "usage" member (nor on the final chunk)
  bool server_compacted = false;
  int64_t compacted_tokens_before = 0;
  int64_t compacted_tokens_after = 0;
};

// Cuts `text` before the earliest occurrence of any of `stops` (empty ones ignored; at
// one position the first listed wins) and returns the sequence it cut at; "" when none
// occurs (text unchanged). As real servers do, the sequence itself is not in the text.
std::string apply_stop_sequences(std::string& text, const std::vector<std::string>& stops);

// The non-streaming body: {"id", "object":"chat.completion", "choices":[...], "usage":{...}}.
std::string completion_body(const completion& c);

// The SSE events of a streamed answer, each "data: {...}\n\n", ending with
// "data: [DONE]\n\n": a role chunk, content (and reasoning) chunks of at most
// `piece_bytes` bytes, a final chunk with finish_reason and usage.
// REQUIRES: piece_bytes > 0.
std::vector<std::string> completion_events(const completion& c, size_t piece_bytes = 64);

// {"error":{"message":..., "type":..., "param":null, "code":...}} (code null when empty).
std::string error_body(std::string_view message, std::string_view type, std::string_view code);

// OpenAI's context_length_exceeded 400 body for a prompt over the window.
std::string overflow_body(int64_t window_tokens, int64_t prompt_tokens);

// Anthropic's 429 body for a long-context request without extra usage.
std::string long_context_429_body();

// 400 invalid_request_error: the requested max_tokens does not fit beside the prompt
// (what providers answer when prompt + max_tokens exceeds the window; SPEC T8).
std::string output_too_large_body(int64_t window_tokens, int64_t prompt_tokens,
                                  int64_t max_tokens);

} // namespace mneme::fakellm
