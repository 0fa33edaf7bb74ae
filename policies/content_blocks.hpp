// Content blocks other than text in mneme's text rows (docs/api.md "Anthropic door",
// "Other content blocks"): what the Anthropic door does with a block of a given type for
// a given upstream, and the one-line form in which such a block is kept in a row's
// `content` (the store has no structured-content column). Pure, standard library only;
// any thread. Used by the Anthropic door's decoder and by both LLM wire encoders.
//
// Decision table (anthropic_block_action), first match wins; text, tool_use and
// tool_result are decoded by the door itself and never reach it:
//   1. upstream speaks the Messages API (model.api: anthropic) -> pass: every block
//      type, known or not, is kept and sent on verbatim (a stock client never gets a
//      400 for a block it sends to Anthropic itself);
//   2. OpenAI-compatible upstream, `image` in a user message      -> image_part (an
//      OpenAI `image_url` content part; in a tool_result -> refuse: chat completions
//      takes no image in a tool message);
//   3. OpenAI-compatible upstream, `thinking` / `redacted_thinking` in an assistant
//      message -> drop (they belong to Anthropic's models; named as ignored);
//   4. anything else -> refuse (a 400 naming the block type).
//
// Row form of a kept block: one line "[TYPE] {JSON}" — a placeholder that stays
// searchable text, then the client's block, compact, on the same line. Text pieces of
// the same message are the other lines, in the client's order.
// Invariants:
//   1. split_block_lines(join of block_line(t, j) and text lines) gives the blocks and
//      the texts back in order, for any JSON object text j that holds no newline
//      (compact JSON never does: a newline inside a string is written "\n").
//   2. A line is a block line only when it is "[" TYPE "] {" ... "}" with TYPE of
//      [a-z0-9_] characters; the encoder also checks that the JSON's "type" is TYPE,
//      else the line is text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mneme {

enum class block_action { pass, image_part, drop, refuse };

std::string_view to_string(block_action a);

enum class block_place { user, assistant, tool_result };

block_action anthropic_block_action(std::string_view type, block_place place,
                                    bool upstream_messages_api);

// "[TYPE] JSON" (JSON compact, one line).
std::string block_line(std::string_view type, std::string_view json);

// One piece of a row's content: a run of text lines, or one block line.
struct content_piece {
  bool block = false;
  std::string type; // block: TYPE
  std::string text; // text: the lines joined by "\n"; block: the JSON
};

// The pieces of `content` in order; one text piece when it holds no block line.
std::vector<content_piece> split_block_lines(std::string_view content);

// True when `content` holds at least one block line (a quick check before splitting).
bool has_block_lines(std::string_view content);

} // namespace mneme
