// Tests of the migration of session keys into their user's namespace (issue 47; SQLite
// schema v11, PostgreSQL v9; policies/key_namespace.hpp), on both backends: a database
// written at the version before, holding the same key under two users, two sessions of
// one user under one key, a session without a user, their tools, a response and (on
// PostgreSQL) a lease, is opened by this binary; every session is kept with its id, the
// two users' keys become two keys, one user's key stays one key, the copies of the key
// follow, and the tables' never-rewritten guards hold again afterwards.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "policies/key_namespace.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/migrations.hpp"
#include "tests/schema_at_version.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(key_namespace_migration_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

constexpr int sqlite_version_before = 10;
constexpr int pg_version_before = 8;

// Rows an older binary wrote: one SQL text for both backends (bytea columns take the
// plain literals as their bytes).
constexpr const char* rows_before_sql = R"sql(
INSERT INTO sessions(id, user_id, session_key, started_at_ms, ended_at_ms)
  VALUES ('s-alice-old', 'alice', 'inbox', 1, 2);
INSERT INTO sessions(id, user_id, session_key, started_at_ms)
  VALUES ('s-alice', 'alice', 'inbox', 3);
INSERT INTO sessions(id, user_id, session_key, started_at_ms)
  VALUES ('s-bob', 'bob', 'inbox', 4);
INSERT INTO sessions(id, user_id, session_key, started_at_ms)
  VALUES ('s-none', '', 'legacy', 5);
INSERT INTO session_tools(session_key, session_id, tools, set_at_ms)
  VALUES ('inbox', 's-alice', '[{"name":"alice_tool"}]', 10);
INSERT INTO session_tools(session_key, session_id, tools, set_at_ms)
  VALUES ('inbox', 's-bob', '[{"name":"bob_tool"}]', 11);
INSERT INTO responses(id, user_id, session_key, session_id, last_row_id, created_at_ms, body)
  VALUES ('resp_bob', 'bob', 'inbox', 's-bob', 1, 12, '{}');
)sql";

void write_sqlite_before(const std::string& path) {
  auto db = test::sqlite_at_version(path, sqlite_version_before);
  test::sqlite_exec_required(db.get(), rows_before_sql);
}

void write_pg_before(const std::string& url) {
  test::write_pg_at_version(url, pg_version_before, [](pqxx::work& w) {
    w.exec0(rows_before_sql);
    w.exec0("INSERT INTO mneme_leases(session_key, owner_node, advertise_url, token, expires_at)"
            " VALUES ('inbox', 'node-a', 'http://a', 7, now() + interval '1 hour')");
  });
}

std::vector<std::string> ids_under(const testing::test_store& store, const std::string& key) {
  session_filter f;
  f.session_key = key;
  auto found = store->sessions(f);
  BOOST_REQUIRE_MESSAGE(found, err_of(found));
  std::vector<std::string> ids;
  for (const auto& s : *found)
    ids.push_back(s.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

} // namespace

BOOST_DATA_TEST_CASE(keys_move_into_their_users_namespace_without_losing_or_merging_a_session,
                     data::make(testing::all_store_backends()), backend) {
  testing::temp_dir dir{"mneme-key-ns"};
  store_params params;
  testing::use_backend(backend, params, dir);
  if (backend == store_backend::sqlite)
    write_sqlite_before(params.path);
  else
    write_pg_before(params.url);

  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto& s = *store;

  // Every session kept, with its id and user.
  BOOST_TEST(testing::store_scalar(s, "SELECT count(*) FROM sessions") == 4);
  // The same key under two users: two keys; one user's two sessions: one key.
  BOOST_TEST(ids_under(s, stored_key("alice", "inbox"))
               == (std::vector<std::string>{"s-alice", "s-alice-old"}),
             boost::test_tools::per_element());
  BOOST_TEST(ids_under(s, stored_key("bob", "inbox")) == std::vector<std::string>{"s-bob"},
             boost::test_tools::per_element());
  BOOST_TEST(ids_under(s, "inbox").empty()); // nobody's any more
  // A session without a user keeps its key.
  BOOST_TEST(ids_under(s, "legacy") == std::vector<std::string>{"s-none"},
             boost::test_tools::per_element());
  BOOST_TEST(s->session("s-bob")->user_id == "bob");

  // The copies of the key follow their session's user.
  auto alice_tools = s->session_tools(stored_key("alice", "inbox"));
  BOOST_REQUIRE_MESSAGE(alice_tools, err_of(alice_tools));
  BOOST_TEST(alice_tools->find("alice_tool") != std::string::npos, *alice_tools);
  auto bob_tools = s->session_tools(stored_key("bob", "inbox"));
  BOOST_REQUIRE_MESSAGE(bob_tools, err_of(bob_tools));
  BOOST_TEST(bob_tools->find("bob_tool") != std::string::npos, *bob_tools);
  auto resp = s->response("resp_bob");
  BOOST_REQUIRE_MESSAGE(resp, err_of(resp));
  BOOST_TEST(resp->session_key == stored_key("bob", "inbox"));
  BOOST_TEST(resp->session_id == "s-bob");

  // The guards are back: neither a tools row nor a response can be rewritten.
  BOOST_TEST(!testing::store_exec_ok(s, "UPDATE session_tools SET set_at_ms = 99"));
  BOOST_TEST(!testing::store_exec_ok(s, "UPDATE responses SET last_row_id = 99"));
  BOOST_TEST(testing::store_scalar(s, "SELECT count(*) FROM session_tools") == 2);

  if (backend == store_backend::postgres) {
    // The live lease follows the newest session under its key (bob's).
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    auto lease = t.exec1("SELECT encode(session_key, 'hex'), token FROM mneme_leases");
    BOOST_TEST(lease[0].as<std::string>() == "626f621f696e626f78"); // "bob" U+001F "inbox"
    BOOST_TEST(lease[1].as<int64_t>() == 7);
  }
}

// A second open finds nothing left to move (the migration ran once) and a key that was
// already in a namespace is never scoped twice.
BOOST_DATA_TEST_CASE(a_reopen_leaves_the_migrated_keys_as_they_are,
                     data::make(testing::all_store_backends()), backend) {
  testing::temp_dir dir{"mneme-key-ns-again"};
  store_params params;
  testing::use_backend(backend, params, dir);
  if (backend == store_backend::sqlite)
    write_sqlite_before(params.path);
  else
    write_pg_before(params.url);
  { BOOST_REQUIRE(testing::open_test_store(params)); }
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  BOOST_TEST(ids_under(*store, stored_key("bob", "inbox")) == std::vector<std::string>{"s-bob"},
             boost::test_tools::per_element());
  BOOST_TEST(testing::store_scalar(*store, "SELECT count(*) FROM sessions") == 4);
}

BOOST_AUTO_TEST_SUITE_END()
