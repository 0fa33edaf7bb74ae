// The PostgreSQL schema and its migrations; see pg_schema.hpp.
// Invariants enforced by the schema (as on SQLite): every message has exactly one
// state row, inserted by the same statement as the message; no message or state
// row is ever deleted and no message text is ever rewritten (triggers raise);
// active and compacted are never both 1.
#include "store/pg/pg_schema.hpp"

#include <pqxx/pqxx>

#include "messages/errc.hpp"
#include "store/pg/pg_error.hpp"
#include "store/pg/pg_search_columns.hpp"

namespace mneme {

namespace {

// Any 64-bit constant identifying mneme's migration lock.
constexpr long long migration_lock_key = 0x6d6e656d65L; // "mneme"

constexpr const char* version_table_sql = R"sql(
CREATE TABLE IF NOT EXISTS mneme_schema_versions(
  version     integer PRIMARY KEY,
  description text NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now()
);
)sql";

// Recall columns (store/pg/pg_search_columns.hpp) were written with the message row
// in the append's transaction until v12 (deferred indexing since):
// search_words is mneme's own token list as a tsvector (GIN), search_text the text
// as valid UTF-8 for pg_trgm substring search (GIN, gin_trgm_ops). pg_trgm is a
// trusted extension: the database owner may create it.
constexpr const char* pg_v1_sql = R"sql(
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE sessions(
  id                  text PRIMARY KEY,
  user_id             bytea NOT NULL,
  session_key         bytea NOT NULL,
  parent_id           text NOT NULL DEFAULT '',
  model               bytea NOT NULL DEFAULT '',
  started_at_ms       bigint NOT NULL,
  ended_at_ms         bigint NOT NULL DEFAULT 0,
  end_reason          bytea NOT NULL DEFAULT '',
  cooldown_until_ms   bigint NOT NULL DEFAULT 0,
  cooldown_reason     bytea NOT NULL DEFAULT '',
  anti_thrash_strikes bigint NOT NULL DEFAULT 0,
  lock_until_ms       bigint NOT NULL DEFAULT 0,
  probe_pending       bigint NOT NULL DEFAULT 0,
  fallback_streak     bigint NOT NULL DEFAULT 0,
  compaction_count    bigint NOT NULL DEFAULT 0,
  last_prompt_tokens  bigint NOT NULL DEFAULT 0,
  cold_stored_at_ms   bigint NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_key ON sessions(session_key, started_at_ms);
CREATE INDEX sessions_by_user ON sessions(user_id, started_at_ms);

CREATE TABLE messages(
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id        text NOT NULL,
  role              text NOT NULL CHECK (role IN ('system','user','assistant','tool')),
  timestamp_ms      bigint NOT NULL DEFAULT 0,
  token_estimate    bigint NOT NULL DEFAULT 0,
  is_summary        bigint NOT NULL DEFAULT 0,
  replaced_first_id bigint NOT NULL DEFAULT 0,
  replaced_last_id  bigint NOT NULL DEFAULT 0,
  tool_call_id      bytea NOT NULL DEFAULT '',
  tool_name         bytea NOT NULL DEFAULT '',
  tool_calls        bytea NOT NULL DEFAULT '',
  content           bytea NOT NULL,
  search_words      tsvector NOT NULL,
  search_text       text NOT NULL
);
CREATE INDEX messages_search_words ON messages USING gin(search_words);
CREATE INDEX messages_search_text ON messages USING gin(search_text gin_trgm_ops);

CREATE TABLE message_state(
  id          bigint PRIMARY KEY REFERENCES messages(id),
  session_id  text NOT NULL,
  active      bigint NOT NULL DEFAULT 1,
  compacted   bigint NOT NULL DEFAULT 0,
  archived_by bigint NOT NULL DEFAULT 0,
  position    bigint,
  CHECK (NOT (active = 1 AND compacted = 1))
);
CREATE INDEX message_state_by_session ON message_state(session_id, id);

CREATE VIEW message_rows AS
  SELECT m.id, s.session_id, m.role, m.content, m.tool_call_id, m.tool_calls,
         m.tool_name, m.timestamp_ms, m.token_estimate, s.active, s.compacted,
         m.is_summary, m.replaced_first_id, m.replaced_last_id, s.archived_by,
         coalesce(s.position, s.id) AS position
  FROM messages m JOIN message_state s ON s.id = m.id;

CREATE FUNCTION mneme_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'mneme refuses % on %', TG_OP, TG_TABLE_NAME; END $$;
CREATE TRIGGER messages_are_never_deleted BEFORE DELETE ON messages
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
CREATE TRIGGER messages_are_never_rewritten BEFORE UPDATE ON messages
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
CREATE TRIGGER message_state_is_never_deleted BEFORE DELETE ON message_state
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();

CREATE TABLE checkpoints(
  session_id      text NOT NULL,
  name            bytea NOT NULL,
  last_message_id bigint NOT NULL,
  created_at_ms   bigint NOT NULL,
  retired_by      bytea NOT NULL DEFAULT '',
  PRIMARY KEY (session_id, name)
);
)sql";

// Agent turns (store/session_tools.hpp): the tools a session key offers its model,
// one row per setting, the newest row of a key wins. Never updated or deleted.
constexpr const char* pg_v2_sql = R"sql(
CREATE TABLE session_tools(
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_key bytea NOT NULL,
  session_id  text NOT NULL,
  tools       bytea NOT NULL,
  set_at_ms   bigint NOT NULL
);
CREATE INDEX session_tools_by_key ON session_tools(session_key, id);
CREATE TRIGGER session_tools_are_never_deleted BEFORE DELETE ON session_tools
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
CREATE TRIGGER session_tools_are_never_rewritten BEFORE UPDATE ON session_tools
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
)sql";

