// Tests of recall over the store (a recall reader on a connection of its own beside
// the single writer): routes, accent folding, tenant scope, row kinds, the anchored
// view, dedup limits and bad queries on both backends (tests/store_backends.hpp:
// SQLite's store/recall, PostgreSQL's store/pg/pg_recall); SQLite's index
// maintenance, its scan of rows not yet indexed and the in-place upgrade of a
// version 2 file.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <set>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/migrations.hpp"
#include "store/sqlite/sqlite_recall.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(recall_store_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;
using mneme::testing::row_estimate;
using mneme::testing::store_backend;
namespace data = boost::unit_test::data;

namespace {

int64_t scalar(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  BOOST_REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  auto v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

struct recall_fixture {
  testing::temp_dir dir{"mneme-recall"};
  store_params params;
  testing::test_store store;
  std::unique_ptr<recall_source> reader;
  bool index_before_search = true; // false: leave new rows to SQLite's tail scan

  // Every case opens its backend first (SQLite-only cases: store_backend::sqlite).
  void open(store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    auto r = testing::open_test_recall(params);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    reader = std::move(*r);
  }

  sqlite_store& sqlite() {
    BOOST_REQUIRE(store.sqlite() != nullptr);
    return *store.sqlite();
  }

  std::string session(const std::string& user, const std::string& key,
                      const std::string& parent = "") {
    session_record rec;
    rec.user_id = user;
    rec.session_key = key;
    rec.parent_id = parent;
    auto s = store->create_session(rec, 1);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    return s->id;
  }

  int64_t add(const std::string& sid, std::string text, msg_role role = msg_role::user) {
    auto id = store->append(msg(sid, role, std::move(text), row_estimate::none));
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  // A session of `n` filler rows; returns their ids.
  std::vector<int64_t> filler(const std::string& sid, int n) {
    std::vector<int64_t> ids;
    for (int i = 0; i < n; ++i)
      ids.push_back(add(sid, "filler line number " + std::to_string(i),
                        i % 2 == 0 ? msg_role::user : msg_role::assistant));
    return ids;
  }

  // Indexes every committed row (what SQLite's storage actor does when idle).
  void index_all() { testing::index_for_recall(*store); }

  recall_result search(const std::string& user, const std::string& query,
                       bool include_inactive = false, int32_t max_sessions = 3) {
    if (index_before_search)
      index_all();
    recall_request req;
    req.user_id = user;
    req.query = query;
    req.include_inactive = include_inactive;
    req.max_sessions = max_sessions;
    auto r = reader->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return std::move(*r);
  }
};

const auto both_backends = data::make(testing::all_store_backends());

std::vector<int64_t> ids_of(const std::vector<message>& xs) {
  std::vector<int64_t> out;
  for (auto& m : xs)
    out.push_back(m.id);
  return out;
}

struct route_case {
  const char* stored;
  const char* query;
  const char* route;       // the route that must find it
  const char* highlighted; // text between >>> and <<< in the snippet
};

std::ostream& operator<<(std::ostream& os, const route_case& c) {
  return os << c.query;
}

const route_case route_cases[] = {
  {"the connection pool was exhausted overnight", "connection", "unicode61", "connection"},
  {"the connection pool was exhausted overnight", "conne*", "unicode61", "connection"},
  {"Café au lait at the résumé review", "resume", "unicode61", "résumé"},
  {"我爱数据库", "数据库", "cjk_bigram", "数据库"},
  {"我爱数据库", "数据", "cjk_bigram", "数据"},
  {"今天去桂林旅游", "桂林", "cjk_bigram", "桂林"},
  {"请帮我修改youer服务端的配置", "youer", "cjk_bigram", "youer"},
  {"東京タワーに行きました", "タワー", "cjk_bigram", "タワー"},
  {"error in handlerRegistryFactory today", "RegistryFac", "trigram", "RegistryFac"},
  {"token zzqy7 marks it", "qy", "substring_scan", "qy"},
  // Issue 26 item 4: accents and case fold the same way on both backends (SQLite's
  // unicode61 remove_diacritics 2; PostgreSQL indexes those very tokens).
  {"we met at the Café crème at noon", "cafe", "unicode61", "Café"},
  {"we met at the Café crème at noon", "CREME", "unicode61", "crème"},
  {"we met at the cafe creme at noon", "café", "unicode61", "cafe"},
  {"the Noël market opens", "noel", "unicode61", "Noël"},
  {"Tiếng Việt is spoken there", "viet", "unicode61", "Việt"},
  {"a naïve approach", "NAIVE", "unicode61", "naïve"},
  {"the résumé review", "résu*", "unicode61", "résumé"},
  {"the Ångström unit", "\"angstrom unit\"", "unicode61", "Ångström unit"},
};

} // namespace

BOOST_DATA_TEST_CASE_F(recall_fixture, each_route_finds_what_it_is_for_and_highlights_it,
                       data::make(route_cases) * both_backends, c, backend) {
  open(backend);
  auto mine = session("alice", "k1");
  filler(mine, 3);
  auto hit_id = add(mine, c.stored);
  filler(mine, 3);
  auto r = search("alice", c.query);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == hit_id);
  BOOST_TEST(r.hits[0].route == c.route);
  BOOST_TEST(r.hits[0].snippet.find(std::string{">>>"} + c.highlighted + "<<<")
               != std::string::npos,
             r.hits[0].snippet);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, a_search_never_sees_another_users_sessions, both_backends, backend) {
  open(backend);
  auto a = session("alice", "k");
  auto b = session("bob", "k");
  add(a, "shared words about the kubernetes deployment");
  auto bob_only = add(b, "shared words about the kubernetes deployment and 数据库 youer");
  add(b, "bob private zzsecretzz");
  for (auto q : {"kubernetes", "shared words", "数据库", "youer", "zzsecretzz", "secret",
                 "ecre", "deploy*"}) {
    for (bool inactive : {false, true}) {
      auto r = search("alice", q, inactive, 10);
      for (auto& h : r.hits) {
        BOOST_TEST(h.hit.session_id == a, q);
        BOOST_TEST(h.hit.id != bob_only);
      }
    }
  }
  BOOST_TEST(search("bob", "kubernetes").hits.size() == 1u);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, rolled_back_rows_are_found_only_with_include_inactive, both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  filler(s, 4);
  BOOST_REQUIRE(store->create_checkpoint(s, "before", 2));
  auto undone = add(s, "the undone zebracorn remark");
  BOOST_REQUIRE(store->rollback_to_checkpoint(s, "before"));
  for (auto q : {"zebracorn", "ebracor", "zebra*"})
    BOOST_TEST(search("alice", q).hits.empty(), q);
  auto r = search("alice", "zebracorn", true);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == undone);
  BOOST_TEST(r.hits[0].kind == recall_hit_kind::rolled_back);
  BOOST_TEST(to_string(r.hits[0].kind) == "rolled_back");
}

