// The compaction log (issue 45): one row per compaction attempt, committed or not
// (messages/storage_types.hpp compaction_log_entry states the fields). A committed
// compaction writes its row in its own transaction (store/session_commits.hpp); an
// attempt that committed nothing is written on its own (message_store::
// log_compaction_attempt). Rows are never updated or deleted.
//
// Table compaction_log (SQLite migration 9, PostgreSQL schema v7; docs/schema.md).
// What every backend checks before writing, and the vocabulary of mode, origin and
// outcome. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "caf/error.hpp"

#include "messages/storage_types.hpp"

namespace mneme {

// mode: who wrote the summary; none for a row that asked nobody (exhausted, refused
// by the window guard).
inline constexpr const char* compaction_modes[] = {"summarizer", "fallback", "external",
                                                   "micro", "none"};
// origin: what asked for it (automatic triggers, T12-T15, T3/T4).
inline constexpr const char* compaction_origins[] = {"automatic", "manual", "hygiene"};
// outcome: committed, or why not.
// retried: the summary kept less than compression.min_retention and the summarizer was
// asked once more (the second attempt has its own row).
inline constexpr const char* compaction_outcomes[] = {
  "committed", "grew", "auth_failed", "timeout", "failed", "exhausted", "refused_by_guard",
  "commit_failed", "retried"};

// Largest log field of text (trigger, model, detail) stored; longer details are cut.
inline constexpr size_t compaction_log_max_text = 512;

// Every log read answers at most this many rows (the newest ones, oldest first).
inline constexpr int64_t compaction_log_max_rows = 10000;

// errc::bad_request naming the field for: an empty session id, a mode / origin /
// outcome outside the lists above, `committed` when `committed` is false (a commit
// writes its own row), a negative count, duration or time, identifiers_kept above
// identifiers_in, attempt outside 1..2, a trigger or model over
// compaction_log_max_text bytes. (`detail` is cut there instead.)
caf::error check_compaction_log(const compaction_log_entry& e, bool committed);

// `e` as a commit stores it: outcome committed, the range, count and summary id of
// the commit, detail cut to compaction_log_max_text.
compaction_log_entry committed_log_entry(compaction_log_entry e, int64_t first_id,
                                         int64_t last_id, int64_t rows_replaced,
                                         int64_t summary_id);

// The detail as stored: cut at a character boundary to compaction_log_max_text bytes.
std::string stored_detail(const compaction_log_entry& e);

} // namespace mneme
