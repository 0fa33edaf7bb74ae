// The OpenAI chat-completions wire format of the door (docs/api.md "OpenAI door"):
// the request body decoded into mneme's values, and the answers — `chat.completion`,
// the `chat.completion.chunk` events of a stream, `GET /v1/models`, and errors as
// {"error":{"message","type","param","code"}} (doors/openai_shape.hpp). Pure
// functions; safe from any thread; they never throw.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "apps/common/api/doors/openai_shape.hpp"
#include "messages/agent_turn.hpp"
#include "messages/transcript.hpp"

namespace mneme::api {

// The fields an OpenAI message, one of its tool calls and a call's function may hold, in
// this order: decode_openai_message refuses any other, and the fast body reader
// (openai_fast_body.cpp, whose field enums follow this order) declines any other.
extern const std::initializer_list<std::string_view> openai_message_fields;
extern const std::initializer_list<std::string_view> openai_call_fields;
extern const std::initializer_list<std::string_view> openai_function_fields;

// POST /v1/chat/completions. Fields mneme does not use (n = 1, logprobs, store,
// frequency/presence penalties, ...) are accepted and ignored, as OpenAI-compatible
// servers do; `n` above 1 is refused.
struct openai_chat_request {
  std::vector<message> messages;  // role, content (text parts joined), tool fields
  std::string model;              // "" when absent
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage
  std::string user;               // the tenant; "" when absent
  std::string metadata_session_id; // metadata.session_id, "" when absent
  turn_input turn;                // set_tools, tools_json, options (no content yet)
};

// errc::bad_request naming the field ("field 'messages[2].role' ..."). A common body
// is read by the fast reader (openai_fast_body.hpp); any other goes through
// decode_openai_chat_fully, which gives the same request or the error.
caf::expected<openai_chat_request> decode_openai_chat(std::string_view body);
// The same through the whole document (the reference the fast path is tested against).
caf::expected<openai_chat_request> decode_openai_chat_fully(std::string_view body);

// One OpenAI chat message -> a row, for the door and the context service alike: role
// system|developer (stored as system)|user|assistant|tool; content a string,
// an array of text parts, or null (an assistant message with tool_calls); tool_calls
// [{"id","type":"function","function":{"name","arguments"}}]; tool_call_id and name
// (kept as tool_name) for a tool message. Fields an SDK answer carries that mean nothing
// here (refusal, annotations, audio, function_call, reasoning_content) are ignored;
// any other field is refused. `where` names the message ("messages[3]").
caf::expected<message> decode_openai_message(const nlohmann::json& j, const std::string& where);

struct openai_usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// A whole answer as a `chat.completion` object.
struct openai_answer {
  std::string id;                 // "chatcmpl-..."
  int64_t created = 0;            // Unix seconds
  std::string model;
  std::string content;
  std::vector<tool_call> tool_calls;
  std::string finish_reason;      // "stop" when empty
  openai_usage usage;
};
nlohmann::json to_chat_completion(const openai_answer& a);

// One `chat.completion.chunk` (id, created and model as the answer's): `delta` and
// `finish_reason` (null when empty); `usage` adds "usage" (null or the object) when
// include_usage asked for it.
nlohmann::json chat_chunk(const openai_answer& a, nlohmann::json delta,
                          const std::string& finish_reason, bool include_usage);
// The last chunk of include_usage: "choices": [] and the usage.
nlohmann::json usage_chunk(const openai_answer& a);

// {"object":"list","data":[{"id","object":"model","created","owned_by":"mneme"}]}
nlohmann::json models_json(const std::string& model, int64_t created);

// The SSE bytes of one payload: "data: JSON\n\n".
std::string sse_data(const nlohmann::json& payload);

} // namespace mneme::api
