// Cross-session recall on SQLite; see sqlite_recall.hpp.
#include "store/sqlite/sqlite_recall.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <sqlite3.h>

#include "caf/make_message.hpp"

#include "messages/errc.hpp"
#include "policies/fts_candidates.hpp"
#include "policies/fts_query.hpp"
#include "policies/recall_grouping.hpp"
#include "policies/recall_text.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/message_rows.hpp"
#include "store/vector_recall.hpp"

namespace mneme {

namespace {

// Rows a search may see: live and archived always, rolled back only when asked.
#define MNEME_VISIBLE(prefix) \
  "(?3 OR " prefix "active = 1 OR " prefix "compacted = 1)"

// One full-text route: ?1 MATCH expression, ?2 user id, ?3 include_inactive.
// Columns: rowid, session id, BM25 x 1e6 (integer); one row per session (its best
// row), best first, equal scores by row id. BM25 is computed only for rows that
// passed the tenant/visibility filter, never for every match of every tenant
// (FTS5's `ORDER BY rank` ranks them all before a join can drop any).
// MATERIALIZED keeps bm25() evaluated while the FTS5 cursor is on its row (not
// inside GROUP BY's sorter); CROSS JOIN keeps the FTS5 scan as the outer loop, so
// FTS5 is never asked once per row id. Two filters with the same result:
//   - few matches (MNEME_FTS_SEARCH_JOINED): each match is joined to its state
//     and session row (two primary-key lookups per match);
//   - many matches (MNEME_FTS_SEARCH_MEMBER): the tenant's visible row ids are
//     listed once (`+rowid IN (...)`, an ephemeral index) and each match is one
//     membership probe. Listing costs about as much as ~1,000 joined matches.
#define MNEME_FTS_HITS_TO_SESSIONS                                                   \
  " SELECT id, session_id, CAST(round(min(score) * 1000000) AS INTEGER) AS best"       \
  " FROM hits GROUP BY session_id ORDER BY min(score), id"

#define MNEME_FTS_SEARCH_JOINED(table)                                               \
  "WITH hits AS MATERIALIZED (SELECT " table ".rowid AS id, st.session_id AS session_id,"\
  " bm25(" table ") AS score FROM " table " CROSS JOIN message_state st ON st.id = " table ".rowid"\
  " CROSS JOIN sessions se ON se.id = st.session_id"                                     \
  " WHERE " table " MATCH ?1 AND se.user_id = ?2 AND " MNEME_VISIBLE("st.") ")"         \
  MNEME_FTS_HITS_TO_SESSIONS

#define MNEME_FTS_SEARCH_MEMBER(table)                                               \
  "WITH hits AS MATERIALIZED (SELECT " table ".rowid AS id, st.session_id AS session_id,"\
  " bm25(" table ") AS score FROM " table " CROSS JOIN message_state st ON st.id = " table ".rowid"\
  " WHERE " table " MATCH ?1 AND +" table ".rowid IN (SELECT s2.id FROM sessions se"     \
  " JOIN message_state s2 ON s2.session_id = se.id WHERE se.user_id = ?2 AND "           \
  MNEME_VISIBLE("s2.") "))"                                                            \
  MNEME_FTS_HITS_TO_SESSIONS

// Matches of ?1 in the whole index, counted up to ?2 (no ranking, no join).
#define MNEME_FTS_COUNT(table)                                                       \
  "SELECT count(*) FROM (SELECT 1 FROM " table " WHERE " table " MATCH ?1 LIMIT ?2)"

// The bounded plan for a frequent query (policies/fts_candidates.hpp): every match
// of ?1 whose row id is in the searching user's span ?4..?5, newest first (FTS5 reads
// its index in descending row id, so nothing is sorted and the caller stops stepping
// when it has enough). Columns: rowid, session id, and BM25 only for the user's (?2)
// visible (?3) rows, else NULL: CASE evaluates bm25() only for them, while the FTS5
// cursor is on the row. The LEFT JOINs keep the FTS5 scan as the outer loop.
#define MNEME_FTS_NEWEST(table)                                                      \
  "SELECT " table ".rowid, st.session_id, CASE WHEN se.user_id = ?2 AND "              \
  MNEME_VISIBLE("st.") " THEN bm25(" table ") END FROM " table                          \
  " LEFT JOIN message_state st ON st.id = " table ".rowid"                             \
  " LEFT JOIN sessions se ON se.id = st.session_id"                                    \
  " WHERE " table " MATCH ?1 AND " table ".rowid BETWEEN ?4 AND ?5"                    \
  " ORDER BY " table ".rowid DESC"

// The highlighted snippet of one hit: ?1 MATCH expression, ?2 rowid.
#define MNEME_FTS_SNIPPET(table)                                                     \
  "SELECT snippet(" table ", 0, '>>>', '<<<', '…', 24) FROM " table                   \
  " WHERE " table " MATCH ?1 AND rowid = ?2"

struct route_statements {
  const char* joined;
  const char* member;
  const char* count;
  const char* newest;
  const char* snippet;
};

#define MNEME_ROUTE_STATEMENTS(table)                                                \
  route_statements {                                                                 \
    MNEME_FTS_SEARCH_JOINED(table), MNEME_FTS_SEARCH_MEMBER(table),                  \
      MNEME_FTS_COUNT(table), MNEME_FTS_NEWEST(table), MNEME_FTS_SNIPPET(table)      \
  }

// The lowest and highest row id of user ?1's sessions (every row, visible or not: a
// superset of what a search may find), one index probe per session and end, and the
// number of its sessions.
constexpr const char* user_span_sql =
  "SELECT min(lo), max(hi), count(*) FROM (SELECT"
  " (SELECT min(id) FROM message_state WHERE session_id = se.id) AS lo,"
  " (SELECT max(id) FROM message_state WHERE session_id = se.id) AS hi"
  " FROM sessions se WHERE se.user_id = ?1)";

constexpr route_statements words_statements = MNEME_ROUTE_STATEMENTS("fts_words");
constexpr route_statements cjk_statements = MNEME_ROUTE_STATEMENTS("fts_cjk");
constexpr route_statements trigram_statements = MNEME_ROUTE_STATEMENTS("fts_trigram");

// The substring scan: the newest ?4 visible rows of user ?2 whose text is LIKE ?1.
constexpr const char* substring_scan_sql =
  "SELECT m.id, st.session_id, m.content FROM messages m"
  " JOIN message_state st ON st.id = m.id"
  " WHERE m.id IN (SELECT s2.id FROM message_state s2"
  "                JOIN sessions se ON se.id = s2.session_id"
  "                WHERE se.user_id = ?2 AND (?3 OR s2.active = 1 OR s2.compacted = 1)"
  "                ORDER BY s2.id DESC LIMIT ?4)"
  " AND m.content LIKE ?1 ESCAPE '\\'"
  " ORDER BY m.id DESC";

// The unindexed tail: the newest ?3 visible rows of user ?1 above the index
// watermark whose text is LIKE ?4 (?2 include_inactive). Read in the search's
// snapshot, so a row is either below the watermark (and in the indexes) or here.
constexpr const char* tail_scan_sql =
  "SELECT m.id, st.session_id, m.content FROM message_state st"
  " JOIN sessions se ON se.id = st.session_id"
  " JOIN messages m ON m.id = st.id"
  " WHERE st.id > (SELECT indexed_through FROM fts_state)"
  " AND se.user_id = ?1 AND (?2 OR st.active = 1 OR st.compacted = 1)"
  " AND m.content LIKE ?4 ESCAPE '\\'"
  " ORDER BY st.id DESC LIMIT ?3";

// The rows the vector index named (store/vector_recall.hpp checks owner and
// visibility): ?1 a row id.
constexpr const char* vector_row_sql =
  "SELECT m.id, st.session_id, se.user_id, st.active, st.compacted, m.content"
  " FROM messages m JOIN message_state st ON st.id = m.id"
  " JOIN sessions se ON se.id = st.session_id WHERE m.id = ?1";

constexpr const char* hit_row_sql =
  "SELECT " MNEME_MESSAGE_COLUMNS ", position FROM message_rows WHERE id = ?1";

// ?1 session, ?2 position, ?3 include_inactive (shared numbering), ?4 id, ?5 limit.
constexpr const char* before_sql =
  "SELECT " MNEME_MESSAGE_COLUMNS ", position FROM message_rows"
  " WHERE session_id = ?1 AND " MNEME_VISIBLE("")
  " AND (position < ?2 OR (position = ?2 AND id < ?4))"
  " ORDER BY position DESC, id DESC LIMIT ?5";

constexpr const char* after_sql =
  "SELECT " MNEME_MESSAGE_COLUMNS ", position FROM message_rows"
  " WHERE session_id = ?1 AND " MNEME_VISIBLE("")
  " AND (position > ?2 OR (position = ?2 AND id > ?4))"
  " ORDER BY position ASC, id ASC LIMIT ?5";

constexpr const char* first_rows_sql =
  "SELECT " MNEME_MESSAGE_COLUMNS ", position FROM message_rows"
  " WHERE session_id = ?1 AND " MNEME_VISIBLE("") " AND is_summary = 0"
  " ORDER BY position ASC, id ASC LIMIT ?5";

constexpr const char* last_rows_sql =
  "SELECT " MNEME_MESSAGE_COLUMNS ", position FROM message_rows"
  " WHERE session_id = ?1 AND " MNEME_VISIBLE("") " AND is_summary = 0"
  " ORDER BY position DESC, id DESC LIMIT ?5";


using candidate = recall_candidate;

struct positioned {
  message m;
  int64_t position = 0;
};

// ?1 a session, ?2 the searching user: its parent when the session is the user's.
constexpr const char* parent_of_sql =
  "SELECT parent_id FROM sessions WHERE id = ?1 AND user_id = ?2";

// The conversation (lineage root) of each session a search meets, looked up
// once per session and search (policies/recall_grouping.hpp). A lineage never
// leaves the searching user: a parent of another user ends the walk.
class conversation_map {
public:
  conversation_map(db_connection& db, const std::string& user)
    : db_(db), user_(user), cache_([this](const std::string& id) { return parent_of(id); }) {}

