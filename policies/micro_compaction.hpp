// Micro-compaction (SPEC §6, off by default; seed 004 stage 2 in small steps):
// after every micro_compact_every_n_turns turns the oldest un-folded exchange
// is folded into ONE rolling summary message, built locally (no LLM), and the
// rolling summary is consolidated ("defragmented") when it grows past
// micro_compact_defrag_threshold_tokens. Pure, standard library only, no
// clock, any thread. Owned by the session actor: it counts turns, calls
// plan_micro_fold after each completed turn, persists through the storage
// actor and applies with apply_micro_fold.
//
// Exchange: a maximal run of tool rows (replaced ones included) and assistant
// rows that are not summaries, between
// the protected head and the protected tail that plan_compaction
// (policies/split.hpp) would keep, ending before the next user row, summary
// row or the tail; a run that would split a tool group is skipped. User
// messages are never folded. The oldest exchange is the first such run.
//
// Rolling summary: an assistant row with is_summary whose content is
// wrap_summary(body) (policies/summary_markers.hpp), body =
//   k_rolling_summary_title
//   - rows 12-15: assistant: … [calls: read_file({"path":"/srv/a.yaml"})] | tool read_file: "first line" (12,345 chars) | assistant: …
//   - rows 18-21: …
// one bullet per folded exchange, oldest first; every row of the exchange
// appears with an excerpt (assistant text <= 240 chars, call arguments <= 120,
// first line of a tool output <= 160), a bullet is <= 1,200 chars. The
// markers make a later full compaction treat it as the previous summary.
// Placement: the new rolling summary takes the place of the exchange just
// folded (so all it reports precedes the rows after it); the previous rolling
// summary leaves the live context. Its provenance range is the min/max of the
// folded ids and of the previous summary's range (a bound; archived ids are
// the exact set).
//
// Defragmentation, when the new summary's estimate exceeds the threshold: the
// newest bullets are kept while they fit in a quarter of the threshold; the
// older ones collapse into one line
//   - earlier rows 3-40 (9 exchanges, consolidated): identifiers: /srv/a.yaml, call_7, …
// listing the identifiers (paths, URLs, names with '_', '.', '/', ':', '@',
// '=' or letters mixed with digits) found in them, newest kept when the line
// must be cut to a quarter of the threshold. Result: the bullets take at most
// half the threshold, so the summary is at most rolling_summary_framing_tokens()
// (markers and title, about 100 tokens) plus half the threshold: with a
// threshold of at least twice the framing, one fold never triggers the next
// defrag; below that (the config allows 100) every fold consolidates.
//
// Persistence and failure (SPEC §5.5): the fold's DB sync archives
// archived_ids (active=0, compacted=1) and inserts the new summary at the
// position of the first folded row, in one transaction. The store's
// contiguous-run compaction commit does not cover it (the previous summary is
// not adjacent). If the sync fails, the in-memory fold stands: the session
// keeps the new live transcript (whose rolling summary has id 0) and later
// folds build on it. reconcile(memory_live, db_live_ids) then says what the DB
// still owes: the ids to archive and the unstored rolling summaries to insert;
// the next full compaction runs it first (before planning, so its plan sees
// stored ids). Meanwhile the DB holds the originals live beside nothing, or
// beside an older rolling summary: harmless, since the memory is what the
// model sees and nothing is lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"

namespace mneme {

inline constexpr std::string_view k_rolling_summary_title =
    "Rolling summary (micro-compaction): earlier exchanges folded locally, oldest first.";
inline constexpr std::size_t k_micro_assistant_chars = 240;
inline constexpr std::size_t k_micro_arguments_chars = 120;
inline constexpr std::size_t k_micro_tool_line_chars = 160;
inline constexpr std::size_t k_micro_bullet_chars = 1200;

enum class micro_outcome : uint8_t {
  fold,             // fold the exchange
  disabled,         // compression.micro_compact is false
  not_due,          // fewer than micro_compact_every_n_turns turns since the last fold
  nothing_to_fold,  // no exchange outside the protected head and tail
  not_stored,       // the oldest exchange holds a row without an id yet: retry later
};

std::string_view to_string(micro_outcome o);
std::ostream& operator<<(std::ostream& os, micro_outcome o);

struct micro_fold_plan {
  micro_outcome outcome = micro_outcome::disabled;
  std::size_t transcript_size = 0;                    // live.size() when planned
  std::size_t exchange_begin = 0;                     // folded rows [begin, end)
  std::size_t exchange_end = 0;
  std::vector<int64_t> folded_ids;                    // their ids, in order
  std::optional<std::size_t> previous_summary_index;  // the rolling summary it supersedes
  std::string summary_text;                           // wrapped content of the new summary
  bool defragmented = false;
};

std::ostream& operator<<(std::ostream& os, const micro_fold_plan& p);

bool micro_fold_due(const compression_params& params, int turns_since_last_fold);

bool is_rolling_summary(const message& m);

// Tokens of an empty rolling summary: the summary markers and the title.
int64_t rolling_summary_framing_tokens();

// `context_window` only matters for tail_mode: tokens (as in plan_compaction).
micro_fold_plan plan_micro_fold(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window,
                                int turns_since_last_fold);

enum class micro_apply_status : uint8_t { applied, nothing_to_fold, stale_plan };

std::string_view to_string(micro_apply_status s);
std::ostream& operator<<(std::ostream& os, micro_apply_status s);

struct micro_folded_transcript {
  micro_apply_status status = micro_apply_status::nothing_to_fold;
  std::vector<message> live;          // the new live context (the input unless applied)
  std::vector<int64_t> archived_ids;  // folded ids, then the superseded summary's (if stored)
  std::size_t summary_index = 0;      // where the new rolling summary (id 0) sits
};

// Applies `plan` to `live`, which may have grown since planning (rows after
// transcript_size are kept) but must still hold the planned rows.
micro_folded_transcript apply_micro_fold(const std::vector<message>& live,
                                         const micro_fold_plan& plan);

// What the DB still owes after failed micro-fold syncs (see header comment).
struct micro_reconciliation {
  std::vector<int64_t> archive_ids;          // live in the DB, gone from memory
  std::vector<std::size_t> insert_indices;   // memory rolling summaries with id 0
  std::vector<int64_t> unknown_ids;          // live in memory, not in the DB's live set
  bool in_sync() const {
    return archive_ids.empty() && insert_indices.empty() && unknown_ids.empty();
  }
};

// `db_live_ids`: the ids the store holds live for the session, any order.
// Rows with id 0 that are not rolling summaries are appends still in flight
// and are not the reconciler's business. unknown_ids non-empty means memory
// and DB disagree beyond micro-compaction: reload the session from the store.
micro_reconciliation reconcile(const std::vector<message>& memory_live,
                               const std::vector<int64_t>& db_live_ids);

} // namespace mneme
