// Tests of PostgreSQL's deferred recall indexing (store/pg/pg_indexer.hpp, schema v12):
// an acknowledged row not yet indexed is found by recall's unindexed tail; the indexer
// fills the recall columns in bounded batches (short ones while appends keep coming),
// reading the rows it fills and not the backlog, and moves the watermark; a database of
// version 11 keeps every row findable; a store reopened with a backlog drains it
// through the storage actor's idle ticks.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <limits>
#include <thread>

#include <pqxx/pqxx>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"
#include "store/pg/pg_indexer.hpp"
#include "store/recall.hpp"
#include "store/pg/pg_schema.hpp"
#include "store/pg/pg_search_columns.hpp"
#include "store/pg/pg_store.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(pg_indexer_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;
using namespace std::chrono_literals;

namespace {

struct pg_indexer_fixture {
  testing::temp_dir dir{"mneme-pg-indexer"};
  store_params params;
  testing::test_store store;
  std::string sid;

  pg_indexer_fixture() {
    testing::use_backend(testing::store_backend::postgres, params, dir);
    open();
    session_record rec;
    rec.user_id = "alice";
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE(created);
    sid = created->id;
  }

  void open() {
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }

  int64_t scalar(const std::string& sql) { return testing::store_scalar(store, sql); }
  int64_t unindexed() { return scalar("SELECT count(*) FROM messages WHERE search_text IS NULL"); }
  int64_t watermark() { return scalar("SELECT indexed_through FROM recall_index_state"); }

  recall_result search(const std::string& query, const std::string& user = "alice") {
    auto reader = testing::open_test_recall(params);
    BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
    recall_request req;
    req.user_id = user;
    req.query = query;
    auto r = (*reader)->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }
};

index_tick_plan plan_of(int64_t rows) {
  index_tick_plan plan;
  plan.max_rows = rows;
  plan.max_bytes = int64_t{1} << 30;
  plan.run = {rows, int64_t{1} << 30};
  plan.max_run = plan.run;
  plan.large_rows_through = std::numeric_limits<int64_t>::max(); // the writer is quiet
  return plan;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(an_acknowledged_row_not_yet_indexed_is_found_by_the_unindexed_tail,
                        pg_indexer_fixture) {
  auto id = store->append(msg(sid, msg_role::user, "the kingfisher nests by the river"));
  BOOST_REQUIRE(id);
  BOOST_TEST(unindexed() == 1); // the append wrote the row alone
  auto r = search("kingfisher");
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == *id);
  BOOST_TEST(r.hits[0].route == std::string{unindexed_tail_route});
  BOOST_TEST(r.hits[0].snippet == "the >>>kingfisher<<< nests by the river");
  // The tail is the user's own: another user finds nothing.
  BOOST_TEST(search("kingfisher", "mallory").hits.empty());
  // ASCII case folds as in the substring scan; a NOT clause still excludes.
  BOOST_TEST(search("KINGFISHER").hits.size() == 1u);
  BOOST_TEST(search("kingfisher NOT river").hits.empty());

  testing::index_for_recall(*store);
  BOOST_TEST(unindexed() == 0);
  auto after = search("kingfisher");
  BOOST_REQUIRE_EQUAL(after.hits.size(), 1u);
  BOOST_TEST(after.hits[0].hit.id == *id);
  BOOST_TEST(after.hits[0].route == "unicode61");
}

BOOST_FIXTURE_TEST_CASE(the_indexer_fills_bounded_batches_and_moves_the_watermark,
                        pg_indexer_fixture) {
  const int64_t total = pg_index_batch_rows + 44;
  std::vector<message> batch;
  for (int64_t i = 0; i < total; ++i)
    batch.push_back(msg(sid, msg_role::user, "heron number " + std::to_string(i)));
  auto ids = store->append_batch(batch);
  BOOST_REQUIRE(ids);
  auto* m = store->maintenance();
  BOOST_REQUIRE(m != nullptr);
  BOOST_TEST(watermark() == ids->ids.front() - 1);
  auto backlog = m->index_backlogs();
  BOOST_REQUIRE(backlog);
  BOOST_TEST((*backlog)[0] == total);

  // While appends keep coming, a row committed too recently waits (and the rows behind
  // it): nothing is filled, the tick names it.
  auto busy = plan_of(100000);
  busy.large_rows_through = ids->ids.front() - 1;
  auto waiting = m->index_tick(busy, [] { return false; });
  BOOST_REQUIRE_MESSAGE(waiting, err_of(waiting));
  BOOST_TEST(waiting->rows == 0);
  BOOST_TEST((waiting->stop == index_stop::large_row_due));
  BOOST_TEST(waiting->deferred_id == ids->ids.front());
  BOOST_TEST(unindexed() == total);

  // A run longer than a batch still commits one bounded batch.
  auto first = m->index_tick(plan_of(100000), [] { return false; });
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  BOOST_TEST(first->rows == pg_index_batch_rows);
  BOOST_TEST((first->stop == index_stop::budget));
  BOOST_TEST(!first->all_caught_up);
  BOOST_TEST(first->watermark == ids->ids[pg_index_batch_rows - 1]);
  BOOST_TEST(watermark() == first->watermark);
  BOOST_TEST(unindexed() == 44);

  // A waiting request stops a tick after its first row; the watermark moves by one.
  auto yielded = m->index_tick(plan_of(100000), [] { return true; });
  BOOST_REQUIRE(yielded);
  BOOST_TEST(yielded->rows == 1);
  BOOST_TEST((yielded->stop == index_stop::yielded));
  BOOST_TEST(yielded->waited);
  BOOST_TEST(yielded->watermark == ids->ids[pg_index_batch_rows]);

  auto last = m->index_tick(plan_of(100000), [] { return false; });
  BOOST_REQUIRE(last);
  BOOST_TEST(last->rows == 43);
  BOOST_TEST((last->stop == index_stop::caught_up));
  BOOST_TEST(last->all_caught_up);
  BOOST_TEST(last->watermark == ids->ids.back());
  BOOST_TEST(unindexed() == 0);
  // Every row went in once, with PostgreSQL's own form of its tokens.
  BOOST_TEST(scalar("SELECT count(*) FROM messages WHERE search_unicode61 @@ 'heron'::tsquery")
             == total);
  std::string quoted; // the literal inside an SQL string
  for (char c : pg_tsvector_literal("heron number 7"))
    quoted += c == '\'' ? std::string{"''"} : std::string(1, c);
  BOOST_TEST(scalar("SELECT count(*) FROM messages WHERE search_words::text = '" + quoted + "'")
             == 1);
  // A filled row's columns never change again; its text never did.
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE messages SET search_text = 'x'"));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE messages SET content = 'x'::bytea"));
  auto again = m->index_tick(plan_of(10), [] { return false; });
  BOOST_REQUIRE(again);
  BOOST_TEST(again->rows == 0);
  BOOST_TEST(again->all_caught_up);
}

