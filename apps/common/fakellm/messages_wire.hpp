// Anthropic's Messages API wire format as the fake LLM speaks it (POST /v1/messages):
// a request body parsed into the same chat_call the chat-completions endpoint answers
// (so faults, tool calls and summaries are decided alike), and the answer as a
// `message` body, as the named events of a stream, and as Anthropic's error bodies.
// Pure functions over nlohmann-json; no I/O; safe from any thread.
//
// Parsing: `system` (a string or text blocks) is a system message first; a user
// message's tool_result blocks are tool messages (in order, before its text), its text
// blocks one user message; an assistant message's text is its content and its tool_use
// blocks its calls (arguments = `input` written compactly); tools
// {name, description, input_schema} are offered tools. max_tokens is required, as the
// real API requires it; any other block type (image, document, thinking, search_result,
// ...) is taken as the API takes it and read as the placeholder text "[TYPE]" (a
// tool_use or tool_result in the wrong role, or a block without a type, is a 400).
// `stop_sequences` (an array of strings) becomes chat_call::stop.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/fakellm/wire_format.hpp"
#include "caf/expected.hpp"

namespace mneme::fakellm {

// Errors are errc::bad_request naming the field.
caf::expected<chat_call> parse_messages_call(std::string_view body);

// {"id":"msg_...","type":"message","role":"assistant","model","content":[text?,
// thinking?, tool_use...],"stop_reason","stop_sequence","usage"}. The completion's
// finish_reason maps to stop_reason: tool_calls -> tool_use, length -> max_tokens, an
// answer cut at a stop sequence -> stop_sequence (and stop_sequence names it; else null),
// else end_turn. The id "chatcmpl-..." of the completion is kept after "msg_".
std::string messages_body(const completion& c);

// The events of a streamed answer ("event: <type>\ndata: {...}\n\n"): message_start, a
// ping, per block content_block_start / deltas (text_delta of at most `piece_bytes`,
// input_json_delta in pieces) / content_block_stop, message_delta (stop_reason,
// stop_sequence, usage), message_stop. REQUIRES: piece_bytes > 0.
std::vector<std::string> messages_events(const completion& c, size_t piece_bytes = 64);

// {"type":"error","error":{"type":...,"message":...}}
std::string messages_error_body(std::string_view type, std::string_view message);

// The same body as an `error` event of a stream.
std::string messages_error_event(std::string_view type, std::string_view message);

} // namespace mneme::fakellm
