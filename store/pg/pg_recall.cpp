// Recall search on PostgreSQL; see pg_recall.hpp.
#include "store/pg/pg_recall.hpp"

#include <algorithm>
#include <cassert>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <pqxx/pqxx>

#include "messages/errc.hpp"
#include "policies/cjk_bigram.hpp"
#include "policies/fts_query.hpp"
#include "policies/recall_grouping.hpp"
#include "policies/recall_text.hpp"
#include "store/pg/pg_error.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/pg/pg_search_columns.hpp"
#include "store/pg/pg_store.hpp"
#include "store/recall.hpp"
#include "store/vector_recall.hpp"
#include "store/word_tokens.hpp"

namespace mneme {

namespace {

constexpr int pg_recall_schema_version = 3;

// Rows a search may see: live and archived always, rolled back only when asked
// ($3 of every statement below is include_inactive).
#define MNEME_PG_VISIBLE(prefix) "($3 OR " prefix "active = 1 OR " prefix "compacted = 1)"

// One token route: $1 tsquery, $2 user id, $4 candidates. The user's visible
// matches, newest first (ranked in C++, see pg_recall.hpp).
#define MNEME_PG_TOKEN_ROUTE(column)                                                   \
  "SELECT m.id, st.session_id, m.search_text FROM messages m"                          \
  " JOIN message_state st ON st.id = m.id JOIN sessions se ON se.id = st.session_id"   \
  " WHERE m." column " @@ $1::tsquery AND se.user_id = $2 AND " MNEME_PG_VISIBLE("st.") \
  " ORDER BY m.id DESC LIMIT $4"

#define MNEME_PG_WINDOW_COLUMNS MNEME_PG_MESSAGE_COLUMNS ", position"

// $1 session, $2 position, $3 include_inactive, $4 id, $5 limit (shared numbering).
constexpr const char* pg_recall_statements[][2] = {
  {"recall_unicode61", MNEME_PG_TOKEN_ROUTE("search_unicode61")},
  {"recall_cjk", MNEME_PG_TOKEN_ROUTE("search_words")},
  // The newest $4 visible rows of user $2 whose text is ILIKE $1. Those rows are the
  // newest $4 of the union of each of the user's sessions' newest $4, read per session
  // from message_state_by_session: the work is bounded by the user's own rows in any
  // plan. (A plain top-$4 of the user's rows by id ran, as the prepared statement's
  // generic plan, as a walk of every user's newer rows: docs/benchmarks.md.)
  // A row not indexed yet (search_text NULL) is read with its content and matched in
  // C++ (pg_search_text of it is what search_text will hold).
  {"recall_scan",
   "SELECT m.id, st.session_id, m.search_text, m.content FROM messages m"
   " JOIN message_state st ON st.id = m.id"
   " WHERE m.id IN (SELECT r.id FROM sessions se CROSS JOIN LATERAL"
   "                  (SELECT s2.id FROM message_state s2"
   "                   WHERE s2.session_id = se.id AND " MNEME_PG_VISIBLE("s2.")
   "                   ORDER BY s2.id DESC LIMIT $4) r"
   "                WHERE se.user_id = $2 ORDER BY r.id DESC LIMIT $4)"
   " AND (m.search_text ILIKE $1 OR m.search_text IS NULL) ORDER BY m.id DESC"},
  // The unindexed tail: the newest $3 visible rows of user $1 whose recall columns
  // are still NULL ($2 include_inactive), from the partial index messages_unindexed
  // (schema v12). Read in the search's snapshot, so a row is either indexed (and
  // found by the routes) or here.
  {"recall_tail",
   "SELECT m.id, st.session_id, NULL::text, m.content FROM messages m"
   " JOIN message_state st ON st.id = m.id JOIN sessions se ON se.id = st.session_id"
   " WHERE m.search_text IS NULL AND se.user_id = $1"
   " AND ($2 OR st.active = 1 OR st.compacted = 1) ORDER BY m.id DESC LIMIT $3"},
  {"recall_parent", "SELECT parent_id FROM sessions WHERE id = $1 AND user_id = $2"},
  // The rows the vector index named ($1 their ids; store/vector_recall.hpp checks
  // owner and visibility).
  {"recall_vector_rows",
   "SELECT m.id, st.session_id, se.user_id, st.active, st.compacted, m.content"
   " FROM messages m JOIN message_state st ON st.id = m.id"
   " JOIN sessions se ON se.id = st.session_id WHERE m.id = ANY($1::bigint[])"},
  {"recall_hit", "SELECT " MNEME_PG_WINDOW_COLUMNS " FROM message_rows WHERE id = $1"},
  {"recall_before",
   "SELECT " MNEME_PG_WINDOW_COLUMNS " FROM message_rows WHERE session_id = $1 AND "
   MNEME_PG_VISIBLE("") " AND (position < $2 OR (position = $2 AND id < $4))"
   " ORDER BY position DESC, id DESC LIMIT $5"},
  {"recall_after",
   "SELECT " MNEME_PG_WINDOW_COLUMNS " FROM message_rows WHERE session_id = $1 AND "
   MNEME_PG_VISIBLE("") " AND (position > $2 OR (position = $2 AND id > $4))"
   " ORDER BY position ASC, id ASC LIMIT $5"},
  {"recall_first",
   "SELECT " MNEME_PG_WINDOW_COLUMNS " FROM message_rows WHERE session_id = $1 AND "
   MNEME_PG_VISIBLE("") " AND is_summary = 0 AND $2::bigint IS NOT NULL"
   " AND $4::bigint IS NOT NULL ORDER BY position ASC, id ASC LIMIT $5"},
  {"recall_last",
   "SELECT " MNEME_PG_WINDOW_COLUMNS " FROM message_rows WHERE session_id = $1 AND "
   MNEME_PG_VISIBLE("") " AND is_summary = 0 AND $2::bigint IS NOT NULL"
   " AND $4::bigint IS NOT NULL ORDER BY position DESC, id DESC LIMIT $5"},
};

using read_tx = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

using candidate = recall_candidate;

// A row of a route, before ranking.
struct ranked_row {
  int64_t id = 0;
  std::string session_id;
  std::string text;
  std::vector<bigram_token> tokens;
  double score = 0;
};

std::vector<bigram_token> route_tokens(recall_route route, std::string_view text) {
  return route == recall_route::unicode61 ? unicode61_tokens(text) : cjk_bigram_tokens(text);
}

std::vector<std::string> token_texts(recall_route route, std::string_view text) {
  std::vector<std::string> out;
  for (auto& t : route_tokens(route, text))
    out.push_back(std::move(t.text));
  return out;
}

// The lineage root of each session a search meets; the walk never leaves the
// searching user (as in store/sqlite/sqlite_recall.cpp).
conversation_cache pg_conversations(read_tx& t, const std::string& user) {
  return conversation_cache{[&t, &user](const std::string& id) -> std::optional<std::string> {
    auto r = t.exec_prepared("recall_parent", id, pg::bytes(user));
    if (r.empty())
      return std::nullopt;
    return r[0][0].as<std::string>();
  }};
}

struct search_state {
  read_tx& t;
  const recall_request& req;
  const parsed_query& q;
  conversation_cache conversations;
  std::unordered_set<std::string> seen;
  std::vector<candidate> found;