// A batch reads the rows it fills, not the backlog: the planner's statistics lag a
// table that grew by thousands of unindexed rows (no ANALYZE here), and a plan that
// read and sorted the whole backlog made every batch cost in proportion to it (and an
// append wait behind it). While appends keep coming a tick fills a short batch.
BOOST_FIXTURE_TEST_CASE(a_batch_reads_what_it_fills_and_a_busy_tick_fills_a_short_one,
                        pg_indexer_fixture) {
  const int64_t backlog = 3000;
  std::vector<message> batch;
  for (int64_t i = 0; i < backlog; ++i)
    batch.push_back(msg(sid, msg_role::user, "egret number " + std::to_string(i)));
  auto ids = store->append_batch(batch);
  BOOST_REQUIRE(ids);
  {
    // Rows fetched from the table by this backend's scans (a bitmap heap scan counts
    // here too), taken as a difference around the batch.
    pqxx::work w{store.pg()->connection()};
    auto rows_fetched = [&w] {
      return w.exec1("SELECT coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)"
                     " FROM pg_stat_xact_user_tables WHERE relid = 'messages'::regclass")[0]
        .as<int64_t>();
    };
    const auto before = rows_fetched();
    auto filled = pg_fill_recall_columns(w, 16, int64_t{1} << 30,
                                         std::numeric_limits<int64_t>::max(), {});
    BOOST_TEST(filled.rows == 16);
    // The batch, its rows again by key, the watermark's ends; not the backlog.
    const auto fetched = rows_fetched() - before;
    BOOST_TEST_MESSAGE("rows fetched by one batch of 16: " << fetched);
    BOOST_TEST(fetched < 200);
    // Nor is it compiled: the settings that keep the plans on indexes inflate their
    // costs past jit_above_cost, and JIT took 60-180 ms for each batch's watermark.
    BOOST_TEST(w.exec1("SHOW jit")[0].as<std::string>() == "off");
    w.commit();
  }
  BOOST_TEST(unindexed() == backlog - 16);

  auto* m = store->maintenance();
  BOOST_REQUIRE(m != nullptr);
  auto busy = plan_of(100000);
  busy.large_rows_through = ids->ids.back(); // every row may go, but appends keep coming
  auto tick = m->index_tick(busy, [] { return false; });
  BOOST_REQUIRE_MESSAGE(tick, err_of(tick));
  BOOST_TEST(tick->rows == pg_index_busy_batch_rows);
  BOOST_TEST((tick->stop == index_stop::budget));
  BOOST_TEST(unindexed() == backlog - 16 - pg_index_busy_batch_rows);
  // Once the writer is quiet a tick takes the full batch again.
  auto quiet = m->index_tick(plan_of(100000), [] { return false; });
  BOOST_REQUIRE(quiet);
  BOOST_TEST(quiet->rows == pg_index_batch_rows);
}

