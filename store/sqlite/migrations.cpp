// The schema of the mneme database; see migrations.hpp.
//
// Layout (SPEC §1):
//   sessions       one row per session, with its persisted trigger state (§5).
//   messages       one row per transcript message, immutable once written. Its
//                  INTEGER PRIMARY KEY `id` is the rowid an FTS5 external-content
//                  index uses. Content is never rewritten by a state change.
//                  Small columns come first and content last.
//   message_state  the row state of each message (active, compacted, archived_by,
//                  position), keyed by the same id. Compaction, rollback and reset
//                  only UPDATE this narrow table: a flag flip rewrites this small row,
//                  never the message row with its text, and never touches any
//                  full-text index entry (figures: docs/benchmarks.md#storage).
//                  `position` orders the live context: NULL means "= id"; a summary
//                  takes the position of the first row it archived, so it sits
//                  between head and tail although its id is the newest. Validating
//                  a compaction reads only this table.
//   message_rows   a view joining the two, for readers (position resolved).
//   checkpoints    named rollback points (§6).
//   facts          per-user facts (§7); see v6 below.
//   session_tools  the tools of agent turns per session key (§8.1); see v8 below.
//   compaction_log one row per compaction attempt (issue 45); see v9 below.
//   responses      the Responses door's responses (issue 43); see v10 and v13 below.
//   embeddings     stored vectors of semantic recall (issue 48); see v14 below.
// Session keys are stored in their user's namespace (USER U+001F KEY) since v11.
// Invariants enforced by the schema: every message has exactly one state row,
// created live by the insert trigger in the same statement; no message or state row
// is ever deleted (triggers abort a DELETE); active and compacted are never both 1.
#include "store/sqlite/migrations.hpp"

#include <cassert>
#include <string>

#include <sqlite3.h>

#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

namespace {

constexpr const char* v1_sql = R"sql(
CREATE TABLE sessions(
  id                  TEXT PRIMARY KEY,
  user_id             TEXT NOT NULL,
  session_key         TEXT NOT NULL,
  parent_id           TEXT NOT NULL DEFAULT '',
  model               TEXT NOT NULL DEFAULT '',
  started_at_ms       INTEGER NOT NULL,
  ended_at_ms         INTEGER NOT NULL DEFAULT 0,
  end_reason          TEXT NOT NULL DEFAULT '',
  cooldown_until_ms   INTEGER NOT NULL DEFAULT 0,
  cooldown_reason     TEXT NOT NULL DEFAULT '',
  anti_thrash_strikes INTEGER NOT NULL DEFAULT 0,
  lock_until_ms       INTEGER NOT NULL DEFAULT 0,
  probe_pending       INTEGER NOT NULL DEFAULT 0,
  fallback_streak     INTEGER NOT NULL DEFAULT 0,
  compaction_count    INTEGER NOT NULL DEFAULT 0,
  last_prompt_tokens  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX sessions_by_key ON sessions(session_key, started_at_ms);
CREATE INDEX sessions_by_user ON sessions(user_id, started_at_ms);

CREATE TABLE messages(
  id                INTEGER PRIMARY KEY,
  session_id        TEXT NOT NULL,
  role              TEXT NOT NULL CHECK(role IN ('system','user','assistant','tool')),
  timestamp_ms      INTEGER NOT NULL DEFAULT 0,
  token_estimate    INTEGER NOT NULL DEFAULT 0,
  is_summary        INTEGER NOT NULL DEFAULT 0,
  replaced_first_id INTEGER NOT NULL DEFAULT 0,
  replaced_last_id  INTEGER NOT NULL DEFAULT 0,
  tool_call_id      TEXT NOT NULL DEFAULT '',
  tool_name         TEXT NOT NULL DEFAULT '',
  tool_calls        TEXT NOT NULL DEFAULT '',
  content           TEXT NOT NULL
);

CREATE TABLE message_state(
  id          INTEGER PRIMARY KEY,
  session_id  TEXT NOT NULL,
  active      INTEGER NOT NULL DEFAULT 1,
  compacted   INTEGER NOT NULL DEFAULT 0,
  archived_by INTEGER NOT NULL DEFAULT 0,
  position    INTEGER,
  CHECK (NOT (active = 1 AND compacted = 1))
);
CREATE INDEX message_state_by_session ON message_state(session_id, id);

CREATE TRIGGER messages_start_live AFTER INSERT ON messages
BEGIN INSERT INTO message_state(id, session_id) VALUES (new.id, new.session_id); END;

CREATE VIEW message_rows AS
  SELECT m.id, s.session_id, m.role, m.content, m.tool_call_id, m.tool_calls,
         m.tool_name, m.timestamp_ms, m.token_estimate, s.active, s.compacted,
         m.is_summary, m.replaced_first_id, m.replaced_last_id, s.archived_by,
         coalesce(s.position, s.id) AS position
  FROM messages m JOIN message_state s ON s.id = m.id;

CREATE TRIGGER messages_are_never_deleted BEFORE DELETE ON messages
BEGIN SELECT RAISE(ABORT, 'mneme never deletes a message'); END;
CREATE TRIGGER message_state_is_never_deleted BEFORE DELETE ON message_state
BEGIN SELECT RAISE(ABORT, 'mneme never deletes a message state'); END;
)sql";

constexpr const char* v2_sql = R"sql(
CREATE TABLE checkpoints(
  session_id      TEXT NOT NULL,
  name            TEXT NOT NULL,
  last_message_id INTEGER NOT NULL,
  created_at_ms   INTEGER NOT NULL,
  PRIMARY KEY (session_id, name)
) WITHOUT ROWID;
)sql";

