// Server-side compaction as the fake LLM simulates it (the OpenAI Responses API's
// `context_management: [{"type": "compaction", "compact_threshold": N}]`): for a
// model whose name contains one of the configured native patterns, a request that
// carries a compact threshold and whose rendered prompt reaches it is compacted by
// the server. The answer carries a `compaction` marker (wire_format.hpp) and the
// server remembers, per conversation, that the prompt up to that point now costs
// only the compaction item: later requests of the same conversation report that
// reduced figure as usage.prompt_tokens.
//
// Pure functions over values; the server keeps the memory map under its mutex.
// A conversation is identified by its first two messages (the system prompt and the
// first user message, which mneme's protected head never changes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme::fakellm {

// What a compaction item costs in the next prompt, in percent of the prompt it replaced.
inline constexpr int64_t server_compaction_keep_percent = 10;

// The default list of model-name substrings that compact server-side.
inline const std::vector<std::string> default_native_compaction_models{"gpt-5", "codex"};

// What the server remembers of one conversation after it compacted it.
struct compacted_conversation {
  size_t folded_messages = 0;  // the first N messages are replaced by the item
  int64_t item_tokens = 0;     // what the compaction item costs instead
};

using compaction_memory = std::unordered_map<uint64_t, compacted_conversation>;

// The conversation key: a hash of the first two messages' roles and contents.
uint64_t conversation_key(const std::vector<message>& msgs);

// True when `model` contains one of `patterns` (ASCII case-insensitive).
bool compacts_natively(std::string_view model, const std::vector<std::string>& patterns);

struct server_compaction_step {
  int64_t prompt_tokens = 0;   // the rendered prompt as the server counts it
  bool compacted = false;      // the server compacted during this request
  int64_t tokens_after = 0;    // when compacted: what the prompt costs from now on
};

// The step for one request. `raw_tokens` is the estimate of every message;
// `memory` is this conversation's entry (null = none), updated when the server
// compacts and dropped when the request no longer extends what was folded.
// REQUIRES: raw_tokens >= 0.
server_compaction_step apply_server_compaction(const std::vector<message>& msgs,
                                               int64_t raw_tokens,
                                               std::optional<int64_t> compact_threshold,
                                               bool native, compaction_memory& memory);

} // namespace mneme::fakellm
