// Semantic memory on PostgreSQL; see pg_facts.hpp.
#include "store/pg/pg_facts.hpp"

#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "policies/fts_query.hpp"
#include "policies/tsquery_text.hpp"
#include "store/facts.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/pg/pg_search_columns.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

#define MNEME_PG_FACT_COLUMNS                                                       \
  "id, user_id, key, value, source_session, created_at_ms, updated_at_ms, active, " \
  "removed_at_ms, replaced_by"

fact_record decode_fact(const pqxx::row& r) {
  fact_record f;
  f.id = r[0].as<int64_t>();
  f.user_id = pg::text_of(r[1]);
  f.key = pg::text_of(r[2]);
  f.value = pg::text_of(r[3]);
  f.source_session = pg::text_of(r[4]);
  f.created_at_ms = r[5].as<int64_t>();
  f.updated_at_ms = r[6].as<int64_t>();
  f.active = r[7].as<int64_t>() != 0;
  f.removed_at_ms = r[8].as<int64_t>();
  f.replaced_by = r[9].as<int64_t>();
  return f;
}

std::vector<fact_record> decode_all(const pqxx::result& rows) {
  std::vector<fact_record> out;
  out.reserve(rows.size());
  for (const auto& r : rows)
    out.push_back(decode_fact(r));
  return out;
}

// The active version of (user, key) inside `t`. Every writer of the key (another
// connection, another node) first takes the key's transaction-scoped advisory lock,
// so puts and removes of one key run one after the other and each reads the last
// one's commit (its next statement's snapshot comes after the lock): never two active
// versions, never a unique-index failure from a race.
caf::expected<fact_record> active_fact(pqxx::transaction_base& t, const std::string& user_id,
                                       const std::string& key) {
  t.exec_params("SELECT pg_advisory_xact_lock(hashtextextended(encode($1, 'hex') || '/'"
                " || encode($2, 'hex'), 0))",
                pg::bytes(user_id), pg::bytes(key));
  auto rows = t.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                            " WHERE user_id = $1 AND key = $2 AND active = 1",
                            pg::bytes(user_id), pg::bytes(key));
  if (rows.empty())
    return not_found("no fact '" + key + "' for user '" + user_id + "'");
  return decode_fact(rows[0]);
}

fact_record load_by_id(pqxx::transaction_base& t, int64_t id) {
  return decode_fact(
    t.exec_params1("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts WHERE id = $1", id));
}

// Both searched fields, as one text (the substring rule of store/facts.hpp).
std::string searched_text(const fact_record& f) {
  return f.key + "\n" + f.value;
}

// The word and CJK bigram routes: one match of mneme's tokens.
pqxx::result search_words(pqxx::transaction_base& t, const parsed_query& parsed,
                          const fact_query& q) {
  auto tsquery = to_pg_tsquery(parsed);
  if (tsquery.empty())
    return {};
  return t.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                       " WHERE user_id = $1 AND ($2 OR active = 1)"
                       " AND search_words @@ $3::tsquery"
                       " ORDER BY ts_rank(search_words, $3::tsquery) DESC, id DESC LIMIT $4",
                       pg::bytes(q.user_id), q.include_inactive, tsquery, q.limit);
}

// The trigram route: each positive clause has an alternative found by substring,
// no negated clause does (case-insensitive, the pg_trgm index serves ILIKE).
pqxx::result search_substrings(pqxx::transaction_base& t, const parsed_query& parsed,
                               const fact_query& q) {
  std::string where;
  std::vector<std::string> patterns;
  for (const auto& c : parsed.clauses) {
    std::string any;
    for (const auto& term : c.any_of) {
      patterns.push_back(like_pattern(term.text));
      any += (any.empty() ? "" : " OR ") + std::string{"search_text ILIKE $"}
             + std::to_string(patterns.size() + 3);
    }
    if (any.empty())
      continue;
    where += std::string{" AND "} + (c.negated ? "NOT " : "") + "(" + any + ")";
  }
  // The patterns are parameters $4.. (never spliced into the text).
  return t.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                       " WHERE user_id = $1 AND ($2 OR active = 1)"
                         + where + " ORDER BY id DESC LIMIT $3",
                       pg::bytes(q.user_id), q.include_inactive, q.limit,
                       pqxx::prepare::make_dynamic_params(patterns));
}

// The last resort, as on SQLite: the user's newest fact_scan_rows visible versions.
std::vector<fact_record> scan(pqxx::transaction_base& t, const parsed_query& parsed,
                              const fact_query& q) {
  auto rows = t.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                            " WHERE user_id = $1 AND ($2 OR active = 1)"
                            " ORDER BY id DESC LIMIT $3",
                            pg::bytes(q.user_id), q.include_inactive, fact_scan_rows);
  std::vector<fact_record> out;
  for (const auto& r : rows) {
    if (static_cast<int64_t>(out.size()) >= q.limit)
      break;
    auto f = decode_fact(r);
    if (fact_scan_matches(f, parsed))
      out.push_back(std::move(f));
  }
  return out;
}

} // namespace

