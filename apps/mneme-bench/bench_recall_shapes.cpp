// `mneme-bench recall-shapes [--messages N] [--dir D] [--json]`: an experiment
// beside `mneme-bench recall` that times candidate-query shapes of recall's
// full-text routes side by side on ONE generated corpus (testing/recall_corpus),
// so a change of shape is chosen by measurement. Each shape returns the best row
// of the first 3 sessions of one user, BM25-ordered, plus their snippets:
//   rank         FTS5's `ORDER BY rank` (ranks every match of every tenant, then
//                the tenant join drops other users' rows), snippet per row stepped;
//   bm25_where   `ORDER BY bm25(t)` computed only for rows that passed the tenant
//                join, one row per session (GROUP BY + min), snippet afterwards;
//   bm25_member  like bm25_where, the tenant's row ids as an IN-membership test
//                (`+rowid IN (...)`, so FTS5 is not asked once per id);
//   scoped       the tenant inside the index: a second column `scope` holding a
//                per-user token, `scope:<token> AND (query)`, bm25 weight 0 on it.
// Queries: the common-word queries of `mneme-bench recall` over 10 users each.
// Prints EXPLAIN QUERY PLAN of each shape once. Only this program links this file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include "apps/mneme-bench/bench_registry.hpp"
#include "messages/mneme_types.hpp"
#include "policies/fts_query.hpp"
#include "policies/percentile.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "testing/recall_corpus.hpp"

namespace mneme::bench {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

bool exec(sqlite3* db, const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) == SQLITE_OK)
    return true;
  std::fprintf(stderr, "sqlite: %s\n  in: %.300s\n", msg ? msg : "?", sql.c_str());
  sqlite3_free(msg);
  return false;
}

sqlite3_stmt* prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
    std::fprintf(stderr, "prepare: %s\n  in: %.300s\n", sqlite3_errmsg(db), sql.c_str());
  return st;
}

std::string text_at(sqlite3_stmt* st, int i) {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
  return p ? std::string{p, static_cast<std::size_t>(sqlite3_column_bytes(st, i))} : "";
}

constexpr const char* visible = "(st.active = 1 OR st.compacted = 1)";

struct hit {
  int64_t id = 0;
  std::string session;
  double score = 0;
  std::string snippet;
};

// One shape on one table: prepared statements and how to run them.
struct shape {
  std::string name;
  std::string table;
  bool scoped = false;     // MATCH text gets the scope clause
  bool grouped = false;    // the statement already returns one row per session
  bool snippet_in = false; // column 3 is the snippet
  sqlite3_stmt* search = nullptr;
  sqlite3_stmt* snippet = nullptr;
  std::string sql;
};

std::string snippet_sql(const std::string& t) {
  return "SELECT snippet(" + t + ", 0, '>>>', '<<<', '…', 24) FROM " + t + " WHERE " + t
         + " MATCH ?1 AND rowid = ?2";
}

std::string shape_sql(const std::string& name, const std::string& t) {
  auto join = " FROM " + t + " JOIN message_state st ON st.id = " + t + ".rowid"
              " JOIN sessions se ON se.id = st.session_id";
  if (name == "rank")
    return "SELECT " + t + ".rowid, st.session_id, " + t + ".rank, snippet(" + t
           + ", 0, '>>>', '<<<', '…', 24)" + join + " WHERE " + t
           + " MATCH ?1 AND se.user_id = ?2 AND " + visible + " ORDER BY " + t + ".rank";
  if (name == "bm25_where")
    return "WITH h AS MATERIALIZED (SELECT " + t
           + ".rowid AS id, st.session_id, bm25(" + t + ") AS score" + join + " WHERE " + t
           + " MATCH ?1 AND se.user_id = ?2 AND " + visible
           + ") SELECT id, session_id, min(score) AS best FROM h GROUP BY session_id ORDER BY best, id";
  if (name == "bm25_member")
    return "WITH h AS MATERIALIZED (SELECT " + t
           + ".rowid AS id, st.session_id, bm25(" + t + ") AS score FROM " + t
           + " JOIN message_state st ON st.id = " + t + ".rowid WHERE " + t
           + " MATCH ?1 AND +" + t + ".rowid IN (SELECT s2.id FROM sessions se"
             " JOIN message_state s2 ON s2.session_id = se.id WHERE se.user_id = ?2"
             " AND (s2.active = 1 OR s2.compacted = 1))"
             ") SELECT id, session_id, min(score) AS best FROM h GROUP BY session_id ORDER BY best, id";
  // scoped
  return "WITH h AS MATERIALIZED (SELECT " + t
         + ".rowid AS id, st.session_id, bm25(" + t + ", 1.0, 0.0) AS score" + join
         + " WHERE " + t + " MATCH ?1 AND se.user_id = ?2 AND " + visible
         + ") SELECT id, session_id, min(score) AS best FROM h GROUP BY session_id ORDER BY best, id";
}