BOOST_DATA_TEST_CASE_F(recall_fixture, archived_rows_and_summaries_are_found_and_say_their_kind, both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto ids = filler(s, 4);
  auto fact = add(s, "the archived platypus fact");
  auto more = filler(s, 6);
  compaction_commit c;
  c.session_id = s;
  c.archive_ids = {ids[2], ids[3], fact, more[0]};
  c.summary = msg(s, msg_role::assistant, "summary: we discussed the okapi migration",
                  row_estimate::none);
  auto summary = store->commit_compaction(c);
  BOOST_REQUIRE_MESSAGE(summary, err_of(summary));
  auto archived = search("alice", "platypus");
  BOOST_REQUIRE_EQUAL(archived.hits.size(), 1u);
  BOOST_TEST(archived.hits[0].hit.id == fact);
  BOOST_TEST(archived.hits[0].kind == recall_hit_kind::archived);
  auto summarized = search("alice", "okapi");
  BOOST_REQUIRE_EQUAL(summarized.hits.size(), 1u);
  BOOST_TEST(summarized.hits[0].hit.id == summary->id);
  BOOST_TEST(summarized.hits[0].kind == recall_hit_kind::summary);
  // The summary sits at the position of the first row it archived, after it by id.
  auto& w = summarized.hits[0].window;
  auto at = std::find_if(w.begin(), w.end(), [&](auto& m) { return m.id == summary->id; });
  BOOST_REQUIRE(at != w.end());
  BOOST_REQUIRE(at != w.begin());
  BOOST_TEST((at - 1)->id == ids[2]);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, a_hit_carries_five_rows_each_side_and_three_bookends_each_end, both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto before = filler(s, 14);
  auto hit = add(s, "the needle wombat");
  auto after = filler(s, 15);
  auto r = search("alice", "wombat");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  auto& h = r.hits[0];
  std::vector<int64_t> window(before.end() - 5, before.end());
  window.push_back(hit);
  window.insert(window.end(), after.begin(), after.begin() + 5);
  BOOST_TEST(ids_of(h.window) == window, boost::test_tools::per_element());
  BOOST_TEST(ids_of(h.first) == std::vector<int64_t>(before.begin(), before.begin() + 3),
             boost::test_tools::per_element());
  BOOST_TEST(ids_of(h.last) == std::vector<int64_t>(after.end() - 3, after.end()),
             boost::test_tools::per_element());
  BOOST_TEST(h.window.size() + h.first.size() + h.last.size() == 17u);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, bookends_overlapping_the_window_are_not_repeated, both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto before = filler(s, 2);
  auto hit = add(s, "the needle wombat");
  auto after = filler(s, 3);
  auto r = search("alice", "wombat");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  auto& h = r.hits[0];
  BOOST_TEST(h.window.size() == 6u);
  BOOST_TEST(h.window[2].id == hit);
  BOOST_TEST(h.first.empty());
  BOOST_TEST(h.last.empty());
}