// --- v3 (owned by the recall module, store/pg/pg_recall.hpp): the word route's
// index, SQLite's unicode61 tokens with accents folded (pg_search_columns.hpp).
// Rows stored before v3 get theirs from pg_v3_backfill, in the same transaction
// (the only UPDATE of message rows mneme ever runs: the trigger is off for it).
constexpr const char* pg_v3_sql = R"sql(
ALTER TABLE messages ADD COLUMN search_unicode61 tsvector;
)sql";

constexpr const char* pg_v3_finish_sql = R"sql(
ALTER TABLE messages ALTER COLUMN search_unicode61 SET NOT NULL;
CREATE INDEX messages_search_unicode61 ON messages USING gin(search_unicode61);
)sql";

void pg_v3_backfill(pqxx::transaction_base& w) {
  w.exec0("ALTER TABLE messages DISABLE TRIGGER messages_are_never_rewritten");
  for (long long after = 0;;) {
    auto rows = w.exec_params("SELECT id, content FROM messages WHERE id > $1 ORDER BY id"
                              " LIMIT 1000", after);
    if (rows.empty())
      break;
    for (const auto& r : rows) {
      after = r[0].as<long long>();
      w.exec_params("UPDATE messages SET search_unicode61 = $2::tsvector WHERE id = $1", after,
                    pg_unicode61_literal(pqxx::binarystring{r[1]}.str()));
    }
  }
  w.exec0("ALTER TABLE messages ENABLE TRIGGER messages_are_never_rewritten");
  w.exec0(pg_v3_finish_sql);
}
// --- end v3

// Semantic memory (store/facts.hpp, store/pg/pg_facts.hpp; SQLite's schema v6): one
// row per version of a fact, never deleted, its text never rewritten (triggers
// raise; only active, removed_at_ms and replaced_by change, when a version is
// retired); at most one active version per (user_id, key). The recall columns are
// written with the row, as for messages: search_words over key and value with
// mneme's tokens, search_text (valid UTF-8) under a pg_trgm index.
constexpr const char* pg_v4_facts_sql = R"sql(
CREATE TABLE facts(
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id        bytea NOT NULL,
  key            bytea NOT NULL,
  value          bytea NOT NULL,
  source_session bytea NOT NULL DEFAULT '',
  created_at_ms  bigint NOT NULL,
  updated_at_ms  bigint NOT NULL,
  active         bigint NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
  removed_at_ms  bigint NOT NULL DEFAULT 0,
  replaced_by    bigint NOT NULL DEFAULT 0,
  search_words   tsvector NOT NULL,
  search_text    text NOT NULL
);
CREATE UNIQUE INDEX facts_one_active_key ON facts(user_id, key) WHERE active = 1;
CREATE INDEX facts_by_user ON facts(user_id, id);
CREATE INDEX facts_search_words ON facts USING gin(search_words);
CREATE INDEX facts_search_text ON facts USING gin(search_text gin_trgm_ops);
CREATE TRIGGER facts_are_never_deleted BEFORE DELETE ON facts
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
CREATE TRIGGER facts_text_is_immutable
  BEFORE UPDATE OF user_id, key, value, source_session, created_at_ms, updated_at_ms,
    search_words, search_text ON facts
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
)sql";

