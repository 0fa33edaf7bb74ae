// One system message at the head of what is sent to the model. The daemon's own prompt
// (gateway.system_prompt, the skills index) is the session's first row; a door client's
// transcript brings its own system message, stored after it. Two system messages in a
// row confuse models and are refused by providers that take one (Anthropic's Messages
// API has a single `system`). Rows stay as stored; only the request is merged.
// Used by the session when it builds a chat request or answers the context service.
// Pure: standard library only; safe from any thread.
#pragma once

#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// Between the merged system texts.
inline constexpr std::string_view system_merge_separator = "\n\n";

// `rows` with their leading run of system rows that are not summaries merged into the
// first of them: its content is every one's content in order (the daemon's first, the
// client's last), joined by system_merge_separator, empty contents skipped. Every other
// row is kept as it is, in order; a run of one is unchanged.
std::vector<message> merge_leading_system_rows(std::vector<message> rows);

} // namespace mneme
