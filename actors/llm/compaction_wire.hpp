// The compaction endpoint's wire format on mneme's side (SPEC §6, Codex app-server
// mode `managed`): OpenAI's "compact a response" call, POST {base}/v1/responses/compact.
// A chat_request with purpose llm_purpose::compaction travels through the summarizer
// pool like a summary (same bounds, deadline and error mapping); only the URL, the
// body and the reading of the answer differ, and they are here. Pure functions on
// text, safe from any thread.
//
// Body:   {"model", "input": [items], "instructions" (when set)}; each transcript
//         message becomes an input item: {"type":"message","role","content"} for
//         system/user/assistant text, {"type":"function_call","call_id","name",
//         "arguments"} per tool call of an assistant, {"type":"function_call_output",
//         "call_id","output"} for a tool row.
// Answer: {"output": [items...], "usage": {"input_tokens","output_tokens"}}: the
//         compacted text is the text of the output's message items (output_text or
//         input_text parts, joined by a blank line); opaque "compaction" items carry
//         no text mneme could store and are ignored. No text -> empty_answer.
#pragma once

#include <string>
#include <string_view>

#include "actors/llm/llm_wire.hpp"

namespace mneme::llm {

// The compaction URL for a pool whose chat URL is `chat_url`: a trailing
// "/chat/completions" becomes "/responses/compact"; any other URL gets
// "/responses/compact" appended.
std::string compaction_url(std::string_view chat_url);

// The request body described above.
std::string to_compaction_wire_json(const chat_request& req);

// Reads a 2xx compaction answer: malformed when not a JSON object with an output
// array, empty_answer when the output holds no text; usage maps to prompt_tokens
// (input_tokens) and completion_tokens (output_tokens).
parsed_answer parse_compaction_answer(std::string_view body);

} // namespace mneme::llm
