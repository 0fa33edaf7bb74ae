// The local token estimate (SPEC §2): what T1, T4, T5 and the preflight loop
// compare against the threshold when no API-reported usage is known. Pure
// functions of their arguments: no allocation, one pass over the bytes, safe
// from any thread. Runs on every appended message, so it must stay cheap.
//
// Rules (decisions where the SPEC says only "about"):
//   1. Text is counted in code points (utf8.hpp decoding; an invalid byte is
//      one character). CJK code points (is_cjk_code_point) cost 1 token each;
//      every other code point costs 1/latin_chars_per_token, and the sum of
//      those is rounded UP, so a non-empty text costs at least 1 token.
//   2. A message costs message_overhead_tokens (role and framing) plus the
//      text of content, tool_call_id and tool_name, plus, per tool call,
//      tool_call_overhead_tokens and the text of its id, name and arguments.
//      All text of one message is pooled before rounding (rule 1), so
//      splitting a text across fields does not inflate the estimate.
//   3. A list of messages costs the sum of its messages: a running total kept
//      by adding each appended message's estimate equals the list estimate.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

inline constexpr int64_t latin_chars_per_token = 4;
inline constexpr int64_t message_overhead_tokens = 4;   // role + message framing
inline constexpr int64_t tool_call_overhead_tokens = 3; // type/function framing of one call

// Rule 1 for one text.
int64_t estimate_text_tokens(std::string_view utf8);

// Rule 2.
int64_t estimate_message_tokens(const message& m);

// Rule 3.
int64_t estimate_messages_tokens(const std::vector<message>& messages);

} // namespace mneme
