// What the fake LLM sends for one chat-completions request: a pure function of
// the parsed request, the fault decision and the answer settings, producing a
// response plan (bytes now, optionally more bytes after a pause, then keep the
// connection, close it, reset it, or stay silent). The server only executes
// plans. No I/O, no clock (the creation time is a parameter); any thread.
//
// Plan invariants:
//   1. reset and silence exclude every other field.
//   2. rest is non-empty only when pause_ms > 0 (a trickle).
//   3. close_after is true whenever the bytes sent do not complete the response
//      (truncated_body), so a client never waits on a half answer forever.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/fakellm/fake_tool_calls.hpp"
#include "apps/common/fakellm/fault_plan.hpp"
#include "apps/common/fakellm/server_compaction.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "policies/fake_embedding.hpp"

namespace mneme::fakellm {

struct answer_settings {
  int64_t window_tokens = 200000;         // prompts above it get the overflow 400
  int64_t answer_tokens = 64;             // size of chat answers
  bool report_usage = true;               // false: answers carry no "usage" (as some
                                          // self-hosted servers do)
  int64_t default_summary_tokens = 2000;  // target when a summary prompt names none
  size_t stream_piece_bytes = 64;         // content bytes per SSE chunk
  // Agent answers (fake_tool_calls.hpp): the share of answers to requests offering
  // tools that call them, the rounds per user message after which it answers text, and
  // the scenario seed the decision hashes.
  double tool_call_fraction = default_tool_call_fraction;
  int64_t tool_rounds = default_fake_tool_rounds;
  uint64_t seed = 1;
  // Model-name substrings that compact server-side when asked (server_compaction.hpp).
  std::vector<std::string> native_compaction_models = default_native_compaction_models;
  // The vectors of POST /v1/embeddings (policies/fake_embedding.hpp).
  fake_embedding_mode embedding_mode = fake_embedding_mode::bag_of_words;
};

struct response_plan {
  bool reset = false;         // close with RST right away
  bool silence = false;       // never answer; keep the connection open
  int64_t delay_ms = 0;       // wait before sending `first`
  std::string first;          // bytes sent after delay_ms
  int64_t pause_ms = 0;       // trickle: silence between `first` and `rest`
  std::string rest;
  bool close_after = false;   // close once everything is sent
  int status = 0;             // the HTTP status of the answer, 0 for reset/silence
  bool window_overflow = false; // the window itself (not a fault) rejected the prompt
};

struct chat_facts {
  uint64_t seq = 0;           // the request's sequence number (used in the answer id)
  bool is_summary = false;
  int64_t prompt_tokens = 0;
  int64_t body_bytes = 0;
  int64_t created_s = 0;      // "created" field of the answer
  bool keep_alive = true;     // the client asked to keep the connection
  int64_t max_tokens = 0;     // the request's max_tokens (0 = not set)
  bool server_compacted = false;            // server_compaction.hpp: compacted now
  int64_t server_compacted_tokens_after = 0; // ... and what the prompt costs after
};

// REQUIRES: decision.answer is set exactly when `rule` points at its rule.
response_plan plan_chat_response(const chat_call& call, const chat_facts& facts,
                                 const fault_decision& decision, const fault_rule* rule,
                                 const answer_settings& settings);

// The answer a fault (or the window itself) dictates instead of a 200 body: reset,
// silence, 503, 413, 429, overflow 400; nullopt = answer with a body. Shared by the
// chat and the compaction endpoints. REQUIRES as for plan_chat_response.
std::optional<response_plan> plan_failure(const chat_facts& facts, const fault_decision& decision,
                                          const fault_rule* rule, const answer_settings& settings);

// A whole (non-streamed) 200 JSON answer of `body` with the body faults applied:
// malformed_json, truncated_body, trickle (rule->silence_ms). No delay set.
response_plan plan_json_answer(std::string body, const chat_facts& facts,
                               std::optional<fault_kind> fault, const fault_rule* rule);

// A 200 streamed answer of `events` (chunked) with the stream faults applied:
// truncated_body (half the events, then close), trickle (half, rule->silence_ms of
// silence, the rest). A malformed_json event is the caller's to insert. No delay set.
response_plan plan_stream_answer(const std::vector<std::string>& events, const chat_facts& facts,
                                 std::optional<fault_kind> fault, const fault_rule* rule);

// The answer of a request that is answered (no failure): tool calls as the agent
// settings decide, else the text; content faults (empty_content, reasoning_only) applied.
completion build_completion(const chat_call& call, const chat_facts& facts,
                            std::optional<fault_kind> fault, const answer_settings& settings);

// The answer text without faults: a summary for summary requests, else a chat reply.
std::string answer_text(const chat_call& call, bool is_summary, const answer_settings& settings);

} // namespace mneme::fakellm
