// The PostgreSQL store: opening, sessions, appends, group commits and reads; see
// pg_store.hpp. The session commits (compaction, replacement, child continuation,
// reset, checkpoints, rollback, the end of a session) are in pg_store_commits.cpp.
#include "store/pg/pg_store.hpp"

#include <algorithm>
#include <fstream>

#include <pqxx/pqxx>

#include "store/jsonl_export.hpp"
#include "store/pg/pg_error.hpp"
#include "store/pg/pg_embeddings.hpp"
#include "store/pg/pg_facts.hpp"
#include "store/pg/pg_indexer.hpp"
#include "store/pg/pg_responses.hpp"
#include "store/pg/pg_jsonl_import.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/range_checks.hpp"
#include "store/row_codec.hpp"
#include "store/session_checks.hpp"
#include "store/session_tools.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

constexpr size_t pg_max_open_sessions_remembered = 65536;

// The key of the writer lock (lock_as_only_writer): one per schema, as each schema holds
// one mneme database.
#define MNEME_PG_WRITER_LOCK_KEY "hashtextextended('mneme-writer/' || current_schema(), 0)"

// The prepared statements (names are the keys libpqxx knows them by).
constexpr const char* pg_statements[][2] = {
  {"session_open", "SELECT ended_at_ms FROM sessions WHERE id = $1"},
  {"session_load", "SELECT " MNEME_PG_SESSION_COLUMNS " FROM sessions WHERE id = $1"},
  {"session_insert",
   "INSERT INTO sessions(id, user_id, session_key, parent_id, model, started_at_ms,"
   " ended_at_ms, end_reason) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
   " ON CONFLICT (id) DO NOTHING"},
  {"session_end", "UPDATE sessions SET ended_at_ms = $2, end_reason = $3 WHERE id = $1"},
  {"session_triggers",
   "UPDATE sessions SET cooldown_until_ms = $2, cooldown_reason = $3,"
   " anti_thrash_strikes = $4, lock_until_ms = $5, probe_pending = $6,"
   " fallback_streak = $7, compaction_count = $8, last_prompt_tokens = $9 WHERE id = $1"},
  // One statement inserts the message and its live state row (position NULL = id);
  // the recall columns stay NULL for the indexer (store/pg/pg_indexer.hpp).
  {"message_insert",
   "WITH m AS (INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls,"
   " tool_name, timestamp_ms, token_estimate, is_summary, replaced_first_id,"
   " replaced_last_id, fence_token, idempotency_key)"
   " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULLIF($13::bigint, 0), $14)"
   " RETURNING id, session_id)"
   " INSERT INTO message_state(id, session_id, position)"
   " SELECT id, session_id, NULLIF($12::bigint, 0) FROM m RETURNING id"},
  {"live_ids",
   "SELECT id, coalesce(position, id) AS pos FROM message_state"
   " WHERE session_id = $1 AND active = 1 ORDER BY pos, id"},
  // $1: the archived ids, $2: the row that absorbed each (same length), as arrays:
  // one statement per commit, whatever the number of rows archived.
  {"archive_rows",
   "UPDATE message_state s SET active = 0, compacted = 1, archived_by = a.by"
   " FROM unnest($1::bigint[], $2::bigint[]) AS a(id, by)"
   " WHERE s.id = a.id AND s.active = 1"},
  {"live_context",
   "SELECT " MNEME_PG_MESSAGE_COLUMNS " FROM message_rows WHERE session_id = $1 AND active = 1"
   " ORDER BY position, id"},
  {"range",
   "SELECT " MNEME_PG_MESSAGE_COLUMNS " FROM message_rows"
   " WHERE session_id = $1 AND id BETWEEN $2 AND $3"
   " ORDER BY id LIMIT $4"},
  // Idempotent writes: the newest keyed row of the key's sessions within the window,
  // then its session's rows from it on ($4 rows at most).
  {"idempotent_rows",
   "WITH k AS (SELECT m.id, m.session_id FROM messages m JOIN sessions s ON s.id = m.session_id"
   " WHERE m.idempotency_key = $2 AND m.idempotency_key <> '' AND s.session_key = $1"
   " AND m.timestamp_ms >= $3 ORDER BY m.id DESC LIMIT 1)"
   " SELECT " MNEME_PG_MESSAGE_COLUMNS " FROM message_rows"
   " WHERE session_id = (SELECT session_id FROM k) AND id >= (SELECT id FROM k)"
   " ORDER BY id LIMIT $4"},
  {"export",
   "SELECT " MNEME_PG_MESSAGE_COLUMNS " FROM message_rows WHERE session_id = $1 ORDER BY id"},
  {"stats",
   "SELECT coalesce(sum((s.active = 1)::int), 0), coalesce(sum((s.compacted = 1)::int), 0),"
   " coalesce(sum((s.active = 0 AND s.compacted = 0)::int), 0),"
   " coalesce(sum(m.is_summary), 0),"
   " coalesce(sum(CASE WHEN s.active = 1 THEN m.token_estimate ELSE 0 END), 0),"
   " coalesce(sum(octet_length(m.content)), 0), coalesce(min(m.id), 0),"
   " coalesce(max(m.id), 0)"
   " FROM messages m JOIN message_state s ON s.id = m.id WHERE s.session_id = $1"},
  {"checkpoints",
   "SELECT session_id, name, last_message_id, created_at_ms FROM checkpoints"
   " WHERE session_id = $1 ORDER BY last_message_id, created_at_ms, name"},
};

} // namespace

