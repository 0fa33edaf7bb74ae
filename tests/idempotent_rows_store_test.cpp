// Tests of idempotent writes in the store on both backends (issue 47 item 8;
// message_store::idempotent_rows; SQLite schema v12, PostgreSQL v10): the key is stored
// with the row it came with, found under the row's session key (any of the key's
// sessions, a reset's copies carrying no key) within the window, newest first, with the
// rows after it; and a database written at the version before is migrated with its rows
// kept and keyless, then takes keyed rows.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "tests/schema_at_version.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(idempotent_rows_store_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

constexpr const char* idem_key = "alice\x1f" "inbox";

struct idem_fixture {
  testing::temp_dir dir{"mneme-idem"};
  store_params params;
  testing::test_store store;

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    reopen();
  }
  void reopen() {
    store.reset();
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }
  std::string session(const std::string& key) {
    session_record rec;
    rec.user_id = "alice";
    rec.session_key = key;
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE_MESSAGE(created, err_of(created));
    return created->id;
  }
  int64_t append(const std::string& sid, msg_role role, const std::string& text, time_ms at,
                 const std::string& idem = {}) {
    message m;
    m.session_id = sid;
    m.role = role;
    m.content = text;
    m.timestamp_ms = at;
    m.token_estimate = 5;
    m.idempotency_key = idem;
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }
  std::vector<message> rows(const std::string& key, const std::string& idem, time_ms since,
                            int64_t limit = 10) {
    auto r = store->idempotent_rows(key, idem, since, limit);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }
};

std::vector<int64_t> ids_of(const std::vector<message>& rows) {
  std::vector<int64_t> out;
  for (const auto& m : rows)
    out.push_back(m.id);
  return out;
}

} // namespace

BOOST_DATA_TEST_CASE_F(idem_fixture, a_keyed_row_is_found_with_the_rows_after_it_in_its_window,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto sid = session(idem_key);
  auto q1 = append(sid, msg_role::user, "q1", 5000, "req-1");
  auto a1 = append(sid, msg_role::assistant, "a1", 5001);
  auto q2 = append(sid, msg_role::user, "q2", 6000, "req-2");
  auto found = rows(idem_key, "req-1", 4000);
  BOOST_TEST(ids_of(found) == (std::vector<int64_t>{q1, a1, q2}),
             boost::test_tools::per_element());
  BOOST_TEST(found[0].content == "q1");
  BOOST_TEST(found[0].session_id == sid);
  BOOST_TEST(ids_of(rows(idem_key, "req-1", 4000, 2)) == (std::vector<int64_t>{q1, a1}),
             boost::test_tools::per_element());
  // Outside the window (the row is older than since), another key, another session key,
  // another user's same key: nothing.
  BOOST_TEST(rows(idem_key, "req-1", 5001).empty());
  BOOST_TEST(rows(idem_key, "req-3", 0).empty());
  BOOST_TEST(rows("alice\x1f" "other", "req-1", 0).empty());
  BOOST_TEST(rows("bob\x1f" "inbox", "req-1", 0).empty());
  BOOST_TEST(ids_of(rows(idem_key, "req-2", 0)) == std::vector<int64_t>{q2},
             boost::test_tools::per_element());
  // The key survives a reopen (it is in the row, not in memory).
  reopen();
  BOOST_TEST(rows(idem_key, "req-1", 4000).size() == 3u);
  // Bad requests name themselves.
  BOOST_TEST(!store->idempotent_rows(idem_key, "", 0, 10));
  BOOST_TEST(!store->idempotent_rows(idem_key, "req-1", 0, 0));
}

BOOST_DATA_TEST_CASE_F(idem_fixture, the_newest_keyed_row_of_any_of_the_keys_sessions_answers,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto sid = session(idem_key);
  append(sid, msg_role::system, "prompt", 4000);
  auto first = append(sid, msg_role::user, "q1", 5000, "req-1");
  // A reset copies the head (with the keyed row) into a new session: the copy carries
  // no key, so the key still names the row it came with.
  auto fresh = store->reset_session(sid, 2, 7000, "test");
  BOOST_REQUIRE_MESSAGE(fresh, err_of(fresh));
  auto found = rows(idem_key, "req-1", 0);
  BOOST_REQUIRE(!found.empty());
  BOOST_TEST(found[0].id == first);
  BOOST_TEST(found[0].session_id == sid);
  // After the window the same key stored again in the new session: that row answers.
  auto second = append(fresh->id, msg_role::user, "q1", 90000, "req-1");
  found = rows(idem_key, "req-1", 0);
  BOOST_REQUIRE(!found.empty());
  BOOST_TEST(found[0].id == second);
  BOOST_TEST(found[0].session_id == fresh->id);
}

namespace {

constexpr int sqlite_before_idem = 11;
constexpr int pg_before_idem = 9;

// Rows an older binary wrote (one SQL text for both backends).
constexpr const char* idem_rows_before_sql = R"sql(
INSERT INTO sessions(id, user_id, session_key, started_at_ms)
  VALUES ('s-old', 'alice', 'alice' || char(31) || 'inbox', 1);
)sql";

void write_sqlite_before_idem(const std::string& path) {
  auto db = test::sqlite_at_version(path, sqlite_before_idem);
  test::sqlite_exec_required(db.get(), idem_rows_before_sql);
  test::sqlite_exec_required(db.get(), // a trigger adds its state row
                             "INSERT INTO messages(session_id, role, content, timestamp_ms)"
                             " VALUES ('s-old', 'user', 'before', 2);");
}

void write_pg_before_idem(const std::string& url) {
  test::write_pg_at_version(url, pg_before_idem, [](pqxx::work& w) {
    w.exec0("INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
            " VALUES ('s-old', 'alice', 'alice'::bytea || '\\x1f'::bytea || 'inbox'::bytea, 1)");
    w.exec0("WITH m AS (INSERT INTO messages(session_id, role, content, timestamp_ms,"
            " search_words, search_text, search_unicode61)"
            " VALUES ('s-old', 'user', 'before', 2, '', 'before', '')"
            " RETURNING id, session_id)"
            " INSERT INTO message_state(id, session_id) SELECT id, session_id FROM m");
  });
}

} // namespace

BOOST_DATA_TEST_CASE_F(idem_fixture,
                       a_database_of_the_version_before_is_migrated_keeping_its_rows_keyless,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  if (backend == store_backend::sqlite)
    write_sqlite_before_idem(params.path);
  else
    write_pg_before_idem(params.url);
  reopen();
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM messages") == 1);
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM messages"
                                          " WHERE idempotency_key = ''")
             == 1);
  auto old = store->live_context("s-old");
  BOOST_REQUIRE_MESSAGE(old, err_of(old));
  BOOST_REQUIRE(old->size() == 1u);
  BOOST_TEST((*old)[0].content == "before");
  // The migrated database takes keyed rows and finds them.
  auto id = append("s-old", msg_role::user, "after", 10, "req-1");
  auto found = rows(idem_key, "req-1", 0);
  BOOST_TEST(ids_of(found) == std::vector<int64_t>{id}, boost::test_tools::per_element());
  BOOST_TEST(test::at_latest_schema(store, backend));
}

BOOST_AUTO_TEST_SUITE_END()