// Compaction flips the flags of thousands of message_state rows in one statement.
// With half of each page left free, PostgreSQL rewrites those rows in their own page
// without new index entries (a heap-only update: no flag column is indexed). Measured
// (mneme-bench storage --backend postgres, 5,000-row compaction commit): 64-79 ms
// with full pages, 21-26 ms with this. Pages written before v5 keep no room.
constexpr const char* pg_v5_sql = R"sql(
ALTER TABLE message_state SET (fillfactor = 50);
)sql";

// Several nodes on one database (issue 26 item 4, store/pg/pg_leases.hpp): one lease
// row per session key with its owner, the owner's URL, its fencing token and its
// expiry (the server's clock); every token ever granted, with its owner, in
// lease_grants (never updated or deleted: the history that proves which node wrote
// each row); each message carries the token of the lease it was written under (NULL
// outside node mode).
constexpr const char* pg_v6_sql = R"sql(
CREATE SEQUENCE mneme_lease_tokens;
CREATE TABLE mneme_leases(
  session_key   bytea PRIMARY KEY,
  owner_node    text NOT NULL,
  advertise_url text NOT NULL,
  token         bigint NOT NULL,
  expires_at    timestamptz NOT NULL
);
CREATE INDEX mneme_leases_by_owner ON mneme_leases(owner_node);
CREATE TABLE mneme_lease_grants(
  token           bigint PRIMARY KEY,
  session_key     bytea NOT NULL,
  owner_node      text NOT NULL,
  granted_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  took_over_from  text NOT NULL DEFAULT ''
);
CREATE TRIGGER lease_grants_are_never_rewritten BEFORE UPDATE OR DELETE ON mneme_lease_grants
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
ALTER TABLE messages ADD COLUMN fence_token bigint;
)sql";

// The compaction log (issue 45; store/compaction_log.hpp), as SQLite's version 9.
constexpr const char* pg_v7_sql = R"sql(
CREATE TABLE compaction_log(
  id               bigserial PRIMARY KEY,
  session_id       text NOT NULL,
  at_ms            bigint NOT NULL,
  trigger          text NOT NULL,
  origin           text NOT NULL,
  mode             text NOT NULL,
  outcome          text NOT NULL,
  tokens_before    bigint NOT NULL DEFAULT 0,
  tokens_after     bigint NOT NULL DEFAULT 0,
  first_id         bigint NOT NULL DEFAULT 0,
  last_id          bigint NOT NULL DEFAULT 0,
  rows_replaced    bigint NOT NULL DEFAULT 0,
  summary_id       bigint NOT NULL DEFAULT 0,
  summarizer_model bytea NOT NULL DEFAULT ''::bytea,
  duration_ms      bigint NOT NULL DEFAULT 0,
  summary_tokens   bigint NOT NULL DEFAULT 0,
  identifiers_in   bigint NOT NULL DEFAULT 0,
  identifiers_kept bigint NOT NULL DEFAULT 0,
  attempt          integer NOT NULL DEFAULT 1,
  detail           bytea NOT NULL DEFAULT ''::bytea
);
CREATE INDEX compaction_log_by_session ON compaction_log(session_id, id);
CREATE TRIGGER compaction_log_is_never_rewritten BEFORE UPDATE OR DELETE ON compaction_log
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
)sql";

