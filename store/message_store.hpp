// The store interface: every operation the storage actor runs against the database, so
// that one actor serves either backend (store/sqlite/sqlite_store.hpp, the embedded
// default; store/pg/pg_store.hpp, PostgreSQL). The contract of each operation is stated
// here; a backend header says only what is particular to it.
//
// Errors (caf::error carrying mneme::errc, messages/errc.hpp; no operation throws):
//   - bad_request: the caller's mistake (named below per operation); nothing changed.
//   - not_found: an unknown session, checkpoint or row; nothing changed.
//   - storage_*: the backend failed (storage_failed, storage_disk_full, storage_corrupt,
//     storage_locked, storage_readonly, storage_cant_open); a write then changed nothing.
//     On PostgreSQL storage_locked also means another writer took the database after a
//     reconnect (store/pg/pg_store.hpp lock_as_only_writer).
//   - lease_lost (node mode, PostgreSQL only): a write of a session whose key is not
//     leased to this node under the token registered with set_fence; nothing changed.
// "Open session" below: one that exists (else not_found "unknown session '<id>'") and has
// not ended (else bad_request "session '<id>' has ended").
//
// Atomicity and durability: every write runs in one transaction of its own (the group
// commit excepted, see there) and is all or nothing; it is durable when it returns
// without error (SQLite: PRAGMA synchronous=FULL unless store_params::synchronous_full is
// false; PostgreSQL: synchronous_commit = on). Reads see every write returned before them
// (read-your-writes: they run on the writer's connection).
//
// Row states (SPEC §1): live (active = 1), archived (compacted = 1: a summary or a
// replacement row took its place; archived_by names it), rolled back (active = 0,
// compacted = 0). A stored message is never rewritten or deleted: every operation below
// moves rows between these states or adds rows.
//
// Thread: one owner at a time (the storage actor, detached: every call may block).
#pragma once

#include <cstdint>
#include <ostream>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/embedding_rows.hpp"
#include "messages/recall_types.hpp"
#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

class store_maintenance;
class vector_index;

// message_store::range's default limit: the whole range.
inline constexpr int64_t range_unlimited = std::numeric_limits<int64_t>::max();

class message_store {
public:
  virtual ~message_store() = default;

  // "sqlite" or "postgres" (logs, errors): to_string(params().backend).
  virtual const char* backend_name() const = 0;
  virtual const store_params& params() const = 0;
  // The background work this backend needs from its owner (deferred indexing, log
  // copying, cold copies: store/store_maintenance.hpp), or null when it needs none.
  virtual store_maintenance* maintenance() { return nullptr; }

  // --- sessions

  // Creates a session. rec.id may be empty (a generated id) or a valid unused id
  // (1..128 characters of [A-Za-z0-9._:-]); started_at_ms <= 0 becomes `now`; ended and
  // trigger fields are ignored (not ended, triggers at zero). Returns the stored record.
  // bad_request: now < 0, an invalid id, an id that exists, user_id / session_key /
  // model over 512 bytes. not_found: rec.parent_id names no session.
  virtual caf::expected<session_record> create_session(session_record rec, time_ms now) = 0;
  // Ends an open session at `now` (at least 1 ms) for `reason`; returns its record.
  // bad_request: reason over 512 bytes, the session has ended.
  virtual caf::expected<session_record> end_session(const std::string& session_id, time_ms now,
                                                    const std::string& reason) = 0;
  // Persists the trigger state (SPEC §5) field by field, ended sessions included.
  // bad_request: cooldown_reason over 512 bytes. not_found: unknown session.
  virtual caf::error save_triggers(const std::string& session_id, const trigger_state& t) = 0;

  // --- appends

  // Appends one live row to an open session; returns its id (ids grow). A message is
  // checked as store/row_codec.hpp validate_new_message says (bad_request naming the
  // first problem: role, session id, flags, provenance, max_content_bytes).
  virtual caf::expected<int64_t> append(const message& m) = 0;
  // The same for every row of `batch`, all or nothing; the ids in batch order.
  virtual caf::expected<message_ids> append_batch(const std::vector<message>& batch) = 0;

  // --- group commit: begin_group, any number of insert_*_in_group, then commit_group
  // (or abort_group). The rows of a group commit together, in one transaction.
  // REQUIRES: no group is open for begin_group; one is open for the others.
  virtual caf::error begin_group() = 0;
  // After begin_group: about how many rows the group's inserts will hold (a backend may
  // reserve their ids in one round trip). A hint only: any number may follow.
  virtual void expect_group_rows(int64_t rows) { (void)rows; }
  // As append, inside the group. A refused row changes nothing of the group (its
  // statement is atomic) unless the backend rolled the whole group back, which
  // group_open() then reports as false: the group is lost and commit_group fails.
  virtual caf::expected<int64_t> insert_in_group(const message& m) = 0;
  // As append_batch, inside the group: a refused batch leaves the group as it was
  // before it (a savepoint), unless group_open() turns false as above.
  virtual caf::expected<message_ids> insert_batch_in_group(const std::vector<message>& batch) = 0;
  // Durable on return without error; on error nothing of the group is kept.
  virtual caf::error commit_group() = 0;
  // Rolls the group back; nothing of it is kept.
  virtual void abort_group() = 0;
  // False once the backend rolled the whole group back (the group then fails).
  virtual bool group_open() const = 0;

