// The HTTP form of the context service (issue 27 item 2; docs/api.md "Context service"):
// the bodies of POST /v1/sessions/{key}/context, /usage and /model_error decoded into a
// context_request (messages/context_service.hpp), and a context_reply encoded as the
// answer. Messages come and go in OpenAI's chat format, written by the same encoder as
// the session's own model requests (actors/llm/llm_wire.hpp message_to_json), so the
// `messages` answered are exactly what mneme itself would send.
// Every decode error is errc::bad_request naming the field. Pure functions; safe from any
// thread; they never throw. The routes themselves are in http_api.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "messages/context_service.hpp"

namespace mneme::api {

// The longest `model` name a context request may send.
inline constexpr size_t context_model_max_bytes = 256;

struct context_call {
  std::string user; // context only: empty = gateway.default_user (or the key's owner)
  context_request rq;
};

// {"messages"?: [OpenAI messages], "model"?: string, "tools"?: [function tools],
//  "max_tokens"?: int >= 1, "user"?: string}
caf::expected<context_call> decode_context_call(std::string_view body);
// {"prompt_tokens": int >= 0, "completion_tokens"?: int >= 0, "total_tokens"?: int >= 0,
//  "answer"?: an assistant message in OpenAI's format}
caf::expected<context_call> decode_usage_call(std::string_view body);
// {"status": 100..599 and not 2xx, "body"?: string or JSON (a JSON value is classified as
//  its text)}
caf::expected<context_call> decode_model_error_call(std::string_view body);

// The answer of `op`'s route (docs/api.md).
nlohmann::json context_reply_json(const context_reply& r, context_op op);

} // namespace mneme::api