// The Responses door (issue 43, store/response_records.hpp; SQLite's schema v10): one
// row per response, the session and the last row it answered. Never deleted; only
// deleted_at_ms changes, once (triggers raise otherwise).
constexpr const char* pg_v8_sql = R"sql(
CREATE TABLE responses(
  id            text PRIMARY KEY,
  user_id       bytea NOT NULL,
  session_key   bytea NOT NULL,
  session_id    text NOT NULL,
  last_row_id   bigint NOT NULL,
  previous_id   text NOT NULL DEFAULT '',
  created_at_ms bigint NOT NULL,
  deleted_at_ms bigint NOT NULL DEFAULT 0,
  body          bytea NOT NULL
);
CREATE INDEX responses_by_session ON responses(session_id);
CREATE FUNCTION mneme_response_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'mneme never deletes responses; it marks them deleted';
  END IF;
  IF NEW.id IS DISTINCT FROM OLD.id OR NEW.user_id IS DISTINCT FROM OLD.user_id
     OR NEW.session_key IS DISTINCT FROM OLD.session_key
     OR NEW.session_id IS DISTINCT FROM OLD.session_id
     OR NEW.last_row_id IS DISTINCT FROM OLD.last_row_id
     OR NEW.previous_id IS DISTINCT FROM OLD.previous_id
     OR NEW.created_at_ms IS DISTINCT FROM OLD.created_at_ms
     OR NEW.body IS DISTINCT FROM OLD.body OR OLD.deleted_at_ms <> 0 THEN
    RAISE EXCEPTION 'mneme never rewrites a response; it only marks it deleted once';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER responses_are_kept BEFORE UPDATE OR DELETE ON responses
  FOR EACH ROW EXECUTE FUNCTION mneme_response_guard();
)sql";

// Keys in their user's namespace (issue 47, policies/key_namespace.hpp; SQLite's schema
// v11): the key of every session with a user becomes USER U+001F KEY, and so do the
// copies of a key in session_tools and responses (by the user of the session each row
// names) and a live lease (by the user of the newest session under its key, before the
// sessions are rewritten). Nothing is merged or lost: the same key under two users
// becomes two keys; a session without a user keeps its key; a key already holding U+001F
// is left alone. The lease grants stay as granted (the history of the old keys). The
// two never-rewritten triggers are disabled for this one rewrite only.
constexpr const char* pg_v9_sql = R"sql(
UPDATE mneme_leases l SET session_key = s.user_id || '\x1f'::bytea || l.session_key
FROM (SELECT DISTINCT ON (session_key) session_key, user_id FROM sessions
      WHERE user_id <> ''::bytea ORDER BY session_key, started_at_ms DESC, id DESC) s
WHERE s.session_key = l.session_key AND position('\x1f'::bytea IN l.session_key) = 0;

UPDATE sessions SET session_key = user_id || '\x1f'::bytea || session_key
WHERE user_id <> ''::bytea AND position('\x1f'::bytea IN session_key) = 0;

ALTER TABLE session_tools DISABLE TRIGGER session_tools_are_never_rewritten;
UPDATE session_tools t SET session_key = s.user_id || '\x1f'::bytea || t.session_key
FROM sessions s
WHERE s.id = t.session_id AND s.user_id <> ''::bytea
  AND position('\x1f'::bytea IN t.session_key) = 0;
ALTER TABLE session_tools ENABLE TRIGGER session_tools_are_never_rewritten;

ALTER TABLE responses DISABLE TRIGGER responses_are_kept;
UPDATE responses r SET session_key = s.user_id || '\x1f'::bytea || r.session_key
FROM sessions s
WHERE s.id = r.session_id AND s.user_id <> ''::bytea
  AND position('\x1f'::bytea IN r.session_key) = 0;
ALTER TABLE responses ENABLE TRIGGER responses_are_kept;
)sql";

// Idempotent writes, as SQLite's version 12: the request's key with its row ('' on
// every other row; a constant default adds the column without rewriting the table) and
// a partial index over the keyed rows.
constexpr const char* pg_v10_sql = R"sql(
ALTER TABLE messages ADD COLUMN idempotency_key text NOT NULL DEFAULT '';
CREATE INDEX messages_by_idempotency_key ON messages(idempotency_key, session_id)
WHERE idempotency_key <> '';
)sql";