caf::expected<fact_record> pg_put_fact(pqxx::connection& conn, const fact_record& f,
                                       time_ms now) {
  if (auto err = check_fact(f, now))
    return err;
  return pg::guarded("put fact", [&]() -> caf::expected<fact_record> {
    pqxx::work w{conn};
    auto current = active_fact(w, f.user_id, f.key);
    if (!current && current.error() != errc::not_found)
      return current;
    if (current && current->value == f.value && current->source_session == f.source_session)
      return current; // unchanged: no new version (the transaction rolls back)
    // The retired version leaves the unique active slot before its successor comes.
    if (current)
      w.exec_params0("UPDATE facts SET active = 0 WHERE id = $1", current->id);
    auto text = searched_text(f);
    auto id = w.exec_params1("INSERT INTO facts(user_id, key, value, source_session,"
                             " created_at_ms, updated_at_ms, search_words, search_text)"
                             " VALUES ($1, $2, $3, $4, $5, $6, $7::tsvector, $8) RETURNING id",
                             pg::bytes(f.user_id), pg::bytes(f.key), pg::bytes(f.value),
                             pg::bytes(f.source_session),
                             current ? current->created_at_ms : now, now,
                             pg_tsvector_literal(text), pg_search_text(text))[0]
                .as<int64_t>();
    if (current)
      w.exec_params0("UPDATE facts SET replaced_by = $2 WHERE id = $1", current->id, id);
    auto stored = load_by_id(w, id);
    w.commit();
    return stored;
  });
}

caf::expected<fact_record> pg_remove_fact(pqxx::connection& conn, const std::string& user_id,
                                          const std::string& key, time_ms now) {
  if (now < 0)
    return bad_request("fact: now must be >= 0");
  return pg::guarded("remove fact", [&]() -> caf::expected<fact_record> {
    pqxx::work w{conn};
    auto current = active_fact(w, user_id, key);
    if (!current)
      return current;
    w.exec_params0("UPDATE facts SET active = 0, removed_at_ms = $2 WHERE id = $1",
                   current->id, now > 0 ? now : time_ms{1});
    auto stored = load_by_id(w, current->id);
    w.commit();
    return stored;
  });
}

caf::expected<std::vector<fact_record>> pg_query_facts(pqxx::connection& conn,
                                                       const fact_query& q) {
  if (auto err = check_fact_query(q))
    return err;
  return pg::guarded("query facts", [&]() -> caf::expected<std::vector<fact_record>> {
    pqxx::read_transaction r{conn};
    if (q.text.empty())
      return decode_all(r.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                                      " WHERE user_id = $1 AND ($2 OR active = 1)"
                                      " ORDER BY id DESC LIMIT $3",
                                      pg::bytes(q.user_id), q.include_inactive, q.limit));
    auto parsed = parse_user_query(q.text);
    if (!parsed.has_positive_clause())
      return std::vector<fact_record>{};
    bool words_tried = false;
    for (auto route : plan_routes(parsed)) {
      std::vector<fact_record> hits;
      switch (route) {
        case recall_route::unicode61:
        case recall_route::cjk_bigram:
          if (words_tried)
            continue; // one index serves both routes
          words_tried = true;
          hits = decode_all(search_words(r, parsed, q));
          break;
        case recall_route::trigram: hits = decode_all(search_substrings(r, parsed, q)); break;
        case recall_route::substring_scan: hits = scan(r, parsed, q); break;
      }
      if (!hits.empty())
        return hits;
    }
    return std::vector<fact_record>{};
  });
}

caf::expected<std::vector<fact_record>> pg_facts_by_id(pqxx::connection& conn,
                                                       const std::string& user_id,
                                                       const std::vector<int64_t>& ids) {
  if (ids.empty())
    return std::vector<fact_record>{};
  std::string array = "{";
  for (std::size_t i = 0; i < ids.size(); ++i)
    array += (i == 0 ? "" : ",") + std::to_string(ids[i]);
  array += "}";
  return pg::guarded("facts by id", [&]() -> caf::expected<std::vector<fact_record>> {
    pqxx::read_transaction r{conn};
    auto found = decode_all(r.exec_params("SELECT " MNEME_PG_FACT_COLUMNS " FROM facts"
                                          " WHERE user_id = $1 AND id = ANY($2::bigint[])",
                                          pg::bytes(user_id), array));
    std::vector<fact_record> out;
    for (auto id : ids)
      for (auto& f : found)
        if (f.id == id)
          out.push_back(f);
    return out;
  });
}

} // namespace mneme
