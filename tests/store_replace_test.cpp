// Tests of the row replacement commit (store/sqlite/sqlite_store_replace.cpp,
// store/pg/pg_store_compaction.cpp; on both backends, tests/store_backends.hpp): pruning,
// eviction and micro-compaction store their replacements with it. A replacement
// commits entirely or not at all, the originals stay in the database archived and
// findable by recall, and no full-text index entry of an original is rewritten.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <climits>
#include <functional>
#include <sstream>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/sqlite_recall.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(store_replace_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;
namespace data = boost::unit_test::data;

namespace {

message replacement(std::string text) {
  message m;
  m.role = msg_role::tool;
  m.content = std::move(text);
  return m;
}

std::vector<int64_t> ids_of(const std::vector<message>& xs) {
  std::vector<int64_t> out;
  for (auto& m : xs)
    out.push_back(m.id);
  return out;
}

// Every row of a session with its flags, plus the trigger state: what "nothing
// changed" compares.
std::string dump(message_store& store, const std::string& sid) {
  std::ostringstream out;
  auto rows = store.range(sid, 1, INT64_MAX);
  BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
  for (auto& m : *rows)
    out << m.id << ':' << m.active << m.compacted << m.is_summary << ':' << m.content << '\n';
  auto live = store.live_context(sid);
  BOOST_REQUIRE(live);
  for (auto id : ids_of(*live))
    out << id << ' ';
  auto t = store.triggers(sid);
  BOOST_REQUIRE(t);
  out << "\ncompactions=" << t->compaction_count << " strikes=" << t->anti_thrash_strikes;
  return out.str();
}

struct replace_fixture {
  testing::temp_dir dir{"mneme-replace"};
  store_params params;
  testing::test_store store;
  std::unique_ptr<store_reader> reader; // SQLite only
  std::string sid;
  std::string other_sid;
  std::vector<int64_t> ids; // system, user, assistant(call), tool, assistant, tool-2, user

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    params.max_content_bytes = 100000;
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    if (backend == testing::store_backend::sqlite) {
      auto r = store_reader::open(params);
      BOOST_REQUIRE_MESSAGE(r, err_of(r));
      reader = std::move(*r);
    }
    sid = session("chat-1");
    other_sid = session("chat-2");
    ids.push_back(add(sid, msg_role::system, "You are helpful."));
    ids.push_back(add(sid, msg_role::user, "read the config"));
    auto call = msg(sid, msg_role::assistant, "");
    call.tool_calls = {tool_call{"call_1", "read_file", R"({"path":"/srv/a.yaml"})"}};
    ids.push_back(*store->append(call));
    ids.push_back(add_tool(sid, "call_1", "listen: 8080\nzanzibarquux: enabled\n"
                                            + std::string(3000, 'x')));
    ids.push_back(add(sid, msg_role::assistant, "The config listens on 8080."));
    ids.push_back(add_tool(sid, "call_1", "second output " + std::string(2000, 'y')));
    ids.push_back(add(sid, msg_role::user, "thanks"));
    add(other_sid, msg_role::user, "a row of another session");
  }

  std::string session(const std::string& key) {
    session_record rec;
    rec.user_id = "alice";
    rec.session_key = key;
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE_MESSAGE(created, err_of(created));
    return created->id;
  }

