// The PostgreSQL backend of store/message_store.hpp (issue 26, stages 1 to 3), whose
// contracts every operation keeps: one connection owned by the storage actor's thread
// (libpqxx blocks).
//
// Operations: sessions (create, end, list, load, stats, trigger state), appends
// (single, batch, group commit: many appends in one transaction, each checked as it
// arrives, a batch all or nothing, and every row of the group sent in one statement
// at its commit: pg_group_rows.hpp), live context, range, the atomic compaction commit,
// row replacement, child continuation, reset, checkpoints and rollback (flag flips in
// message_state only: the schema refuses any UPDATE of a message row), JSONL export.
// Each message's recall columns are filled behind the appends by the store's indexer
// (maintenance(): store/pg/pg_indexer.hpp), which the storage actor drives when idle.
// Session tools (schema v2). Facts (schema v4, store/pg/pg_facts.hpp) and JSONL import
// (store/pg/pg_jsonl_import.hpp). Recall search is the recall readers' own
// connection's (store/pg/pg_recall.hpp).
//
// Durability: the connection sets synchronous_commit = on, so an operation that
// returned has its COMMIT flushed to the server's WAL.
// The database URL comes from store_params::url, or the first line of url_file.
// Thread: the owner (the storage actor, detached); not thread-safe. Copy deleted.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "store/message_store.hpp"
#include "store/pg/pg_group_rows.hpp"
#include "store/session_ids.hpp"

#include <pqxx/connection>
#include <pqxx/dbtransaction>

namespace mneme {

class pg_maintenance;

// The URL of params: `url`, or the first line of `url_file` (errc::config_invalid
// naming the key when neither or both are set, or the file cannot be read).
caf::expected<std::string> pg_database_url(const store_params& params);

// A new connection to the URL of params (errors of pg_database_url; the failure to
// connect as pg_failure with `what`, never repeating the URL).
caf::expected<std::unique_ptr<pqxx::connection>> pg_connect(const store_params& params,
                                                            const std::string& what);


inline constexpr const char* pg_writer_lock_wait = "5s";

class pg_store final : public message_store {
public:
  // Connects, migrates (store/pg/pg_schema.hpp) and prepares the statements.
  // Errors: storage_cant_open when the server cannot be reached; the errors of
  // pg_apply_migrations; config_invalid for a missing URL.
  static caf::expected<std::unique_ptr<pg_store>> open(const store_params& params);
  ~pg_store() override;
  pg_store(const pg_store&) = delete;
  pg_store& operator=(const pg_store&) = delete;

  const char* backend_name() const override { return "postgres"; }
  // The recall indexer (pg_indexer.hpp).
  store_maintenance* maintenance() override;
  const store_params& params() const override { return params_; }

  caf::expected<session_record> create_session(session_record rec, time_ms now) override;
  caf::expected<session_record> end_session(const std::string& session_id, time_ms now,
                                            const std::string& reason) override;
  caf::error save_triggers(const std::string& session_id, const trigger_state& t) override;

  caf::expected<int64_t> append(const message& m) override;
  caf::expected<message_ids> append_batch(const std::vector<message>& batch) override;

  caf::error begin_group() override;
  void expect_group_rows(int64_t rows) override;
  caf::expected<int64_t> insert_in_group(const message& m) override;
  caf::expected<message_ids> insert_batch_in_group(const std::vector<message>& batch) override;
  caf::error commit_group() override;
  void abort_group() override;
  bool group_open() const override;

  caf::expected<message> commit_compaction(const compaction_commit& c) override;
  caf::expected<std::vector<message>> commit_replacement(const replacement_commit& c) override;
  caf::expected<std::vector<message>> continue_in_child(const compaction_commit& c,
                                                        time_ms now) override;
  caf::expected<session_record> reset_session(const std::string& session_id, int head_count,
                                              time_ms now, const std::string& reason,
                                              int64_t max_row_tokens = 0) override;
  caf::expected<checkpoint_record> create_checkpoint(const std::string& session_id,
                                                     const std::string& name,
                                                     time_ms now) override;
  caf::expected<std::vector<message>> rollback_to_checkpoint(const std::string& session_id,
                                                             const std::string& name) override;
  caf::expected<std::vector<message>> rollback_after_row(const std::string& session_id,
                                                         int64_t mark,
                                                         const std::string& label) override;