caf::expected<std::string> pg_database_url(const store_params& params) {
  if (!params.url.empty() && !params.url_file.empty())
    return caf::make_error(errc::config_invalid,
                           "database.url and database.url_file are both set; keep one");
  if (!params.url.empty())
    return params.url;
  if (params.url_file.empty())
    return caf::make_error(errc::config_invalid,
                           "database.backend postgres needs database.url or database.url_file");
  std::ifstream in{params.url_file};
  std::string line;
  if (!in || !std::getline(in, line))
    return caf::make_error(errc::config_invalid,
                           "database.url_file: cannot read " + params.url_file);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  if (line.empty())
    return caf::make_error(errc::config_invalid,
                           "database.url_file: " + params.url_file + " holds no URL");
  return line;
}

caf::expected<std::unique_ptr<pqxx::connection>> pg_connect(const store_params& params,
                                                            const std::string& what) {
  auto url = pg_database_url(params);
  if (!url)
    return std::move(url.error());
  try {
    return std::make_unique<pqxx::connection>(*url);
  } catch (const std::exception& e) {
    // The message names host and port but never the password.
    return pg_failure(e, what);
  }
}

pg_store::pg_store(store_params params, std::unique_ptr<pqxx::connection> conn)
  : params_(std::move(params)), conn_(std::move(conn)),
    maintenance_(std::make_unique<pg_maintenance>(*this)) {}

store_maintenance* pg_store::maintenance() {
  return maintenance_.get();
}

pg_store::~pg_store() {
  group_.reset(); // an open group rolls back before the connection closes
}

caf::expected<std::unique_ptr<pg_store>> pg_store::open(const store_params& params) {
  if (params.max_batch < 1)
    return bad_request("store: max_batch must be >= 1");
  if (params.max_content_bytes < 1)
    return bad_request("store: max_content_bytes must be >= 1");
  auto connected = pg_connect(params, "connect");
  if (!connected)
    return std::move(connected.error());
  auto conn = std::move(*connected);
  return pg::guarded("open", [&]() -> caf::expected<std::unique_ptr<pg_store>> {
    // An acknowledged write is in the server's WAL on disk (SPEC §1).
    // (set_variable: libpqxx sets it again after reconnecting.)
    conn->set_variable("synchronous_commit", "on");
    // Long text (content, search_text) compresses with lz4, several times cheaper than
    // the default pglz on the append path; a server built without lz4 keeps pglz.
    try {
      conn->set_variable("default_toast_compression", "lz4");
    } catch (const pqxx::sql_error&) {
    }
    if (auto err = pg_apply_migrations(*conn))
      return err;
    for (const auto& s : pg_statements)
      conn->prepare(s[0], s[1]);
    return std::unique_ptr<pg_store>{new pg_store(params, std::move(conn))};
  });
}

