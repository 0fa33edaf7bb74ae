// Tests of the recall columns the PostgreSQL store's indexer writes for each message
// (store/pg/pg_search_columns.hpp, store/pg/pg_indexer.hpp): mneme's own tokens as a tsvector, so PostgreSQL
// matches exactly what SQLite's CJK bigram index would (Latin glued to CJK splits,
// CJK bigrams match), and a UTF-8-clean copy of the text for pg_trgm.
#include <boost/test/unit_test.hpp>

#include <string>

#include <pqxx/pqxx>

#include "store/pg/pg_schema.hpp"
#include "store/pg/pg_search_columns.hpp"
#include "store/pg/pg_store.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(pg_search_columns_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;

BOOST_AUTO_TEST_CASE(the_literal_lists_mnemes_tokens_with_positions_and_escapes_quotes) {
  // Lexemes in byte order ('y' < UTF-8 of 修 < 务 < 服), each with its positions.
  BOOST_TEST(pg_tsvector_literal("修改youer服务端") == "'youer':2 '修改':1 '务端':4 '服务':3");
  BOOST_TEST(pg_tsvector_literal("Don't CAFÉ") == "'café':3 'don':1 't':2");
  BOOST_TEST(pg_tsvector_literal("a\\b") == "'a':1 'b':2");
  BOOST_TEST(pg_tsvector_literal("  ,;!  ").empty());
}