  caf::expected<session_record> session(const std::string& session_id) override;
  caf::expected<std::vector<session_record>> sessions(const session_filter& filter) override;
  caf::expected<session_stats> stats(const std::string& session_id) override;
  caf::expected<trigger_state> triggers(const std::string& session_id) override;
  caf::expected<std::vector<message>> live_context(const std::string& session_id) override;
  caf::expected<std::vector<message>> range(const std::string& session_id, int64_t first_id,
                                            int64_t last_id,
                                            int64_t limit = range_unlimited) override;
  caf::expected<std::vector<message>>
  idempotent_rows(const std::string& session_key, const std::string& idempotency_key,
                  time_ms since_ms, int64_t limit) override;
  caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) override;
  caf::expected<int64_t> export_jsonl(const std::string& session_id, std::ostream& out) override;

  caf::expected<fact_record> put_fact(const fact_record& f, time_ms now) override;
  caf::expected<fact_record> remove_fact(const std::string& user_id, const std::string& key,
                                         time_ms now) override;
  caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) override;
  caf::expected<std::vector<fact_record>> facts_by_id(const std::string& user_id,
                                                      const std::vector<int64_t>& ids) override;
  caf::expected<embed_candidates> rows_to_embed(int32_t source, int64_t after_id,
                                                int64_t limit) override;
  caf::error store_vectors(const embed_write& w) override;
  caf::expected<embed_progress> embed_progress_of(const std::string& model,
                                                  int32_t dims) override;
  caf::expected<std::vector<stored_vector>> stored_vectors(const std::string& model,
                                                           int32_t dims, int32_t source,
                                                           int64_t after_id,
                                                           int64_t limit) override;
  caf::expected<int64_t> log_compaction_attempt(const compaction_log_entry& e) override;
  caf::expected<std::vector<compaction_log_entry>>
  compaction_log(const std::string& session_id, int64_t limit) override;
  caf::error put_session_tools(const std::string& session_key, const std::string& session_id,
                               const std::string& tools, time_ms now) override;
  caf::expected<std::string> session_tools(const std::string& session_key) override;
  caf::error put_response(const response_record& r) override;
  caf::expected<response_record> response(const std::string& id) override;
  caf::expected<response_record> delete_response(const std::string& id, time_ms now) override;
  caf::expected<session_record> import_jsonl(std::string_view jsonl, session_record into,
                                             time_ms now) override;

  // Makes this store the only writer of its database (its schema) for the life of
  // its connection: a session-level advisory lock, waited for up to
  // pg_writer_lock_wait (a killed writer's server process lets go within it).
  // Errors: storage_locked naming the cause when another writer holds it. The
  // storage actor takes it (a daemon, `mneme compact`); the CLI's facts writes do
  // not need it. Until node leases (issue 26, item 4) this is what keeps one daemon
  // per database. libpqxx reconnects a broken connection on its own (the server
  // restarted, or ended this backend) and the lock dies with the old backend: every
  // write then checks that its connection still holds it (keep_writer_lock) and
  // takes it again, or is refused with storage_locked when another writer took the
  // database meanwhile.
  caf::error lock_as_only_writer();

  // --- node mode (issue 26 item 4, store/pg/pg_leases.hpp)
  // With a node id, every write of a session first checks inside its own transaction
  // that the session's key is leased to this node under the token registered with
  // set_fence, share-locking the lease row until the commit (so no node takes the key
  // over between the check and the commit), and stamps that token on every message
  // it inserts (messages.fence_token). A write without that lease is refused with
  // errc::lease_lost and writes nothing. Facts are per user, not per key: not fenced.
  // Without a node id (one daemon per database, lock_as_only_writer) nothing is
  // checked and rows carry no token.
  // A transaction left idle for `idle_limit` (a paused node) is ended by the server.
  void set_node(std::string node_id, std::chrono::milliseconds idle_limit);
  // Registers the lease this node holds on `session_key` (token > 0), or drops it (0).
  void set_fence(const std::string& session_key, int64_t token) override;

  // Test seam: the connection (assertions on the tables).
  pqxx::connection& connection() { return *conn_; }

