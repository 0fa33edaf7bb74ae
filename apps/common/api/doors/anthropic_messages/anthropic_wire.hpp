// The Anthropic Messages wire format of the door (docs/api.md "Anthropic door"): the
// request body decoded into mneme's values (session messages, the turn's tools and
// sampling fields in the OpenAI-compatible form the upstream takes), and the answers —
// a `message` object, the named events of a stream, `{"input_tokens": N}` and errors
// as {"type":"error","error":{"type","message"}}. Pure functions; safe from any thread;
// they never throw.
//
// Decoding (where the wire and mneme's rows differ):
//   - `system` (a string or text blocks) is one system message first;
//   - a user message's tool_result blocks are tool messages (in order, before its text:
//     Anthropic puts them first), its text blocks one user message (joined by "\n");
//     a tool_result with is_error: true stores its content after policies/tool_loop.hpp's
//     tool_error_prefix (the turns API's way), so a resent one matches its stored row;
//   - an assistant message's text blocks are its content (joined by "\n"), its tool_use
//     blocks its tool calls, `input` written compactly in the client's key order;
//   - other block types (image, document, thinking, redacted_thinking, server tool
//     blocks, search_result, unknown ones) go by policies/content_blocks.hpp's table:
//     with an upstream speaking the Messages API every one is kept verbatim as a
//     "[TYPE] {JSON}" line of its row's content (in the client's order among the text
//     lines); with an OpenAI-compatible upstream a user message's image is kept the
//     same way (the chat wire sends it as an image_url part), an assistant message's
//     thinking/redacted_thinking is dropped and named in `ignored`
//     ("messages[i].content[j]:thinking"), any other is refused with a 400 naming it;
//     the system prompt takes text blocks only;
//   - `tools`: custom tools (no `type`, or "custom") become OpenAI function tools
//     (input_schema as parameters); Anthropic's own tool types (web_search_..., bash_...,
//     ...) have no equivalent upstream and are left out, named as ignored;
//   - tool_choice auto/any/tool/none -> "auto"/"required"/{"type":"function",...}/"none"
//     (disable_parallel_tool_use -> parallel_tool_calls: false); stop_sequences -> stop;
//     top_p and top_k passed on; metadata.user_id -> the upstream's `user`;
//   - top-level fields mneme does not use (thinking, context_management, output_config,
//     service_tier, ... and any field unknown to it) are accepted: kept in `passthrough`
//     for an upstream speaking the Messages API, else named in `ignored` (the door's
//     X-Mneme-Ignored header): a stock client never gets a 400 for a field it sends to
//     Anthropic. `thinking` is always ignored: mneme neither relays nor stores the
//     signed thinking blocks of answers, and Anthropic refuses a tool loop with
//     thinking on whose history lacks them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

// POST /v1/messages (and /v1/messages/count_tokens, which needs no max_tokens).
struct anthropic_request {
  std::vector<message> messages;    // the system message first when `system` was sent
  std::string model;
  bool stream = false;
  turn_input turn;                  // set_tools, tools_json, options (no content yet)
  std::vector<std::string> ignored; // fields accepted and not used, in body order
  // Top-level fields mneme does not use, kept for an upstream speaking the Messages API
  // (decoded with upstream_messages_api; they are then not in `ignored`).
  nlohmann::ordered_json passthrough = nlohmann::ordered_json::object();
};

enum class anthropic_body { messages, count_tokens };

// errc::bad_request naming the field ("field 'messages[2].content[0].type' ...").
// `upstream_messages_api`: the model the request goes to speaks the Messages API
// (model.api: anthropic), which takes every content block type.
caf::expected<anthropic_request> decode_anthropic_request(std::string_view body,
                                                          anthropic_body kind,
                                                          bool upstream_messages_api = false);

// For an upstream speaking the Messages API: the request's passthrough fields and the
// client's anthropic-version / anthropic-beta header values ("" = not sent) added to
// its turn's extra_json (llm::anthropic_passthrough_field), which the LLM client's
// Messages wire sends on. Nothing is added when there is nothing to pass.
void add_upstream_passthrough(anthropic_request& r, const std::string& anthropic_version,
                              const std::string& anthropic_beta);

// {"type":"error","error":{"type","message"}}
nlohmann::json anthropic_error_json(const std::string& type, const std::string& message);

struct anthropic_usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// A whole answer as a `message` object (ordered: a tool_use `input` keeps the model's
// key order, which the client sends back).
struct anthropic_answer {
  std::string id;                    // "msg_..."
  std::string model;
  std::string text;                  // one text block when not empty (or when no call)
  std::vector<tool_call> tool_calls; // tool_use blocks, input parsed from the arguments
  std::string stop_reason;           // end_turn, tool_use, max_tokens, stop_sequence
  std::string stop_sequence;         // with stop_reason stop_sequence: the one matched
  anthropic_usage usage;
};
nlohmann::ordered_json to_anthropic_message(const anthropic_answer& a);

// The `input` of a tool_use block from a call's arguments: the JSON object they hold in
// its key order; {} when they are empty or not an object.
nlohmann::ordered_json tool_input_of(const std::string& arguments);

// Streamed events: the SSE bytes of one event, "event: TYPE\ndata: JSON\n\n" (TYPE is
// the payload's "type").
std::string anthropic_sse(const nlohmann::json& payload);
// message_start: the answer's head, content [], stop_reason null, usage as given.
nlohmann::json message_start_event(const anthropic_answer& head);
// message_delta: stop_reason, stop_sequence (the matched sequence with stop_reason
// "stop_sequence", else null), usage.output_tokens.
nlohmann::json message_delta_event(const std::string& stop_reason,
                                   const std::string& stop_sequence, int64_t output_tokens);

} // namespace mneme::api
