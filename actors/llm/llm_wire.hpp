// The OpenAI chat-completions wire format: chat_request -> request JSON, answer body ->
// chat_answer or a failure kind. Knows nothing of HTTP or actors; pure functions on
// text, safe from any thread. Invalid UTF-8 in the transcript is replaced, never thrown.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "messages/chat_request.hpp"
#include "messages/llm_error_kind.hpp"

namespace mneme {

// "chat", "summary" or "compaction": the value of the X-Mneme-Purpose header and of
// log fields.
inline std::string_view to_string(llm_purpose p) {
  return p == llm_purpose::summary      ? "summary"
         : p == llm_purpose::compaction ? "compaction"
                                        : "chat";
}

} // namespace mneme

namespace mneme::llm {

// The request body: model, messages (role, content, tool_calls, tool_call_id, name),
// max_tokens and temperature only when set, "stream" as the request says (a stream also
// sends "stream_options": {"include_usage": true}), and when server_compact_threshold > 0
// "context_management": [{"type": "compaction", "compact_threshold": N}]. Agent turns:
// "tools" = tools_json when it is a non-empty array; every member of extra_json that is
// not already set (tool_choice and parallel_tool_calls only together with tools).
std::string to_wire_json(const chat_request& req);

// One message of the request's "messages" array, as to_wire_json writes it: role,
// content (null for an assistant row with tool_calls and no text), tool_calls as
// [{"id","type":"function","function":{"name","arguments"}}], tool_call_id and name for
// a tool row. A user row holding "[TYPE] {JSON}" block lines (policies/content_blocks.hpp,
// kept by the Anthropic door) is sent as content parts: its text as text parts, an image
// block (base64 or url source) as an image_url part, any other block as the text
// "[TYPE]". The context service answers its messages with this same encoder.
nlohmann::json message_to_json(const message& m);

// Appends message_to_json(m).dump(-1, ' ', false, error_handler_t::replace) to `out`,
// byte for byte, without building the document (to_wire_json's messages).
void append_message_json(std::string& out, const message& m);

// `text` without reasoning blocks: every <think>...</think>, <thinking>...</thinking>
// and <reasoning>...</reasoning> is removed, an unclosed opening tag drops the rest of
// the text, and surrounding whitespace is trimmed.
std::string strip_reasoning_blocks(std::string_view text);

struct parsed_answer {
  llm_error_kind kind = llm_error_kind::none; // none = `answer` is valid
  chat_answer answer;
  std::string detail;                         // why it failed, for the error context
};

// Reads a 2xx answer body. Not JSON or no choices[0].message -> malformed; content
// empty after stripping reasoning -> empty_answer (except a chat answer that carries
// tool calls). Reasoning fields (`reasoning_content`, `reasoning`) never become content.
// A top-level "compaction" object of type "compaction" (the server compacted) sets
// answer.server_compacted. With finish_reason "stop", a string choices[0].stop_reason
// (vLLM's matched stop string) is answer.stop_sequence.
parsed_answer parse_chat_answer(std::string_view body, llm_purpose purpose);

// The check every chat answer passes, whole or streamed: content empty after stripping
// reasoning -> empty_answer (with a detail naming finish_reason and whether the model
// produced reasoning only), except a chat answer that carries tool calls.
void check_answer_content(parsed_answer& out, llm_purpose purpose, bool had_reasoning);

// The text of a content field: a string, or an array of parts whose "text" members are
// concatenated; anything else (null) is empty.
std::string content_text(const nlohmann::json& content);

// For a 2xx body that is an error object ({"error": {"code": 429, ...}}): the numeric
// code when it is in 400..599, else 0. Providers use this for upstream failures.
int error_status_in_body(std::string_view body);

// obj[key] when obj is an object holding an integer there, else 0.
int64_t json_int_or_zero(const nlohmann::json& obj, const char* key);

} // namespace mneme::llm
