// Injecting semantic memory into a session on request (SPEC §7: facts are
// "injected into a session only on request"). Pure, standard library only, any
// thread. The caller (a channel handler, the CLI, an API client) loads the user's
// facts from the store (store/facts.hpp: query_facts), converts them to
// remembered_fact, and appends the message this unit builds through the session
// (ss_append_atom), so the model sees them from the next turn on. Nothing here
// runs automatically: a session without such a request never carries facts.
//
// The message (decisions where the SPEC is silent):
//   - role system, so the model treats it as context, not as something the
//     user said; it is an ordinary row (stored, searchable, compactable).
//   - content:
//       [MEMORY: facts about the user, loaded on request]
//       - <key>: <value>
//       ...
//       [END OF MEMORY]
//     one line per fact in the order given (each key and value as
//     one_line_excerpt: whitespace runs become one space), a value longer than
//     facts_context_value_chars code points cut with "…"; at most
//     facts_context_max_facts facts, then a line "- (N more not shown)".
//     No facts: the body is the single line "- (no facts remembered)".
//   - token_estimate is the local estimate (policies/token_estimate.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

inline constexpr std::size_t facts_context_max_facts = 100;
inline constexpr std::size_t facts_context_value_chars = 500;
inline constexpr std::size_t facts_context_key_chars = 100;
inline constexpr std::string_view facts_context_open =
    "[MEMORY: facts about the user, loaded on request]";
inline constexpr std::string_view facts_context_close = "[END OF MEMORY]";

struct remembered_fact {
  std::string key;
  std::string value;
};

// The system row to append to `session_id` at `now`.
message facts_context_message(const std::vector<remembered_fact>& facts,
                              const std::string& session_id, time_ms now);

// True for a content built by facts_context_message (it starts with the marker).
bool is_facts_context(std::string_view content);

} // namespace mneme
