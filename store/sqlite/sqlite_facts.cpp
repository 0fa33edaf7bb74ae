// Semantic memory on SQLite: per-user facts; see sqlite_facts.hpp.
#include "store/sqlite/sqlite_facts.hpp"

#include <algorithm>
#include <cassert>
#include <string_view>

#include <sqlite3.h>

#include "policies/fts_query.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

namespace {

#define MNEME_FACT_COLUMNS(p)                                                            \
  p "id, " p "user_id, " p "key, " p "value, " p "source_session, " p "created_at_ms, " \
  p "updated_at_ms, " p "active, " p "removed_at_ms, " p "replaced_by"

constexpr const char* active_fact_sql =
  "SELECT " MNEME_FACT_COLUMNS("") " FROM facts WHERE user_id = ?1 AND key = ?2 AND active = 1";
constexpr const char* fact_by_id_sql =
  "SELECT " MNEME_FACT_COLUMNS("") " FROM facts WHERE id = ?1";
constexpr const char* user_fact_by_id_sql =
  "SELECT " MNEME_FACT_COLUMNS("") " FROM facts WHERE id = ?1 AND user_id = ?2";
constexpr const char* insert_fact_sql =
  "INSERT INTO facts(user_id, key, value, source_session, created_at_ms, updated_at_ms)"
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
// Retiring a replaced version takes two steps inside one transaction: it leaves
// the unique active slot before its successor is inserted, then learns its id.
constexpr const char* retire_replaced_sql =
  "UPDATE facts SET active = 0, replaced_by = ?2 WHERE id = ?1 AND active = 1";
constexpr const char* link_successor_sql = "UPDATE facts SET replaced_by = ?2 WHERE id = ?1";
constexpr const char* retire_removed_sql =
  "UPDATE facts SET active = 0, removed_at_ms = ?2 WHERE id = ?1 AND active = 1";
constexpr const char* list_facts_sql =
  "SELECT " MNEME_FACT_COLUMNS("") " FROM facts WHERE user_id = ?1 AND (?2 OR active = 1)"
  " ORDER BY id DESC LIMIT ?3";

// One full-text route: ?1 MATCH expression, ?2 user, ?3 include_inactive, ?4 limit.
#define MNEME_FACT_SEARCH(table)                                                         \
  "SELECT " MNEME_FACT_COLUMNS("f.") " FROM " table " JOIN facts f ON f.id = " table    \
  ".rowid WHERE " table " MATCH ?1 AND f.user_id = ?2 AND (?3 OR f.active = 1)"          \
  " ORDER BY " table ".rank, f.id DESC LIMIT ?4"

constexpr const char* search_words_sql = MNEME_FACT_SEARCH("facts_fts_words");
constexpr const char* search_cjk_sql = MNEME_FACT_SEARCH("facts_fts_cjk");
constexpr const char* search_trigram_sql = MNEME_FACT_SEARCH("facts_fts_trigram");

// The last resort: the user's newest ?4 visible versions, filtered in code.
constexpr const char* scan_facts_sql =
  "SELECT " MNEME_FACT_COLUMNS("") " FROM facts WHERE user_id = ?1 AND (?2 OR active = 1)"
  " ORDER BY id DESC LIMIT ?3";

fact_record decode_fact(statement& s) {
  fact_record f;
  f.id = s.column_int(0);
  f.user_id = s.column_text(1);
  f.key = s.column_text(2);
  f.value = s.column_text(3);
  f.source_session = s.column_text(4);
  f.created_at_ms = s.column_int(5);
  f.updated_at_ms = s.column_int(6);
  f.active = s.column_int(7) != 0;
  f.removed_at_ms = s.column_int(8);
  f.replaced_by = s.column_int(9);
  return f;
}

// Steps `s` to the end, collecting every row.
caf::expected<std::vector<fact_record>> collect(db_connection& db, statement& s,
                                                const char* what) {
  std::vector<fact_record> out;
  for (;;) {
    auto rc = s.step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, what);
    out.push_back(decode_fact(s));
  }
}

caf::expected<fact_record> load_one(db_connection& db, const char* sql, const char* what,
                                    const std::string& a, const std::string* b) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, a);
  if (b)
    s->bind(2, *b);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found(what);
  if (rc != SQLITE_ROW)
    return db.failure(rc, what);
  return decode_fact(s.get());
}

caf::expected<fact_record> load_by_id(db_connection& db, int64_t id) {
  auto stmt = db.prepare(fact_by_id_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, id);
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "load fact " + std::to_string(id));
  return decode_fact(s.get());
}

caf::error run(db_connection& db, const char* sql, int64_t id, int64_t value,
               const char* what) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, id);
  s->bind(2, value);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, what);
  return {};
}