  caf::expected<std::string> root_of(const std::string& session_id) {
    auto root = cache_.root_of(session_id);
    if (failed_)
      return failed_;
    return root;
  }

private:
  std::optional<std::string> parent_of(const std::string& id) {
    if (failed_)
      return std::nullopt;
    auto stmt = db_.prepare(parent_of_sql);
    if (!stmt) {
      failed_ = std::move(stmt.error());
      return std::nullopt;
    }
    statement_scope s{**stmt};
    s->bind(1, id);
    s->bind(2, user_);
    auto rc = s->step();
    if (rc == SQLITE_ROW)
      return s->column_text(0);
    if (rc != SQLITE_DONE)
      failed_ = db_.failure(rc, "recall conversation lineage");
    return std::nullopt;
  }

  db_connection& db_;
  const std::string& user_;
  caf::error failed_;
  conversation_cache cache_;
};

const route_statements* statements_of(recall_route r) {
  switch (r) {
    case recall_route::unicode61: return &words_statements;
    case recall_route::cjk_bigram: return &cjk_statements;
    case recall_route::trigram: return &trigram_statements;
    case recall_route::substring_scan: break;
  }
  return nullptr;
}

caf::expected<positioned> decode_positioned(statement& row) {
  auto m = decode_message(row);
  if (!m)
    return std::move(m.error());
  return positioned{std::move(*m), row.column_int(15)};
}

// Matches of `match` in one index, counted up to fts_member_filter_matches. A
// MATCH the index rejects counts 0 (the route then finds nothing).
caf::expected<int64_t> count_matches(db_connection& db, const char* count_sql,
                                     const std::string& match) {
  auto stmt = db.prepare(count_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, match);
  s->bind(2, fts_member_filter_matches);
  auto rc = s->step();
  if (rc == SQLITE_ROW)
    return s->column_int(0);
  if ((rc & 0xFF) == SQLITE_ERROR)
    return int64_t{0};
  return db.failure(rc, "recall match count");
}

// The snippet of candidate `c` found by `route` with `match`.
caf::error load_snippet(db_connection& db, recall_route route, const std::string& match,
                        candidate& c) {
  auto stmt = db.prepare(statements_of(route)->snippet);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, match);
  s->bind(2, c.id);
  auto rc = s->step();
  if (rc == SQLITE_ROW)
    c.snippet = s->column_text(0);
  else if (rc != SQLITE_DONE)
    return db.failure(rc, std::string{"recall snippet on "} + std::string{to_string(route)});
  return {};
}

// Adds row `id` of `session`, found by `route` with `score`, as a candidate when its
// conversation holds none yet; false when it already holds one.
caf::expected<bool> add_if_new(recall_route route, std::string session, double score,
                               int64_t id, conversation_map& conversations,
                               std::unordered_set<std::string>& seen, std::vector<candidate>& out) {
  auto conversation = conversations.root_of(session);
  if (!conversation)
    return std::move(conversation.error());
  if (!seen.insert(*conversation).second)
    return false;
  candidate c;
  c.id = id;
  c.session_id = std::move(session);
  c.conversation_id = std::move(*conversation);
  c.score = score;
  c.route = route;
  out.push_back(std::move(c));
  return true;
}

// The full plan: every match of the user scored in SQL, one row per session (its
// best), best first; adds the best row of every conversation not seen yet until
// `max_sessions` are known (the first row of a conversation is its best here).
caf::error rank_all_matches(db_connection& db, recall_route route, const char* sql,
                            const std::string& match, const recall_request& req,
                            conversation_map& conversations,
                            std::unordered_set<std::string>& seen, std::vector<candidate>& out) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, match);
  s->bind(2, req.user_id);
  s->bind(3, int64_t{req.include_inactive ? 1 : 0});
  while (out.size() < static_cast<std::size_t>(req.max_sessions)) {
    auto rc = s->step();
    if (rc == SQLITE_DONE || (rc & 0xFF) == SQLITE_ERROR)
      break;
    if (rc != SQLITE_ROW)
      return db.failure(rc, std::string{"recall search on "} + std::string{to_string(route)});
    auto added = add_if_new(route, s->column_text(1),
                            static_cast<double>(s->column_int(2)) / 1e6, s->column_int(0),
                            conversations, seen, out);
    if (!added)
      return std::move(added.error());
  }
  return {};
}

