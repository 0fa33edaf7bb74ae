// Tests of recall's ranking shape on both backends (store/recall's FTS5 BM25,
// store/pg/pg_recall's BM25 without IDF): scores computed over the tenant's own
// rows only, one hit per session carrying that session's best row, sessions
// ordered by their best score, snippets for the returned rows, and a user's few
// matches found among many more of other tenants. On SQLite the score is FTS5's
// own bm25(). Suite frequent_queries: SQLite's bounded plan for queries with at least
// 1,000 matches in the index (store/sqlite/sqlite_recall, policies/fts_candidates,
// issue 46): the full plan's answer when its scan sees every match, only the newest
// matches ranked for a heavy user, never another tenant's or an invisible row, and
// the full plan when the user's matches lie beyond the scan's bound.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/recall.hpp"
#include "store/sqlite/sqlite_recall.hpp"
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

BOOST_AUTO_TEST_SUITE(frequent_queries)

namespace {

struct frequent_fixture {
  testing::temp_dir dir{"mneme-frequent"};
  store_params params;
  std::unique_ptr<sqlite_store> store;
  std::unique_ptr<store_reader> reader;

  frequent_fixture() {
    params.path = dir.path() + "/m.db";
    auto s = sqlite_store::open(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    auto r = store_reader::open(params);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    reader = std::move(*r);
  }

  std::string session(const std::string& user, const std::string& key) {
    session_record rec;
    rec.user_id = user;
    rec.session_key = key;
    auto s = store->create_session(rec, 1);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    return s->id;
  }

  // Appends `texts` to `sid` in one group commit; their ids in order.
  std::vector<int64_t> add(const std::string& sid, const std::vector<std::string>& texts) {
    std::vector<message> rows;
    for (auto& t : texts) {
      message m;
      m.session_id = sid;
      m.role = msg_role::user;
      m.content = t;
      rows.push_back(std::move(m));
    }
    BOOST_REQUIRE(!store->begin_group());
    auto ids = store->insert_batch_in_group(rows);
    BOOST_REQUIRE_MESSAGE(ids, err_of(ids));
    BOOST_REQUIRE(!store->commit_group());
    return ids->ids;
  }

  // `n` rows of another tenant, each holding the frequent word: the index then
  // counts the word as frequent (>= 1,000 matches).
  void other_tenants_rows(const std::string& user, int n) {
    auto sid = session(user, "filler-" + std::to_string(n));
    std::vector<std::string> texts;
    for (int i = 0; i < n; ++i)
      texts.push_back("wombat filler row " + std::to_string(i) + " of another tenant");
    add(sid, texts);
  }

  recall_result search(const std::string& user, const std::string& query,
                       frequent_term_plan plan, int32_t max_sessions = 3,
                       bool include_inactive = false) {
    auto n = index_all_pending(store->connection());
    BOOST_REQUIRE_MESSAGE(n, err_of(n));
    recall_request req;
    req.user_id = user;
    req.query = query;
    req.max_sessions = max_sessions;
    req.include_inactive = include_inactive;
    auto r = recall_search(reader->connection(), req, plan);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return std::move(*r);
  }
};

std::vector<int64_t> hit_ids(const recall_result& r) {
  std::vector<int64_t> out;
  for (auto& h : r.hits)
    out.push_back(h.hit.id);
  return out;
}

std::vector<std::string> hit_sessions(const recall_result& r) {
  std::vector<std::string> out;
  for (auto& h : r.hits)
    out.push_back(h.hit.session_id);
  return out;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(a_scan_that_sees_every_match_answers_as_the_full_plan,
                        frequent_fixture) {
  other_tenants_rows("zed", 1200);
  // Alice's few matches (under 100 candidates), of different strengths, in 4 sessions.
  std::vector<std::string> sessions;
  for (int s = 0; s < 4; ++s) {
    sessions.push_back(session("alice", "a" + std::to_string(s)));
    add(sessions.back(), {"wombat " + std::string(static_cast<std::size_t>(s), 'x') + " wombat",
                          "a long row that names the wombat once among many other words here",
                          "nothing relevant"});
  }
  auto bounded = search("alice", "wombat", frequent_term_plan::newest_first);
  auto full = search("alice", "wombat", frequent_term_plan::rank_all);
  BOOST_REQUIRE_EQUAL(full.hits.size(), 3u);
  BOOST_TEST(hit_ids(bounded) == hit_ids(full), boost::test_tools::per_element());
  for (std::size_t i = 0; i < full.hits.size(); ++i) {
    BOOST_TEST(bounded.hits[i].score == full.hits[i].score);
    BOOST_TEST(bounded.hits[i].snippet == full.hits[i].snippet);
    BOOST_TEST(bounded.hits[i].window.size() == full.hits[i].window.size());
  }
}

BOOST_FIXTURE_TEST_CASE(a_heavy_users_frequent_word_ranks_its_newest_matches_only,
                        frequent_fixture) {
  other_tenants_rows("zed", 1200);
  // An old session with the strongest rows, then 6 sessions of 60 weaker matches
  // each: 360 newer matches, far more than the 100 candidates.
  auto old = session("alice", "old");
  add(old, {"wombat wombat wombat", "wombat wombat"});
  std::vector<std::string> newer;
  for (int s = 0; s < 6; ++s) {
    newer.push_back(session("alice", "new" + std::to_string(s)));
    std::vector<std::string> texts;
    for (int i = 0; i < 60; ++i)
      texts.push_back("row " + std::to_string(i) + " mentions the wombat among other words");
    add(newer.back(), texts);
  }
  auto full = search("alice", "wombat", frequent_term_plan::rank_all);
  BOOST_REQUIRE_EQUAL(full.hits.size(), 3u);
  BOOST_TEST(full.hits[0].hit.session_id == old); // the full plan ranks every match
  auto bounded = search("alice", "wombat", frequent_term_plan::newest_first);
  BOOST_REQUIRE_EQUAL(bounded.hits.size(), 3u);
  // The newest sessions, each by its best row (equal scores: lowest id), best first.
  std::set<std::string> newest_three{newer[3], newer[4], newer[5]};
  for (auto& h : bounded.hits) {
    BOOST_TEST(newest_three.count(h.hit.session_id) == 1u, h.hit.session_id);
    BOOST_TEST(h.route == "unicode61");
    BOOST_TEST(h.snippet.find(">>>wombat<<<") != std::string::npos, h.snippet);
  }
  for (std::size_t i = 0; i + 1 < bounded.hits.size(); ++i)
    BOOST_TEST(bounded.hits[i].score <= bounded.hits[i + 1].score);
}

BOOST_FIXTURE_TEST_CASE(a_user_with_fewer_sessions_than_asked_for_still_gets_the_bounded_plan,
                        frequent_fixture) {
  // Two long sessions written alternately, the strongest rows first in one of them;
  // 10 conversations asked for, only 2 can exist: the scan stops at 2, not at its bound.
  auto a = session("alice", "a");
  auto b = session("alice", "b");
  auto strong = add(a, {"wombat wombat wombat"});
  for (int round = 0; round < 30; ++round)
    for (auto& sid : {a, b}) {
      std::vector<std::string> texts;
      for (int i = 0; i < 100; ++i)
        texts.push_back("row " + std::to_string(i) + " mentions the wombat among other words");
      add(sid, texts);
    }
  auto full = search("alice", "wombat", frequent_term_plan::rank_all, 10);
  BOOST_REQUIRE_EQUAL(full.hits.size(), 2u);
  BOOST_TEST(full.hits[0].hit.id == strong.front());
  auto bounded = search("alice", "wombat", frequent_term_plan::newest_first, 10);
  BOOST_REQUIRE_EQUAL(bounded.hits.size(), 2u);
  BOOST_TEST(bounded.hits[0].hit.id != strong.front()); // only the newest were ranked
  std::set<std::string> both{bounded.hits[0].hit.session_id, bounded.hits[1].hit.session_id};
  BOOST_TEST((both == std::set<std::string>{a, b}));
}

BOOST_FIXTURE_TEST_CASE(other_tenants_rows_inside_the_span_and_invisible_rows_are_never_hits,
                        frequent_fixture) {
  other_tenants_rows("zed", 1200);
  auto mine = session("alice", "mine");
  auto theirs = session("bob", "theirs");
  // Bob's rows interleave with Alice's: all inside Alice's row-id span.
  for (int round = 0; round < 30; ++round) {
    add(mine, {"alice wombat " + std::to_string(round), "alice plain row"});
    add(theirs, {"wombat wombat wombat", "bob wombat " + std::to_string(round)});
  }
  auto cp = store->create_checkpoint(mine, "before", 2);
  BOOST_REQUIRE_MESSAGE(cp, err_of(cp));
  auto undone = add(mine, {"wombat wombat wombat wombat undone"});
  auto rolled = store->rollback_to_checkpoint(mine, "before");
  BOOST_REQUIRE_MESSAGE(rolled, err_of(rolled));
  auto r = search("alice", "wombat", frequent_term_plan::newest_first, 10);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.session_id == mine);
  BOOST_TEST(r.hits[0].hit.id != undone.front());
  auto asked = search("alice", "wombat", frequent_term_plan::newest_first, 10, true);
  BOOST_REQUIRE_EQUAL(asked.hits.size(), 1u);
  BOOST_TEST(asked.hits[0].hit.id == undone.front()); // its best row, now visible
  auto none = search("carol", "wombat", frequent_term_plan::newest_first, 10);
  BOOST_TEST(none.hits.empty());
}

BOOST_FIXTURE_TEST_CASE(matches_beyond_the_scans_bound_are_found_by_the_full_plan,
                        frequent_fixture) {
  // Alice's only match is old; 5,000 matches of another tenant follow it inside her
  // span (a later row of hers ends the span): the newest-first scan gives up.
  auto old = session("alice", "old");
  auto fact = add(old, {"the wombat fact"});
  other_tenants_rows("zed", 5000);
  auto later = session("alice", "later");
  add(later, {"a row without the word"});
  auto r = search("alice", "wombat", frequent_term_plan::newest_first);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == fact.front());
  BOOST_TEST(r.hits[0].route == "unicode61"); // not left to the trigram route
  BOOST_TEST(hit_sessions(r) == hit_sessions(search("alice", "wombat",
                                                     frequent_term_plan::rank_all)),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END() // frequent_queries

BOOST_AUTO_TEST_SUITE_END() // recall_ranking_test
