// The CJK bigram tokenizer registered with FTS5: what it finds through real MATCH
// queries built by the query sanitizer, and highlights at the right byte offsets.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <sqlite3.h>

#include "policies/fts_query.hpp"
#include "store/sqlite/fts_tokenizers.hpp"

BOOST_AUTO_TEST_SUITE(fts_tokenizer_test)

using namespace mneme;
namespace bdata = boost::unit_test::data;

namespace {

const char* corpus[] = {
  "我爱数据库",                          // 1
  "今天去桂林旅游",                      // 2
  "请帮我修改youer服务端的配置",           // 3
  "東京タワーに行きました",                // 4
  "한국어 형태소 분석기",                   // 5
  "Plug in the ＵＳＢ stick",             // 6
  "the quick brown fox",                 // 7
  "数",                                  // 8
};

struct cjk_index {
  sqlite3* db = nullptr;
  cjk_index() {
    BOOST_REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    BOOST_REQUIRE(register_fts_tokenizers(db) == SQLITE_OK);
    exec("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='mneme_cjk')");
    for (auto* text : corpus) {
      sqlite3_stmt* st = nullptr;
      sqlite3_prepare_v2(db, "INSERT INTO f(x) VALUES (?)", -1, &st, nullptr);
      sqlite3_bind_text(st, 1, text, -1, SQLITE_TRANSIENT);
      BOOST_REQUIRE(sqlite3_step(st) == SQLITE_DONE);
      sqlite3_finalize(st);
    }
  }
  ~cjk_index() { sqlite3_close(db); }
  void exec(const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    BOOST_REQUIRE_MESSAGE(rc == SQLITE_OK, (err ? err : "?"));
  }
  // Rowids matching the sanitized user query, in rowid order.
  std::vector<int> find(const std::string& user_query) {
    std::vector<int> ids;
    auto match = to_fts5_match(parse_user_query(user_query), match_dialect::word);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) ids.push_back(sqlite3_column_int(st, 0));
    BOOST_REQUIRE_MESSAGE(rc == SQLITE_DONE, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return ids;
  }
  std::string snippet(const std::string& user_query) {
    auto match = to_fts5_match(parse_user_query(user_query), match_dialect::word);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT snippet(f, 0, '>>>', '<<<', '...', 10) FROM f WHERE f MATCH ?",
                       -1, &st, nullptr);
    sqlite3_bind_text(st, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW)
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(cjk_bigram_index, cjk_index)

BOOST_AUTO_TEST_CASE(chinese_words_of_two_and_three_characters_are_found) {
  BOOST_TEST((find("数据库") == std::vector<int>{1}));
  BOOST_TEST((find("数据") == std::vector<int>{1}));
  BOOST_TEST((find("桂林") == std::vector<int>{2}));
  BOOST_TEST((find("服务端") == std::vector<int>{3}));
}

BOOST_AUTO_TEST_CASE(a_latin_word_glued_to_chinese_is_found_by_itself) {
  BOOST_TEST((find("youer") == std::vector<int>{3}));
  BOOST_TEST((find("修改 youer") == std::vector<int>{3}));
}

BOOST_AUTO_TEST_CASE(japanese_korean_and_single_characters_are_found) {
  BOOST_TEST((find("タワー") == std::vector<int>{4}));
  BOOST_TEST((find("東京") == std::vector<int>{4}));
  BOOST_TEST((find("형태소") == std::vector<int>{5}));
  BOOST_TEST((find("数") == std::vector<int>{8})); // a lone character is indexed as itself
}

BOOST_AUTO_TEST_CASE(case_and_width_are_folded_on_both_sides) {
  BOOST_TEST((find("usb") == std::vector<int>{6}));
  BOOST_TEST((find("ＵＳＢ") == std::vector<int>{6}));
  BOOST_TEST((find("QUICK fox") == std::vector<int>{7}));
}

BOOST_AUTO_TEST_CASE(non_matching_orders_and_words_are_not_found) {
  BOOST_TEST(find("库数据").empty());  // reversed order is a different phrase
  BOOST_TEST(find("数据 fox").empty());
}

BOOST_AUTO_TEST_CASE(highlights_cover_the_matched_characters) {
  BOOST_TEST(snippet("数据库") == "我爱>>>数据库<<<");
  BOOST_TEST(snippet("youer") == "请帮我修改>>>youer<<<服务端的配置");
}

BOOST_AUTO_TEST_CASE(the_tokenizer_rejects_options_it_does_not_know) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, "CREATE VIRTUAL TABLE g USING fts5(x, tokenize='mneme_cjk foo')",
                        nullptr, nullptr, &err);
  BOOST_TEST(rc != SQLITE_OK);
  sqlite3_free(err);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // fts_tokenizer_test