// The user's rows as the bounded plan needs them: the row-id span of its sessions
// and how many sessions it has (no more conversations than that can be found).
struct user_rows {
  int64_t lowest_id = 0, highest_id = 0, sessions = 0;
};

// The user's rows; nullopt when it has no row.
caf::expected<std::optional<user_rows>> user_span(db_connection& db, const std::string& user) {
  auto stmt = db.prepare(user_span_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, user);
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "recall user span");
  if (s->column_is_null(0))
    return std::optional<user_rows>{};
  return std::optional<user_rows>{{s->column_int(0), s->column_int(1), s->column_int(2)}};
}

// The bounded plan (policies/fts_candidates.hpp): the user's newest matches within
// its span, until the policy has enough candidates, then only those ranked. Returns
// false when the scan gave up (nothing added; the caller runs the full plan).
caf::expected<bool> rank_newest_matches(db_connection& db, recall_route route,
                                        const std::string& match, const recall_request& req,
                                        conversation_map& conversations,
                                        std::unordered_set<std::string>& seen,
                                        std::vector<candidate>& out) {
  auto span = user_span(db, req.user_id);
  if (!span)
    return std::move(span.error());
  // Conversations still wanted, at most one per session of the user.
  const auto wanted = std::min<int64_t>(req.max_sessions, *span ? (*span)->sessions : 0)
                      - static_cast<int64_t>(out.size());
  if (wanted <= 0)
    return true; // no row, or every session already holds a hit
  std::vector<scored_row> rows;
  {
    auto stmt = db.prepare(statements_of(route)->newest);
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, match);
    s->bind(2, req.user_id);
    s->bind(3, int64_t{req.include_inactive ? 1 : 0});
    s->bind(4, (*span)->lowest_id);
    s->bind(5, (*span)->highest_id);
    const fts_candidate_params params;
    std::unordered_set<std::string> new_conversations;
    for (int64_t examined = 0;;) {
      auto next = next_newest_scan_step(examined, static_cast<int64_t>(rows.size()),
                                        static_cast<int64_t>(new_conversations.size()),
                                        wanted, params);
      if (next == newest_scan_step::enough)
        break;
      if (next == newest_scan_step::give_up)
        return false;
      auto rc = s->step();
      if (rc == SQLITE_DONE || (rc & 0xFF) == SQLITE_ERROR)
        break; // every match of the user seen: the ranking below is the full plan's
      if (rc != SQLITE_ROW)
        return db.failure(rc, std::string{"recall newest matches on "}
                                + std::string{to_string(route)});
      ++examined;
      if (s->column_is_null(2))
        continue; // another tenant's row, or one the search may not see
      scored_row r;
      r.id = s->column_int(0);
      r.session_id = s->column_text(1);
      r.score = s->column_double(2);
      auto conversation = conversations.root_of(r.session_id);
      if (!conversation)
        return std::move(conversation.error());
      if (seen.count(*conversation) == 0)
        new_conversations.insert(*conversation);
      rows.push_back(std::move(r));
    }
  }
  for (auto& r : best_row_per_session(std::move(rows))) {
    if (out.size() >= static_cast<std::size_t>(req.max_sessions))
      break;
    // Rounded as the full plan's SQL rounds its scores.
    auto score = static_cast<double>(std::llround(r.score * 1e6)) / 1e6;
    auto added = add_if_new(route, std::move(r.session_id), score, r.id, conversations, seen,
                            out);
    if (!added)
      return std::move(added.error());
  }
  return true;
}