// Recall (SPEC §4, owned by the recall module): three external-content FTS5
// indexes over messages.content (no second copy of the text). Maintained only by
// triggers on `messages`, whose rows are immutable: state flips live in
// message_state and never touch an index entry. The UPDATE trigger exists for
// completeness. The 'rebuild' commands backfill a file upgraded from version 2.
constexpr const char* v3_sql = R"sql(
CREATE VIRTUAL TABLE fts_words USING fts5(content, content='messages',
  content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE fts_cjk USING fts5(content, content='messages',
  content_rowid='id', tokenize='mneme_cjk');
CREATE VIRTUAL TABLE fts_trigram USING fts5(content, content='messages',
  content_rowid='id', tokenize='trigram');

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO fts_words(rowid, content) VALUES (new.id, new.content);
  INSERT INTO fts_cjk(rowid, content) VALUES (new.id, new.content);
  INSERT INTO fts_trigram(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO fts_words(fts_words, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO fts_cjk(fts_cjk, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO fts_trigram(fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO fts_words(rowid, content) VALUES (new.id, new.content);
  INSERT INTO fts_cjk(rowid, content) VALUES (new.id, new.content);
  INSERT INTO fts_trigram(rowid, content) VALUES (new.id, new.content);
END;

INSERT INTO fts_words(fts_words) VALUES ('rebuild');
INSERT INTO fts_cjk(fts_cjk) VALUES ('rebuild');
INSERT INTO fts_trigram(fts_trigram) VALUES ('rebuild');
)sql";

// Recall index tuning (owned by the recall module): every indexing transaction
// adds one segment per index (a group commit when this version was written, an
// indexer tick since v5); FTS5 merges 8 segments per level instead of its default
// 4, so fewer merge steps follow those segments. Segments still merge
// incrementally, in larger steps. Figures: docs/benchmarks.md#recall.
constexpr const char* v4_sql = R"sql(
INSERT INTO fts_words(fts_words, rank) VALUES ('automerge', 8);
INSERT INTO fts_cjk(fts_cjk, rank) VALUES ('automerge', 8);
INSERT INTO fts_trigram(fts_trigram, rank) VALUES ('automerge', 8);
)sql";

// Recall indexing leaves the append path (owned by the recall module): the insert
// and update triggers go, and store/sqlite/fts_indexer.hpp fills the three indexes in
// bounded batches from the storage actor's idle time. fts_state holds the one
// watermark: every message with id <= indexed_through is in all three indexes,
// none above it is. It starts at the current max id, which v3's rebuild and the
// triggers up to now have indexed. Recall scans the rows above it by substring.
constexpr const char* v5_sql = R"sql(
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_update;
CREATE TABLE fts_state(
  singleton       INTEGER PRIMARY KEY CHECK (singleton = 1),
  indexed_through INTEGER NOT NULL
);
INSERT INTO fts_state(singleton, indexed_through)
  SELECT 1, coalesce(max(id), 0) FROM messages;
CREATE TRIGGER messages_content_is_immutable BEFORE UPDATE OF content ON messages
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a message text'); END;
)sql";

// Memory tiers (SPEC §7, owned by the memory module): per-user facts and the
// cold-storage mark of ended sessions.
//   facts          one row per version of a fact. A row's text (user, key, value)
//                  never changes: replacing a key inserts a new row and retires the
//                  old one (active = 0, replaced_by = the new id); removing a key
//                  retires its row with removed_at_ms set (a tombstone). Nothing is
//                  deleted. At most one active row per (user_id, key).
//   facts_fts_*    external-content indexes over (key, value) with the tokenizers of
//                  the message indexes. Facts are few and written rarely, so an
//                  insert trigger fills them in the same transaction; since the
//                  text is immutable no other trigger is needed.
//   sessions.cold_stored_at_ms  when the ended session's JSONL reached the cold
//                  storage folder (0 = not yet: written on the next end or start).
//   checkpoints.retired_by  the checkpoint a rollback returned to, for a checkpoint
//                  made after that point: its rows were undone, so it can no longer
//                  be restored ('' = usable). Re-creating the name makes it usable.
constexpr const char* v6_sql = R"sql(
CREATE TABLE facts(
  id              INTEGER PRIMARY KEY,
  user_id         TEXT NOT NULL,
  key             TEXT NOT NULL,
  value           TEXT NOT NULL,
  source_session  TEXT NOT NULL DEFAULT '',
  created_at_ms   INTEGER NOT NULL,
  updated_at_ms   INTEGER NOT NULL,
  active          INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  removed_at_ms   INTEGER NOT NULL DEFAULT 0,
  replaced_by     INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX facts_one_active_key ON facts(user_id, key) WHERE active = 1;
CREATE INDEX facts_by_user ON facts(user_id, id);
CREATE TRIGGER facts_are_never_deleted BEFORE DELETE ON facts
BEGIN SELECT RAISE(ABORT, 'mneme never deletes a fact'); END;
CREATE TRIGGER facts_text_is_immutable BEFORE UPDATE OF user_id, key, value ON facts
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a fact; replace it'); END;

CREATE VIRTUAL TABLE facts_fts_words USING fts5(key, value, content='facts',
  content_rowid='id', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE facts_fts_cjk USING fts5(key, value, content='facts',
  content_rowid='id', tokenize='mneme_cjk');
CREATE VIRTUAL TABLE facts_fts_trigram USING fts5(key, value, content='facts',
  content_rowid='id', tokenize='trigram');
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
  INSERT INTO facts_fts_words(rowid, key, value) VALUES (new.id, new.key, new.value);
  INSERT INTO facts_fts_cjk(rowid, key, value) VALUES (new.id, new.key, new.value);
  INSERT INTO facts_fts_trigram(rowid, key, value) VALUES (new.id, new.key, new.value);
END;

ALTER TABLE sessions ADD COLUMN cold_stored_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN retired_by TEXT NOT NULL DEFAULT '';
)sql";

// Recall indexes filled one at a time (owned by the recall module): each index
// has its own watermark (words_through, cjk_through, trigram_through: every
// message with id <= it is in that index, none above it is), so an indexing
// tick fills one index with the whole log budget (store/sqlite/fts_indexer.hpp).
// indexed_through stays the lowest of the three, kept in the same UPDATE as the
// one that moves an index's watermark; recall's tail scan starts above it.
// A file from version 6 starts with the three equal to its indexed_through.
constexpr const char* v7_sql = R"sql(
ALTER TABLE fts_state ADD COLUMN words_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fts_state ADD COLUMN cjk_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fts_state ADD COLUMN trigram_through INTEGER NOT NULL DEFAULT 0;
UPDATE fts_state SET words_through = indexed_through, cjk_through = indexed_through,
  trigram_through = indexed_through;
)sql";

// Agent turns (issue 29; store/session_tools.hpp): the tools a session key offers its
// model, one row per setting, the newest row of a key wins. Never updated or deleted.
constexpr const char* v8_sql = R"sql(
CREATE TABLE session_tools(
  id          INTEGER PRIMARY KEY,
  session_key TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  tools       TEXT NOT NULL,
  set_at_ms   INTEGER NOT NULL
);
CREATE INDEX session_tools_by_key ON session_tools(session_key, id);
CREATE TRIGGER session_tools_are_never_deleted BEFORE DELETE ON session_tools
BEGIN SELECT RAISE(ABORT, 'mneme never deletes session tools'); END;
CREATE TRIGGER session_tools_are_never_rewritten BEFORE UPDATE ON session_tools
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites session tools; set new ones'); END;
)sql";

// The compaction log (issue 45; store/compaction_log.hpp): one row per compaction
// attempt, committed or not, written in the transaction of the compaction it records.
// Never updated or deleted. Compactions from before this version have no row (the
// compactions route lists them from their summary rows).
constexpr const char* v9_sql = R"sql(
CREATE TABLE compaction_log(
  id               INTEGER PRIMARY KEY,
  session_id       TEXT NOT NULL,
  at_ms            INTEGER NOT NULL,
  trigger          TEXT NOT NULL,
  origin           TEXT NOT NULL,
  mode             TEXT NOT NULL,
  outcome          TEXT NOT NULL,
  tokens_before    INTEGER NOT NULL DEFAULT 0,
  tokens_after     INTEGER NOT NULL DEFAULT 0,
  first_id         INTEGER NOT NULL DEFAULT 0,
  last_id          INTEGER NOT NULL DEFAULT 0,
  rows_replaced    INTEGER NOT NULL DEFAULT 0,
  summary_id       INTEGER NOT NULL DEFAULT 0,
  summarizer_model TEXT NOT NULL DEFAULT '',
  duration_ms      INTEGER NOT NULL DEFAULT 0,
  summary_tokens   INTEGER NOT NULL DEFAULT 0,
  identifiers_in   INTEGER NOT NULL DEFAULT 0,
  identifiers_kept INTEGER NOT NULL DEFAULT 0,
  attempt          INTEGER NOT NULL DEFAULT 1,
  detail           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX compaction_log_by_session ON compaction_log(session_id, id);
CREATE TRIGGER compaction_log_is_never_deleted BEFORE DELETE ON compaction_log
BEGIN SELECT RAISE(ABORT, 'mneme never deletes the compaction log'); END;
CREATE TRIGGER compaction_log_is_never_rewritten BEFORE UPDATE ON compaction_log
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites the compaction log'); END;
)sql";

// The Responses door (issue 43; store/response_records.hpp): one row per response, the
// session and the last row it answered. Never deleted; only deleted_at_ms changes, once.
constexpr const char* v10_sql = R"sql(
CREATE TABLE responses(
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL,
  session_key   TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  last_row_id   INTEGER NOT NULL,
  previous_id   TEXT NOT NULL DEFAULT '',
  created_at_ms INTEGER NOT NULL,
  deleted_at_ms INTEGER NOT NULL DEFAULT 0,
  body          TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX responses_by_session ON responses(session_id);
CREATE TRIGGER responses_are_never_deleted BEFORE DELETE ON responses
BEGIN SELECT RAISE(ABORT, 'mneme never deletes responses; it marks them deleted'); END;
CREATE TRIGGER responses_are_never_rewritten BEFORE UPDATE ON responses
WHEN NEW.id IS NOT OLD.id OR NEW.user_id IS NOT OLD.user_id
  OR NEW.session_key IS NOT OLD.session_key OR NEW.session_id IS NOT OLD.session_id
  OR NEW.last_row_id IS NOT OLD.last_row_id OR NEW.previous_id IS NOT OLD.previous_id
  OR NEW.created_at_ms IS NOT OLD.created_at_ms OR NEW.body IS NOT OLD.body
  OR OLD.deleted_at_ms != 0
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a response; it only marks it deleted once'); END;
)sql";

// Keys in their user's namespace (issue 47; policies/key_namespace.hpp): the key of every
// session with a user becomes USER U+001F KEY, and so do the copies of a key in
// session_tools and responses (by the user of the session each row names). Sessions
// keep their ids and rows: the same key under two users becomes two keys (never merged),
// a key under one user stays one key (its sessions in the same order). A session
// without a user keeps its key. Keys never held U+001F before (the API refused control
// characters), so a key holding it is already scoped and left alone. The two tables'
// never-rewritten triggers are dropped for this one rewrite and created again as they
// were.
constexpr const char* v11_sql = R"sql(
UPDATE sessions SET session_key = user_id || char(31) || session_key
WHERE user_id != '' AND instr(session_key, char(31)) = 0;

DROP TRIGGER session_tools_are_never_rewritten;
UPDATE session_tools SET session_key = (
  SELECT s.user_id || char(31) || session_tools.session_key FROM sessions s
  WHERE s.id = session_tools.session_id)
WHERE instr(session_key, char(31)) = 0 AND EXISTS(
  SELECT 1 FROM sessions s WHERE s.id = session_tools.session_id AND s.user_id != '');
CREATE TRIGGER session_tools_are_never_rewritten BEFORE UPDATE ON session_tools
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites session tools; set new ones'); END;

DROP TRIGGER responses_are_never_rewritten;
UPDATE responses SET session_key = (
  SELECT s.user_id || char(31) || responses.session_key FROM sessions s
  WHERE s.id = responses.session_id)
WHERE instr(session_key, char(31)) = 0 AND EXISTS(
  SELECT 1 FROM sessions s WHERE s.id = responses.session_id AND s.user_id != '');
CREATE TRIGGER responses_are_never_rewritten BEFORE UPDATE ON responses
WHEN NEW.id IS NOT OLD.id OR NEW.user_id IS NOT OLD.user_id
  OR NEW.session_key IS NOT OLD.session_key OR NEW.session_id IS NOT OLD.session_id
  OR NEW.last_row_id IS NOT OLD.last_row_id OR NEW.previous_id IS NOT OLD.previous_id
  OR NEW.created_at_ms IS NOT OLD.created_at_ms OR NEW.body IS NOT OLD.body
  OR OLD.deleted_at_ms != 0
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a response; it only marks it deleted once'); END;
)sql";

