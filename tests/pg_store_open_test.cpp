// Tests of opening the PostgreSQL store (store/pg/pg_store.hpp, pg_schema.hpp):
// migrations recorded in a version table and applied once, a newer schema refused,
// an unreachable server and a missing URL reported clearly without the password,
// database.url_file read, the writer lock taken again after a reconnect (or the write
// refused while another writer holds it), operations after a server restart waiting for
// it instead of failing, every SQLite path refusing backend postgres, and the
// daemon's runtime running on it with its recall seam (docs/scale-out.md).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include <pqxx/pqxx>

#include "caf/all.hpp"

#include "actors/runtime.hpp"
#include "messages/mneme_types.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/pg/pg_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "testing/pg_test_cluster.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(pg_store_open_test)

using namespace mneme;
using mneme::testing::err_of;

namespace {

struct pg_open_fixture {
  testing::temp_dir dir{"mneme-pg-open"};
  store_params params;

  pg_open_fixture() { testing::use_backend(testing::store_backend::postgres, params, dir); }

  int64_t scalar(const std::string& sql) {
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    return t.exec1(sql)[0].as<int64_t>();
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(migrations_are_recorded_once_and_a_reopen_keeps_the_rows,
                        pg_open_fixture) {
  std::string sid;
  {
    auto s = pg_store::open(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    auto rec = (*s)->create_session(session_record{}, 1000);
    BOOST_REQUIRE(rec);
    sid = rec->id;
    BOOST_REQUIRE((*s)->append(testing::msg(sid, msg_role::user, "kept")));
  }
  auto again = pg_store::open(params);
  BOOST_REQUIRE_MESSAGE(again, err_of(again));
  BOOST_TEST(scalar("SELECT count(*) FROM mneme_schema_versions")
             == static_cast<int64_t>(pg_schema_migrations().size()));
  BOOST_TEST(scalar("SELECT max(version) FROM mneme_schema_versions")
             == pg_latest_schema_version());
  BOOST_TEST((*again)->live_context(sid)->front().content == "kept");
}

// libpqxx reconnects a broken connection by itself, and the writer lock dies with the
// old server process: the store's next write takes it again, or is refused while
// another writer holds the database.
BOOST_FIXTURE_TEST_CASE(the_writer_lock_is_taken_again_after_a_reconnect, pg_open_fixture) {
  auto first = pg_store::open(params);
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  auto& a = **first;
  BOOST_REQUIRE(!a.lock_as_only_writer());
  auto rec = a.create_session(session_record{}, 1000);
  BOOST_REQUIRE(rec);
  const auto sid = rec->id;
  BOOST_REQUIRE(a.append(testing::msg(sid, msg_role::user, "before the cut")));
  const auto lock_is_free = [&] {
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    const std::string key = "hashtextextended('mneme-writer/' || current_schema(), 0)";
    if (!t.exec1("SELECT pg_try_advisory_lock(" + key + ")")[0].as<bool>())
      return false;
    t.exec1("SELECT pg_advisory_unlock(" + key + ")");
    return true;
  };
  BOOST_TEST(!lock_is_free());
  // Ends the first store's server process and waits until it is gone (bounded).
  const auto cut = [&] {
    const auto pid = std::to_string(a.connection().backendpid());
    scalar("SELECT count(*) FROM (SELECT pg_terminate_backend(" + pid + ")) t");
    for (int i = 0; i < 1000; ++i) {
      if (scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == 0)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    BOOST_FAIL("the terminated server process did not exit within 10 s");
  };
  // An append that meets the dead connection runs again on a new one (pg::guarded);
  // the loop only keeps this test about the lock, not about the reconnection.
  const auto append_after_cut = [&](const std::string& text) {
    auto id = a.append(testing::msg(sid, msg_role::user, text));
    for (int attempt = 0; attempt < 5 && !id && id.error() == errc::storage_cant_open; ++attempt)
      id = a.append(testing::msg(sid, msg_role::user, text));
    return id;
  };

  cut();
  {
    auto second = pg_store::open(params);
    BOOST_REQUIRE_MESSAGE(second, err_of(second));
    BOOST_REQUIRE_MESSAGE(!(*second)->lock_as_only_writer(), "the lock died with its backend");
    auto refused = append_after_cut("while another writer holds the database");
    BOOST_REQUIRE(!refused);
    BOOST_TEST((refused.error() == errc::storage_locked), err_of(refused));
    BOOST_TEST(scalar("SELECT count(*) FROM messages") == 1);
    // The second writer lets go (at once: a closing connection's lock outlives the close
    // by the server process's exit).
    pqxx::nontransaction t{(*second)->connection()};
    t.exec("SELECT pg_advisory_unlock_all()");
  }

  auto kept = append_after_cut("after the other writer left");
  BOOST_REQUIRE_MESSAGE(kept, err_of(kept));
  BOOST_TEST(!lock_is_free(), "the first store holds the writer lock again");
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == 2);

  cut(); // alone: the next write reconnects and takes the lock back at once
  auto again = append_after_cut("after a second cut");
  BOOST_REQUIRE_MESSAGE(again, err_of(again));
  BOOST_TEST(!lock_is_free());
}

// A restart of the server cuts every connection: the store's next operations wait for
// it and run on a new connection, each at its first call (no error reaches the caller).
BOOST_FIXTURE_TEST_CASE(operations_after_a_server_restart_succeed_at_their_first_call,
                        pg_open_fixture) {
  auto opened = pg_store::open(params);
  BOOST_REQUIRE_MESSAGE(opened, err_of(opened));
  auto& s = **opened;
  auto rec = s.create_session(session_record{}, 1000);
  BOOST_REQUIRE(rec);
  const auto sid = rec->id;
  BOOST_REQUIRE(s.append(testing::msg(sid, msg_role::user, "before the restart")));

  testing::pg_test_cluster::shared().restart();
  auto appended = s.append(testing::msg(sid, msg_role::user, "after the restart"));
  BOOST_REQUIRE_MESSAGE(appended, err_of(appended));

  testing::pg_test_cluster::shared().restart();
  auto live = s.live_context(sid);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));
  BOOST_TEST(live->size() == 2u);

  testing::pg_test_cluster::shared().restart();
  BOOST_REQUIRE(!s.begin_group()); // the storage actor's group path
  BOOST_REQUIRE(s.insert_in_group(testing::msg(sid, msg_role::assistant, "in a group")));
  BOOST_REQUIRE(!s.commit_group());
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == 3);
}

BOOST_FIXTURE_TEST_CASE(a_database_of_a_newer_mneme_is_refused, pg_open_fixture) {
  BOOST_REQUIRE(pg_store::open(params));
  {
    pqxx::connection c{params.url};
    pqxx::work t{c};
    t.exec0("INSERT INTO mneme_schema_versions(version, description) VALUES (999, 'future')");
    t.commit();
  }
  auto s = pg_store::open(params);
  BOOST_REQUIRE(!s);
  BOOST_TEST((s.error() == errc::storage_schema_too_new), render_error(s.error()));
}

BOOST_AUTO_TEST_CASE(an_unreachable_server_is_a_clear_error_without_the_password) {
  store_params p;
  p.backend = store_backend::postgres;
  // A port nothing listens on (the cluster's port + 1 is not ours either way: the
  // refusal or a failed authentication are both clear errors).
  p.url = "postgresql://mneme:s3cretpw@127.0.0.1:1/none?connect_timeout=2";
  auto s = pg_store::open(p);
  BOOST_REQUIRE(!s);
  BOOST_TEST((s.error() == errc::storage_cant_open), render_error(s.error()));
  BOOST_TEST(render_error(s.error()).find("postgres: connect") != std::string::npos);
  BOOST_TEST(render_error(s.error()).find("s3cretpw") == std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(the_url_may_come_from_a_file_and_is_required, pg_open_fixture) {
  auto file = dir.file("url");
  std::ofstream{file} << params.url << "\n";
  store_params p = params;
  p.url.clear();
  p.url_file = file;
  auto s = pg_store::open(p);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  p.url_file.clear();
  auto none = pg_store::open(p);
  BOOST_REQUIRE(!none);
  BOOST_TEST((none.error() == errc::config_invalid));
  BOOST_TEST(render_error(none.error()).find("database.url") != std::string::npos);
  p.url_file = dir.file("missing");
  BOOST_TEST((pg_store::open(p).error() == errc::config_invalid));
}

// The SQLite connection refuses a postgres configuration (it never opens a file
// instead); the runtime starts on it, stores through the PostgreSQL store, and its
// recall readers search it (store/pg/pg_recall).
BOOST_FIXTURE_TEST_CASE(sqlite_paths_refuse_backend_postgres_and_the_runtime_runs_on_it,
                        pg_open_fixture) {
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(!reader);
  BOOST_TEST((reader.error() == errc::config_invalid));
  BOOST_TEST(render_error(reader.error()).find("postgres") != std::string::npos);
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  runtime_config rc;
  rc.database = params;
  auto rt = runtime::start(sys, rc);
  BOOST_REQUIRE_MESSAGE(rt, err_of(rt));
  caf::scoped_actor self{sys};
  session_record rec;
  rec.user_id = "alice";
  rec.session_key = "k";
  std::string sid;
  self->request((*rt)->storage(), std::chrono::seconds(30), st_new_session_atom_v, rec,
                int64_t{1000})
    .receive([&](session_record& r) { sid = r.id; },
             [&](caf::error& e) { BOOST_FAIL(render_error(e)); });
  BOOST_REQUIRE(!sid.empty());
  auto check = pg_store::open(params);
  BOOST_REQUIRE_MESSAGE(check, err_of(check));
  BOOST_TEST(static_cast<bool>((*check)->session(sid))); // in PostgreSQL
  BOOST_REQUIRE((*rt)->recall() != nullptr);
  message m;
  m.session_id = sid;
  m.role = msg_role::user;
  m.content = "the okapi arrived";
  BOOST_REQUIRE((*check)->append(m));
  recall_request req;
  req.user_id = "alice";
  req.query = "okapi";
  std::string said;
  self->request((*rt)->recall(), std::chrono::seconds(30), rc_search_atom_v, req)
    .receive([&](recall_result& r) { said = std::to_string(r.hits.size()) + " hit"; },
             [&](caf::error& e) { said = render_error(e); });
  BOOST_TEST(said == "1 hit");
  (*rt)->stop();
}

BOOST_AUTO_TEST_SUITE_END() // pg_store_open_test