// A database written by version 11 (recall columns in every row) migrates to v12
// with its rows indexed and the watermark at its last row; old and new rows are
// findable at once.
BOOST_AUTO_TEST_CASE(a_version_11_database_keeps_every_row_findable) {
  testing::temp_dir dir{"mneme-pg-v12"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  {
    pqxx::connection c{params.url};
    BOOST_REQUIRE(!pg_apply_migrations(c, 11));
    pqxx::work w{c};
    w.exec0("INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
            " VALUES ('old', 'alice', 'k', 1)");
    for (const std::string text : {"the old osprey", "an older osprey nest"})
      w.exec_params("WITH m AS (INSERT INTO messages(session_id, role, content, search_words,"
                    " search_text, search_unicode61) VALUES ('old', 'user',"
                    " convert_to($1, 'UTF8'), $2::tsvector, $1, $3::tsvector) RETURNING id)"
                    " INSERT INTO message_state(id, session_id) SELECT id, 'old' FROM m",
                    text, pg_tsvector_literal(text), pg_unicode61_literal(text));
    w.commit();
  }
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  BOOST_TEST(testing::store_scalar(*store, "SELECT max(version) FROM mneme_schema_versions")
             == pg_latest_schema_version());
  auto last_old = testing::store_scalar(*store, "SELECT max(id) FROM messages");
  BOOST_TEST(testing::store_scalar(*store, "SELECT indexed_through FROM recall_index_state")
             == last_old);
  auto backlog = (*store)->maintenance()->index_backlogs();
  BOOST_REQUIRE(backlog);
  BOOST_TEST((*backlog)[0] == 0);

  session_record rec;
  rec.user_id = "alice";
  auto created = (*store)->create_session(rec, 2000);
  BOOST_REQUIRE(created);
  BOOST_REQUIRE((*store)->append(msg(created->id, msg_role::user, "a new osprey sighting")));

  auto reader = testing::open_test_recall(params);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  recall_request req;
  req.user_id = "alice";
  req.query = "osprey";
  auto r = (*reader)->search(req);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE_EQUAL(r->hits.size(), 2u); // one per conversation
  BOOST_TEST(r->hits[0].hit.session_id == "old");
  BOOST_TEST(r->hits[0].route == "unicode61");
  BOOST_TEST(r->hits[1].hit.session_id == created->id);
  BOOST_TEST(r->hits[1].route == std::string{unindexed_tail_route});

  testing::index_for_recall(**store);
  r = (*reader)->search(req);
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->hits.size(), 2u);
  for (auto& h : r->hits)
    BOOST_TEST(h.route == "unicode61");
  BOOST_TEST(testing::store_scalar(*store, "SELECT indexed_through FROM recall_index_state")
             == last_old + 1);
  BOOST_TEST(!testing::store_exec_ok(*store, "UPDATE messages SET timestamp_ms = 2"));
}

// Rows appended by a store that closed before indexing them are indexed by the next
// storage actor's idle ticks, with no request needed.
BOOST_FIXTURE_TEST_CASE(a_restart_with_a_backlog_drains_it, pg_indexer_fixture) {
  std::vector<message> batch;
  for (int i = 0; i < 600; ++i)
    batch.push_back(msg(sid, msg_role::user, "egret " + std::to_string(i)));
  BOOST_REQUIRE(store->append_batch(batch));
  store.reset(); // closed with 600 rows unindexed
  {
    pqxx::connection c{params.url};
    pqxx::nontransaction t{c};
    BOOST_REQUIRE(pg_unindexed_rows(t) == 600);
  }
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  auto metrics = std::make_shared<storage_metrics>();
  auto storage = spawn_storage(sys, params, nullptr, metrics);
  BOOST_REQUIRE_MESSAGE(storage, err_of(storage));
  // No request: only the actor's own ticks index. The deadline only bounds a failure.
  auto deadline = std::chrono::steady_clock::now() + 60s;
  while (metrics->indexed_rows.load() < 600 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  BOOST_TEST(metrics->indexed_rows.load() == 600);
  BOOST_TEST(metrics->index_batches.load() >= 3); // bounded batches, not one
  BOOST_TEST(metrics->unindexed_rows.load() == 0);
  caf::anon_send_exit(*storage, caf::exit_reason::user_shutdown);
  pqxx::connection c{params.url};
  pqxx::nontransaction t{c};
  BOOST_TEST(pg_unindexed_rows(t) == 0);
  BOOST_TEST(pg_indexed_through(t) == t.exec1("SELECT max(id) FROM messages")[0].as<int64_t>());
}

BOOST_AUTO_TEST_SUITE_END() // pg_indexer_test