  int64_t add(const std::string& s, msg_role role, const std::string& text) {
    auto id = store->append(msg(s, role, text));
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  int64_t add_tool(const std::string& s, const std::string& call, const std::string& text) {
    auto m = msg(s, msg_role::tool, text);
    m.tool_call_id = call;
    m.tool_name = "read_file";
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  int64_t scalar(const std::string& sql) { return testing::store_scalar(store, sql); }

  sqlite_store& sqlite() {
    BOOST_REQUIRE(store.sqlite() != nullptr);
    return *store.sqlite();
  }

  int64_t archived_by(int64_t id) {
    return scalar("SELECT archived_by FROM message_state WHERE id = " + std::to_string(id));
  }

  // The two tool outputs evicted one for one (non-contiguous rows).
  replacement_commit eviction() {
    replacement_commit c;
    c.session_id = sid;
    c.archive_ids = {ids[3], ids[5]};
    c.rows = {replacement("[OUTPUT TRUNCATED - 3037 chars; recall with search]"),
              replacement("[OUTPUT TRUNCATED - 2014 chars; recall with search]")};
    c.rows[0].tool_call_id = c.rows[1].tool_call_id = "call_1";
    c.positions = {ids[3], ids[5]};
    c.update_triggers = true;
    c.triggers.compaction_count = 7;
    return c;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(store_replace, replace_fixture)

BOOST_DATA_TEST_CASE_F(replace_fixture, replaced_rows_take_the_places_of_their_originals_which_stay_archived,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto c = eviction();
  auto inserted = store->commit_replacement(c);
  BOOST_REQUIRE_MESSAGE(inserted, err_of(inserted));
  BOOST_REQUIRE_EQUAL(inserted->size(), 2u);
  auto a = (*inserted)[0];
  auto b = (*inserted)[1];
  BOOST_TEST(a.id > ids.back());
  BOOST_TEST(b.id > a.id);
  BOOST_TEST(a.content == c.rows[0].content);
  BOOST_TEST(a.is_summary);
  BOOST_TEST(a.replaced_first_id == ids[3]);
  BOOST_TEST(a.replaced_last_id == ids[3]);
  BOOST_TEST(b.replaced_first_id == ids[5]);
  BOOST_TEST(a.session_id == sid);
  auto live = store->live_context(sid);
  BOOST_REQUIRE(live);
  std::vector<int64_t> want{ids[0], ids[1], ids[2], a.id, ids[4], b.id, ids[6]};
  BOOST_TEST(ids_of(*live) == want, boost::test_tools::per_element());
  BOOST_TEST((*live)[3].tool_call_id == "call_1");
  BOOST_TEST(((*live)[3].role == msg_role::tool));
  auto originals = store->range(sid, ids[3], ids[3]);
  BOOST_REQUIRE(originals);
  BOOST_REQUIRE_EQUAL(originals->size(), 1u);
  BOOST_TEST((originals->front().state() == row_state::archived));
  BOOST_TEST(originals->front().content.rfind("listen: 8080", 0) == 0u);
  BOOST_TEST(archived_by(ids[3]) == a.id);
  BOOST_TEST(archived_by(ids[5]) == b.id);
  BOOST_TEST(store->triggers(sid)->compaction_count == 7);
}

BOOST_DATA_TEST_CASE_F(replace_fixture, a_fold_puts_one_row_at_the_first_folded_place_and_archives_the_rest,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  // An earlier rolling summary replaced the user row; the fold absorbs it and the
  // exchange after it into one row placed where the exchange began.
  replacement_commit first;
  first.session_id = sid;
  first.archive_ids = {ids[1]};
  first.rows = {replacement("older rolling summary")};
  first.rows[0].role = msg_role::assistant;
  first.positions = {ids[1]};
  auto older = store->commit_replacement(first);
  BOOST_REQUIRE_MESSAGE(older, err_of(older));
  replacement_commit fold;
  fold.session_id = sid;
  fold.archive_ids = {ids[2], ids[3], ids[4], older->front().id};
  message summary = replacement("rolling summary of rows 3-5");
  summary.role = msg_role::assistant;
  summary.replaced_first_id = ids[1];
  summary.replaced_last_id = ids[4];
  fold.rows = {summary};
  fold.positions = {ids[2]};
  auto folded = store->commit_replacement(fold);
  BOOST_REQUIRE_MESSAGE(folded, err_of(folded));
  auto s = folded->front();
  BOOST_TEST(s.replaced_first_id == ids[1]); // provenance given by the caller is kept
  BOOST_TEST(s.replaced_last_id == ids[4]);
  auto live = store->live_context(sid);
  BOOST_REQUIRE(live);
  std::vector<int64_t> want{ids[0], s.id, ids[5], ids[6]};
  BOOST_TEST(ids_of(*live) == want, boost::test_tools::per_element());
  for (auto id : {ids[2], ids[3], ids[4], older->front().id})
    BOOST_TEST(archived_by(id) == s.id);
}

BOOST_DATA_TEST_CASE_F(replace_fixture, an_archive_only_commit_points_its_rows_at_the_given_absorber,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  replacement_commit c;
  c.session_id = sid;
  c.archive_ids = {ids[4], ids[2]};
  c.archived_by = ids[6];
  auto inserted = store->commit_replacement(c);
  BOOST_REQUIRE_MESSAGE(inserted, err_of(inserted));
  BOOST_TEST(inserted->empty());
  auto live = store->live_context(sid);
  std::vector<int64_t> want{ids[0], ids[1], ids[3], ids[5], ids[6]};
  BOOST_TEST(ids_of(*live) == want, boost::test_tools::per_element());
  BOOST_TEST(archived_by(ids[2]) == ids[6]);
  BOOST_TEST(archived_by(ids[4]) == ids[6]);
}

BOOST_DATA_TEST_CASE_F(replace_fixture, the_evicted_original_stays_findable_by_recall_as_an_archived_row,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  BOOST_REQUIRE(store->commit_replacement(eviction()));
  BOOST_REQUIRE(index_all_pending(sqlite().connection()));
  recall_request req;
  req.user_id = "alice";
  req.query = "zanzibarquux";
  auto r = recall_search(reader->connection(), req);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE_EQUAL(r->hits.size(), 1u);
  BOOST_TEST(r->hits[0].hit.id == ids[3]);
  BOOST_TEST((r->hits[0].kind == recall_hit_kind::archived));
}

BOOST_DATA_TEST_CASE_F(replace_fixture, an_indexed_original_keeps_its_index_entry_no_message_row_is_rewritten,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  BOOST_REQUIRE(index_all_pending(sqlite().connection()));
  auto* db = sqlite().connection().native_handle();
  BOOST_REQUIRE(sqlite3_exec(db,
                             "CREATE TEMP TABLE rewrites(n INTEGER); INSERT INTO rewrites VALUES (0);"
                             "CREATE TEMP TRIGGER count_rewrites AFTER UPDATE ON main.messages"
                             " BEGIN UPDATE rewrites SET n = n + 1; END;",
                             nullptr, nullptr, nullptr)
                == SQLITE_OK);
  auto indexed_before = scalar("SELECT count(*) FROM fts_words WHERE fts_words MATCH 'zanzibarquux'");
  BOOST_REQUIRE_EQUAL(indexed_before, 1);
  BOOST_REQUIRE(store->commit_replacement(eviction()));
  BOOST_TEST(scalar("SELECT n FROM temp.rewrites") == 0);
  BOOST_TEST(scalar("SELECT count(*) FROM fts_words WHERE fts_words MATCH 'zanzibarquux'") == 1);
}

BOOST_AUTO_TEST_SUITE_END()

// --- every refusal leaves the database exactly as it was

struct refusal {
  const char* name;
  errc code;
  const char* says; // part of the error text
  std::function<void(replace_fixture&, replacement_commit&)> spoil;
};

std::ostream& operator<<(std::ostream& os, const refusal& r) {
  return os << r.name;
}

const refusal refusals[] = {
  {"unknown session", errc::not_found, "unknown session 'no-such-session'",
   [](replace_fixture&, replacement_commit& c) { c.session_id = "no-such-session"; }},
  {"ended session", errc::bad_request, "has ended",
   [](replace_fixture& f, replacement_commit&) {
     BOOST_REQUIRE(f.store->end_session(f.sid, 2000, "user"));
   }},
  {"row already archived", errc::bad_request, "is not live (archived)",
   [](replace_fixture& f, replacement_commit&) {
     compaction_commit cc;
     cc.session_id = f.sid;
     cc.archive_ids = {f.ids[5]};
     cc.summary = msg(f.sid, msg_role::user, "summary");
     BOOST_REQUIRE(f.store->commit_compaction(cc));
   }},
  {"row of another session", errc::bad_request, "belongs to another session",
   [](replace_fixture& f, replacement_commit& c) {
     c.archive_ids[1] = f.ids.back() + 1; // the other session's row
     c.positions[1] = c.archive_ids[1];
   }},
  {"unknown row", errc::not_found, "row 99999 does not exist",
   [](replace_fixture&, replacement_commit& c) {
     c.archive_ids[1] = 99999;
     c.positions[1] = 99999;
   }},
  {"more rows than positions", errc::bad_request, "3 rows but 2 positions",
   [](replace_fixture&, replacement_commit& c) { c.rows.push_back(replacement("extra")); }},
  {"position not archived", errc::bad_request, "is not among the archived rows",
   [](replace_fixture& f, replacement_commit& c) { c.positions[1] = f.ids[4]; }},
  {"position used twice", errc::bad_request, "is used twice",
   [](replace_fixture&, replacement_commit& c) { c.positions[1] = c.positions[0]; }},
  {"row archived twice", errc::bad_request, "is archived twice",
   [](replace_fixture&, replacement_commit& c) { c.archive_ids.push_back(c.archive_ids[0]); }},
  {"nothing to archive", errc::bad_request, "archive_ids is empty",
   [](replace_fixture&, replacement_commit& c) {
     c.archive_ids.clear();
     c.rows.clear();
     c.positions.clear();
   }},
  {"row naming another session", errc::bad_request, "names another session",
   [](replace_fixture& f, replacement_commit& c) { c.rows[1].session_id = f.other_sid; }},
  {"empty replacement text", errc::bad_request, "content is empty",
   [](replace_fixture&, replacement_commit& c) { c.rows[1].content.clear(); }},
  {"second row too large after the first was inserted", errc::bad_request, "exceed max_content_bytes",
   [](replace_fixture& f, replacement_commit& c) {
     c.rows[1].content.assign(static_cast<size_t>(f.params.max_content_bytes) + 1, 'z');
   }},
};

BOOST_DATA_TEST_CASE(a_refused_replacement_changes_nothing_and_names_the_problem,
                     data::make(testing::all_store_backends()) * data::make(refusals), backend,
                     r) {
  replace_fixture f;
  f.open(backend);
  auto c = f.eviction();
  r.spoil(f, c);
  auto before = dump(*f.store, f.sid);
  auto max_id = f.scalar("SELECT max(id) FROM messages");
  auto result = f.store->commit_replacement(c);
  BOOST_REQUIRE_MESSAGE(!result, r.name);
  BOOST_TEST((result.error() == r.code), r.name << ": " << render_error(result.error()));
  BOOST_TEST(render_error(result.error()).find(r.says) != std::string::npos,
             render_error(result.error()));
  BOOST_TEST(dump(*f.store, f.sid) == before);
  BOOST_TEST(f.scalar("SELECT max(id) FROM messages") == max_id);
}

BOOST_AUTO_TEST_SUITE_END() // store_replace_test