  bool full() const { return found.size() >= static_cast<std::size_t>(req.max_sessions); }

  // Adds the row as the hit of its conversation unless the conversation has one.
  candidate* take(int64_t id, const std::string& session, recall_route route, double score) {
    auto conversation = conversations.root_of(session);
    if (!seen.insert(conversation).second)
      return nullptr;
    candidate c;
    c.id = id;
    c.session_id = session;
    c.conversation_id = std::move(conversation);
    c.score = score;
    c.route = route;
    found.push_back(std::move(c));
    return &found.back();
  }
};

// Ranks `rows` (BM25 of pg_recall.hpp, `hits_of` giving each row's phrase hits
// and length) and adds the best row of each new conversation, best first.
template <class HitsOf, class SnippetOf>
void rank_and_take(search_state& s, recall_route route, std::vector<ranked_row>& rows,
                   HitsOf hits_of, SnippetOf snippet_of) {
  if (rows.empty())
    return;
  std::vector<std::pair<std::vector<int64_t>, int64_t>> stats;
  double total = 0;
  for (auto& r : rows) {
    stats.push_back(hits_of(r));
    total += static_cast<double>(stats.back().second);
  }
  auto avg = std::max(1.0, total / static_cast<double>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i].score = bm25_without_idf(stats[i].first, stats[i].second, avg);
  std::sort(rows.begin(), rows.end(), [](const ranked_row& a, const ranked_row& b) {
    return a.score != b.score ? a.score < b.score : a.id < b.id;
  });
  for (auto& r : rows) {
    if (s.full())
      break;
    if (auto* c = s.take(r.id, r.session_id, route, r.score))
      c->snippet = snippet_of(r);
  }
}

std::vector<ranked_row> read_rows(const pqxx::result& result) {
  std::vector<ranked_row> rows;
  rows.reserve(result.size());
  for (const auto& r : result) {
    ranked_row row;
    row.id = r[0].as<int64_t>();
    row.session_id = r[1].as<std::string>();
    row.text = r[2].as<std::string>();
    rows.push_back(std::move(row));
  }
  return rows;
}

void run_token_route(search_state& s, recall_route route) {
  auto tq = to_tsquery(s.q, [route](std::string_view term) { return token_texts(route, term); });
  if (tq.tsquery.empty())
    return;
  auto rows = read_rows(s.t.exec_prepared(
    route == recall_route::unicode61 ? "recall_unicode61" : "recall_cjk", tq.tsquery,
    pg::bytes(s.req.user_id), s.req.include_inactive, pg_rank_candidates));
  rank_and_take(
    s, route, rows,
    [&](ranked_row& r) {
      r.tokens = route_tokens(route, r.text);
      return std::make_pair(phrase_hits(r.tokens, tq.phrases),
                            static_cast<int64_t>(r.tokens.size()));
    },
    [&](ranked_row& r) { return token_snippet(r.text, r.tokens, tq.phrases); });
}

// Non-overlapping occurrences of `needle` in `hay` (both ASCII-lowered).
int64_t occurrences(const std::string& hay, const std::string& needle) {
  int64_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The trigram route: every clause as ILIKE patterns (alternatives OR-ed, NOT
// clauses negated), the user's visible matches, ranked by substring occurrences.
void run_trigram_route(search_state& s) {
  // $1 user (hex of its bytes), $2 candidates, $3 include_inactive, $4... patterns.
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char ch : s.req.user_id) {
    hex += digits[ch >> 4];
    hex += digits[ch & 0xF];
  }
  std::vector<std::string> all{hex, pqxx::to_string(pg_rank_candidates),
                               pqxx::to_string(s.req.include_inactive)};
  std::string where;
  std::vector<std::string> positive_terms;
  for (auto& c : s.q.clauses) {
    std::string clause;
    for (auto& t : c.any_of) {
      all.push_back(like_pattern(t.text));
      clause += (clause.empty() ? "" : " OR ") + std::string{"m.search_text ILIKE $"}
                + std::to_string(all.size());
      if (!c.negated)
        positive_terms.push_back(ascii_lower(t.text));
    }
    where += std::string{" AND "} + (c.negated ? "NOT " : "") + "(" + clause + ")";
  }
  auto sql = "SELECT m.id, st.session_id, m.search_text FROM messages m"
             " JOIN message_state st ON st.id = m.id JOIN sessions se ON se.id = st.session_id"
             " WHERE se.user_id = decode($1, 'hex') AND ($3::boolean OR st.active = 1"
             " OR st.compacted = 1)" + where + " ORDER BY m.id DESC LIMIT $2::bigint";
  auto rows = read_rows(s.t.exec_params(sql, pqxx::prepare::make_dynamic_params(all)));
  rank_and_take(
    s, recall_route::trigram, rows,
    [&](ranked_row& r) {
      auto lower = ascii_lower(r.text);
      std::vector<int64_t> hits;
      for (auto& term : positive_terms)
        hits.push_back(occurrences(lower, term));
      // Trigrams of the row: one per character past the second.
      auto chars = std::count_if(r.text.begin(), r.text.end(), [](char ch) {
        return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
      });
      return std::make_pair(std::move(hits), std::max<int64_t>(1, chars - 2));
    },
    [&](ranked_row& r) { return scan_snippet(r.text, ascii_lower(r.text), s.q); });
}

// The first positive single-term clause narrows the scan in SQL; every clause is
// then checked on the text (as store/sqlite/sqlite_recall.cpp's scan).
std::string scan_pattern(const parsed_query& q) {
  for (auto& c : q.clauses)
    if (!c.negated && c.any_of.size() == 1)
      return like_pattern(c.any_of.front().text);
  return "%";
}

// Rows (id, session, search_text or NULL, content) matched by the substring rules,
// newest first; a NULL search_text is computed from the content.
void take_scanned(search_state& s, const pqxx::result& result, bool from_tail) {
  for (const auto& r : result) {
    if (s.full())
      break;
    auto text = r[2].is_null() ? pg_search_text(pg::text_of(r[3])) : r[2].as<std::string>();
    auto lower = ascii_lower(text);
    if (!text_matches_query(lower, s.q))
      continue;
    if (auto* c = s.take(r[0].as<int64_t>(), r[1].as<std::string>(),
                         recall_route::substring_scan, 0)) {
      c->snippet = scan_snippet(text, lower, s.q);
      c->from_tail = from_tail;
    }
  }
}

void run_substring_scan(search_state& s) {
  take_scanned(s,
               s.t.exec_prepared("recall_scan", scan_pattern(s.q), pg::bytes(s.req.user_id),
                                 s.req.include_inactive, substring_scan_rows),
               false);
}

void run_tail_scan(search_state& s) {
  take_scanned(s,
               s.t.exec_prepared("recall_tail", pg::bytes(s.req.user_id),
                                 s.req.include_inactive, tail_scan_rows),
               true);
}

struct positioned {
  message m;
  int64_t position = 0;
};

caf::expected<std::vector<message>> load_rows(read_tx& t, const char* statement,
                                              const positioned& hit, bool include_inactive,
                                              int64_t limit) {
  return pg::decode_messages(t.exec_prepared(statement, hit.m.session_id, hit.position,
                                             include_inactive, hit.m.id, limit));
}

caf::expected<recall_hit> anchor(read_tx& t, const candidate& c, bool include_inactive) {
  auto row = t.exec_prepared("recall_hit", c.id);
  auto decoded = pg::decode_messages(row);
  if (!decoded)
    return std::move(decoded.error());
  if (decoded->size() != 1)
    return caf::make_error(errc::storage_failed,
                           "postgres: recall hit row " + std::to_string(c.id) + " vanished");
  positioned hit{std::move(decoded->front()), row[0][15].as<int64_t>()};
  recall_hit out;
  out.conversation_id = c.conversation_id;
  out.kind = kind_of(hit.m);
  out.route = c.from_vector ? std::string{vector_route}
              : c.from_tail  ? std::string{unindexed_tail_route}
                             : std::string{to_string(c.route)};
  out.score = c.score;
  out.snippet = c.snippet;
  auto before = load_rows(t, "recall_before", hit, include_inactive, recall_window_radius);
  auto after = load_rows(t, "recall_after", hit, include_inactive, recall_window_radius);
  auto first = load_rows(t, "recall_first", hit, include_inactive, recall_bookend_count);
  auto last = load_rows(t, "recall_last", hit, include_inactive, recall_bookend_count);
  for (auto* part : {&before, &after, &first, &last})
    if (!*part)
      return std::move(part->error());
  std::reverse(before->begin(), before->end());
  out.window = std::move(*before);
  out.window.push_back(hit.m);
  out.window.insert(out.window.end(), after->begin(), after->end());
  std::unordered_set<int64_t> shown;
  for (auto& m : out.window)
    shown.insert(m.id);
  std::reverse(last->begin(), last->end());
  for (auto& m : *first)
    if (shown.insert(m.id).second) out.first.push_back(std::move(m));
  for (auto& m : *last)
    if (shown.insert(m.id).second) out.last.push_back(std::move(m));
  out.hit = std::move(hit.m);
  assert(out.window.size() + out.first.size() + out.last.size()
         <= static_cast<std::size_t>(recall_max_messages_per_hit));
  return out;
}

std::vector<vector_row> read_vector_rows(read_tx& t, const std::vector<int64_t>& ids) {
  std::vector<vector_row> rows;
  for (const auto& r : t.exec_prepared("recall_vector_rows", pg::bigint_array(ids))) {
    vector_row row;
    row.id = r[0].as<int64_t>();
    row.session_id = r[1].as<std::string>();
    row.user_id = pg::text_of(r[2]);
    row.active = r[3].as<int64_t>() != 0;
    row.compacted = r[4].as<int64_t>() != 0;
    row.text = pg::text_of(r[5]);
    rows.push_back(std::move(row));
  }
  return rows;
}

// The full-text leg: the routes in order until s.req.max_sessions conversations are
// found, their names in `routes_tried`.
void full_text_leg(search_state& s, std::vector<std::string>& routes_tried) {
  bool tail_scanned = false;
  for (auto route : plan_routes(s.q)) {
    // As on SQLite: the unindexed rows rank after every full-text hit and before the
    // last-resort scan (which covers them too and skips their conversations).
    // plan_routes() plans routes only for a query with a positive clause.
    if (route == recall_route::substring_scan && !tail_scanned) {
      tail_scanned = true;
      if (!s.full()) {
        routes_tried.emplace_back(unindexed_tail_route);
        run_tail_scan(s);
      }
    }
    if (s.full())
      break;
    if (route == recall_route::substring_scan && !s.found.empty())
      break;
    routes_tried.emplace_back(to_string(route));
    switch (route) {
      case recall_route::unicode61:
      case recall_route::cjk_bigram: run_token_route(s, route); break;
      case recall_route::trigram: run_trigram_route(s); break;
      case recall_route::substring_scan: run_substring_scan(s); break;
    }
  }
}

} // namespace

caf::expected<std::unique_ptr<pg_recall_source>> pg_recall_source::open(
  const store_params& params) {
  auto connected = pg_connect(params, "connect recall reader");
  if (!connected)
    return std::move(connected.error());
  auto conn = std::move(*connected);
  auto version = pg_schema_version(*conn);
  if (!version)
    return std::move(version.error());
  if (*version < pg_recall_schema_version || *version > pg_latest_schema_version())
    return caf::make_error(errc::storage_failed,
                           "postgres: recall needs schema version "
                             + std::to_string(pg_recall_schema_version) + ".."
                             + std::to_string(pg_latest_schema_version()) + ", the database has "
                             + std::to_string(*version)
                             + " (the store migrates it when it opens)");
  return pg::guarded("open recall reader",
                     [&]() -> caf::expected<std::unique_ptr<pg_recall_source>> {
                       // Versions apply out of order (pg_apply_migrations): v3 itself.
                       pqxx::nontransaction t{*conn};
                       if (t.exec_params("SELECT 1 FROM mneme_schema_versions"
                                         " WHERE version = $1", pg_recall_schema_version)
                             .empty())
                         return caf::make_error(errc::storage_failed,
                                                "postgres: recall needs schema version 3"
                                                " (the store migrates it when it opens)");
                       t.commit();
                       conn->set_variable("default_transaction_read_only", "on");
                       for (const auto& s : pg_recall_statements)
                         conn->prepare(s[0], s[1]);
                       return std::unique_ptr<pg_recall_source>{
                         new pg_recall_source(std::move(conn))};
                     });
}

caf::expected<recall_result> pg_recall_source::search(const recall_request& req) {
  if (auto err = check_recall_request(req))
    return err;
  auto q = parse_user_query(req.query);
  return pg::guarded("recall search", [&]() -> caf::expected<recall_result> {
    recall_result result;
    result.query_truncated = q.truncated;
    read_tx t{*conn_};
    auto legs = plan_recall_legs(req, vectors_.get(), result);
    // The full-text leg collects its own number of conversations (more than
    // max_sessions when it is fused with the vector leg).
    auto leg = req;
    leg.max_sessions = static_cast<int32_t>(legs.full_text_conversations);
    search_state s{t, leg, q, pg_conversations(t, req.user_id), {}, {}};
    if (legs.full_text)
      full_text_leg(s, result.routes_tried);
    std::vector<candidate> near;
    if (legs.vector) {
      auto v = vector_leg(
        *vectors_, req, legs.vector_conversations,
        [&t](const std::vector<int64_t>& ids) -> caf::expected<std::vector<vector_row>> {
          return read_vector_rows(t, ids);
        },
        [&s](const std::string& session) -> caf::expected<std::string> {
          return s.conversations.root_of(session);
        });
      if (!v)
        return std::move(v.error());
      near = std::move(*v);
    }
    s.found = merge_recall_legs(std::move(s.found), std::move(near), legs,
                                static_cast<std::size_t>(req.max_sessions));
    for (auto& c : s.found) {
      auto hit = anchor(t, c, req.include_inactive);
      if (!hit)
        return std::move(hit.error());
      result.hits.push_back(std::move(*hit));
    }
    t.commit();
    return result;
  });
}

} // namespace mneme