caf::error pg_store::lock_as_only_writer() {
  return pg::guarded("take the writer lock", [&]() -> caf::error {
    pqxx::nontransaction t{*conn_};
    t.exec0(std::string{"SET lock_timeout = '"} + pg_writer_lock_wait + "'");
    try {
      t.exec("SELECT pg_advisory_lock(" MNEME_PG_WRITER_LOCK_KEY ")");
    } catch (const pqxx::sql_error& e) {
      if (e.sqlstate() != "55P03") // lock_not_available
        throw;
      t.exec0("RESET lock_timeout");
      return caf::make_error(errc::storage_locked,
                             "postgres: another mneme daemon (or `mneme compact`) is writing"
                             " to this database; one writer per database");
    }
    t.exec0("RESET lock_timeout");
    writer_lock_backend_ = conn_->backendpid();
    return {};
  });
}

caf::error pg_store::keep_writer_lock(pqxx::transaction_base& t) {
  if (writer_lock_backend_ == 0 || conn_->backendpid() == writer_lock_backend_)
    return {};
  // A session-level lock taken inside a transaction outlives its rollback.
  if (!t.exec1("SELECT pg_try_advisory_lock(" MNEME_PG_WRITER_LOCK_KEY ")")[0].as<bool>())
    return caf::make_error(errc::storage_locked,
                           "postgres: the connection to the server was re-established and"
                           " another mneme daemon (or `mneme compact`) took this database"
                           " meanwhile; nothing was written; one writer per database");
  writer_lock_backend_ = conn_->backendpid();
  return {};
}

// --- sessions

caf::expected<session_record> pg_store::create_session(session_record rec, time_ms now) {
  if (auto err = prepare_new_session(rec, now, ids_))
    return err;
  return pg::guarded("create session", [&]() -> caf::expected<session_record> {
    pqxx::work w{*conn_};
    if (!rec.parent_id.empty())
      if (auto err = pg::require_session(w, rec.parent_id))
        return err;
    auto token = fence_key(w, rec.session_key);
    if (!token)
      return std::move(token.error());
    if (!pg::insert_session(w, rec))
      return bad_request("create session: id '" + rec.id + "' already exists");
    w.commit();
    // Its first append then needs no lookup: a daemon's new sessions would each cost
    // the writer a round trip there, all at once when many start together.
    remember_open(rec.id);
    return rec;
  });
}

void pg_store::remember_open(const std::string& session_id) {
  if (open_sessions_.size() >= pg_max_open_sessions_remembered)
    open_sessions_.clear();
  open_sessions_.insert(session_id);
}

caf::error pg_store::require_open(pqxx::transaction_base& t, const std::string& session_id,
                                  bool remember, access a) {
  if (remember && open_sessions_.count(session_id) != 0) {
    if (a == access::write && fenced_now_.count(session_id) == 0)
      return fence_session(t, session_id);
    return {};
  }
  if (!valid_session_id(session_id))
    return not_found(pg::unknown_session(session_id));
  auto r = t.exec_prepared("session_open", session_id);
  if (r.empty())
    return not_found(pg::unknown_session(session_id));
  if (r[0][0].as<int64_t>() != 0)
    return bad_request("session '" + session_id + "' has ended");
  if (remember)
    remember_open(session_id);
  if (a != access::write)
    return {};
  // Outside a group every operation fences its sessions again: what was fenced before
  // belongs to an earlier transaction (and would grow without bound).
  if (!remember)
    fenced_now_.clear();
  return fence_session(t, session_id);
}

// --- node mode: fencing

void pg_store::set_node(std::string node_id, std::chrono::milliseconds idle_limit) {
  node_id_ = std::move(node_id);
  // libpqxx sets it again after a reconnect.
  conn_->set_variable("idle_in_transaction_session_timeout",
                      std::to_string(std::max<int64_t>(1, idle_limit.count())));
}

void pg_store::set_fence(const std::string& session_key, int64_t token) {
  if (token > 0)
    fences_[session_key] = token;
  else
    fences_.erase(session_key);
}

namespace {

caf::error lease_lost(const std::string& node, const std::string& what) {
  return caf::make_error(errc::lease_lost,
                         "node '" + node + "' no longer holds the lease of " + what
                           + "; nothing was written");
}

} // namespace