// Idempotent writes (issue 47 item 8; docs/api.md "Idempotency-Key"): the key a request
// carried, stored with the row it wrote ('' on every other row, existing rows included),
// and a partial index over the keyed rows only (most rows carry none).
constexpr const char* v12_sql = R"sql(
ALTER TABLE messages ADD COLUMN idempotency_key TEXT NOT NULL DEFAULT '';
CREATE INDEX messages_by_idempotency_key ON messages(idempotency_key, session_id)
WHERE idempotency_key != '';
)sql";

// Conversation metadata (issue 43; store/conversation_rewrite.hpp): a conversation
// record ("conv_…") not deleted may have its body rewritten (its `conversation` object
// with new metadata), and nothing else of it; every other row and column of responses
// stays as v10 keeps it (a response is never rewritten; deleted_at_ms is set once).
constexpr const char* v13_sql = R"sql(
DROP TRIGGER responses_are_never_rewritten;
CREATE TRIGGER responses_are_never_rewritten BEFORE UPDATE ON responses
WHEN NEW.id IS NOT OLD.id OR NEW.user_id IS NOT OLD.user_id
  OR NEW.session_key IS NOT OLD.session_key OR NEW.session_id IS NOT OLD.session_id
  OR NEW.last_row_id IS NOT OLD.last_row_id OR NEW.previous_id IS NOT OLD.previous_id
  OR NEW.created_at_ms IS NOT OLD.created_at_ms
  OR (NEW.body IS NOT OLD.body AND (substr(OLD.id, 1, 5) != 'conv_' OR NEW.deleted_at_ms != 0))
  OR OLD.deleted_at_ms != 0
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a response; it only marks it deleted once (a conversation: also its metadata)'); END;
)sql";

