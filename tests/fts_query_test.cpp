// Recall query sanitizing: the accepted syntax, the neutralized rest, routing, and a
// fuzz run proving that no input yields an FTS5 syntax error on a real FTS5 table.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>

#include <sqlite3.h>

#include "policies/fts_query.hpp"

BOOST_AUTO_TEST_SUITE(fts_query_test)

using namespace mneme;
namespace bdata = boost::unit_test::data;

namespace {

std::string match_of(std::string_view raw) {
  return to_fts5_match(parse_user_query(raw), match_dialect::word);
}

// An in-memory FTS5 table (unicode61 and trigram) to run rendered queries against.
struct fts_fixture {
  sqlite3* db = nullptr;
  fts_fixture() {
    BOOST_REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    exec("CREATE VIRTUAL TABLE w USING fts5(x, tokenize='unicode61')");
    exec("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')");
    for (auto* row : {"hello world", "gpt-5 model card", "我爱数据库", "error: ENOENT /tmp/x.sock",
                      "select * from users; drop table users"}) {
      insert("w", row);
      insert("t", row);
    }
  }
  ~fts_fixture() { sqlite3_close(db); }
  void exec(const char* sql) { BOOST_REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK); }
  void insert(const char* table, const char* text) {
    std::string sql = std::string{"INSERT INTO "} + table + "(x) VALUES (?)";
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_finalize(st);
  }
  // Number of rows matching, or -1 with the SQLite error in `err`.
  int count(const char* table, const std::string& match, std::string& err) {
    std::string sql = std::string{"SELECT count(*) FROM "} + table + " WHERE " + table + " MATCH ?";
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
    sqlite3_bind_text(st, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    int n = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    if (n < 0) err = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    return n;
  }
};

} // namespace

BOOST_DATA_TEST_CASE(
  user_syntax_renders_to_quoted_fts5_expressions,
  bdata::make({"hello world", "hello OR world", "hello OR world again", "hello NOT world",
               "\"exact phrase\" here", "data*", "say \"unbalanced", "col:umn", "a (b) ^c",
               "-minus +plus", "he said \"\"\"", "AND hello", "OR hello", "hello OR",
               "NOT hello", "***", "数据库 表"}) ^
    bdata::make({"\"hello\" AND \"world\"", "(\"hello\" OR \"world\")",
                 "(\"hello\" OR \"world\") AND \"again\"", "\"hello\" NOT \"world\"",
                 "\"exact phrase\" AND \"here\"", "\"data\" *", "\"say\" AND \"unbalanced\"",
                 "\"col:umn\"", "\"a\" AND \"(b)\" AND \"^c\"", "\"-minus\" AND \"+plus\"",
                 "\"he\" AND \"said\"", "\"hello\"", "\"hello\"", "\"hello\"", "", "",
                 "\"数据库\" AND \"表\""}),
  raw, expected) {
  BOOST_TEST(match_of(raw) == std::string{expected});
}

BOOST_AUTO_TEST_CASE(quotes_inside_terms_are_doubled_so_they_cannot_close_the_string) {
  BOOST_TEST(match_of("it\"s") == "\"it\" AND \"s\"");
  parsed_query q = parse_user_query("x'); DROP TABLE messages; --");
  std::string m = to_fts5_match(q, match_dialect::word);
  BOOST_TEST(m == "\"x');\" AND \"DROP\" AND \"TABLE\" AND \"messages;\"");
}

BOOST_AUTO_TEST_CASE(limits_cut_huge_input_and_say_so) {
  std::string huge;
  for (int i = 0; i < 2000; ++i) huge += "w" + std::to_string(i) + " ";
  auto q = parse_user_query(huge);
  BOOST_TEST(q.truncated);
  std::size_t terms = 0;
  for (auto& c : q.clauses) terms += c.any_of.size();
  BOOST_TEST(terms <= max_terms);
  auto one = parse_user_query(std::string(5000, 'z'));
  BOOST_REQUIRE_EQUAL(one.clauses.size(), 1u);
  BOOST_TEST(one.clauses[0].any_of[0].text.size() <= max_term_bytes);
}

BOOST_AUTO_TEST_CASE(routes_follow_the_spec_cascade) {
  using R = recall_route;
  BOOST_TEST((plan_routes(parse_user_query("hello world")) ==
              std::vector<R>{R::unicode61, R::cjk_bigram, R::trigram, R::substring_scan}));
  BOOST_TEST((plan_routes(parse_user_query("数据库")) ==
              std::vector<R>{R::cjk_bigram, R::trigram, R::substring_scan}));
  BOOST_TEST((plan_routes(parse_user_query("数据")) ==
              std::vector<R>{R::cjk_bigram, R::substring_scan})); // 2 chars: no trigram
  BOOST_TEST((plan_routes(parse_user_query("go is fun")) ==
              std::vector<R>{R::unicode61, R::cjk_bigram, R::substring_scan}));
  BOOST_TEST(plan_routes(parse_user_query("NOT x")).empty());
}

BOOST_AUTO_TEST_CASE(trigram_dialect_drops_prefix_marks) {
  BOOST_TEST(to_fts5_match(parse_user_query("modu*"), match_dialect::trigram) == "\"modu\"");
}

BOOST_AUTO_TEST_CASE(like_patterns_escape_wildcards) {
  BOOST_TEST(like_pattern("50%_off\\") == "%50\\%\\_off\\\\%");
}

BOOST_FIXTURE_TEST_CASE(rendered_queries_find_what_they_should, fts_fixture) {
  std::string err;
  BOOST_TEST(count("w", match_of("hello"), err) == 1);
  BOOST_TEST(count("w", match_of("gpt-5"), err) == 1);
  BOOST_TEST(count("w", match_of("mod*"), err) == 1);
  BOOST_TEST(count("w", match_of("hello OR card"), err) == 2);
  BOOST_TEST(count("w", match_of("users NOT drop"), err) == 0);
  BOOST_TEST(count("w", match_of("ENOENT /tmp/x.sock"), err) == 1);
  BOOST_TEST(count("t", to_fts5_match(parse_user_query("数据库"), match_dialect::trigram), err) == 1);
  BOOST_TEST(count("t", to_fts5_match(parse_user_query("NOENT"), match_dialect::trigram), err) == 1);
}

BOOST_FIXTURE_TEST_CASE(no_input_ever_produces_an_fts5_error, fts_fixture) {
  const std::string alphabet = "aZ09 \"'*:()^-+{}[],.;/\\|&!?~`@#$%<>=NOTRAND\t\n数据库€é";
  std::mt19937 rng(42);
  int checked = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::string raw;
    std::size_t len = rng() % 60;
    for (std::size_t i = 0; i < len; ++i) {
      if (rng() % 10 == 0) raw.push_back(static_cast<char>(rng() % 256)); // raw bytes
      else raw.push_back(alphabet[rng() % alphabet.size()]);
    }
    if (rng() % 7 == 0) raw += rng() % 2 ? " OR" : " NOT";
    if (rng() % 7 == 0) raw = "OR " + raw;
    auto q = parse_user_query(raw);
    for (auto dialect : {match_dialect::word, match_dialect::trigram}) {
      auto m = to_fts5_match(q, dialect);
      if (m.empty()) continue;
      std::string err;
      int n = count(dialect == match_dialect::word ? "w" : "t", m, err);
      BOOST_REQUIRE_MESSAGE(n >= 0, "query <" << raw << "> rendered <" << m << "> failed: " << err);
      ++checked;
    }
  }
  BOOST_TEST(checked > 5000);
}

BOOST_AUTO_TEST_SUITE_END() // fts_query_test
