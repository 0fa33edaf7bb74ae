// Tests of recall's ranking shape on both backends (store/recall's FTS5 BM25,
// store/pg/pg_recall's BM25 without IDF): scores computed over the tenant's own
// rows only, one hit per session carrying that session's best row, sessions
// ordered by their best score, snippets for the returned rows, and a user's few
// matches found among many more of other tenants. On SQLite the score is FTS5's
// own bm25().
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <map>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/recall.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(recall_ranking_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

struct ranking_fixture {
  testing::temp_dir dir{"mneme-ranking"};
  store_params params;
  testing::test_store store;
  std::unique_ptr<recall_source> reader;

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    auto r = testing::open_test_recall(params);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    reader = std::move(*r);
    // Unrelated rows of another user: with only a handful of rows BM25's IDF is
    // near zero and every score rounds to the same value.
    auto bulk = session("zed", "filler");
    for (int i = 0; i < 200; ++i)
      add(bulk, "unrelated filler text number " + std::to_string(i));
  }

  std::string session(const std::string& user, const std::string& key) {
    session_record rec;
    rec.user_id = user;
    rec.session_key = key;
    auto s = store->create_session(rec, 1);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    return s->id;
  }

  int64_t add(const std::string& sid, const std::string& text) {
    message m;
    m.session_id = sid;
    m.role = msg_role::user;
    m.content = text;
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  recall_result search(const std::string& user, const std::string& query,
                       int32_t max_sessions = 3) {
    testing::index_for_recall(*store);
    recall_request req;
    req.user_id = user;
    req.query = query;
    req.max_sessions = max_sessions;
    auto r = reader->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return std::move(*r);
  }

  // FTS5's own BM25 of row `id` for `match` on fts_words (lower is better). SQLite only.
  double bm25_of(int64_t id, const std::string& match) {
    sqlite3_stmt* st = nullptr;
    auto* db = store.sqlite()->connection().native_handle();
    BOOST_REQUIRE(sqlite3_prepare_v2(db,
                                     "SELECT bm25(fts_words) FROM fts_words"
                                     " WHERE fts_words MATCH ?1 AND rowid = ?2",
                                     -1, &st, nullptr)
                  == SQLITE_OK);
    sqlite3_bind_text(st, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, id);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    auto v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
  }
};

const auto ranking_backends = data::make(testing::all_store_backends());

} // namespace

BOOST_DATA_TEST_CASE_F(ranking_fixture, each_session_is_represented_by_its_best_row,
                       ranking_backends, backend) {
  open(backend);
  auto a = session("alice", "a");
  auto weak = add(a, "the quokka was mentioned once among many other words in a long line");
  auto strong = add(a, "quokka quokka quokka");
  add(a, "nothing relevant here");
  auto r = search("alice", "quokka");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == strong);
  BOOST_TEST(r.hits[0].score < 0);
  if (store.sqlite() != nullptr) {
    BOOST_TEST(bm25_of(strong, "quokka") < bm25_of(weak, "quokka"));
    BOOST_TEST(r.hits[0].score == bm25_of(strong, "quokka"), boost::test_tools::tolerance(1e-5));
  } else {
    // PostgreSQL: BM25 without IDF over the two matching rows (pg_recall.hpp):
    // 3 hits in 3 tokens; the other match has 13 tokens: average length 8.
    auto expected = -(3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 3 / 8.0)));
    BOOST_TEST(r.hits[0].score == expected, boost::test_tools::tolerance(1e-9));
  }
  BOOST_TEST(r.hits[0].snippet.find(">>>quokka<<<") != std::string::npos, r.hits[0].snippet);
}

BOOST_DATA_TEST_CASE_F(ranking_fixture,
                       sessions_are_ordered_by_their_best_score_and_each_has_its_snippet,
                       ranking_backends, backend) {
  open(backend);
  // Three sessions whose best rows score differently; creation order is not rank order.
  auto s1 = session("bob", "1");
  auto s2 = session("bob", "2");
  auto s3 = session("bob", "3");
  add(s1, "a long line that mentions the wombat once and then goes on and on about other things");
  add(s2, "wombat wombat wombat wombat");
  add(s3, "the wombat sleeps");
  auto r = search("bob", "wombat");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 3u);
  BOOST_TEST(r.hits[0].hit.session_id == s2);
  BOOST_TEST(r.hits[1].hit.session_id == s3);
  BOOST_TEST(r.hits[2].hit.session_id == s1);
  for (std::size_t i = 0; i + 1 < r.hits.size(); ++i)
    BOOST_TEST(r.hits[i].score < r.hits[i + 1].score);
  for (auto& h : r.hits)
    BOOST_TEST(h.snippet.find(">>>wombat<<<") != std::string::npos, h.snippet);
}

// max_sessions from 1 to 10: exactly that many sessions, distinct, best first.
BOOST_DATA_TEST_CASE_F(ranking_fixture, max_sessions_bounds_the_distinct_sessions_returned,
                       data::make({1, 2, 3, 5, 10}) * ranking_backends, wanted, backend) {
  open(backend);
  std::map<std::string, int> repeats; // session -> how often its rows say the word
  for (int i = 0; i < 12; ++i) {
    auto s = session("carol", "k" + std::to_string(i));
    repeats[s] = i % 4 + 1;
    std::string text = "numbat";
    for (int k = 1; k < repeats[s]; ++k)
      text += " numbat";
    add(s, text + " and some filler words after it");
    add(s, "a second numbat row, said once, in a longer sentence than the first one");
  }
  auto r = search("carol", "numbat", wanted);
  BOOST_REQUIRE_EQUAL(r.hits.size(), static_cast<std::size_t>(wanted));
  std::set<std::string> distinct;
  for (auto& h : r.hits)
    distinct.insert(h.hit.session_id);
  BOOST_TEST(distinct.size() == static_cast<std::size_t>(wanted));
  for (std::size_t i = 0; i + 1 < r.hits.size(); ++i)
    BOOST_TEST(r.hits[i].score <= r.hits[i + 1].score);
  // The best-scoring sessions say the word 4 times: they come first.
  BOOST_TEST(repeats[r.hits[0].hit.session_id] == 4);
}

BOOST_DATA_TEST_CASE_F(ranking_fixture, a_users_few_matches_are_found_among_many_of_other_tenants,
                       ranking_backends, backend) {
  open(backend);
  // 300 rows of another user rank better than dave's one row: a route that ranked
  // before filtering by tenant would still have to find dave's row, and none of the
  // others may appear.
  auto other = session("erin", "e");
  for (int i = 0; i < 300; ++i)
    add(other, "platypus platypus platypus " + std::to_string(i));
  auto d = session("dave", "d");
  auto mine = add(d, "one platypus in a long sentence that says many other things as well");
  auto r = search("dave", "platypus");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == mine);
  BOOST_TEST(r.hits[0].route == "unicode61");
  auto none = search("nobody", "platypus");
  BOOST_TEST(none.hits.empty());
}

BOOST_AUTO_TEST_SUITE_END() // recall_ranking_test