// Semantic recall (issue 48; store/embeddings.hpp): the stored vectors and the
// embedder's watermark per (model, dims, source). A vector row is never rewritten nor
// deleted; a new model or dimension count gets rows of its own beside the old ones.
// source: 0 = messages.id, 1 = facts.id. vector: dims float32, little-endian.
constexpr const char* v14_sql = R"sql(
CREATE TABLE embeddings(
  model   TEXT NOT NULL,
  dims    INTEGER NOT NULL,
  source  INTEGER NOT NULL CHECK (source IN (0, 1)),
  row_id  INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  vector  BLOB NOT NULL,
  PRIMARY KEY (model, dims, source, row_id)
);
CREATE TABLE embed_state(
  model   TEXT NOT NULL,
  dims    INTEGER NOT NULL,
  source  INTEGER NOT NULL CHECK (source IN (0, 1)),
  through INTEGER NOT NULL,
  PRIMARY KEY (model, dims, source)
) WITHOUT ROWID;
CREATE TRIGGER embeddings_are_never_deleted BEFORE DELETE ON embeddings
BEGIN SELECT RAISE(ABORT, 'mneme never deletes a stored vector'); END;
CREATE TRIGGER embeddings_are_never_rewritten BEFORE UPDATE ON embeddings
BEGIN SELECT RAISE(ABORT, 'mneme never rewrites a stored vector'); END;
)sql";