BOOST_DATA_TEST_CASE_F(recall_fixture, bookends_skip_summary_messages, both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto ids = filler(s, 30);
  compaction_commit c;
  c.session_id = s;
  c.archive_ids = {ids[0], ids[1], ids[2], ids[3]};
  c.summary = msg(s, msg_role::user, "summary of the start", row_estimate::none);
  auto summary = store->commit_compaction(c);
  BOOST_REQUIRE_MESSAGE(summary, err_of(summary));
  add(s, "needle wombat far from the start");
  BOOST_REQUIRE(store->commit_compaction([&] {
    compaction_commit c2;
    c2.session_id = s;
    c2.archive_ids = {ids[20]};
    c2.summary = msg(s, msg_role::user, "summary in the middle", row_estimate::none);
    return c2;
  }()));
  auto r = search("alice", "wombat");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  // First rows by position: ids[0] (archived, visible), then the summary at the
  // same position is skipped, then ids[1], ids[2].
  BOOST_TEST(ids_of(r.hits[0].first) == std::vector<int64_t>({ids[0], ids[1], ids[2]}),
             boost::test_tools::per_element());
  for (auto& m : r.hits[0].last)
    BOOST_TEST(!m.is_summary);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, results_keep_the_best_hit_per_session_three_by_default_ten_at_most, both_backends, backend) {
  open(backend);
  for (int i = 0; i < 12; ++i) {
    auto s = session("alice", "k" + std::to_string(i));
    add(s, "quokka once");
    add(s, "quokka twice quokka");
  }
  auto r = search("alice", "quokka");
  BOOST_TEST(r.hits.size() == 3u);
  std::set<std::string> sessions;
  for (auto& h : r.hits)
    sessions.insert(h.hit.session_id);
  BOOST_TEST(sessions.size() == 3u);
  BOOST_TEST(search("alice", "quokka", false, 10).hits.size() == 10u);
  for (int32_t bad : {0, 11, -1}) {
    recall_request req;
    req.user_id = "alice";
    req.query = "quokka";
    req.max_sessions = bad;
    auto x = reader->search(req);
    BOOST_REQUIRE(!x);
    BOOST_TEST((x.error() == errc::bad_request));
    BOOST_TEST(render_error(x.error()).find("max_sessions") != std::string::npos);
  }
  recall_request anon;
  anon.query = "quokka";
  auto x = reader->search(anon);
  BOOST_REQUIRE(!x);
  BOOST_TEST(render_error(x.error()).find("user id") != std::string::npos);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, bm25_ranks_the_denser_match_first, both_backends, backend) {
  open(backend);
  auto weak = session("alice", "weak");
  add(weak, "a long message that mentions capybara once among many many other words here");
  auto strong = session("alice", "strong");
  add(strong, "capybara capybara capybara");
  auto r = search("alice", "capybara");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 2u);
  BOOST_TEST(r.hits[0].hit.session_id == strong);
  BOOST_TEST(r.hits[0].score <= r.hits[1].score);
}

namespace {

std::string garbage_10kb() {
  std::string g;
  unsigned x = 12345;
  while (g.size() < 10 * 1024) {
    x = x * 1103515245u + 12345u;
    g.push_back(static_cast<char>((x >> 16) & 0xFF));
  }
  return g;
}

const std::string bad_queries[] = {
  garbage_10kb(),
  std::string{"\xff\xfe\xc3\x28 \xe6\x95 wombat \x80"},
  "'; DROP TABLE messages; --",
  "\" OR 1=1 --",
  "content:wombat",
  "NEAR(wombat capybara, 2)",
  "(((( ^wombat -capybara + { }",
  "\"unbalanced wombat",
  "OR AND NOT",
  "NOT wombat",
  "*",
  "",
  std::string(5000, '"'),
  std::string("wombat\0zero", 11),
};

} // namespace