caf::error pg_store::fence_session(pqxx::transaction_base& t, const std::string& session_id) {
  if (node_id_.empty())
    return keep_writer_lock(t);
  auto r = t.exec_params("SELECT s.session_key, l.owner_node, l.token FROM sessions s"
                         " JOIN mneme_leases l ON l.session_key = s.session_key"
                         " WHERE s.id = $1 FOR SHARE OF l",
                         session_id);
  if (r.empty())
    return lease_lost(node_id_, "session '" + session_id + "'");
  auto key = pg::text_of(r[0][0]);
  auto mine = fences_.find(key);
  if (mine == fences_.end() || r[0][1].as<std::string>() != node_id_
      || r[0][2].as<int64_t>() != mine->second)
    return lease_lost(node_id_, "session '" + session_id + "'");
  fenced_now_[session_id] = mine->second;
  return {};
}

caf::expected<int64_t> pg_store::fence_key(pqxx::transaction_base& t,
                                           const std::string& session_key) {
  if (node_id_.empty()) {
    if (auto err = keep_writer_lock(t))
      return err;
    return int64_t{0};
  }
  auto r = t.exec_params("SELECT owner_node, token FROM mneme_leases WHERE session_key = $1"
                         " FOR SHARE",
                         pg::bytes(session_key));
  auto mine = fences_.find(session_key);
  if (r.empty() || mine == fences_.end() || r[0][0].as<std::string>() != node_id_
      || r[0][1].as<int64_t>() != mine->second)
    return lease_lost(node_id_, "its session key");
  return mine->second;
}

int64_t pg_store::fence_token_of(const std::string& session_id) const {
  auto i = fenced_now_.find(session_id);
  return i == fenced_now_.end() ? 0 : i->second;
}

caf::error pg_store::write_triggers(pqxx::transaction_base& w, const std::string& session_id,
                                    const trigger_state& t) {
  if (auto err = check_label(t.cooldown_reason, "cooldown_reason"))
    return err;
  if (!valid_session_id(session_id))
    return not_found(pg::unknown_session(session_id));
  auto r = w.exec_prepared("session_triggers", session_id, t.cooldown_until_ms,
                           pg::bytes(t.cooldown_reason), int64_t{t.anti_thrash_strikes},
                           t.lock_until_ms, int64_t{t.probe_pending ? 1 : 0},
                           int64_t{t.fallback_streak}, t.compaction_count, t.last_prompt_tokens);
  if (r.affected_rows() == 0)
    return not_found(pg::unknown_session(session_id));
  return {};
}

caf::error pg_store::save_triggers(const std::string& session_id, const trigger_state& t) {
  return pg::guarded("save trigger state", [&]() -> caf::error {
    pqxx::work w{*conn_};
    if (valid_session_id(session_id))
      if (auto err = fence_session(w, session_id))
        return err;
    if (auto err = write_triggers(w, session_id, t))
      return err;
    w.commit();
    return {};
  });
}

// --- appends

caf::expected<int64_t> pg_store::insert_message(pqxx::transaction_base& t, const message& m,
                                                int64_t position, bool remember) {
  if (auto err = validate_new_message(m, params_))
    return err;
  if (auto err = require_open(t, m.session_id, remember))
    return err;
  return pg::insert_message_row(t, m, position, fence_token_of(m.session_id));
}

caf::expected<int64_t> pg_store::append(const message& m) {
  return pg::guarded("append to session " + m.session_id, [&]() -> caf::expected<int64_t> {
    pqxx::work w{*conn_};
    auto id = insert_message(w, m, 0, false);
    if (id)
      w.commit();
    return id;
  });
}

caf::expected<message_ids> pg_store::append_batch(const std::vector<message>& batch) {
  return pg::guarded("append batch", [&]() -> caf::expected<message_ids> {
    pqxx::work w{*conn_};
    message_ids out;
    out.ids.reserve(batch.size());
    for (const auto& m : batch) {
      auto id = insert_message(w, m, 0, false);
      if (!id)
        return std::move(id.error());
      out.ids.push_back(*id);
    }
    w.commit();
    return out;
  });
}

// --- group commit

caf::error pg_store::begin_group() {
  return pg::guarded("begin group", [&]() -> caf::error {
    group_ = std::make_unique<pqxx::work>(*conn_, "group");
    group_broken_ = false;
    group_last_id_ = 0;
    group_rows_.clear();
    reserved_ids_.clear();
    expected_rows_ = 0;
    fenced_now_.clear(); // each group share-locks the leases it writes under
    return {};
  });
}

void pg_store::expect_group_rows(int64_t rows) {
  expected_rows_ = std::max<int64_t>(0, rows);
}