// Runs one full-text route, adding the best row of every conversation not seen yet
// until `max_sessions` conversations are known, then their snippets (only for those
// rows). A MATCH the index rejects (SQLITE_ERROR) finds nothing on that route
// instead of failing the search. A frequent query (policies/fts_candidates.hpp) on
// the unicode61 and CJK routes takes the bounded plan unless `plan` says rank_all.
caf::error run_fts_route(db_connection& db, recall_route route, const std::string& match,
                         const recall_request& req, frequent_term_plan plan,
                         conversation_map& conversations, std::unordered_set<std::string>& seen,
                         std::vector<candidate>& out) {
  auto first_new = out.size();
  const auto* sql = statements_of(route);
  assert(sql != nullptr);
  // Trigram doclists are long for any query (every 3-character window of common
  // text), so counting would add a second full pass over the match: always list.
  bool use_list = route == recall_route::trigram;
  int64_t matches = 0;
  if (!use_list) {
    auto counted = count_matches(db, sql->count, match);
    if (!counted)
      return std::move(counted.error());
    matches = *counted;
    use_list = matches >= fts_member_filter_matches;
  }
  bool ranked = false;
  auto bounded = plan == frequent_term_plan::newest_first && route != recall_route::trigram;
  if (choose_fts_route_plan(matches, bounded, fts_candidate_params{})
      == fts_route_plan::newest_first) {
    auto done = rank_newest_matches(db, route, match, req, conversations, seen, out);
    if (!done)
      return std::move(done.error());
    ranked = *done;
  }
  if (!ranked)
    if (auto err = rank_all_matches(db, route, use_list ? sql->member : sql->joined, match, req,
                                    conversations, seen, out))
      return err;
  for (auto i = first_new; i < out.size(); ++i)
    if (auto err = load_snippet(db, route, match, out[i]))
      return err;
  return {};
}