// PRAGMA takes no bound parameters; the statement text is built from an int only.
caf::error set_user_version(db_connection& db, int version) {
  auto sql = "PRAGMA user_version = " + std::to_string(version);
  auto rc = sqlite3_exec(db.native_handle(), sql.c_str(), nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? caf::error{} : db.failure(rc, "set schema version");
}

} // namespace

const std::vector<migration>& schema_migrations() {
  static const std::vector<migration> list{
    {1, "sessions, messages, message_state, message_rows", v1_sql},
    {2, "rollback checkpoints", v2_sql},
    {3, "recall: unicode61, CJK bigram and trigram full-text indexes", v3_sql},
    {4, "recall: merge 8 index segments per level", v4_sql},
    {5, "recall: indexes filled in batches behind a watermark", v5_sql},
    {6, "memory: facts with full-text indexes, cold-storage mark", v6_sql},
    {7, "recall: a watermark per index, one index per indexing tick", v7_sql},
    {8, "agent turns: the tools of each session key", v8_sql},
    {9, "compaction log: one row per compaction attempt", v9_sql},
    {10, "the Responses door: each response's session and last row", v10_sql},
    {11, "session keys in their user's namespace", v11_sql},
    {12, "idempotent writes: the Idempotency-Key stored with its row", v12_sql},
    {13, "conversation metadata: a live conversation record's body rewritable", v13_sql},
    {14, "semantic recall: stored vectors and the embedder's watermarks", v14_sql},
  };
  return list;
}