bool pg_store::group_open() const {
  return group_ != nullptr && !group_broken_;
}

std::vector<int64_t> pg_store::take_group_ids(int64_t n) {
  auto have = static_cast<int64_t>(reserved_ids_.size());
  if (have < n) {
    auto more = pg::reserve_message_ids(*group_, std::max(n, expected_rows_) - have);
    reserved_ids_.insert(reserved_ids_.end(), more.begin(), more.end());
  }
  std::vector<int64_t> ids(reserved_ids_.begin(), reserved_ids_.begin() + n);
  reserved_ids_.erase(reserved_ids_.begin(), reserved_ids_.begin() + n);
  expected_rows_ = std::max<int64_t>(0, expected_rows_ - n);
  return ids;
}

// A row of the group is checked (and its session fenced) when it arrives; its id is
// reserved then, and the row itself is sent with the others at commit_group.
caf::expected<int64_t> pg_store::insert_in_group(const message& m) {
  try {
    if (auto err = validate_new_message(m, params_))
      return err;
    if (auto err = require_open(*group_, m.session_id, true))
      return err;
    auto id = take_group_ids(1).front();
    group_rows_.add(id, m, 0, fence_token_of(m.session_id));
    group_last_id_ = id;
    return id;
  } catch (const std::exception& e) {
    group_broken_ = true; // PostgreSQL aborted the whole transaction
    return pg_failure(e, "append to session " + m.session_id);
  }
}

// Every row is checked before any joins the group, so a refused batch adds nothing (a
// lease it share-locked stays locked until the group ends, as fenced_now_ records).
caf::expected<message_ids> pg_store::insert_batch_in_group(const std::vector<message>& batch) {
  try {
    for (const auto& m : batch) {
      if (auto err = validate_new_message(m, params_))
        return err;
      if (auto err = require_open(*group_, m.session_id, true))
        return err;
    }
    message_ids out;
    out.ids = take_group_ids(static_cast<int64_t>(batch.size()));
    for (std::size_t i = 0; i < batch.size(); ++i)
      group_rows_.add(out.ids[i], batch[i], 0, fence_token_of(batch[i].session_id));
    if (!out.ids.empty())
      group_last_id_ = out.ids.back();
    return out;
  } catch (const std::exception& e) {
    group_broken_ = true;
    return pg_failure(e, "append batch");
  }
}

caf::error pg_store::commit_group() {
  bool in_doubt = false;
  auto err = pg::guarded_once("commit group", [&]() -> caf::error {
    if (group_broken_)
      return caf::make_error(errc::storage_failed, "postgres: the group was rolled back");
    group_rows_.insert(*group_); // every row of the group in one statement
    try {
      group_->commit();
    } catch (const pqxx::in_doubt_error&) {
      in_doubt = true;
    }
    return {};
  });
  group_.reset(); // an uncommitted group rolls back here
  group_rows_.clear();
  reserved_ids_.clear();
  if (in_doubt)
    err = settle_interrupted_commit();
  if (err)
    open_sessions_.clear(); // what the group saw open may not be committed state
  return err;
}

caf::error pg_store::settle_interrupted_commit() {
  if (group_last_id_ == 0) // nothing of the group was kept: nothing can have committed
    return caf::make_error(errc::storage_cant_open,
                           "postgres: the connection was lost while committing a group"
                           " that kept no row");
  return pg::guarded("check an interrupted commit", [&]() -> caf::error {
    pqxx::read_transaction r{*conn_};
    bool committed =
      r.exec_params1("SELECT EXISTS (SELECT 1 FROM messages WHERE id = $1)", group_last_id_)[0]
        .as<bool>();
    if (committed)
      return {};
    return caf::make_error(errc::storage_cant_open,
                           "postgres: the connection was lost while committing; the group's"
                           " rows are not in the database");
  });
}

void pg_store::abort_group() {
  group_rows_.clear();
  reserved_ids_.clear();
  try {
    group_.reset();
  } catch (...) { // NOLINT: a failed rollback leaves nothing committed
  }
  open_sessions_.clear();
}

// --- reads

caf::expected<session_record> pg_store::session(const std::string& session_id) {
  return pg::guarded("load session", [&]() -> caf::expected<session_record> {
    if (!valid_session_id(session_id))
      return not_found(pg::unknown_session(session_id));
    pqxx::read_transaction r{*conn_};
    auto rows = r.exec_prepared("session_load", session_id);
    if (rows.empty())
      return not_found(pg::unknown_session(session_id));
    return pg::decode_session(rows[0]);
  });
}

