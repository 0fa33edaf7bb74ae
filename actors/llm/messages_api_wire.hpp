// Anthropic's Messages API wire format (model.api: anthropic), beside the OpenAI one in
// llm_wire.hpp: mneme's chat_request -> a POST /v1/messages body, and a whole answer
// body -> chat_answer or a failure kind. Knows nothing of HTTP or actors; pure functions
// on text, safe from any thread; they never throw.
//
// Request (docs/configuration.md "Anthropic upstream"):
//   - the leading system rows are the top-level "system" (joined by a blank line); a
//     system row later in the history (a marker, a summary) is a user text block there;
//   - user rows are text blocks; an assistant row is its text block (when not empty) and
//     one tool_use block per call (`input` = the call's arguments when they are a JSON
//     object, {} when empty, else {"arguments": <the text>}); a tool row is a
//     tool_result block of a user message (is_error when its content starts with
//     policies/tool_loop.hpp's tool_error_prefix); a row's "[TYPE] {JSON}" block lines
//     (policies/content_blocks.hpp: image, document, thinking, ... the Anthropic door
//     kept) are the blocks they hold, verbatim, in their place among its text blocks
//     (a tool row's content is then an array of blocks); empty text blocks are left out
//     (the API refuses them) and consecutive messages of one role are merged into one;
//   - "tools" (OpenAI function tools) -> {name, description, input_schema};
//     tool_choice auto/required/none/{function} -> {type auto/any/none/tool};
//     parallel_tool_calls false -> disable_parallel_tool_use; stop -> stop_sequences;
//     temperature, top_p, top_k as they are; user -> metadata.user_id;
//   - max_tokens: the request's, else max_tokens/max_completion_tokens of its extra
//     fields, else `default_max_tokens` (the API requires it);
//   - fields without an equivalent (seed, response_format, n, logprobs,
//     frequency_penalty, presence_penalty, server-side compaction, ...) are dropped;
//   - the fields the Anthropic door passes on (extra_json's anthropic_passthrough_field
//     "fields": thinking, context_management, output_config, ...) are added as they
//     are, never replacing a member written above.
// Answer: text blocks (reasoning blocks stripped) are the content, tool_use blocks the
// tool calls (arguments = `input` written compactly), thinking blocks are reasoning;
// stop_reason end_turn/stop_sequence -> "stop" (with stop_sequence: the answer's
// `stop_sequence` string becomes chat_answer::stop_sequence), tool_use -> "tool_calls",
// max_tokens -> "length", refusal -> "content_filter", others as they are; usage.input_tokens (plus
// the cache reads and writes) -> prompt_tokens, output_tokens -> completion_tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actors/llm/llm_wire.hpp"
#include "messages/chat_request.hpp"

namespace mneme::llm {

// The member of a chat_request's extra_json that carries what the Anthropic door passes
// to an upstream speaking the Messages API: {"fields": {top-level fields},
// "headers": {"anthropic-version": ..., "anthropic-beta": ...}}. The OpenAI wire never
// sends it (llm_wire.cpp); this wire and build_http_call read it.
inline constexpr const char* anthropic_passthrough_field = "x-mneme-anthropic";

// The anthropic-version header value sent with every call.
inline constexpr std::string_view anthropic_version = "2023-06-01";
// max_tokens of a request that sets none (summaries, turns without max_tokens).
inline constexpr int64_t default_messages_max_tokens = 8192;

// "{base_url}/v1/messages"; a base_url that already ends in "/v1" only gets
// "/messages". Trailing '/' ignored.
std::string messages_url(std::string_view base_url);

std::string to_messages_wire_json(const chat_request& req,
                                  int64_t default_max_tokens = default_messages_max_tokens);

// The client's anthropic-version and anthropic-beta headers the Anthropic door passed
// on (extra_json's anthropic_passthrough_field "headers"), as "Name: value" lines; a
// value with a control character or outside printable ASCII is left out.
std::vector<std::string> messages_client_headers(const chat_request& req);

// The finish_reason (OpenAI's words, which the rest of mneme reads) of a stop_reason.
std::string finish_reason_of_stop(std::string_view stop_reason);

// Reads a 2xx answer body ({"type":"message","content":[...],...}): not JSON or no
// content array -> malformed; then the same content check as the OpenAI wire.
parsed_answer parse_messages_answer(std::string_view body, llm_purpose purpose);

// An error body {"type":"error","error":{"type","message"}}: its type and message;
// `found` false when the body is not one.
struct messages_api_error {
  bool found = false;
  std::string type;
  std::string message;
};
messages_api_error read_messages_api_error(std::string_view body);

} // namespace mneme::llm