int latest_schema_version() {
  return schema_migrations().back().version;
}

caf::expected<int> schema_version(db_connection& db) {
  auto stmt = db.prepare("PRAGMA user_version");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "read schema version");
  return static_cast<int>(s->column_int(0));
}

caf::error apply_migrations(db_connection& db, int target) {
  assert(db.mode() == open_mode::writer);
  assert(target >= 0 && target <= latest_schema_version());
  auto current = schema_version(db);
  if (!current)
    return std::move(current.error());
  if (*current > latest_schema_version())
    return caf::make_error(errc::storage_schema_too_new,
                           db.path() + ": schema version " + std::to_string(*current)
                             + " is newer than this binary's "
                             + std::to_string(latest_schema_version()));
  for (const auto& m : schema_migrations()) {
    if (m.version <= *current || m.version > target)
      continue;
    write_transaction txn{db};
    if (auto err = txn.begin())
      return err;
    // The version is re-read inside the write lock: another writer may have
    // migrated the file between our first read and BEGIN IMMEDIATE.
    auto seen = schema_version(db);
    if (!seen)
      return std::move(seen.error());
    if (*seen >= m.version)
      continue;
    auto rc = sqlite3_exec(db.native_handle(), m.sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
      return db.failure(rc, "migration " + std::to_string(m.version));
    if (auto err = set_user_version(db, m.version))
      return err;
    if (auto err = txn.commit())
      return err;
  }
  return {};
}

} // namespace mneme