  // --- compaction, replacement, child sessions, reset, checkpoints, rollback

  // The compaction commit (SPEC §1, §5): c.archive_ids must be a contiguous run of the
  // open session's live context, in live order. Inserts the summary as a live row
  // (is_summary = 1, replaced_first/last_id = min/max archived id) at the live-order
  // place of the first archived row, archives the run into it (archived_by = its id)
  // and, when c.update_triggers, persists c.triggers, all in one transaction. Returns
  // the summary with its id. bad_request: empty archive ids, ids that are not such a
  // run ("is not a live row", "not a contiguous run", "run past the end"), a summary
  // whose role is not user/assistant, with empty text, naming another session or over
  // max_content_bytes.
  virtual caf::expected<message> commit_compaction(const compaction_commit& c) = 0;
  // Row replacements (pruning, eviction, micro-compaction; messages/storage_types.hpp
  // replacement_commit states which row takes which place and absorbs which archived
  // row): archives c.archive_ids and inserts c.rows at their positions in one
  // transaction; the inserted rows with their ids, in order. bad_request: the shape
  // (empty ids, counts, duplicates, positions outside archive_ids, a row of another
  // session or with empty content), an archive id of another session or not live.
  // not_found: an archive id that names no row.
  virtual caf::expected<std::vector<message>> commit_replacement(const replacement_commit& c) = 0;
  // The compaction `c` with `in_place: false` (SPEC §3): in one transaction, creates
  // child session C of open session P (a new id, P's user, key and model, parent_id =
  // P, started at `now`, trigger state c.triggers when c.update_triggers else P's),
  // gives C the live context head + summary + tail (copies of P's live rows before the
  // run, the summary as commit_compaction makes it, copies of P's live rows after the
  // run; a copy keeps everything but its id and session), archives the run in P into
  // the summary (in C) and ends P with reason "continued_in_child". Returns C's live
  // context. Copies, not moved rows: P's export and recall keep P's own head and tail;
  // the archived middle is only in P, the summary only in C.
  // Refusals: those of commit_compaction ("child session: ..."), and now < 0.
  virtual caf::expected<std::vector<message>> continue_in_child(const compaction_commit& c,
                                                                time_ms now) = 0;
  // The reset after exhaustion (SPEC §5.3): in one transaction, ends open session P
  // with `reason` and creates its successor under the same key (new id, parent_id = P,
  // triggers at zero) whose live context is copies of P's head (a leading system row
  // plus the next head_count live rows, extended over the tool rows answering them)
  // and of its latest live summary, never a row above max_row_tokens (0 = no limit;
  // policies/reset_plan.hpp). P's rows are untouched. Returns the new session.
  // bad_request: head_count outside 0..1000, max_row_tokens < 0, now < 0.
  virtual caf::expected<session_record> reset_session(const std::string& session_id,
                                                      int head_count, time_ms now,
                                                      const std::string& reason,
                                                      int64_t max_row_tokens = 0) = 0;
  // Names the current end of an open session (last_message_id = its highest row id,
  // any state; 0 when it has none). Creating an existing name again moves it here
  // and makes it usable again (see rollback). bad_request: name not 1..128 bytes.
  virtual caf::expected<checkpoint_record> create_checkpoint(const std::string& session_id,
                                                             const std::string& name,
                                                             time_ms now) = 0;
  // rollback_after_row to the checkpoint's last_message_id, retiring later checkpoints
  // by `name`. not_found: no checkpoint of that name in the session. bad_request: the
  // checkpoint was retired by an earlier rollback ("was undone by the rollback to ...").
  virtual caf::expected<std::vector<message>>
  rollback_to_checkpoint(const std::string& session_id, const std::string& name) = 0;
  // In one transaction on an open session: every row with id > mark becomes rolled
  // back, every row a summary above the mark archived becomes live again, checkpoints
  // above the mark are retired by `label` (a rollback to one of them is then
  // bad_request until the name is created again). Returns the live context.
  // bad_request: mark < 0.
  virtual caf::expected<std::vector<message>>
  rollback_after_row(const std::string& session_id, int64_t mark, const std::string& label) = 0;

  // --- the compaction log (store/compaction_log.hpp). A committed compaction writes
  // its row through commit_compaction / continue_in_child (compaction_commit::log; a
  // child continuation's row belongs to the child, where its summary is).
  // An attempt that committed nothing (grew, failed, refused), in a transaction of
  // its own; the row's id. bad_request: check_compaction_log(e, false). not_found:
  // e.session_id names no session (an ended one is accepted: its last attempt may
  // end after it).
  virtual caf::expected<int64_t> log_compaction_attempt(const compaction_log_entry& e) = 0;
  // The newest `limit` rows of the session, oldest first (id order).
  // bad_request: limit outside 1..compaction_log_max_rows.
  virtual caf::expected<std::vector<compaction_log_entry>>
  compaction_log(const std::string& session_id, int64_t limit) = 0;