caf::expected<std::vector<session_record>> pg_store::sessions(const session_filter& f) {
  if (f.limit < 1 || f.limit > 100000)
    return bad_request("list sessions: limit must be 1..100000");
  return pg::guarded("list sessions", [&]() -> caf::expected<std::vector<session_record>> {
    // One statement per filter shape, so that each uses its index.
    std::string sql = "SELECT " MNEME_PG_SESSION_COLUMNS " FROM sessions WHERE ";
    if (!f.session_key.empty())
      sql += "session_key = $2 AND ($1 = ''::bytea OR user_id = $1)";
    else if (!f.user_id.empty())
      sql += "user_id = $1 AND $2 = ''::bytea";
    else
      sql += "$1 = ''::bytea AND $2 = ''::bytea";
    sql += " AND ($3 = 0 OR ended_at_ms = 0) ORDER BY started_at_ms DESC, id DESC LIMIT $4";
    pqxx::read_transaction r{*conn_};
    std::vector<session_record> out;
    for (const auto& row : r.exec_params(sql, pg::bytes(f.user_id), pg::bytes(f.session_key),
                                         int64_t{f.open_only ? 1 : 0}, f.limit))
      out.push_back(pg::decode_session(row));
    return out;
  });
}

caf::expected<session_stats> pg_store::stats(const std::string& session_id) {
  return pg::guarded("session stats", [&]() -> caf::expected<session_stats> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    auto row = r.exec_prepared("stats", session_id)[0];
    session_stats st;
    st.session_id = session_id;
    st.live_rows = row[0].as<int64_t>();
    st.archived_rows = row[1].as<int64_t>();
    st.rolled_back_rows = row[2].as<int64_t>();
    st.summary_rows = row[3].as<int64_t>();
    st.live_token_estimate = row[4].as<int64_t>();
    st.content_bytes = row[5].as<int64_t>();
    st.first_id = row[6].as<int64_t>();
    st.last_id = row[7].as<int64_t>();
    return st;
  });
}

caf::expected<trigger_state> pg_store::triggers(const std::string& session_id) {
  auto rec = session(session_id);
  if (!rec)
    return std::move(rec.error());
  return rec->triggers;
}

caf::expected<std::vector<message>> pg_store::live_context(const std::string& session_id) {
  return pg::guarded("load live context", [&]() -> caf::expected<std::vector<message>> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    return pg::decode_messages(r.exec_prepared("live_context", session_id));
  });
}

caf::expected<std::vector<message>> pg_store::range(const std::string& session_id,
                                                    int64_t first_id, int64_t last_id,
                                                    int64_t limit) {
  if (auto err = check_range_request(first_id, last_id, limit))
    return err;
  return pg::guarded("load range", [&]() -> caf::expected<std::vector<message>> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    return pg::decode_messages(r.exec_prepared("range", session_id, first_id, last_id, limit));
  });
}

caf::expected<std::vector<message>>
pg_store::idempotent_rows(const std::string& session_key, const std::string& idempotency_key,
                          time_ms since_ms, int64_t limit) {
  if (idempotency_key.empty() || limit < 1)
    return bad_request("idempotent rows: need a key and a limit of at least 1");
  return pg::guarded("load idempotent rows", [&]() -> caf::expected<std::vector<message>> {
    pqxx::read_transaction r{*conn_};
    return pg::decode_messages(r.exec_prepared("idempotent_rows", pg::bytes(session_key),
                                               idempotency_key, since_ms, limit));
  });
}

caf::expected<std::vector<checkpoint_record>>
pg_store::checkpoints(const std::string& session_id) {
  return pg::guarded("list checkpoints", [&]() -> caf::expected<std::vector<checkpoint_record>> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    std::vector<checkpoint_record> out;
    for (const auto& row : r.exec_prepared("checkpoints", session_id))
      out.push_back(checkpoint_record{row[0].as<std::string>(), pg::text_of(row[1]),
                                      row[2].as<int64_t>(), row[3].as<int64_t>()});
    return out;
  });
}