BOOST_DATA_TEST_CASE_F(recall_fixture, bad_queries_never_fail_and_never_change_the_store,
                       data::make(bad_queries) * both_backends, q, backend) {
  open(backend);
  auto s = session("alice", "k");
  add(s, "the wombat met the capybara");
  auto before = testing::store_scalar(store, "SELECT count(*) FROM messages");
  for (bool inactive : {false, true}) {
    recall_request req;
    req.user_id = "alice";
    req.query = q;
    req.include_inactive = inactive;
    auto r = reader->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    for (auto& h : r->hits)
      BOOST_TEST(h.hit.session_id == s);
  }
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM messages")
             == before);
}

BOOST_FIXTURE_TEST_CASE(state_flips_leave_every_index_consistent_with_the_text,
                        recall_fixture) {
  open(store_backend::sqlite);
  auto s = session("alice", "k");
  auto ids = filler(s, 10);
  BOOST_REQUIRE(store->create_checkpoint(s, "cp", 2));
  filler(s, 3);
  compaction_commit c;
  c.session_id = s;
  c.archive_ids = {ids[1], ids[2], ids[3]};
  c.summary = msg(s, msg_role::assistant, "summary text", row_estimate::none);
  BOOST_REQUIRE(store->commit_compaction(c));
  BOOST_REQUIRE(store->rollback_to_checkpoint(s, "cp"));
  index_all();
  auto* db = sqlite().connection().native_handle();
  auto rows = scalar(db, "SELECT count(*) FROM messages");
  for (auto* sql : {"INSERT INTO fts_words(fts_words, rank) VALUES ('integrity-check', 1)",
                    "INSERT INTO fts_cjk(fts_cjk, rank) VALUES ('integrity-check', 1)",
                    "INSERT INTO fts_trigram(fts_trigram, rank) VALUES ('integrity-check', 1)"})
    BOOST_TEST(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK, sql);
  // Each index holds exactly one entry per message, whatever its state.
  BOOST_TEST(scalar(db, "SELECT count(*) FROM fts_words_docsize") == rows);
  BOOST_TEST(scalar(db, "SELECT count(*) FROM fts_cjk_docsize") == rows);
  BOOST_TEST(scalar(db, "SELECT count(*) FROM fts_trigram_docsize") == rows);
  // No trigger on the state table writes to an index.
  BOOST_TEST(scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                        " AND tbl_name = 'message_state' AND sql LIKE '%fts%'") == 0);
}

BOOST_AUTO_TEST_CASE(a_version_2_file_is_upgraded_in_place_and_its_rows_become_findable) {
  testing::temp_dir dir{"mneme-recall"};
  store_params p;
  p.path = dir.file("r.db");
  {
    sqlite3* raw = nullptr;
    BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &raw) == SQLITE_OK);
    for (int v = 0; v < 2; ++v)
      BOOST_REQUIRE(sqlite3_exec(raw, schema_migrations()[v].sql, nullptr, nullptr, nullptr)
                    == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(raw,
                               "PRAGMA user_version = 2;"
                               "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                               " VALUES ('old', 'u', 'k', 1);"
                               "INSERT INTO messages(session_id, role, content)"
                               " VALUES ('old', 'user', 'written before recall 我爱数据库');",
                               nullptr, nullptr, nullptr)
                  == SQLITE_OK);
    sqlite3_close(raw);
  }
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto* db = (*store)->connection().native_handle();
  BOOST_TEST(scalar(db, "PRAGMA user_version") == latest_schema_version());
  BOOST_TEST(latest_schema_version() >= 4);
  for (auto* sql : {"SELECT v FROM fts_words_config WHERE k = 'automerge'",
                    "SELECT v FROM fts_cjk_config WHERE k = 'automerge'",
                    "SELECT v FROM fts_trigram_config WHERE k = 'automerge'"})
    BOOST_TEST(scalar(db, sql) == 8, sql);
  auto reader = store_reader::open(p);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  for (auto q : {"recall", "数据", "efore reca"}) {
    recall_request req;
    req.user_id = "u";
    req.query = q;
    auto r = recall_search((*reader)->connection(), req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_REQUIRE_EQUAL(r->hits.size(), 1u);
    BOOST_TEST(r->hits[0].hit.session_id == "old");
  }
}