// The first positive single-term clause narrows a scan in SQL (LIKE); every
// clause is then checked on the text by scan_rows().
std::string narrowing_pattern(const parsed_query& q) {
  for (auto& c : q.clauses)
    if (!c.negated && c.any_of.size() == 1)
      return like_pattern(c.any_of.front().text);
  return "%";
}

// Steps a scan statement (columns: id, session id, content), adding the newest
// matching row of every conversation not seen yet until `max_sessions` are known.
caf::error scan_rows(db_connection& db, statement& s, const parsed_query& q,
                     const recall_request& req, bool from_tail,
                     conversation_map& conversations, std::unordered_set<std::string>& seen,
                     std::vector<candidate>& out) {
  while (out.size() < static_cast<std::size_t>(req.max_sessions)) {
    auto rc = s.step();
    if (rc == SQLITE_DONE)
      break;
    if (rc != SQLITE_ROW)
      return db.failure(rc, from_tail ? "recall unindexed tail scan" : "recall substring scan");
    auto session = s.column_text(1);
    auto conversation = conversations.root_of(session);
    if (!conversation)
      return std::move(conversation.error());
    if (seen.count(*conversation) != 0)
      continue;
    auto text = s.column_text(2);
    auto lower = ascii_lower(text);
    if (!text_matches_query(lower, q))
      continue;
    seen.insert(*conversation);
    candidate c;
    c.id = s.column_int(0);
    c.session_id = std::move(session);
    c.conversation_id = std::move(*conversation);
    c.snippet = scan_snippet(text, lower, q);
    c.route = recall_route::substring_scan;
    c.from_tail = from_tail;
    out.push_back(std::move(c));
  }
  return {};
}

