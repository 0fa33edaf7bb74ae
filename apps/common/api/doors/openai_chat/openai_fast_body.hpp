// The OpenAI door's fast path for a common chat body: parsed by simdjson (Debian's
// libsimdjson-dev; nlohmann's lexer was the door's largest cost per request at 200 and
// 2,000 messages: docs/benchmarks.md "proxy"), the `messages` rows built from its
// document, and the other top-level fields copied into a small nlohmann document for the
// field decoders. Used by decode_openai_chat only; pure; safe from any thread (each
// thread keeps its own parser); never throws.
//
// Contract: it takes only what the full decoder (decode_openai_message per message)
// takes to the same rows — messages with a role, string or null content, tool_calls of
// {id, type "function", function {name, arguments}, numeric index}, tool_call_id, name,
// and the ignored SDK fields holding scalars or arrays of them; no key twice in one
// object anywhere — and declines (nullopt) everything else: content parts, a wrong
// type, an unknown field, a broken rule, a duplicate key, a parse error, a number
// beyond a double or a uint64, a nesting deeper than simdjson's 1,024 levels. The
// caller then runs the full decoder, which answers the same request or names the error
// (so a declined body is parsed up to twice). tests/openai_fast_body_test.cpp and the fuzz
// target fuzz_openai_body compare the two on every body they try.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/transcript.hpp"

namespace mneme::api {

struct openai_fast_body {
  std::vector<message> messages; // in order, never empty
  nlohmann::json rest;           // the top-level object without "messages"
};

// `body` must be valid UTF-8 (the caller checks it first, as the full decoder does).
std::optional<openai_fast_body> fast_openai_body(std::string_view body);

} // namespace mneme::api
