// The embedder's decisions (issue 48), pure: which stored rows are embedded and with how
// much of their text, how big the next provider call is, and how long to wait after a
// failure. Standard library only; any thread. The embedder (actors/embed) is glue
// around these.
//
// What is embedded (worth_embedding):
//   - message rows of role user or assistant, and summaries (whatever their role), in
//     any state (archived rows stay findable by meaning as by words);
//   - not tool results (role tool: program output, often large, rarely what a person
//     asks for by meaning; full text still finds them), not system rows other than
//     summaries (the same prompt in every session);
//   - fact versions while active (a retired version is skipped; its successor has a
//     new id above the watermark and is embedded in its turn);
//   - never a text that is empty or only white space.
// Text cut (embed_input): the first max_chars code points, cut on a character boundary.
//
// Failure handling (on_failure), by the provider's failure kind:
//   payload_too_large, context_overflow, output_too_large: the batch is too big for the
//     provider -> split (half the rows) while it has more than one row; a single row
//     that is still refused -> skip it (its text is past what the model takes: it stays
//     findable by full text; counted as skipped).
//   bad_request, unsupported_parameter: the same, since one text or the whole request
//     may be at fault: split down to one row, then skip that row.
//   everything else (transport, 5xx, 429, auth, quota, malformed answers): back off.
// Back-off (backoff_ms): initial * 2^(failures-1), capped at max; an upstream's
//   Retry-After (seconds) lengthens the wait up to the cap, never shortens it.
// Batch size (after_success): a split batch grows back by doubling after each success,
//   up to the configured size.
//
// Invariants: 1. backoff_ms is in [initial, max] for failures >= 1 (initial <= max).
//             2. a split never yields 0 rows; skip happens only for a batch of one.
//             3. batch sizes stay in [1, configured].
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/llm_error_kind.hpp"

namespace mneme {

bool worth_embedding(std::string_view role, bool is_summary, bool active,
                     std::string_view text);

// The first `max_chars` code points of `text` (valid UTF-8 in, a prefix out).
std::string embed_input(std::string_view text, std::size_t max_chars);

enum class embed_action { back_off, split, skip };

embed_action on_failure(llm_error_kind kind, std::size_t batch_rows);

int64_t backoff_ms(int64_t failures, int64_t initial_ms, int64_t max_ms,
                   std::optional<int64_t> retry_after_s = std::nullopt);

// The batch size after a call of `current` rows succeeded.
std::size_t after_success(std::size_t current, std::size_t configured);
// The batch size after a split of `current` rows.
std::size_t after_split(std::size_t current);

} // namespace mneme