BOOST_AUTO_TEST_CASE(a_repeated_word_is_one_lexeme_with_its_positions_in_order) {
  BOOST_TEST(pg_tsvector_literal("b a b A c b") == "'a':2,4 'b':1,3,6 'c':5");
  // PostgreSQL keeps 256 positions of a lexeme: the literal lists no more.
  std::string text;
  for (int i = 0; i < 300; ++i)
    text += "x ";
  auto literal = pg_tsvector_literal(text);
  BOOST_TEST(literal.rfind("'x':1,2,3,", 0) == 0u);
  BOOST_TEST(literal.find(",256") != std::string::npos);
  BOOST_TEST(literal.find(",257") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_huge_row_stops_adding_tokens_under_the_tsvector_limit) {
  std::string text;
  for (int i = 0; i < 200000; ++i)
    text += "w" + std::to_string(i) + " ";
  auto literal = pg_tsvector_literal(text);
  BOOST_TEST(literal.size() <= pg_words_max_literal_bytes);
  BOOST_TEST(literal.rfind("'w0':1 'w1':2", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(the_word_literal_folds_case_and_accents_as_sqlites_unicode61) {
  BOOST_TEST(pg_unicode61_literal("Café CRÈME, Việt") == "'cafe':1 'creme':2 'viet':3");
  // unicode61 keeps a CJK run as one word (the CJK route splits it: search_words).
  BOOST_TEST(pg_unicode61_literal("修改youer服务端") == "'修改youer服务端':1");
  // A word longer than PostgreSQL's lexeme limit is left out; positions go on.
  BOOST_TEST(pg_unicode61_literal(std::string(3000, 'x') + " tail") == "'tail':2");
}

BOOST_AUTO_TEST_CASE(the_search_text_is_valid_utf8_without_nul) {
  BOOST_TEST(pg_search_text("plain 数据") == "plain 数据");
  BOOST_TEST(pg_search_text(std::string{"a\0b\xff", 4}) == "a b\xef\xbf\xbd");
}

namespace {

struct pg_search_fixture {
  testing::temp_dir dir{"mneme-pg-search"};
  store_params params;
  testing::test_store store;
  std::string sid;

  pg_search_fixture() {
    testing::use_backend(testing::store_backend::postgres, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    session_record rec;
    rec.user_id = "alice";
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE(created);
    sid = created->id;
  }

  // Rows matching `where` once the indexer has filled every row's recall columns.
  int64_t count(const std::string& where) {
    testing::index_for_recall(*store);
    return testing::store_scalar(store, "SELECT count(*) FROM messages WHERE " + where);
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(postgres_matches_latin_glued_to_cjk_and_cjk_bigrams, pg_search_fixture) {
  BOOST_REQUIRE(store->append(msg(sid, msg_role::user, "请修改youer服务端的配置")));
  BOOST_REQUIRE(store->append(msg(sid, msg_role::user, std::string{"bytes \xff\0 kept", 13})));
  BOOST_TEST(count("search_words @@ to_tsquery('simple', 'youer')") == 1);
  BOOST_TEST(count("search_words @@ to_tsquery('simple', '服务 & 务端')") == 1);
  BOOST_TEST(count("search_words @@ to_tsquery('simple', '服务 <-> 务端')") == 1);
  BOOST_TEST(count("search_words @@ to_tsquery('simple', 'you')") == 0); // words, not prefixes
  BOOST_TEST(count("search_text ILIKE '%OUER服%'") == 1);
  BOOST_TEST(count("search_words @@ to_tsquery('simple', 'kept')") == 1);
  // The stored content keeps its bytes; only the search copy is cleaned.
  BOOST_TEST(store->live_context(sid)->back().content == std::string("bytes \xff\0 kept", 13));
}

BOOST_FIXTURE_TEST_CASE(the_literal_is_already_postgres_own_form_of_the_tsvector,
                        pg_search_fixture) {
  const std::string text = "b a b A c b 修改youer服务端 修改";
  BOOST_REQUIRE(store->append(msg(sid, msg_role::user, text)));
  // PostgreSQL prints a tsvector in its sorted, merged form: the literal is that form.
  std::string quoted;
  for (char c : pg_tsvector_literal(text))
    quoted += c == '\'' ? std::string{"''"} : std::string(1, c);
  BOOST_TEST(count("search_words::text = '" + quoted + "'") == 1);
  BOOST_TEST(count("search_words @@ to_tsquery('simple', 'youer <-> 服务')") == 1);
}

// Schema v3 adds the word route's column; rows stored at v2 get theirs in the
// migration, and the schema still refuses rewriting a message afterwards.
BOOST_AUTO_TEST_CASE(a_version_2_database_gets_the_word_column_for_rows_it_already_holds) {
  testing::temp_dir dir{"mneme-pg-v3"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  {
    pqxx::connection c{params.url};
    pqxx::work w{c};
    w.exec0("CREATE TABLE mneme_schema_versions(version integer PRIMARY KEY,"
            " description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
    for (std::size_t v = 0; v < 2; ++v) {
      const auto& m = pg_schema_migrations()[v];
      w.exec0(m.sql);
      w.exec_params("INSERT INTO mneme_schema_versions(version, description) VALUES ($1, $2)",
                    m.version, std::string{m.description});
    }
    w.exec0("INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
            " VALUES ('old', 'u', 'k', 1)");
    w.exec_params("WITH m AS (INSERT INTO messages(session_id, role, content, search_words,"
                  " search_text) VALUES ('old', 'user', convert_to($1, 'UTF8'),"
                  " $2::tsvector, $1) RETURNING id)"
                  " INSERT INTO message_state(id, session_id) SELECT id, 'old' FROM m",
                  std::string{"the Café crème"}, pg_tsvector_literal("the Café crème"));
    w.commit();
  }
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  BOOST_TEST(testing::store_scalar(*store, "SELECT max(version) FROM mneme_schema_versions")
             == pg_latest_schema_version());
  BOOST_TEST(testing::store_scalar(*store, "SELECT count(*) FROM messages"
                                            " WHERE search_unicode61 @@ 'cafe & creme'::tsquery")
             == 1);
  BOOST_TEST(!testing::store_exec_ok(*store, "UPDATE messages SET timestamp_ms = 2"));
  auto reader = testing::open_test_recall(params);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  recall_request req;
  req.user_id = "u";
  req.query = "cafe";
  auto r = (*reader)->search(req);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE_EQUAL(r->hits.size(), 1u);
  BOOST_TEST(r->hits[0].hit.session_id == "old");
  BOOST_TEST(r->hits[0].route == "unicode61");
  BOOST_TEST(r->hits[0].snippet == "the >>>Café<<< crème");
}

BOOST_AUTO_TEST_SUITE_END() // pg_search_columns_test