// Conversation metadata, as SQLite's version 13 (store/conversation_rewrite.hpp): the
// guard is not asked about an update of a conversation record ("conv_…") not deleted
// that changes its body alone (its `conversation` object with new metadata); every
// other update and every DELETE is asked as before, so responses stay as v8 keeps them.
constexpr const char* pg_v11_sql = R"sql(
DROP TRIGGER responses_are_kept ON responses;
CREATE TRIGGER responses_are_never_deleted BEFORE DELETE ON responses
  FOR EACH ROW EXECUTE FUNCTION mneme_response_guard();
CREATE TRIGGER responses_are_kept BEFORE UPDATE ON responses FOR EACH ROW
  WHEN (NOT (left(OLD.id, 5) = 'conv_' AND OLD.deleted_at_ms = 0 AND NEW.deleted_at_ms = 0
             AND (NEW.id, NEW.user_id, NEW.session_key, NEW.session_id, NEW.last_row_id,
                  NEW.previous_id, NEW.created_at_ms)
                 IS NOT DISTINCT FROM (OLD.id, OLD.user_id, OLD.session_key, OLD.session_id,
                                       OLD.last_row_id, OLD.previous_id, OLD.created_at_ms)))
  EXECUTE FUNCTION mneme_response_guard();
)sql";

// Deferred recall indexing (issue 46; store/pg/pg_indexer.hpp), as SQLite's fts_state:
// an append writes the row alone; the indexer fills the three recall columns later,
// in transactions of its own. A row's columns are all NULL (not indexed yet) or all
// set, and once set never change: the rewrite trigger now refuses every UPDATE that
// names another column, and one of the recall columns unless all three go from NULL
// to a value. messages_unindexed lists the rows the indexer and recall's tail scan
// read. recall_index_state.indexed_through: every row at or below it has its columns;
// rows stored before v12 all do (the columns were NOT NULL), so it starts at the
// highest id.
constexpr const char* pg_v12_sql = R"sql(
ALTER TABLE messages ALTER COLUMN search_words DROP NOT NULL,
  ALTER COLUMN search_text DROP NOT NULL, ALTER COLUMN search_unicode61 DROP NOT NULL;
CREATE INDEX messages_unindexed ON messages(id) WHERE search_text IS NULL;
CREATE TABLE recall_index_state(
  only_row        boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  indexed_through bigint NOT NULL
);
INSERT INTO recall_index_state(indexed_through) SELECT coalesce(max(id), 0) FROM messages;
CREATE TRIGGER recall_index_state_is_never_deleted BEFORE DELETE ON recall_index_state
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
DROP TRIGGER messages_are_never_rewritten ON messages;
CREATE TRIGGER messages_are_never_rewritten
  BEFORE UPDATE OF id, session_id, role, timestamp_ms, token_estimate, is_summary,
    replaced_first_id, replaced_last_id, tool_call_id, tool_name, tool_calls, content,
    fence_token, idempotency_key ON messages
  FOR EACH ROW EXECUTE FUNCTION mneme_refuse();
CREATE TRIGGER messages_are_indexed_once
  BEFORE UPDATE OF search_words, search_text, search_unicode61 ON messages FOR EACH ROW
  WHEN (OLD.search_words IS NOT NULL OR OLD.search_text IS NOT NULL
        OR OLD.search_unicode61 IS NOT NULL OR NEW.search_words IS NULL
        OR NEW.search_text IS NULL OR NEW.search_unicode61 IS NULL)
  EXECUTE FUNCTION mneme_refuse();
)sql";