// --- the unindexed tail (schema v5: indexing runs after the append)

BOOST_FIXTURE_TEST_CASE(a_row_not_yet_indexed_is_found_by_the_tail_scan_and_later_by_its_index,
                        recall_fixture) {
  open(store_backend::sqlite);
  index_before_search = false;
  auto s = session("alice", "k");
  auto id = add(s, "the Marmoset escaped from the lab");
  BOOST_REQUIRE(fts_watermark(sqlite().connection()) == int64_t{0});
  auto r = search("alice", "marmoset");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == id);
  BOOST_TEST(r.hits[0].route == std::string{unindexed_tail_route});
  BOOST_TEST(r.hits[0].snippet.find(">>>Marmoset<<<") != std::string::npos);
  BOOST_TEST(r.hits[0].window.size() == 1u);
  index_all();
  auto indexed = search("alice", "marmoset");
  BOOST_REQUIRE_EQUAL(indexed.hits.size(), 1u);
  BOOST_TEST(indexed.hits[0].hit.id == id);
  BOOST_TEST(indexed.hits[0].route == "unicode61");
}

struct tail_case {
  const char* query;
  bool found;
};

std::ostream& operator<<(std::ostream& os, const tail_case& c) {
  return os << c.query;
}

// Stored (unindexed): "deploy the 数据库 backup to staging-eu now" in alice's session.
const tail_case tail_cases[] = {
  {"staging-eu", true},
  {"数据", true},
  {"DEPLOY backup", true},          // every clause, ASCII case-insensitive
  {"deploy \"the 数据库\"", true},  // phrase as a substring
  {"backup OR nonexistentword", true},
  {"back*", true},
  {"deploy nonexistentword", false}, // implicit AND
  {"deploy NOT staging", false},
  {"NOT nonexistentword", false},    // no positive term: finds nothing
  {"restore", false},
};

BOOST_DATA_TEST_CASE_F(recall_fixture, the_tail_scan_applies_the_query_clauses,
                       data::make(tail_cases), c) {
  open(store_backend::sqlite);
  index_before_search = false;
  auto s = session("alice", "k");
  add(s, "deploy the 数据库 backup to staging-eu now");
  auto r = search("alice", c.query);
  BOOST_TEST(r.hits.size() == (c.found ? 1u : 0u));
  for (auto& h : r.hits)
    BOOST_TEST(h.route == std::string{unindexed_tail_route});
}

BOOST_FIXTURE_TEST_CASE(the_tail_scan_keeps_tenants_apart_and_hides_rolled_back_rows,
                        recall_fixture) {
  open(store_backend::sqlite);
  index_before_search = false;
  auto mine = session("alice", "k");
  auto theirs = session("bob", "k");
  add(theirs, "ocelot belongs to bob");
  add(mine, "filler");
  BOOST_REQUIRE(store->create_checkpoint(mine, "cp", 2));
  auto undone = add(mine, "ocelot said then undone");
  BOOST_REQUIRE(store->rollback_to_checkpoint(mine, "cp"));
  BOOST_TEST(search("alice", "ocelot").hits.empty());
  auto asked = search("alice", "ocelot", true);
  BOOST_REQUIRE_EQUAL(asked.hits.size(), 1u);
  BOOST_TEST(asked.hits[0].hit.id == undone);
  auto bob = search("bob", "ocelot");
  BOOST_REQUIRE_EQUAL(bob.hits.size(), 1u);
  BOOST_TEST(bob.hits[0].hit.session_id == theirs);
}

BOOST_FIXTURE_TEST_CASE(indexed_hits_rank_before_tail_hits_and_a_session_counts_once,
                        recall_fixture) {
  open(store_backend::sqlite);
  auto old_session = session("alice", "old");
  add(old_session, "pangolin pangolin");
  index_all();
  index_before_search = false;
  add(old_session, "pangolin again, not indexed yet");
  auto fresh = session("alice", "fresh");
  auto fresh_id = add(fresh, "a pangolin appeared");
  auto r = search("alice", "pangolin");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 2u);
  BOOST_TEST(r.hits[0].hit.session_id == old_session);
  BOOST_TEST(r.hits[0].route == "unicode61");
  BOOST_TEST(r.hits[1].hit.id == fresh_id);
  BOOST_TEST(r.hits[1].route == std::string{unindexed_tail_route});
}