  // --- reads; not_found for an unknown session
  // The session's record with its trigger state (ended sessions too).
  virtual caf::expected<session_record> session(const std::string& session_id) = 0;
  // Sessions matching `filter`, newest first (started_at_ms, then id, descending).
  // bad_request: limit outside 1..100000.
  virtual caf::expected<std::vector<session_record>> sessions(const session_filter& filter) = 0;
  // Row counts by state and sizes.
  virtual caf::expected<session_stats> stats(const std::string& session_id) = 0;
  virtual caf::expected<trigger_state> triggers(const std::string& session_id) = 0;
  // The live rows in live order (position, then id: a summary sits where the first
  // row it archived was).
  virtual caf::expected<std::vector<message>> live_context(const std::string& session_id) = 0;
  // Every row with first_id <= id <= last_id, any state, in id order; the first `limit`
  // of them (a page: the rest of the range is not read).
  // bad_request: not 0 < first_id <= last_id, or limit < 1.
  virtual caf::expected<std::vector<message>> range(const std::string& session_id,
                                                    int64_t first_id, int64_t last_id,
                                                    int64_t limit = range_unlimited) = 0;
  // Idempotent writes (docs/api.md "Idempotency-Key"): the newest row stored with
  // `idempotency_key` in a session under `session_key` (the stored key, any of the key's
  // sessions) whose timestamp_ms >= since_ms, then the rows of its session after it in
  // id order, any state; at most `limit` rows in all. Empty when no row holds the key.
  // bad_request: an empty idempotency_key, or limit < 1.
  virtual caf::expected<std::vector<message>>
  idempotent_rows(const std::string& session_key, const std::string& idempotency_key,
                  time_ms since_ms, int64_t limit) = 0;
  // Oldest first.
  virtual caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) = 0;
  // Every row of the session as JSONL (store/jsonl_export.hpp); the number of lines.
  // storage_failed when `out` fails.
  virtual caf::expected<int64_t> export_jsonl(const std::string& session_id,
                                              std::ostream& out) = 0;

  // --- memory tiers and agent tools; the semantics and refusals are those of
  // store/facts.hpp, store/session_tools.hpp and store/jsonl_import.hpp
  virtual caf::expected<fact_record> put_fact(const fact_record& f, time_ms now) = 0;
  virtual caf::expected<fact_record> remove_fact(const std::string& user_id,
                                                 const std::string& key, time_ms now) = 0;
  virtual caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) = 0;
  // The versions among `ids` that belong to `user_id` (any state), in the order of `ids`;
  // an id of another user or of no fact is left out. What the vector leg of a fact
  // search (store/fact_vectors.hpp) reads its hits with.
  virtual caf::expected<std::vector<fact_record>>
  facts_by_id(const std::string& user_id, const std::vector<int64_t>& ids) = 0;
  virtual caf::error put_session_tools(const std::string& session_key,
                                       const std::string& session_id, const std::string& tools,
                                       time_ms now) = 0;
  // The newest tools of the key; "" when none were set.
  virtual caf::expected<std::string> session_tools(const std::string& session_key) = 0;
  // The Responses door's records (store/response_records.hpp states each contract).
  virtual caf::error put_response(const response_record& r) = 0;
  virtual caf::expected<response_record> response(const std::string& id) = 0;
  virtual caf::expected<response_record> delete_response(const std::string& id, time_ms now) = 0;
  // One transaction; the new session's record.
  virtual caf::expected<session_record> import_jsonl(std::string_view jsonl, session_record into,
                                                     time_ms now) = 0;

  // --- semantic recall (issue 48): stored vectors and the embedder's watermarks; the
  // contract of each is in store/embeddings.hpp
  virtual caf::expected<embed_candidates> rows_to_embed(int32_t source, int64_t after_id,
                                                        int64_t limit) = 0;
  virtual caf::error store_vectors(const embed_write& w) = 0;
  virtual caf::expected<embed_progress> embed_progress_of(const std::string& model,
                                                          int32_t dims) = 0;
  virtual caf::expected<std::vector<stored_vector>>
  stored_vectors(const std::string& model, int32_t dims, int32_t source, int64_t after_id,
                 int64_t limit) = 0;

  // --- node mode (PostgreSQL only: the configuration refuses gateway.node_id on
  // another backend, which ignores this): the lease token this node holds on a
  // session key (0: none); see store/pg/pg_store.hpp.
  virtual void set_fence(const std::string& session_key, int64_t token) {
    (void)session_key;
    (void)token;
  }
};

// The read side used by the recall readers (actors/recall): one search on a
// connection of its own (SPEC §4; store/recall.hpp for what every backend shares).
// With the process's vector index attached, a search may run the vector leg
// (store/vector_recall.hpp); without it every search is full text.
class recall_source {
public:
  virtual ~recall_source() = default;
  virtual caf::expected<recall_result> search(const recall_request& req) = 0;
  void use_vectors(std::shared_ptr<const vector_index> index) { vectors_ = std::move(index); }

protected:
  std::shared_ptr<const vector_index> vectors_;
};

} // namespace mneme