caf::expected<std::vector<fact_record>> search_route(db_connection& db, recall_route route,
                                                     const parsed_query& parsed,
                                                     const fact_query& q) {
  const char* sql = nullptr;
  auto dialect = match_dialect::word;
  switch (route) {
    case recall_route::unicode61: sql = search_words_sql; break;
    case recall_route::cjk_bigram: sql = search_cjk_sql; break;
    case recall_route::trigram:
      sql = search_trigram_sql;
      dialect = match_dialect::trigram;
      break;
    case recall_route::substring_scan: sql = scan_facts_sql; break;
  }
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  if (route == recall_route::substring_scan) {
    s->bind(1, q.user_id);
    s->bind(2, int64_t{q.include_inactive ? 1 : 0});
    s->bind(3, fact_scan_rows);
    auto rows = collect(db, s.get(), "fact substring scan");
    if (!rows)
      return rows;
    std::vector<fact_record> out;
    for (auto& f : *rows)
      if (fact_scan_matches(f, parsed) && static_cast<int64_t>(out.size()) < q.limit)
        out.push_back(std::move(f));
    return out;
  }
  auto match = to_fts5_match(parsed, dialect);
  if (match.empty())
    return std::vector<fact_record>{};
  s->bind(1, match);
  s->bind(2, q.user_id);
  s->bind(3, int64_t{q.include_inactive ? 1 : 0});
  s->bind(4, q.limit);
  return collect(db, s.get(), "fact search");
}

} // namespace

caf::expected<fact_record> find_fact(db_connection& db, const std::string& user_id,
                                     const std::string& key) {
  return load_one(db, active_fact_sql,
                  ("no fact '" + key + "' for user '" + user_id + "'").c_str(), user_id, &key);
}

caf::expected<fact_record> put_fact(db_connection& db, const fact_record& f, time_ms now) {
  assert(db.mode() == open_mode::writer);
  if (auto err = check_fact(f, now))
    return err;
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto current = find_fact(db, f.user_id, f.key);
  if (!current && current.error() != errc::not_found)
    return current;
  if (current && current->value == f.value && current->source_session == f.source_session)
    return current; // unchanged: no new version
  auto stmt = db.prepare(insert_fact_sql);
  if (!stmt)
    return std::move(stmt.error());
  int64_t id = 0;
  {
    statement_scope s{**stmt};
    if (current)
      if (auto err = run(db, retire_replaced_sql, current->id, 0, "retire fact"))
        return err;
    s->bind(1, f.user_id);
    s->bind(2, f.key);
    s->bind(3, f.value);
    s->bind(4, f.source_session);
    s->bind(5, current ? current->created_at_ms : now);
    s->bind(6, now);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "put fact");
    id = sqlite3_last_insert_rowid(db.native_handle());
  }
  if (current)
    if (auto err = run(db, link_successor_sql, current->id, id, "link replaced fact"))
      return err;
  auto stored = load_by_id(db, id);
  if (!stored)
    return stored;
  if (auto err = txn.commit())
    return err;
  return stored;
}

caf::expected<fact_record> remove_fact(db_connection& db, const std::string& user_id,
                                       const std::string& key, time_ms now) {
  assert(db.mode() == open_mode::writer);
  if (now < 0)
    return bad_request("fact: now must be >= 0");
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto current = find_fact(db, user_id, key);
  if (!current)
    return current;
  if (auto err = run(db, retire_removed_sql, current->id, now > 0 ? now : 1, "remove fact"))
    return err;
  auto stored = load_by_id(db, current->id);
  if (!stored)
    return stored;
  if (auto err = txn.commit())
    return err;
  return stored;
}

caf::expected<std::vector<fact_record>> query_facts(db_connection& db, const fact_query& q) {
  if (auto err = check_fact_query(q))
    return err;
  if (q.text.empty()) {
    auto stmt = db.prepare(list_facts_sql);
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, q.user_id);
    s->bind(2, int64_t{q.include_inactive ? 1 : 0});
    s->bind(3, q.limit);
    return collect(db, s.get(), "list facts");
  }
  auto parsed = parse_user_query(q.text);
  if (!parsed.has_positive_clause())
    return std::vector<fact_record>{};
  for (auto route : plan_routes(parsed)) {
    auto hits = search_route(db, route, parsed, q);
    if (!hits || !hits->empty())
      return hits;
  }
  return std::vector<fact_record>{};
}

caf::expected<std::vector<fact_record>> facts_by_id(db_connection& db, const std::string& user_id,
                                                    const std::vector<int64_t>& ids) {
  std::vector<fact_record> out;
  auto stmt = db.prepare(user_fact_by_id_sql);
  if (!stmt)
    return std::move(stmt.error());
  for (auto id : ids) {
    statement_scope s{**stmt};
    s->bind(1, id);
    s->bind(2, user_id);
    auto rc = s->step();
    if (rc == SQLITE_ROW)
      out.push_back(decode_fact(s.get()));
    else if (rc != SQLITE_DONE)
      return db.failure(rc, "load fact " + std::to_string(id));
  }
  return out;
}

} // namespace mneme
