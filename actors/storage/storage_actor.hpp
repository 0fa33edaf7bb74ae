// The storage actor: the only writer of the mneme database (SPEC §1, §10). It runs
// detached (its own thread: SQLite and libpqxx block) and owns one message_store
// (store/message_store.hpp: SQLite, or PostgreSQL from store/pg).
//
// Group commit policy: an append is buffered and a flush message is queued behind
// it; when the flush is processed, every append buffered since the last commit goes
// into one transaction. A buffer reaching store_params::max_batch rows is committed
// at once. So under load a commit holds whatever arrived during the previous
// commit (up to max_batch rows); when idle an append commits alone, immediately.
// A batch append (vector) is atomic: it is never split, so one larger than
// max_batch commits on its own. Each append is answered only after COMMIT returned,
// i.e. after the WAL was synced (PRAGMA synchronous=FULL by default).
// A request that fails validation (unknown or ended session, bad role, flags,
// oversized content) is answered with its error and leaves the rest of the group
// intact; a failure of the transaction itself (disk full, I/O) answers every
// request of the group with that error and nothing of the group is kept.
//
// On SQLite, full-text indexing is not part of an append (schema v5; PostgreSQL
// writes its recall columns in the append's transaction): after a commit, the
// flush message doubles as the idle tick. When the mailbox is empty, one paced tick
// (policies/index_pacing.hpp, store/sqlite/fts_indexer.hpp) fills the index furthest
// behind with a run of rows and stops after any row when a request arrives; a large row waits for a quiet writer (or a
// bounded time, then a timer brings the tick back); another tick is queued while a
// backlog remains, so any request that arrived meanwhile is handled first. The
// backlog (rows missing from at least one index) is storage_metrics::unindexed_rows; the actor indexes everything left
// when it terminates cleanly, and a backlog found at open is indexed in ticks.
// Appends come first on a nearly full disk (policies/index_space): no tick runs while
// the database's filesystem has less free space than
// store_params::index_free_space_reserve_bytes, a tick takes no more text than the
// space above it holds, and a transaction the disk refused halves the next ones' cap
// and has the log file cut back (a TRUNCATE checkpoint).
// The write-ahead log is copied back into the file by a second connection on its
// own thread (actors/storage/wal_checkpointer, policies/wal_checkpoint), so a commit
// never waits for a checkpoint; past a bound, or for an in-memory file, the writer
// checkpoints itself after its commit, as SQLite would.
// Every other operation first commits the buffered appends (so it sees them), then
// runs in its own transaction. The actor never dies on a bad request: errors come
// back as mneme::errc values; a thrown exception becomes errc::internal.
//
// Thread: handlers run on the actor's own thread; talk to it only by messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "caf/fwd.hpp"
#include "caf/typed_actor.hpp"
#include "caf/replies_to.hpp"

#include "actors/storage/index_space_gate.hpp" // free_space_probe
#include "actors/storage/storage_metrics.hpp"
#include "messages/mneme_types.hpp"
#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

