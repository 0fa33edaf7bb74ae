// The storage vocabulary: the values the store returns and the storage actor sends
// (compaction commit, session statistics, checkpoints, session filter, id lists).
// Plain values plus their CAF inspect(); included by messages/mneme_types.hpp inside
// the storage section of the type-ID block. Owned by the storage module (issue 3).
// Safe to use from any thread; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/meta/type_name.hpp"

#include "messages/transcript.hpp"

namespace mneme {

// Ids assigned by one batch append, in the order of the batch.
struct message_ids {
  std::vector<int64_t> ids;
};

// One compaction attempt as the compaction log records it (issue 45; docs/schema.md
// "compaction_log"; the values of mode and outcome: store/compaction_log.hpp).
//   - trigger: to_string(trigger); origin: automatic, manual (T12-T15) or hygiene
//     (T3, T4); mode: who wrote the summary (summarizer, fallback, external, micro);
//   - outcome: committed, or why nothing was (grew, auth_failed, timeout, failed,
//     exhausted, refused_by_guard, commit_failed);
//   - first_id..last_id, rows_replaced, summary_id: the replaced rows and the summary
//     (0 when nothing committed; the store fills them for a committed compaction);
//   - summary_tokens: what the summary call spent (prompt + answer, the estimate when
//     the summarizer reported no usage; 0 when nothing was asked);
//   - identifiers_in / identifiers_kept: policies/identifier_retention.hpp;
//   - attempt: 1, or 2 for the retry below compression.min_retention.
struct compaction_log_entry {
  int64_t id = 0;
  std::string session_id;
  time_ms at_ms = 0;
  std::string trigger;
  std::string origin;
  std::string mode;
  std::string outcome;
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
  int64_t first_id = 0;
  int64_t last_id = 0;
  int64_t rows_replaced = 0;
  int64_t summary_id = 0;
  std::string summarizer_model;
  int64_t duration_ms = 0;
  int64_t summary_tokens = 0;
  int64_t identifiers_in = 0;
  int64_t identifiers_kept = 0;
  int32_t attempt = 1;
  std::string detail; // why it failed, one line; "" when committed
};

// One compaction, committed in one transaction (SPEC §1, §3):
//   - archive_ids: the middle, a contiguous slice of the session's live context in
//     ascending id order (every id a live row of `session_id`, and no live row of the
//     session between the first and the last id left out);
//   - summary: the new summary row (role user or assistant; content = the summary text);
//     the store sets is_summary = 1 and replaced_first_id/last_id = the slice bounds;
//   - when update_triggers is set, `triggers` is persisted in the same transaction;
//   - when has_log is set, `log` is added to the compaction log in the same
//     transaction, with outcome committed and the replaced range, row count and
//     summary id of this commit (the caller's values of those are ignored).
struct compaction_commit {
  std::string session_id;
  std::vector<int64_t> archive_ids;
  message summary;
  bool update_triggers = false;
  trigger_state triggers;
  bool has_log = false;
  compaction_log_entry log;
};

// Row replacements, committed in one transaction (SPEC §1, §6; the storage of
// policies/row_replacement.hpp and policies/micro_compaction.hpp): proactive
// pruning, tool output eviction, micro-compaction folds and their reconciliation.
//   - archive_ids: live rows of `session_id` leaving the live context (any order,
//     not necessarily contiguous, each once); they become archived (active = 0,
//     compacted = 1) and stay searchable;
//   - rows: the new live rows; rows[i] takes the live-order place (`position`) of
//     the archived row positions[i], which must be one of archive_ids
//     (rows.size() == positions.size(), each position used once). The store sets
//     is_summary = 1 and, when a row has no provenance, replaced_first_id =
//     replaced_last_id = positions[i];
//   - an archived row that is some row's position points to it (archived_by);
//     any other archived row points to the row of the nearest position before it
//     in live order (else the first row), or to `archived_by` when rows is empty
//     (0 = none);
//   - when update_triggers is set, `triggers` is persisted in the same transaction.
// The reply is the inserted rows (with their ids), in the order of `rows`.
struct replacement_commit {
  std::string session_id;
  std::vector<int64_t> archive_ids;
  std::vector<message> rows;
  std::vector<int64_t> positions;
  int64_t archived_by = 0;
  bool update_triggers = false;
  trigger_state triggers;
};

// Row counts of one session by state (SPEC §1 table).
struct session_stats {
  std::string session_id;
  int64_t live_rows = 0;
  int64_t archived_rows = 0;
  int64_t rolled_back_rows = 0;
  int64_t summary_rows = 0;           // rows with is_summary, any state
  int64_t live_token_estimate = 0;    // sum of token_estimate over live rows
  int64_t content_bytes = 0;          // sum of content sizes over all rows
  int64_t first_id = 0;               // 0 when the session has no rows
  int64_t last_id = 0;
};

// A named point of a session: every row with an id above last_message_id was
// appended after it (SPEC §6 rollback checkpoints).
struct checkpoint_record {
  std::string session_id;
  std::string name;
  int64_t last_message_id = 0;
  time_ms created_at_ms = 0;
};

// A response of the Responses door (store/response_records.hpp): the session it was
// answered in and the last row it answered, so `previous_response_id` continues (or
// branches from) it after a restart, on another node, after its rows were compacted.
// deleted_at_ms > 0: deleted, no longer continuable (its rows stay).
struct response_record {
  std::string id;                     // "resp_..."
  std::string user_id;
  std::string session_key;
  std::string session_id;
  int64_t last_row_id = 0;            // the answer's row (its last one)
  std::string previous_id;            // the response it continued, "" for none
  time_ms created_at_ms = 0;
  time_ms deleted_at_ms = 0;
  std::string body;                   // the `response` object as answered (JSON text)
};

// Which sessions to list; empty strings match everything. Newest first.
struct session_filter {
  std::string user_id;
  std::string session_key;
  bool open_only = false;
  int64_t limit = 1000;               // 1..100000
};

// One version of a per-user fact (SPEC §7 semantic memory; store/facts.hpp). A
// replaced version has active = false and replaced_by = the id of its successor; a
// removed one has active = false and removed_at_ms > 0. created_at_ms is when the
// key was first set (kept across replacements), updated_at_ms when this version
// was written.
struct fact_record {
  int64_t id = 0;
  std::string user_id;
  std::string key;
  std::string value;
  std::string source_session;         // the session the fact came from, may be empty
  time_ms created_at_ms = 0;
  time_ms updated_at_ms = 0;
  bool active = true;
  time_ms removed_at_ms = 0;
  int64_t replaced_by = 0;
};

// Which facts to list or search (st_facts_atom). An empty `text` lists the user's
// facts (newest first); otherwise a full-text search with the recall syntax, fused with
// the user's nearest fact vectors when `query_vector` is set and the store has the
// process's vector index (store/fact_vectors.hpp).
struct fact_query {
  std::string user_id;                // required: a search sees only this user's facts
  std::string text;
  bool include_inactive = false;      // also replaced and removed versions
  int64_t limit = 50;                 // 1..1000
  std::vector<float> query_vector;    // text's unit vector (issue 48); empty = words only
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, message_ids& x) {
  return f(caf::meta::type_name("mneme::message_ids"), x.ids);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compaction_log_entry& x) {
  return f(caf::meta::type_name("mneme::compaction_log_entry"), x.id, x.session_id, x.at_ms,
           x.trigger, x.origin, x.mode, x.outcome, x.tokens_before, x.tokens_after,
           x.first_id, x.last_id, x.rows_replaced, x.summary_id, x.summarizer_model,
           x.duration_ms, x.summary_tokens, x.identifiers_in, x.identifiers_kept, x.attempt,
           x.detail);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compaction_commit& x) {
  return f(caf::meta::type_name("mneme::compaction_commit"), x.session_id, x.archive_ids,
           x.summary, x.update_triggers, x.triggers, x.has_log, x.log);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, replacement_commit& x) {
  return f(caf::meta::type_name("mneme::replacement_commit"), x.session_id, x.archive_ids,
           x.rows, x.positions, x.archived_by, x.update_triggers, x.triggers);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_stats& x) {
  return f(caf::meta::type_name("mneme::session_stats"), x.session_id, x.live_rows,
           x.archived_rows, x.rolled_back_rows, x.summary_rows, x.live_token_estimate,
           x.content_bytes, x.first_id, x.last_id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_record& x) {
  return f(caf::meta::type_name("mneme::checkpoint_record"), x.session_id, x.name,
           x.last_message_id, x.created_at_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, response_record& x) {
  return f(caf::meta::type_name("mneme::response_record"), x.id, x.user_id, x.session_key,
           x.session_id, x.last_row_id, x.previous_id, x.created_at_ms, x.deleted_at_ms, x.body);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_filter& x) {
  return f(caf::meta::type_name("mneme::session_filter"), x.user_id, x.session_key,
           x.open_only, x.limit);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fact_record& x) {
  return f(caf::meta::type_name("mneme::fact_record"), x.id, x.user_id, x.key, x.value,
           x.source_session, x.created_at_ms, x.updated_at_ms, x.active, x.removed_at_ms,
           x.replaced_by);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fact_query& x) {
  return f(caf::meta::type_name("mneme::fact_query"), x.user_id, x.text, x.include_inactive,
           x.limit, x.query_vector);
}

} // namespace mneme