caf::expected<int64_t> pg_store::export_jsonl(const std::string& session_id,
                                              std::ostream& out) {
  return pg::guarded("export session", [&]() -> caf::expected<int64_t> {
    pqxx::read_transaction r{*conn_};
    if (auto err = pg::require_session(r, session_id))
      return err;
    std::vector<int64_t> archived_by;
    auto rows = pg::decode_messages(r.exec_prepared("export", session_id), &archived_by);
    if (!rows)
      return std::move(rows.error());
    for (size_t i = 0; i < rows->size(); ++i)
      out << to_jsonl_line((*rows)[i], archived_by[i]) << '\n';
    if (!out)
      return caf::make_error(errc::storage_failed, "export session: output stream failed");
    return static_cast<int64_t>(rows->size());
  });
}

// --- memory tiers (stage 2) and agent tools

// Facts: store/pg/pg_facts.cpp.
caf::expected<fact_record> pg_store::put_fact(const fact_record& f, time_ms now) {
  return pg_put_fact(*conn_, f, now);
}

caf::expected<fact_record> pg_store::remove_fact(const std::string& user_id,
                                                 const std::string& key, time_ms now) {
  return pg_remove_fact(*conn_, user_id, key, now);
}

caf::expected<std::vector<fact_record>> pg_store::query_facts(const fact_query& q) {
  return pg_query_facts(*conn_, q);
}

caf::expected<std::vector<fact_record>> pg_store::facts_by_id(const std::string& user_id,
                                                             const std::vector<int64_t>& ids) {
  return pg_facts_by_id(*conn_, user_id, ids);
}

// Stored vectors: store/pg/pg_embeddings.cpp.
caf::expected<embed_candidates> pg_store::rows_to_embed(int32_t source, int64_t after_id,
                                                         int64_t limit) {
  return pg_rows_to_embed(*conn_, source, after_id, limit);
}

caf::error pg_store::store_vectors(const embed_write& w) {
  return pg_store_vectors(*conn_, w);
}

caf::expected<embed_progress> pg_store::embed_progress_of(const std::string& model,
                                                          int32_t dims) {
  return pg_embed_progress(*conn_, model, dims);
}

caf::expected<std::vector<stored_vector>>
pg_store::stored_vectors(const std::string& model, int32_t dims, int32_t source,
                         int64_t after_id, int64_t limit) {
  return pg_stored_vectors(*conn_, model, dims, source, after_id, limit);
}

caf::error pg_store::put_session_tools(const std::string& session_key,
                                       const std::string& session_id, const std::string& tools,
                                       time_ms now) {
  if (auto err = check_session_tools(session_key, tools, now))
    return err;
  return pg::guarded("put session tools", [&]() -> caf::error {
    pqxx::work w{*conn_};
    if (auto token = fence_key(w, session_key); !token)
      return std::move(token.error());
    w.exec_params("INSERT INTO session_tools(session_key, session_id, tools, set_at_ms)"
                  " VALUES ($1, $2, $3, $4)",
                  pg::bytes(session_key), session_id, pg::bytes(tools), now);
    w.commit();
    return {};
  });
}

caf::expected<std::string> pg_store::session_tools(const std::string& session_key) {
  return pg::guarded("read session tools", [&]() -> caf::expected<std::string> {
    pqxx::read_transaction r{*conn_};
    auto rows = r.exec_params("SELECT tools FROM session_tools WHERE session_key = $1"
                              " ORDER BY id DESC LIMIT 1",
                              pg::bytes(session_key));
    return rows.empty() ? std::string{} : pg::text_of(rows[0][0]);
  });
}

// The Responses door's records: store/pg/pg_responses.cpp.
caf::error pg_store::put_response(const response_record& r) {
  return pg_put_response(*conn_, r);
}

caf::expected<response_record> pg_store::response(const std::string& id) {
  return pg_response(*conn_, id);
}

caf::expected<response_record> pg_store::delete_response(const std::string& id, time_ms now) {
  return pg_delete_response(*conn_, id, now);
}

// JSONL import: store/pg/pg_jsonl_import.cpp.
caf::expected<session_record> pg_store::import_jsonl(std::string_view jsonl,
                                                     session_record into, time_ms now) {
  return pg_import_jsonl(*conn_, jsonl, std::move(into), now, params_,
                         [this](pqxx::transaction_base& t, const std::string& key) {
                           return fence_key(t, key);
                         });
}

} // namespace mneme