std::vector<hit> run_shape(sqlite3* db, shape& s, const std::string& match,
                           const std::string& user, std::size_t want) {
  std::vector<hit> out;
  std::vector<std::string> seen;
  sqlite3_bind_text(s.search, 1, match.data(), static_cast<int>(match.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(s.search, 2, user.data(), static_cast<int>(user.size()), SQLITE_TRANSIENT);
  while (out.size() < want) {
    auto rc = sqlite3_step(s.search);
    if (rc != SQLITE_ROW) {
      if (rc != SQLITE_DONE)
        std::fprintf(stderr, "%s: %s\n", s.name.c_str(), sqlite3_errmsg(db));
      break;
    }
    hit h;
    h.id = sqlite3_column_int64(s.search, 0);
    h.session = text_at(s.search, 1);
    h.score = sqlite3_column_double(s.search, 2);
    if (!s.grouped) {
      if (std::find(seen.begin(), seen.end(), h.session) != seen.end())
        continue;
      seen.push_back(h.session);
    }
    if (s.snippet_in)
      h.snippet = text_at(s.search, 3);
    out.push_back(std::move(h));
  }
  sqlite3_reset(s.search);
  if (!s.snippet_in)
    for (auto& h : out) {
      sqlite3_bind_text(s.snippet, 1, match.data(), static_cast<int>(match.size()),
                        SQLITE_TRANSIENT);
      sqlite3_bind_int64(s.snippet, 2, h.id);
      if (sqlite3_step(s.snippet) == SQLITE_ROW)
        h.snippet = text_at(s.snippet, 0);
      sqlite3_reset(s.snippet);
    }
  return out;
}

void print_plan(sqlite3* db, const shape& s) {
  auto* st = prepare(db, "EXPLAIN QUERY PLAN " + s.sql);
  std::fprintf(stderr, "plan %s/%s:\n", s.name.c_str(), s.table.c_str());
  while (st && sqlite3_step(st) == SQLITE_ROW)
    std::fprintf(stderr, "  %s\n", text_at(st, 3).c_str());
  sqlite3_finalize(st);
}

// The flags of `mneme-bench recall-shapes`.
struct shapes_options {
  int64_t messages = 200000;
  std::string dir = "/tmp";
  bool json = false;
};

int run_shapes_bench(const shapes_options& o) {
  const int64_t messages = o.messages;
  const std::string& dir = o.dir;
  const bool json = o.json;
  auto work = dir + "/mneme-bench-shapes-" + std::to_string(::getpid());
  std::filesystem::create_directories(work);
  store_params params;
  params.path = work + "/recall.db";
  params.synchronous_full = false;
  corpus_report corpus;
  {
    auto store = sqlite_store::open(params);
    if (!store)
      return 1;
    corpus_spec spec;
    spec.messages = messages;
    spec.messages_per_session = 60;
    auto c = generate_corpus(**store, spec);
    if (!c || !index_all_pending((*store)->connection()))
      return 1;
    corpus = *c;
  }
  sqlite3* db = nullptr;
  sqlite3_open(params.path.c_str(), &db);
  register_fts_tokenizers(db);
  // The scoped experiment indexes: a per-user integer, rendered as `s<n>z`.
  exec(db, "CREATE TABLE exp_scope(user_id TEXT PRIMARY KEY, n INTEGER NOT NULL);"
           "INSERT INTO exp_scope SELECT user_id, row_number() OVER (ORDER BY user_id)"
           " FROM (SELECT DISTINCT user_id FROM sessions);"
           "CREATE VIEW exp_source AS SELECT m.id AS id, m.content AS content,"
           " 's' || sc.n || 'z' AS scope FROM messages m JOIN sessions se ON se.id = m.session_id"
           " JOIN exp_scope sc ON sc.user_id = se.user_id;");
  std::map<std::string, std::string> tokenize{{"fts_words", "unicode61 remove_diacritics 2"},
                                              {"fts_cjk", "mneme_cjk"}};
  for (auto& [t, tok] : tokenize) {
    auto s = "exp_" + t;
    auto t0 = clock_type::now();
    exec(db, "CREATE VIRTUAL TABLE " + s + " USING fts5(content, scope, content='exp_source',"
             " content_rowid='id', tokenize='" + tok + "');"
             "INSERT INTO " + s + "(" + s + ") VALUES ('rebuild')");
    std::fprintf(stderr, "built %s in %.1f s\n", s.c_str(), ms_since(t0) / 1000);
  }
  exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  std::map<std::string, int64_t> scope_of;
  {
    auto* st = prepare(db, "SELECT user_id, n FROM exp_scope");
    while (sqlite3_step(st) == SQLITE_ROW)
      scope_of[text_at(st, 0)] = sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
  }

  const char* names[] = {"rank", "bm25_where", "bm25_member", "scoped"};
  std::vector<shape> shapes;
  for (auto* n : names)
    for (auto* t : {"fts_words", "fts_cjk"}) {
      shape s;
      s.name = n;
      s.scoped = s.name == "scoped";
      s.table = s.scoped ? std::string{"exp_"} + t : t;
      s.grouped = s.name != "rank";
      s.snippet_in = s.name == "rank";
      s.sql = shape_sql(s.name, s.table);
      s.search = prepare(db, s.sql);
      s.snippet = prepare(db, snippet_sql(s.table));
      print_plan(db, s);
      shapes.push_back(s);
    }

  const char* common[] = {"database error", "timeout", "服务器", "cache", "設定", "retry OR queue",
                          "deploy*", "KeyError", "数据", "the"};
  std::map<std::string, std::vector<double>> ms;
  std::map<std::string, int64_t> disagreements;
  auto users = std::max<int64_t>(1, corpus.sessions / 10);
  for (int round = 0; round < 10; ++round)
    for (auto* q : common) {
      auto user = "user-" + std::to_string(round * 7 % users);
      auto parsed = parse_user_query(q);
      auto routes = plan_routes(parsed);
      bool cjk = !routes.empty() && routes.front() == recall_route::cjk_bigram;
      auto match = to_fts5_match(parsed, match_dialect::word);
      std::vector<hit> reference;
      for (auto& s : shapes) {
        if ((s.table.find("cjk") != std::string::npos) != cjk)
          continue;
        auto m = s.scoped ? "scope:s" + std::to_string(scope_of[user]) + "z AND (" + match + ")"
                          : match;
        auto t0 = clock_type::now();
        auto hits = run_shape(db, s, m, user, 3);
        ms[s.name].push_back(ms_since(t0));
        if (s.name == "rank") {
          reference = hits;
        } else {
          // Same sessions in the same order as FTS5's rank (ties aside)?
          bool same = hits.size() == reference.size();
          for (std::size_t i = 0; same && i < hits.size(); ++i)
            same = hits[i].session == reference[i].session;
          if (!same)
            ++disagreements[s.name];
        }
      }
    }
  nlohmann::json j;
  j["bench"] = "recall-shapes";
  j["messages"] = corpus.messages;
  j["sessions"] = corpus.sessions;
  for (auto& [name, xs] : ms) {
    j[name + "_p50_ms"] = median_or_zero(xs);
    j[name + "_p99_ms"] = percentile_or_zero(xs, 0.99);
    j[name + "_max_ms"] = percentile_or_zero(xs, 1.0);
    j[name + "_order_differs"] = disagreements[name];
  }
  for (auto& s : shapes) {
    sqlite3_finalize(s.search);
    sqlite3_finalize(s.snippet);
  }
  sqlite3_close(db);
  std::filesystem::remove_all(work);
  if (json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto& [k, v] : j.items())
      std::printf("%-32s %s\n", k.c_str(), v.dump().c_str());
  }
  return 0;
}

} // namespace

MNEME_BENCH("recall-shapes",
            "recall query shapes side by side on one corpus (rank, bm25, membership, scoped)",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<shapes_options>();
              cmd.add_option("--messages", o->messages, "messages of the generated corpus")
                ->check(integer_range(int64_t{1}));
              cmd.add_option("--dir", o->dir, "directory of the work files (removed at the end)");
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return run_shapes_bench(*o); };
            });

} // namespace mneme::bench
