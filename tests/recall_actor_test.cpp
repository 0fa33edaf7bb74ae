// Tests of the recall pool (actors/recall) beside the storage actor: a message is
// findable as soon as its append is acknowledged, tenant scope through messages,
// errors as values, concurrent searches over several readers, overload refusal; on
// both backends (tests/store_backends.hpp: spawn_recall opens the configured one,
// each PostgreSQL reader with a connection of its own).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <set>

#include "caf/all.hpp"

#include "actors/recall/recall_actor.hpp"
#include "actors/storage/storage_actor.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(recall_actor_test)

using namespace mneme;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;

namespace {

caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  register_mneme_types(cfg);
  return cfg;
}

struct pool_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  caf::scoped_actor self{sys};
  testing::temp_dir dir{"mneme-recall-actor"};
  store_params params;
  storage_actor storage;
  recall_actor recall;

  // Every case starts the storage actor of its backend first.
  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = spawn_storage(sys, params, nullptr);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    storage = *s;
  }

  void start_recall(recall_pool_params pool = {}) {
    auto r = spawn_recall(sys, params, nullptr, pool);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    recall = *r;
  }

  ~pool_fixture() {
    if (recall)
      self->send_exit(recall, caf::exit_reason::user_shutdown);
    if (storage)
      self->send_exit(storage, caf::exit_reason::user_shutdown);
  }

  std::string session(const std::string& user) {
    session_record rec;
    rec.user_id = user;
    rec.session_key = "k";
    std::string id;
    self->request(storage, 10s, st_new_session_atom_v, rec, int64_t{1})
      .receive([&](session_record& r) { id = r.id; },
               [&](caf::error& err) { BOOST_FAIL(render_error(err)); });
    return id;
  }

  int64_t append(const std::string& sid, const std::string& text) {
    message m;
    m.session_id = sid;
    m.role = msg_role::user;
    m.content = text;
    int64_t id = 0;
    self->request(storage, 10s, st_append_atom_v, m)
      .receive([&](int64_t x) { id = x; },
               [&](caf::error& err) { BOOST_FAIL(render_error(err)); });
    return id;
  }

  caf::expected<recall_result> search(const std::string& user, const std::string& q) {
    recall_request req;
    req.user_id = user;
    req.query = q;
    caf::expected<recall_result> out{caf::error{}};
    self->request(recall, 10s, rc_search_atom_v, req)
      .receive([&](recall_result& r) { out = std::move(r); },
               [&](caf::error& err) { out = std::move(err); });
    return out;
  }
};

const auto pool_backends = data::make(testing::all_store_backends());

} // namespace

BOOST_DATA_TEST_CASE_F(pool_fixture, every_acknowledged_append_is_findable_by_the_next_search, pool_backends, backend) {
  open(backend);
  auto sid = session("alice");
  start_recall(); // readers open before any of the messages below exist
  const char* forms[] = {"fact%d marker", "事实%d号记录", "log line err%dx glued数据"};
  for (int i = 0; i < 60; ++i) {
    char text[64];
    std::snprintf(text, sizeof text, forms[i % 3], i);
    auto id = append(sid, text);
    char query[32];
    std::snprintf(query, sizeof query, i % 3 == 0 ? "fact%d" : i % 3 == 1 ? "事实%d" : "err%dx",
                  i);
    auto r = search("alice", query);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_REQUIRE_MESSAGE(!r->hits.empty(), "not found right after its ack: " << text);
    BOOST_TEST(r->hits.front().hit.id == id);
  }
}

BOOST_DATA_TEST_CASE_F(pool_fixture, the_pool_scopes_searches_to_the_user_and_returns_errors_as_values, pool_backends, backend) {
  open(backend);
  auto a = session("alice");
  auto b = session("bob");
  append(a, "shared ocelot words");
  append(b, "shared ocelot words");
  start_recall();
  auto r = search("alice", "ocelot");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->hits.size(), 1u);
  BOOST_TEST(r->hits[0].hit.session_id == a);
  auto bad = search("", "ocelot");
  BOOST_REQUIRE(!bad);
  BOOST_TEST((bad.error() == errc::bad_request));
  // The reader that answered with an error keeps serving.
  BOOST_TEST(static_cast<bool>(search("bob", "ocelot")));
}

