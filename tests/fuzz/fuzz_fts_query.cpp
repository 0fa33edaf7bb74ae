// libFuzzer target: the search-query sanitizer (policies/fts_query). Whatever the user
// typed, the MATCH expression it makes is valid FTS5: it runs without error against
// real in-memory FTS5 tables with each tokenizer the store uses (unicode61, mneme_cjk,
// trigram), and the LIKE pattern of each term is accepted by SQLite.
#include <sqlite3.h>

#include <string>

#include "policies/fts_query.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

struct fts_tables {
  sqlite3* db = nullptr;
  sqlite3_stmt* word = nullptr;
  sqlite3_stmt* cjk = nullptr;
  sqlite3_stmt* trigram = nullptr;
  sqlite3_stmt* like = nullptr;

  fts_tables() {
    MNEME_FUZZ_CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
    MNEME_FUZZ_CHECK(mneme::register_fts_tokenizers(db) == SQLITE_OK);
    const char* ddl =
      "CREATE VIRTUAL TABLE w USING fts5(content, tokenize='unicode61 remove_diacritics 2');"
      "CREATE VIRTUAL TABLE c USING fts5(content, tokenize='mneme_cjk');"
      "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram');"
      "CREATE TABLE plain(content TEXT);"
      "INSERT INTO w VALUES ('hello world 数据库 données'), ('résumé of the test');"
      "INSERT INTO c VALUES ('我爱数据库 hello'), ('修改youer服务端');"
      "INSERT INTO t VALUES ('hello world 数据库'), ('abc_def%ghi');"
      "INSERT INTO plain VALUES ('hello 100% a_b');";
    MNEME_FUZZ_CHECK(sqlite3_exec(db, ddl, nullptr, nullptr, nullptr) == SQLITE_OK);
    word = prepare("SELECT count(*) FROM w WHERE w MATCH ?");
    cjk = prepare("SELECT count(*) FROM c WHERE c MATCH ?");
    trigram = prepare("SELECT count(*) FROM t WHERE t MATCH ?");
    like = prepare("SELECT count(*) FROM plain WHERE content LIKE ? ESCAPE '\\'");
  }

  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    MNEME_FUZZ_CHECK(sqlite3_prepare_v2(db, sql, -1, &s, nullptr) == SQLITE_OK);
    return s;
  }

  // Runs `stmt` with `arg`; false when SQLite refused it (a syntax error).
  bool runs(sqlite3_stmt* stmt, const std::string& arg) {
    sqlite3_reset(stmt);
    sqlite3_bind_text(stmt, 1, arg.data(), static_cast<int>(arg.size()), SQLITE_TRANSIENT);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW)
      std::fprintf(stderr, "sqlite refused [%s]: %s\n", arg.c_str(), sqlite3_errmsg(db));
    sqlite3_reset(stmt);
    return rc == SQLITE_ROW;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fts_tables tables;
  auto q = mneme::parse_user_query(mneme::fuzz::as_text(data, size));
  auto word = mneme::to_fts5_match(q, mneme::match_dialect::word);
  auto tri = mneme::to_fts5_match(q, mneme::match_dialect::trigram);
  MNEME_FUZZ_CHECK(word.empty() == !q.has_positive_clause());
  if (!word.empty()) {
    MNEME_FUZZ_CHECK(tables.runs(tables.word, word));
    MNEME_FUZZ_CHECK(tables.runs(tables.cjk, word));
  }
  if (!tri.empty())
    MNEME_FUZZ_CHECK(tables.runs(tables.trigram, tri));
  (void)mneme::plan_routes(q);
  for (const auto& clause : q.clauses)
    for (const auto& term : clause.any_of) {
      MNEME_FUZZ_CHECK(!term.text.empty());
      MNEME_FUZZ_CHECK(tables.runs(tables.like, mneme::like_pattern(term.text)));
    }
  return 0;
}