private:
  // The primitives of the session commits (store/session_writer.hpp), in
  // pg_store_commits.cpp.
  friend class pg_session_writer;
  // The indexer writes on this connection, between groups, under the same writer lock.
  friend class pg_maintenance;

  pg_store(store_params params, std::unique_ptr<pqxx::connection> conn);

  enum class access { read, write };
  // Inside `t`: not_found / bad_request unless the session exists and is open.
  // A group remembers the sessions it found open (as sqlite_store does), and the store
  // the sessions it created. A write in node mode also holds the session's lease
  // (fence_session).
  caf::error require_open(pqxx::transaction_base& t, const std::string& session_id,
                          bool remember, access a = access::write);
  // Records `session_id` as open (bounded: the set is emptied when full).
  void remember_open(const std::string& session_id);
  // Node mode: lease_lost unless the key of `session_id` (or `session_key`) is leased
  // to this node under its registered token; the row stays share-locked until `t`
  // ends, and the token is remembered for the rows `t` inserts. Outside node mode they
  // only keep the writer lock (keep_writer_lock).
  caf::error fence_session(pqxx::transaction_base& t, const std::string& session_id);
  caf::expected<int64_t> fence_key(pqxx::transaction_base& t, const std::string& session_key);
  // Outside node mode, after lock_as_only_writer: {} when this connection's backend
  // holds the writer lock (taken again here, without waiting, after a reconnect);
  // storage_locked when another writer holds it. No-op when the lock was never taken.
  caf::error keep_writer_lock(pqxx::transaction_base& t);
  // The token the rows of `session_id` are written under in this transaction (0: none).
  int64_t fence_token_of(const std::string& session_id) const;
  // The next `n` reserved ids of the group, reserving more (at least the rows still
  // expected) when too few are left.
  std::vector<int64_t> take_group_ids(int64_t n);
  // Validates and inserts one message of an open session inside `t`; position 0
  // means "= id".
  caf::expected<int64_t> insert_message(pqxx::transaction_base& t, const message& m,
                                        int64_t position, bool remember);
  caf::error write_triggers(pqxx::transaction_base& t, const std::string& session_id,
                            const trigger_state& t_state);
  // After the group's COMMIT was cut in flight (its outcome unknown): whether a row the
  // group inserted is there, read on a new connection (rows are never deleted, and a
  // transaction commits all or nothing). {} when it committed; storage_cant_open when
  // it did not (the caller may run the group again), or the error of the check.
  caf::error settle_interrupted_commit();

  store_params params_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<pqxx::dbtransaction> group_;
  bool group_broken_ = false; // a statement of the group failed: the group is lost
  int64_t group_last_id_ = 0; // the last row the group inserted and kept (0: none)
  std::unordered_set<std::string> open_sessions_;
  session_id_generator ids_;
  int writer_lock_backend_ = 0; // the server process holding the writer lock; 0: not taken
  std::string node_id_;                                // empty: not in node mode
  std::unordered_map<std::string, int64_t> fences_;    // session key -> lease token
  // Sessions fenced in the current transaction (a group: since begin_group) -> token.
  std::unordered_map<std::string, int64_t> fenced_now_;
  std::unique_ptr<pg_maintenance> maintenance_;
  // The group's rows, sent in one statement by commit_group (pg_group_rows.hpp), the
  // ids reserved for it and not used yet, and the rows still expected (the hint).
  pg::group_rows group_rows_;
  std::deque<int64_t> reserved_ids_;
  int64_t expected_rows_ = 0;
};

} // namespace mneme
