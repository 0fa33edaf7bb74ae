// A chat-completions request and answer as plain values: what policies build
// (the summary request) and what the LLM client serializes to the OpenAI wire
// format. Standard library only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/answer_stream.hpp"
#include "messages/transcript.hpp"

namespace mneme {

// compaction: a call to the backend's compaction endpoint (POST /v1/responses/compact,
// actors/llm/compaction_wire.hpp) instead of chat completions.
enum class llm_purpose : uint8_t { chat, summary, compaction };

struct chat_request {
  std::string model;
  std::vector<message> messages;     // role, content, tool fields are sent
  std::optional<int64_t> max_tokens; // summary requests never set it (SPEC §3)
  std::optional<double> temperature;
  bool stream = false;
  llm_purpose purpose = llm_purpose::chat;
  // OpenAI server-side compaction: sent as context_management compact_threshold
  // when > 0 (policies/external_compaction.hpp, server_first). Chat requests only.
  int64_t server_compact_threshold = 0;
  std::string instructions;          // compaction requests: the endpoint's instructions
  // Agent turns (chat requests only): the tools offered to the model, a JSON array sent
  // verbatim as "tools" ("" or "[]" = none), and a JSON object of further fields sent
  // verbatim (tool_choice, top_p, response_format, stop, seed, parallel_tool_calls;
  // the tool fields only when tools are sent).
  std::string tools_json;
  std::string extra_json;
  // stream = true asks the upstream for a stream (chat requests only); the pieces go to
  // `sink` when it is set. Local only: `sink` is not part of the inspected fields.
  answer_stream_ptr sink;
};

// One answer of the model, however it travelled: a whole JSON body, or (later) the
// deltas of a stream assembled into the same fields.
struct chat_answer {
  std::string content;               // <think> blocks and reasoning fields stripped
  std::string finish_reason;
  // The stop sequence of the request that ended the answer (finish_reason "stop"): the
  // Messages API's `stop_sequence` with stop_reason "stop_sequence", an OpenAI-compatible
  // server's string `choices[0].stop_reason` (vLLM); "" when none matched or the
  // upstream does not say.
  std::string stop_sequence;
  int64_t prompt_tokens = 0;         // usage.prompt_tokens, 0 if absent
  int64_t completion_tokens = 0;
  std::vector<tool_call> tool_calls;
  bool server_compacted = false;     // the API reports it compacted server-side
};

} // namespace mneme
