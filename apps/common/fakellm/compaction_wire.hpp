// The compaction endpoint's wire format as the fake LLM speaks it: OpenAI's
// "compact a response" call, `POST /v1/responses/compact`.
//
// Request:  {"model": "...", "input": [item...], "instructions": "..." (optional)}
//   items:  {"type": "message" (optional), "role": "system|developer|user|assistant",
//            "content": "text" | [{"type": "input_text"|"output_text", "text": ...}]}
//           {"type": "function_call", "call_id", "name", "arguments"}
//           {"type": "function_call_output", "call_id", "output"}
// Answer:   {"id": "resp-fake-N", "object": "response.compaction", "created_at": T,
//            "model": "...",
//            "output": [{"type": "message", "role": "assistant",
//                        "content": [{"type": "output_text", "text": SUMMARY}]},
//                       {"type": "compaction", "id": "cmp-fake-N",
//                        "encrypted_content": "..."}],
//            "usage": {"input_tokens", "output_tokens", "total_tokens"}}
// The real service returns the opaque compaction item (plus the kept user
// messages); the fake adds a readable message item so a client that must store
// text (mneme never keeps opaque state) has one. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"
#include "messages/transcript.hpp"

namespace mneme::fakellm {

struct compaction_call {
  std::string model;
  std::vector<message> input;  // the items as transcript messages
  std::string instructions;
};

// Parses a compaction request. Errors are errc::bad_request naming the field.
caf::expected<compaction_call> parse_compaction_call(std::string_view body);

struct compaction_result {
  std::string id;              // "resp-fake-N"
  std::string model;
  int64_t created = 0;
  std::string summary;         // empty: the message item carries no text
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
};

// The answer body described above.
std::string compaction_body(const compaction_result& r);

} // namespace mneme::fakellm