caf::error run_substring_scan(db_connection& db, const parsed_query& q,
                              const recall_request& req, conversation_map& conversations,
                              std::unordered_set<std::string>& seen,
                              std::vector<candidate>& out) {
  auto stmt = db.prepare(substring_scan_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, narrowing_pattern(q));
  s->bind(2, req.user_id);
  s->bind(3, int64_t{req.include_inactive ? 1 : 0});
  s->bind(4, substring_scan_rows);
  return scan_rows(db, s.get(), q, req, false, conversations, seen, out);
}

caf::error run_tail_scan(db_connection& db, const parsed_query& q, const recall_request& req,
                         conversation_map& conversations, std::unordered_set<std::string>& seen,
                         std::vector<candidate>& out) {
  auto stmt = db.prepare(tail_scan_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, req.user_id);
  s->bind(2, int64_t{req.include_inactive ? 1 : 0});
  s->bind(3, tail_scan_rows);
  s->bind(4, narrowing_pattern(q));
  return scan_rows(db, s.get(), q, req, true, conversations, seen, out);
}

// Rows of `sql` (window or bookend statements) for the hit's session.
caf::error load_rows(db_connection& db, const char* sql, const positioned& hit,
                     bool include_inactive, int64_t limit, std::vector<message>& out) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, hit.m.session_id);
  s->bind(2, hit.position);
  s->bind(3, int64_t{include_inactive ? 1 : 0});
  s->bind(4, hit.m.id);
  s->bind(5, limit);
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return {};
    if (rc != SQLITE_ROW)
      return db.failure(rc, "recall anchored view");
    auto m = decode_message(s.get());
    if (!m)
      return std::move(m.error());
    out.push_back(std::move(*m));
  }
}

caf::expected<recall_hit> anchor(db_connection& db, const candidate& c, const parsed_query& q,
                                 bool include_inactive) {
  auto stmt = db.prepare(hit_row_sql);
  if (!stmt)
    return std::move(stmt.error());
  positioned hit;
  {
    statement_scope s{**stmt};
    s->bind(1, c.id);
    auto rc = s->step();
    if (rc != SQLITE_ROW)
      return db.failure(rc, "recall hit row");
    auto row = decode_positioned(s.get());
    if (!row)
      return std::move(row.error());
    hit = std::move(*row);
  }
  recall_hit out;
  out.conversation_id = c.conversation_id;
  out.kind = kind_of(hit.m);
  out.route = c.from_vector ? std::string{vector_route}
              : c.from_tail ? std::string{unindexed_tail_route}
                            : std::string{to_string(c.route)};
  out.score = c.score;
  out.snippet = c.snippet;
  if (c.route == recall_route::trigram && !c.from_vector) {
    // FTS5 highlights whole trigrams, which can stop short of the match's last
    // character; the literal match is marked exactly when it can be found.
    auto exact = scan_snippet(hit.m.content, ascii_lower(hit.m.content), q);
    if (!exact.empty())
      out.snippet = std::move(exact);
  }
  std::vector<message> before;
  if (auto err = load_rows(db, before_sql, hit, include_inactive, recall_window_radius, before))
    return err;
  std::reverse(before.begin(), before.end());
  out.window = std::move(before);
  out.window.push_back(hit.m);
  if (auto err = load_rows(db, after_sql, hit, include_inactive, recall_window_radius,
                           out.window))
    return err;
  std::unordered_set<int64_t> shown;
  for (auto& m : out.window)
    shown.insert(m.id);
  std::vector<message> first, last;
  if (auto err = load_rows(db, first_rows_sql, hit, include_inactive, recall_bookend_count, first))
    return err;
  if (auto err = load_rows(db, last_rows_sql, hit, include_inactive, recall_bookend_count, last))
    return err;
  std::reverse(last.begin(), last.end());
  for (auto& m : first)
    if (shown.insert(m.id).second) out.first.push_back(std::move(m));
  for (auto& m : last)
    if (shown.insert(m.id).second) out.last.push_back(std::move(m));
  out.hit = std::move(hit.m);
  assert(out.window.size() + out.first.size() + out.last.size()
         <= static_cast<std::size_t>(recall_max_messages_per_hit));
  return out;
}