BOOST_DATA_TEST_CASE_F(pool_fixture, many_concurrent_searches_are_all_answered_by_the_readers, pool_backends, backend) {
  open(backend);
  auto sid = session("alice");
  for (int i = 0; i < 20; ++i)
    append(sid, "concurrent lemur number " + std::to_string(i));
  recall_pool_params pool;
  pool.readers = 3;
  start_recall(pool);
  recall_request req;
  req.user_id = "alice";
  req.query = "lemur";
  for (int i = 0; i < 40; ++i)
    self->send(recall, rc_search_atom_v, req);
  int answered = 0;
  for (int i = 0; i < 40; ++i)
    self->receive([&](recall_result& r) { answered += r.hits.size() == 1u ? 1 : 0; },
                  [&](caf::error& err) { BOOST_FAIL(render_error(err)); },
                  caf::after(10s) >> [&] { BOOST_FAIL("a search was never answered"); });
  BOOST_TEST(answered == 40);
}

BOOST_DATA_TEST_CASE_F(pool_fixture, searches_beyond_the_queue_bound_are_refused_as_overloaded, pool_backends, backend) {
  open(backend);
  auto sid = session("alice");
  append(sid, "queued tapir");
  recall_pool_params pool;
  pool.readers = 1;
  pool.max_queued = 2;
  start_recall(pool);
  recall_request req;
  req.user_id = "alice";
  req.query = "tapir";
  // One search runs, two wait; the fourth of a burst sent before any can finish
  // is refused unless the reader was already done (then fewer are refused).
  for (int i = 0; i < 50; ++i)
    self->send(recall, rc_search_atom_v, req);
  int ok = 0, overloaded = 0;
  for (int i = 0; i < 50; ++i)
    self->receive([&](recall_result&) { ++ok; },
                  [&](caf::error& err) {
                    BOOST_TEST((err == errc::overloaded));
                    ++overloaded;
                  },
                  caf::after(10s) >> [&] { BOOST_FAIL("a search was never answered"); });
  BOOST_TEST(ok + overloaded == 50);
  BOOST_TEST(ok >= 3);
}

BOOST_FIXTURE_TEST_CASE(a_pool_refuses_a_bad_reader_count_and_a_missing_file, pool_fixture) {
  open(testing::store_backend::sqlite);
  recall_pool_params none;
  none.readers = 0;
  auto r = spawn_recall(sys, params, nullptr, none);
  BOOST_REQUIRE(!r);
  BOOST_TEST((r.error() == errc::bad_request));
  store_params missing = params;
  missing.path = dir.file("missing.db");
  BOOST_TEST(!spawn_recall(sys, missing, nullptr));
}

BOOST_FIXTURE_TEST_CASE(a_postgres_pool_refuses_a_schema_without_the_recall_columns,
                        pool_fixture) {
  // A fresh schema nobody migrated: the readers refuse it at spawn, naming why.
  store_params bare;
  testing::use_backend(testing::store_backend::postgres, bare, dir);
  auto r = spawn_recall(sys, bare, nullptr);
  BOOST_REQUIRE(!r);
  BOOST_TEST((r.error() == errc::storage_failed));
  BOOST_TEST(render_error(r.error()).find("schema version") != std::string::npos,
             render_error(r.error()));
  // An unreachable server fails at spawn too, without repeating the URL's password.
  store_params down = bare;
  down.url = "postgresql://mneme:s3cret@127.0.0.1:1/mneme";
  auto d = spawn_recall(sys, down, nullptr);
  BOOST_REQUIRE(!d);
  BOOST_TEST(render_error(d.error()).find("s3cret") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // recall_actor_test