// Semantic recall (issue 48), as SQLite's version 14 (store/embeddings.hpp): the stored
// vectors and the embedder's watermark per (model, dims, source); vectors are never
// rewritten nor deleted.
constexpr const char* pg_v13_sql = R"sql(
CREATE TABLE embeddings(
  model   bytea NOT NULL,
  dims    integer NOT NULL,
  source  smallint NOT NULL CHECK (source IN (0, 1)),
  row_id  bigint NOT NULL,
  user_id bytea NOT NULL,
  vector  bytea NOT NULL,
  PRIMARY KEY (model, dims, source, row_id)
);
CREATE TABLE embed_state(
  model   bytea NOT NULL,
  dims    integer NOT NULL,
  source  smallint NOT NULL CHECK (source IN (0, 1)),
  through bigint NOT NULL,
  PRIMARY KEY (model, dims, source)
);
CREATE FUNCTION mneme_vector_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'mneme never rewrites nor deletes a stored vector'; END $$;
CREATE TRIGGER embeddings_are_kept BEFORE UPDATE OR DELETE ON embeddings
  FOR EACH ROW EXECUTE FUNCTION mneme_vector_guard();
)sql";

} // namespace

const std::vector<pg_migration>& pg_schema_migrations() {
  static const std::vector<pg_migration> list{
    {1, "sessions, messages (with recall columns), message_state, message_rows, checkpoints",
     pg_v1_sql},
    {2, "agent turns: the tools of each session key", pg_v2_sql},
    {3, "recall word route: unicode61 tokens with accents folded", pg_v3_sql, pg_v3_backfill},
    {4, "semantic memory: facts with recall columns", pg_v4_facts_sql},
    {5, "compaction flag flips in place: message_state pages half free", pg_v5_sql},
    {6, "nodes: session-key leases, their grants, each message's fencing token", pg_v6_sql},
    {7, "compaction log: one row per compaction attempt", pg_v7_sql},
    {8, "the Responses door: each response's session and last row", pg_v8_sql},
    {9, "session keys in their user's namespace", pg_v9_sql},
    {10, "idempotent writes: the Idempotency-Key stored with its row", pg_v10_sql},
    {11, "conversation metadata: a live conversation record's body rewritable", pg_v11_sql},
    {12, "deferred recall indexing: recall columns filled behind the appends", pg_v12_sql},
    {13, "semantic recall: stored vectors and the embedder's watermarks", pg_v13_sql},
  };
  return list;
}

int pg_latest_schema_version() {
  return pg_schema_migrations().back().version;
}

caf::expected<int> pg_schema_version(pqxx::connection& conn) {
  try {
    pqxx::work w{conn};
    auto exists = w.exec1("SELECT to_regclass('mneme_schema_versions') IS NOT NULL");
    if (!exists[0].as<bool>())
      return 0;
    auto r = w.exec1("SELECT coalesce(max(version), 0) FROM mneme_schema_versions");
    return r[0].as<int>();
  } catch (const std::exception& e) {
    return pg_failure(e, "read schema version");
  }
}

caf::error pg_apply_migrations(pqxx::connection& conn, int target) {
  try {
    {
      pqxx::work w{conn};
      w.exec_params("SELECT pg_advisory_xact_lock($1)", migration_lock_key);
      w.exec0(version_table_sql);
      w.commit();
    }
    for (const auto& m : pg_schema_migrations()) {
      if (m.version > target)
        continue;
      pqxx::work w{conn};
      // Serialises nodes migrating at once; the version is read under the lock.
      w.exec_params("SELECT pg_advisory_xact_lock($1)", migration_lock_key);
      auto current = w.exec1("SELECT coalesce(max(version), 0) FROM mneme_schema_versions")[0]
                       .as<int>();
      if (current > pg_latest_schema_version())
        return caf::make_error(errc::storage_schema_too_new,
                               "postgres: schema version " + std::to_string(current)
                                 + " is newer than this binary's "
                                 + std::to_string(pg_latest_schema_version()));
      // Each version applies once, whether or not a later one is there already (v3
      // was numbered after v4 had been released to test databases).
      if (!w.exec_params("SELECT 1 FROM mneme_schema_versions WHERE version = $1", m.version)
             .empty())
        continue;
      w.exec0(m.sql);
      if (m.backfill != nullptr)
        m.backfill(w);
      w.exec_params("INSERT INTO mneme_schema_versions(version, description) VALUES ($1, $2)",
                    m.version, std::string{m.description});
      w.commit();
    }
    return {};
  } catch (const std::exception& e) {
    return pg_failure(e, "migrate schema");
  }
}

} // namespace mneme