using storage_actor = caf::typed_actor<
  // Appends: the assigned id / the ids in batch order.
  caf::replies_to<st_append_atom, message>::with<int64_t>,
  caf::replies_to<st_append_atom, std::vector<message>>::with<message_ids>,
  // Asks for a flush/index tick (the indexer's timer sends it; anyone may): it
  // only makes sure one tick is queued.
  caf::reacts_to<st_flush_atom>,
  // Internal: the tick itself (commit the buffered appends, then index one batch
  // when idle). The actor queues one only when none is queued, so there is never
  // more than one live tick and ticks cannot keep re-queueing each other; the
  // number makes it ignore a tick message it did not queue itself.
  caf::reacts_to<st_flush_atom, int64_t>,
  // Reads: live context; rows of a session in [first_id, last_id], any state (with a
  // fourth number: the first `limit` of them, message_store::range).
  caf::replies_to<st_live_atom, std::string>::with<std::vector<message>>,
  caf::replies_to<st_range_atom, std::string, int64_t, int64_t>::with<std::vector<message>>,
  caf::replies_to<st_range_atom, std::string, int64_t, int64_t, int64_t>::with<
    std::vector<message>>,
  // Idempotent writes (session key, idempotency key, since_ms, limit):
  // message_store::idempotent_rows.
  caf::replies_to<st_idem_atom, std::string, std::string, int64_t,
                  int64_t>::with<std::vector<message>>,
  // Compaction commit: the stored summary row (with its id).
  caf::replies_to<st_compact_atom, compaction_commit>::with<message>,
  // Row replacements (pruning, eviction, micro-compaction): the inserted rows.
  caf::replies_to<st_replace_atom, replacement_commit>::with<std::vector<message>>,
  // Sessions: create (record, now), load, list, stats, end (id, now, reason).
  caf::replies_to<st_new_session_atom, session_record, int64_t>::with<session_record>,
  caf::replies_to<st_session_atom, std::string>::with<session_record>,
  caf::replies_to<st_list_atom, session_filter>::with<std::vector<session_record>>,
  caf::replies_to<st_stats_atom, std::string>::with<session_stats>,
  caf::replies_to<st_end_atom, std::string, int64_t, std::string>::with<session_record>,
  // Reset (old id, head_count, now, reason): the new session.
  caf::replies_to<st_reset_atom, std::string, int32_t, int64_t, std::string>::with<session_record>,
  // The same with max_row_tokens: no row above it is copied (0 = no limit).
  caf::replies_to<st_reset_atom, std::string, int32_t, int64_t, std::string,
                  int64_t>::with<session_record>,
  // Compaction with in_place: false (compaction, now): the parent ends, the child's
  // live context (head + summary + tail; message_store::continue_in_child).
  caf::replies_to<st_child_atom, compaction_commit, int64_t>::with<std::vector<message>>,
  // Checkpoints: create (session, name, now), list, roll back (session, name).
  caf::replies_to<st_checkpoint_atom, std::string, std::string, int64_t>::with<checkpoint_record>,
  caf::replies_to<st_checkpoints_atom, std::string>::with<std::vector<checkpoint_record>>,
  caf::replies_to<st_rollback_atom, std::string, std::string>::with<std::vector<message>>,
  // Roll back every row after a row id (session, last kept id, label for the retired
  // checkpoints): message_store::rollback_after_row.
  caf::replies_to<st_rollback_atom, std::string, int64_t, std::string>::with<std::vector<message>>,
  // Trigger state (SPEC §5).
  caf::replies_to<st_put_triggers_atom, std::string, trigger_state>::with<caf::ok_atom>,
  caf::replies_to<st_get_triggers_atom, std::string>::with<trigger_state>,
  // Tools of agent turns per session key (store/session_tools.hpp): set (key, session
  // id, tools JSON, now), get (key) -> the newest tools JSON, "" when none.
  caf::replies_to<st_tools_put_atom, std::string, std::string, std::string,
                  int64_t>::with<caf::ok_atom>,
  caf::replies_to<st_tools_get_atom, std::string>::with<std::string>,
  // The compaction log (store/compaction_log.hpp): an attempt that committed nothing
  // -> its row id; the newest rows of a session (session, limit), oldest first. A
  // committed compaction logs through st_compact / st_child (compaction_commit::log).
  caf::replies_to<st_clog_put_atom, compaction_log_entry>::with<int64_t>,
  caf::replies_to<st_clog_atom, std::string, int64_t>::with<std::vector<compaction_log_entry>>,
  // The Responses door's records (store/response_records.hpp): put (record) -> ok,
  // get (id), delete (id, now) -> the record after it.
  caf::replies_to<st_resp_put_atom, response_record>::with<caf::ok_atom>,
  caf::replies_to<st_resp_get_atom, std::string>::with<response_record>,
  caf::replies_to<st_resp_del_atom, std::string, int64_t>::with<response_record>,
  // JSONL of every row of a session (see store/jsonl_export.hpp).
  caf::replies_to<st_export_atom, std::string>::with<std::string>,
  // Memory tiers (SPEC §7): facts put (user_id, key, value, source_session; now) ->
  // the active version; remove (user, key, now) -> the tombstone; list/search
  // (store/facts.hpp). Import (jsonl, target session, now) -> the new session
  // (store/jsonl_import.hpp). An ended session's JSONL goes to cold storage after
  // st_end / st_reset commit (actors/storage/storage_cold.hpp).
  caf::replies_to<st_fact_put_atom, fact_record, int64_t>::with<fact_record>,
  caf::replies_to<st_fact_del_atom, std::string, std::string, int64_t>::with<fact_record>,
  caf::replies_to<st_facts_atom, fact_query>::with<std::vector<fact_record>>,
  caf::replies_to<st_import_atom, std::string, session_record, int64_t>::with<session_record>,
  // Semantic recall (issue 48; store/embeddings.hpp): rows above a watermark (source,
  // after id, limit); a batch of vectors with its watermark, one transaction -> the
  // watermark; a model's progress (model, dims); stored vectors, paged (model, dims,
  // source, after id, limit). Only the embedder (actors/embed) and the runtime's start.
  caf::replies_to<st_emrows_atom, int32_t, int64_t, int64_t>::with<embed_candidates>,
  caf::replies_to<st_emput_atom, embed_write>::with<int64_t>,
  caf::replies_to<st_emstate_atom, std::string, int32_t>::with<embed_progress>,
  caf::replies_to<st_emload_atom, std::string, int32_t, int32_t, int64_t,
                  int64_t>::with<std::vector<stored_vector>>,
  // Node mode (PostgreSQL, gateway.node_id): registers the lease token this node holds
  // on a session key (key, token), or drops it (token 0); writes of that key's sessions
  // are fenced by it (store/pg/pg_store.hpp). The gateway sends it before the key's
  // session actor exists, so it is queued ahead of that actor's writes.
  caf::reacts_to<st_fence_atom, std::string, int64_t>>;

// Opens the writer store of `params.backend` on the calling thread
// (store/open_store.hpp open_writer_store: a bad file, an unreachable server or another
// writer fails here, with its errc) and spawns the detached storage actor owning it. Keep the handle: an actor that
// nobody references terminates. `metrics` may be null; `log` may be null (no logs).
caf::expected<storage_actor> spawn_storage(caf::actor_system& sys, const store_params& params,
                                           std::shared_ptr<spdlog::logger> log,
                                           std::shared_ptr<storage_metrics> metrics = nullptr,
                                           free_space_probe free_space = {});

// The same over an opened store of any backend (store/message_store.hpp). A store
// with a log to copy back (store/store_maintenance.hpp) spawned this way lets the
// backend checkpoint it on its own (no checkpointer).
caf::expected<storage_actor> spawn_storage(caf::actor_system& sys,
                                           std::shared_ptr<message_store> store,
                                           std::shared_ptr<spdlog::logger> log,
                                           std::shared_ptr<storage_metrics> metrics = nullptr,
                                           free_space_probe free_space = {});

} // namespace mneme