// The rows of `ids` that exist (the vector leg's lookup), one primary-key probe each.
caf::expected<std::vector<vector_row>> read_vector_rows(db_connection& db,
                                                        const std::vector<int64_t>& ids) {
  std::vector<vector_row> rows;
  auto stmt = db.prepare(vector_row_sql);
  if (!stmt)
    return std::move(stmt.error());
  for (auto id : ids) {
    statement_scope s{**stmt};
    s->bind(1, id);
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      continue;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "recall vector rows");
    vector_row r;
    r.id = s->column_int(0);
    r.session_id = s->column_text(1);
    r.user_id = s->column_text(2);
    r.active = s->column_int(3) != 0;
    r.compacted = s->column_int(4) != 0;
    r.text = s->column_text(5);
    rows.push_back(std::move(r));
  }
  return rows;
}

// One read transaction around a search, so the hits and their anchored views come
// from the same snapshot of the database.
class read_snapshot {
public:
  explicit read_snapshot(db_connection& db) : db_(db) {}
  ~read_snapshot() {
    if (open_)
      db_.exec("COMMIT", "end recall snapshot");
  }
  caf::error begin() {
    if (db_.in_transaction())
      return {}; // the caller's transaction already fixes the snapshot
    auto err = db_.exec("BEGIN", "begin recall snapshot");
    open_ = !err;
    return err;
  }

private:
  db_connection& db_;
  bool open_ = false;
};

// The full-text leg: the routes of plan_routes() in order until req.max_sessions
// conversations are found (store/recall.hpp), their names in result.routes_tried.
caf::error full_text_leg(db_connection& db, const recall_request& req, const parsed_query& q,
                         frequent_term_plan plan, conversation_map& conversations,
                         recall_result& result, std::vector<candidate>& found) {
  std::unordered_set<std::string> seen; // conversation ids already holding a hit
  bool has_positive = false;
  for (auto& c : q.clauses)
    has_positive = has_positive || !c.negated;
  bool tail_scanned = false;
  for (auto route : plan_routes(q)) {
    if (route == recall_route::substring_scan && has_positive && !tail_scanned) {
      // Rows above the index watermark rank after every FTS hit and before the
      // last-resort scan (which covers them too, so it skips their sessions).
      tail_scanned = true;
      if (found.size() < static_cast<std::size_t>(req.max_sessions)) {
        result.routes_tried.emplace_back(unindexed_tail_route);
        if (auto err = run_tail_scan(db, q, req, conversations, seen, found))
          return err;
      }
    }
    if (found.size() >= static_cast<std::size_t>(req.max_sessions))
      break;
    if (route == recall_route::substring_scan && !found.empty())
      break;
    result.routes_tried.emplace_back(to_string(route));
    caf::error err;
    if (route == recall_route::substring_scan) {
      err = run_substring_scan(db, q, req, conversations, seen, found);
    } else {
      auto dialect = route == recall_route::trigram ? match_dialect::trigram
                                                    : match_dialect::word;
      err = run_fts_route(db, route, to_fts5_match(q, dialect), req, plan, conversations, seen,
                          found);
    }
    if (err)
      return err;
  }
  return {};
}

} // namespace

caf::expected<recall_result> recall_search(db_connection& db, const recall_request& req,
                                           frequent_term_plan plan, const vector_index* index) {
  if (auto err = check_recall_request(req))
    return err;
  read_snapshot snapshot{db};
  if (auto err = snapshot.begin())
    return err;
  recall_result result;
  auto q = parse_user_query(req.query);
  result.query_truncated = q.truncated;
  conversation_map conversations{db, req.user_id};
  auto legs = plan_recall_legs(req, index, result);
  std::vector<candidate> found;
  if (legs.full_text) {
    // The full-text leg collects its own number of conversations (more than
    // max_sessions when it is fused with the vector leg).
    auto leg = req;
    leg.max_sessions = static_cast<int32_t>(legs.full_text_conversations);
    if (auto err = full_text_leg(db, leg, q, plan, conversations, result, found))
      return err;
  }
  std::vector<candidate> near;
  if (legs.vector) {
    auto v = vector_leg(
      *index, req, legs.vector_conversations,
      [&db](const std::vector<int64_t>& ids) { return read_vector_rows(db, ids); },
      [&conversations](const std::string& session) { return conversations.root_of(session); });
    if (!v)
      return std::move(v.error());
    near = std::move(*v);
  }
  found = merge_recall_legs(std::move(found), std::move(near), legs,
                            static_cast<std::size_t>(req.max_sessions));
  for (auto& c : found) {
    auto hit = anchor(db, c, q, req.include_inactive);
    if (!hit)
      return std::move(hit.error());
    result.hits.push_back(std::move(*hit));
  }
  return result;
}

} // namespace mneme