// Issue 25 item 7: a session, the child it continued in and the session of a
// reset after it are one conversation and take one result slot: its best hit,
// naming the session that holds it; the conversation id is the root session.
// The substring scan reads the user's newest substring_scan_rows visible rows, over all
// of the user's sessions together, whatever other users wrote since (PostgreSQL reads
// them session by session; the bound is the user's, not each session's).
BOOST_DATA_TEST_CASE_F(recall_fixture,
                       the_substring_scan_reads_the_users_newest_rows_across_sessions_only,
                       both_backends, backend) {
  open(backend);
  auto bulk = [&](const std::string& sid, int64_t n) {
    for (int64_t done = 0; done < n;) {
      std::vector<message> batch;
      for (; done < n && batch.size() < 500; ++done)
        batch.push_back(msg(sid, done % 2 == 0 ? msg_role::user : msg_role::assistant,
                            "filler line number " + std::to_string(done), row_estimate::none));
      auto ids = store->append_batch(batch);
      BOOST_REQUIRE_MESSAGE(ids, err_of(ids));
    }
  };
  auto old_session = session("alice", "k1");
  auto old_id = add(old_session, "token zzqy7 marks it");
  bulk(session("bob", "k1"), substring_scan_rows + 10);
  // Bob's newer rows do not push Alice's row out of her scan.
  auto r = search("alice", "qy");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == old_id);
  BOOST_TEST(r.hits[0].route == "substring_scan");
  // Her own newer rows in another session do; a newer row of the old session is in.
  bulk(session("alice", "k2"), substring_scan_rows - 1);
  auto recent_id = add(old_session, "token zzqy8 marks it");
  r = search("alice", "qy", false, 10);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == recent_id);
}

BOOST_DATA_TEST_CASE_F(recall_fixture, a_lineage_of_sessions_takes_one_result_slot_with_its_best_hit, both_backends, backend) {
  open(backend);
  auto root = session("alice", "chat");
  add(root, "the narwhal left");
  auto child = session("alice", "chat", root);   // in_place: false continuation
  add(child, "narwhal narwhal narwhal, and again narwhal");
  auto reset = session("alice", "chat", child);  // an exhaustion reset after the child
  add(reset, "a narwhal, one more narwhal");
  auto other = session("alice", "elsewhere");
  add(other, "one narwhal here");
  auto r = search("alice", "narwhal", false, 10);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 2u);
  BOOST_TEST(r.hits[0].hit.session_id == child);  // the densest match of the conversation
  BOOST_TEST(r.hits[0].conversation_id == root);
  BOOST_TEST(r.hits[1].hit.session_id == other);
  BOOST_TEST(r.hits[1].conversation_id == other);
  // With one slot, the conversation still shows its best hit.
  auto one = search("alice", "narwhal", false, 1);
  BOOST_REQUIRE_EQUAL(one.hits.size(), 1u);
  BOOST_TEST(one.hits[0].hit.session_id == child);
  // A hit only in the reset session is found there and stands for the same conversation.
  add(reset, "the walrus arrived");
  auto walrus = search("alice", "walrus");
  BOOST_REQUIRE_EQUAL(walrus.hits.size(), 1u);
  BOOST_TEST(walrus.hits[0].hit.session_id == reset);
  BOOST_TEST(walrus.hits[0].conversation_id == root);
}

BOOST_FIXTURE_TEST_CASE(the_scans_group_a_lineage_into_one_slot_too, recall_fixture) {
  open(store_backend::sqlite);
  auto root = session("alice", "chat");
  auto child = session("alice", "chat", root);
  auto other = session("alice", "elsewhere");
  index_all();
  index_before_search = false;  // the rows below are found by the unindexed tail scan
  add(root, "capybara in the parent");
  add(child, "capybara in the child");
  add(other, "capybara elsewhere");
  auto r = search("alice", "capybara", false, 10);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 2u);
  std::set<std::string> conversations{r.hits[0].conversation_id, r.hits[1].conversation_id};
  BOOST_TEST((conversations == std::set<std::string>{root, other}));
  for (auto& h : r.hits)
    BOOST_TEST(h.route == std::string{unindexed_tail_route});
  // The newest row of the conversation (the child's) holds the hit on a scan.
  BOOST_TEST((r.hits[0].hit.session_id == child || r.hits[1].hit.session_id == child));
  // The last-resort substring scan ("apyba" is below every index's reach only
  // for unicode61; trigram finds it, and groups the same way).
  index_all();
  auto sub = search("alice", "apyba", false, 10);
  BOOST_TEST(sub.hits.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END() // recall_store_test
