// Tests of the storage actor (actors/storage): acknowledgement only after a durable
// commit, group commits bounded by max_batch, every operation as a message, and a
// writer that answers bad requests with errors and keeps serving; full-text
// indexing in idle ticks and on shutdown. The group commit, refusal and round-trip
// cases run on SQLite and on PostgreSQL (tests/store_backends.hpp); indexing, WAL
// checkpoints and file faults are SQLite's.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(storage_actor_test)

using namespace mneme;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;

namespace {

caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  register_mneme_types(cfg);
  return cfg;
}

struct actor_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  caf::scoped_actor self{sys};
  testing::temp_dir dir{"mneme-actor"};
  store_params params;
  std::shared_ptr<storage_metrics> metrics = std::make_shared<storage_metrics>();
  storage_actor storage;
  std::string sid;

  actor_fixture() { params.path = dir.file("t.db"); }

  void start(int64_t max_batch = 512) {
    params.max_batch = max_batch;
    auto s = spawn_storage(sys, params, nullptr, metrics);
    BOOST_REQUIRE(s);
    storage = *s;
    session_record rec;
    rec.user_id = "u";
    rec.session_key = "k";
    sid = call<session_record>(st_new_session_atom_v, rec, int64_t{1000}).id;
  }

  ~actor_fixture() {
    if (storage)
      self->send_exit(storage, caf::exit_reason::user_shutdown);
  }

  // Requests and waits for a successful reply of type T.
  template <class T, class... Ts>
  T call(Ts&&... xs) {
    T out{};
    self->request(storage, 10s, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); },
               [&](caf::error& err) { BOOST_FAIL("storage error: " << render_error(err)); });
    return out;
  }

  // Requests and returns the error (none when the request succeeded).
  template <class T, class... Ts>
  caf::error call_error(Ts&&... xs) {
    caf::error out;
    self->request(storage, 10s, std::forward<Ts>(xs)...)
      .receive([&](T&) {}, [&](caf::error& err) { out = std::move(err); });
    return out;
  }

  message text(std::string t, msg_role role = msg_role::user) {
    message m;
    m.session_id = sid;
    m.role = role;
    m.content = std::move(t);
    return m;
  }
};

sqlite3* foreign_writer_holding_the_lock(const std::string& path) {
  sqlite3* db = nullptr;
  BOOST_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  return db;
}

void release(sqlite3* db) {
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
}

// Another connection holding a lock that blocks the store's next write until
// release(): SQLite's write lock, or on PostgreSQL a SHARE lock on message_state
// (every append inserts a state row).
class write_blocker {
public:
  explicit write_blocker(const store_params& params) {
    if (params.backend == store_backend::sqlite) {
      sqlite_ = foreign_writer_holding_the_lock(params.path);
      return;
    }
    pg_ = std::make_unique<pqxx::connection>(params.url);
    txn_ = std::make_unique<pqxx::work>(*pg_);
    txn_->exec0("LOCK TABLE message_state IN SHARE MODE");
  }

  ~write_blocker() { release(); }

  void release() {
    if (sqlite_ != nullptr) {
      sqlite3_exec(sqlite_, "ROLLBACK", nullptr, nullptr, nullptr);
      sqlite3_close(sqlite_);
    }
    sqlite_ = nullptr;
    txn_.reset(); // rolls back, dropping the lock
    pg_.reset();
  }

private:
  sqlite3* sqlite_ = nullptr;
  std::unique_ptr<pqxx::connection> pg_;
  std::unique_ptr<pqxx::work> txn_;
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(storage_actor_tests, actor_fixture)

BOOST_AUTO_TEST_CASE(an_append_is_acknowledged_only_once_a_reader_can_see_it) {
  start();
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(reader);
  auto* lock = foreign_writer_holding_the_lock(params.path);
  for (int i = 0; i < 20; ++i)
    self->send(storage, st_append_atom_v, text("m" + std::to_string(i)));
  bool early = false;
  self->receive([&](int64_t) { early = true; }, [&](caf::error&) { early = true; },
                caf::after(200ms) >> [] {});
  BOOST_TEST(!early); // the commit cannot happen while the foreign lock is held
  release(lock);
  for (int i = 0; i < 20; ++i) {
    self->receive(
      [&](int64_t id) {
        auto rows = (*reader)->range(sid, id, id);
        BOOST_REQUIRE(rows);
        BOOST_TEST(rows->size() == 1u, "acknowledged id " << id << " not visible");
      },
      [&](caf::error& err) { BOOST_FAIL(render_error(err)); });
  }
}

BOOST_DATA_TEST_CASE_F(actor_fixture, appends_arriving_during_a_commit_share_one_transaction_bounded_by_max_batch,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  start(16);
  write_blocker lock{params};
  for (int i = 0; i < 100; ++i)
    self->send(storage, st_append_atom_v, text("m" + std::to_string(i)));
  lock.release(); // everything above is queued behind the first, blocked commit
  std::set<int64_t> ids;
  for (int i = 0; i < 100; ++i)
    self->receive([&](int64_t id) { ids.insert(id); },
                  [&](caf::error& err) { BOOST_FAIL(render_error(err)); });
  BOOST_TEST(ids.size() == 100u);
  BOOST_TEST(*ids.rbegin() - *ids.begin() == 99);
  // 100 rows in groups of at most 16: 7 commits, or 8 when the first went alone.
  BOOST_TEST(metrics->largest_batch.load() <= 16);
  BOOST_TEST(metrics->group_commits.load() >= 7);
  BOOST_TEST(metrics->group_commits.load() <= 8);
  BOOST_TEST(metrics->appended_rows.load() == 100);
  BOOST_TEST(metrics->unindexed_rows.load() <= 100); // both backends index behind
  auto live = call<std::vector<message>>(st_live_atom_v, sid);
  BOOST_REQUIRE(live.size() == 100u);
  for (int i = 0; i < 100; ++i)
    BOOST_TEST(live[static_cast<size_t>(i)].content == "m" + std::to_string(i)); // order kept
}

BOOST_DATA_TEST_CASE_F(actor_fixture, a_refused_append_inside_a_group_leaves_the_others_committed,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  start();
  write_blocker lock{params};
  self->send(storage, st_append_atom_v, text("first"));
  auto bad = text("bad");
  bad.session_id = "unknown";
  self->send(storage, st_append_atom_v, bad);
  self->send(storage, st_append_atom_v, std::vector<message>{text("b1"), text("b2")});
  lock.release();
  int ok = 0;
  std::vector<caf::error> errors;
  for (int i = 0; i < 3; ++i)
    self->receive([&](int64_t) { ++ok; }, [&](message_ids& ids) { ok += ids.ids.size() == 2u; },
                  [&](caf::error& err) { errors.push_back(err); });
  BOOST_TEST(ok == 2);
  BOOST_REQUIRE(errors.size() == 1u);
  BOOST_TEST((errors.front() == errc::not_found));
  BOOST_TEST(call<std::vector<message>>(st_live_atom_v, sid).size() == 3u);
}

BOOST_DATA_TEST_CASE_F(actor_fixture, bad_requests_get_errors_and_the_actor_keeps_serving,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  start();
  auto huge = text(std::string(static_cast<size_t>(params.max_content_bytes) + 1, 'x'));
  auto bad_role = text("r");
  bad_role.role = static_cast<msg_role>(200);
  BOOST_TEST((call_error<int64_t>(st_append_atom_v, huge) == errc::bad_request));
  BOOST_TEST((call_error<int64_t>(st_append_atom_v, bad_role) == errc::bad_request));
  BOOST_TEST((call_error<message_ids>(st_append_atom_v, std::vector<message>{text("ok"), bad_role})
              == errc::bad_request));
  BOOST_TEST((call_error<std::vector<message>>(st_live_atom_v, std::string{"nope"}) == errc::not_found));
  BOOST_TEST((call_error<std::vector<message>>(st_range_atom_v, sid, int64_t{9}, int64_t{1}) == errc::bad_request));
  BOOST_TEST((call_error<message>(st_compact_atom_v, compaction_commit{sid, {424242}, text("s"), false, {}})
              == errc::bad_request));
  BOOST_TEST((call_error<std::vector<message>>(st_rollback_atom_v, sid, std::string{"nope"}) == errc::not_found));
  BOOST_TEST((call_error<session_record>(st_reset_atom_v, std::string{"nope"}, int32_t{3}, int64_t{1},
                         std::string{"r"})
              == errc::not_found));
  BOOST_TEST((call_error<caf::ok_atom>(st_put_triggers_atom_v, std::string{"nope"}, trigger_state{})
              == errc::not_found));
  BOOST_TEST((call_error<std::string>(st_export_atom_v, std::string{"nope"}) == errc::not_found));
  auto invalid_utf8 = text("\xc3\x28 broken \xff");
  auto id = call<int64_t>(st_append_atom_v, invalid_utf8);
  BOOST_TEST(id > 0);
  BOOST_TEST(call<std::vector<message>>(st_live_atom_v, sid).front().content
             == invalid_utf8.content);
  BOOST_TEST(!call<std::string>(st_export_atom_v, sid).empty());
}

BOOST_DATA_TEST_CASE_F(actor_fixture, every_operation_round_trips_through_the_actor,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  start();
  auto ids = call<message_ids>(st_append_atom_v,
                               std::vector<message>{text("sys", msg_role::system), text("u1"),
                                                    text("a1", msg_role::assistant), text("u2"),
                                                    text("a2", msg_role::assistant), text("u3")});
  BOOST_REQUIRE(ids.ids.size() == 6u);
  auto cp = call<checkpoint_record>(st_checkpoint_atom_v, sid, std::string{"cp1"}, int64_t{2000});
  BOOST_TEST(cp.last_message_id == ids.ids.back());
  BOOST_TEST(call<std::vector<checkpoint_record>>(st_checkpoints_atom_v, sid).size() == 1u);
  trigger_state t;
  t.compaction_count = 1;
  message summary = text("summary");
  auto s = call<message>(st_compact_atom_v,
                         compaction_commit{sid, {ids.ids[2], ids.ids[3]}, summary, true, t});
  BOOST_TEST(s.is_summary);
  auto live = call<std::vector<message>>(st_live_atom_v, sid);
  BOOST_REQUIRE(live.size() == 5u);
  BOOST_TEST(live[2].id == s.id);
  BOOST_TEST((call<trigger_state>(st_get_triggers_atom_v, sid) == t));
  auto stats = call<session_stats>(st_stats_atom_v, sid);
  BOOST_TEST(stats.archived_rows == 2);
  BOOST_TEST(call<std::vector<message>>(st_range_atom_v, sid, ids.ids[0], s.id).size() == 7u);
  auto restored = call<std::vector<message>>(st_rollback_atom_v, sid, std::string{"cp1"});
  BOOST_TEST(restored.size() == 6u);
  t.cooldown_until_ms = 99;
  call<caf::ok_atom>(st_put_triggers_atom_v, sid, t);
  BOOST_TEST(call<trigger_state>(st_get_triggers_atom_v, sid).cooldown_until_ms == 99);
  auto jsonl = call<std::string>(st_export_atom_v, sid);
  BOOST_TEST(std::count(jsonl.begin(), jsonl.end(), '\n') == 7);
  auto child = call<session_record>(st_reset_atom_v, sid, int32_t{3}, int64_t{5000},
                                    std::string{"compaction_exhausted"});
  BOOST_TEST(child.parent_id == sid);
  BOOST_TEST(call<session_record>(st_session_atom_v, sid).ended_at_ms == 5000);
  session_filter f;
  f.session_key = "k";
  f.open_only = true;
  auto open = call<std::vector<session_record>>(st_list_atom_v, f);
  BOOST_REQUIRE(open.size() == 1u);
  BOOST_TEST(open.front().id == child.id);
  auto ended = call<session_record>(st_end_atom_v, child.id, int64_t{6000}, std::string{"done"});
  BOOST_TEST(ended.end_reason == "done");
}

BOOST_AUTO_TEST_CASE(spawning_on_a_corrupt_file_fails_with_the_storage_error) {
  std::ofstream{params.path} << std::string(8192, 'g');
  auto s = spawn_storage(sys, params, nullptr);
  BOOST_REQUIRE(!s);
  BOOST_TEST((s.error() == errc::storage_corrupt));
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// Entries of each full-text index and the unindexed backlog of a closed file.
struct index_figures {
  int64_t backlog = -1;
  int64_t words = -1, cjk = -1, trigram = -1;
};

index_figures figures_of(const store_params& params) {
  index_figures f;
  auto store = sqlite_store::open(params);
  BOOST_REQUIRE(store);
  auto& db = (*store)->connection();
  f.backlog = *fts_backlog(db);
  auto count = [&](const char* sql) {
    auto stmt = db.prepare(sql);
    BOOST_REQUIRE(stmt);
    statement_scope s{**stmt};
    BOOST_REQUIRE(s->step() == SQLITE_ROW);
    return s->column_int(0);
  };
  f.words = count("SELECT count(*) FROM fts_words_docsize");
  f.cjk = count("SELECT count(*) FROM fts_cjk_docsize");
  f.trigram = count("SELECT count(*) FROM fts_trigram_docsize");
  return f;
}

} // namespace

// A tick fills one index: a row is counted once per index it went into.
constexpr auto every_index = static_cast<int64_t>(fts_index_count);

BOOST_FIXTURE_TEST_CASE(idle_ticks_index_every_committed_row_and_report_the_backlog,
                        actor_fixture) {
  start();
  std::vector<message> batch;
  for (int i = 0; i < 300; ++i)
    batch.push_back(text("indexed in idle time " + std::to_string(i)));
  auto ids = call<message_ids>(st_append_atom_v, batch);
  BOOST_REQUIRE_EQUAL(ids.ids.size(), 300u);
  // No further request: only the actor's own ticks can index. The deadline only
  // bounds a hang; the assertion is on the counters.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metrics->indexed_rows.load() < every_index * 300 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  BOOST_TEST(metrics->indexed_rows.load() == every_index * 300);
  BOOST_TEST(metrics->unindexed_rows.load() == 0);
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(reader);
  BOOST_TEST(*fts_watermark((*reader)->connection()) == ids.ids.back());
}

BOOST_FIXTURE_TEST_CASE(a_large_row_is_indexed_once_the_writer_is_quiet, actor_fixture) {
  start();
  std::vector<message> batch;
  batch.push_back(text("before the tool output"));
  // Large (policies/index_pacing): its tick waits until no append came for a while;
  // only the actor's own timer can bring that tick, no request follows.
  batch.push_back(text(std::string(40 * 1024, 'x') + " quiet writer needle"));
  batch.push_back(text("after the tool output"));
  auto ids = call<message_ids>(st_append_atom_v, batch);
  BOOST_REQUIRE_EQUAL(ids.ids.size(), 3u);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metrics->indexed_rows.load() < every_index * 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  BOOST_TEST(metrics->indexed_rows.load() == every_index * 3);
  BOOST_TEST(metrics->unindexed_rows.load() == 0);
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(reader);
  BOOST_TEST(*fts_watermark((*reader)->connection()) == ids.ids.back());
}

// Tick requests (the indexer's timer sends them) arriving while a tick is queued
// once made a second live tick; the two then re-queued each other forever: the
// actor spun at full speed, idle or not, and indexed nothing more. Now a request
// only makes sure one tick is queued: the backlog drains and the idle actor
// handles no tick.
BOOST_FIXTURE_TEST_CASE(tick_requests_during_a_backlog_neither_spin_nor_stall_indexing,
                        actor_fixture) {
  start();
  std::vector<message> batch;
  // More than two index batches: the backlog outlives a tick.
  for (int64_t i = 0; i < 2 * fts_index_batch_rows + 1; ++i)
    batch.push_back(text("backlog row " + std::to_string(i)));
  self->send(storage, st_append_atom_v, std::move(batch));
  for (int i = 0; i < 3; ++i)
    self->send(storage, st_flush_atom_v);
  int64_t last_id = 0;
  self->receive([&](message_ids& ids) { last_id = ids.ids.back(); },
                [&](caf::error& err) { BOOST_FAIL("storage error: " << render_error(err)); });
  for (int i = 0; i < 3; ++i)
    self->send(storage, st_flush_atom_v);
  // The deadline only bounds a hang; the assertions are on the counters.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metrics->unindexed_rows.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  BOOST_REQUIRE(metrics->unindexed_rows.load() == 0);
  // At most fts_index_batch_rows rows per tick, one index per tick.
  BOOST_TEST(metrics->index_batches.load() >= 3 * every_index);
  // Two round trips: a tick queued while the first request waited runs before the
  // second one is answered (one mailbox, in order).
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(call_error<session_record>(st_session_atom_v, std::string{"no-such"}));
  // No tick is live now. A live tick is a message the actor sent itself, so one is in
  // the mailbox whenever a request is answered, and it runs before the next request
  // is: across two more round trips the counter moves if and only if a tick is live
  // (the replies prove the actor got that far; no waiting decides it).
  auto before = metrics->ticks.load();
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(call_error<session_record>(st_session_atom_v, std::string{"no-such"}));
  BOOST_TEST(metrics->ticks.load() == before);
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(reader);
  BOOST_TEST(*fts_watermark((*reader)->connection()) == last_id);
}

BOOST_FIXTURE_TEST_CASE(a_clean_shutdown_indexes_everything_committed, actor_fixture) {
  start();
  int64_t rows = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<message> batch;
    for (int i = 0; i < 100; ++i)
      batch.push_back(text("round " + std::to_string(round) + " 数据库 " + std::to_string(i)));
    rows += static_cast<int64_t>(call<message_ids>(st_append_atom_v, batch).ids.size());
  }
  self->send_exit(storage, caf::exit_reason::user_shutdown);
  self->wait_for(storage);
  storage = nullptr;
  auto f = figures_of(params);
  BOOST_TEST(f.backlog == 0);
  BOOST_TEST(f.words == rows);
  BOOST_TEST(f.cjk == rows);
  BOOST_TEST(f.trigram == rows);
}

BOOST_FIXTURE_TEST_CASE(a_backlog_found_at_open_is_indexed_by_the_actor, actor_fixture) {
  int64_t rows = 0;
  {
    auto store = sqlite_store::open(params);
    BOOST_REQUIRE(store);
    session_record rec;
    rec.user_id = "u";
    rec.session_key = "old";
    auto old = (*store)->create_session(rec, 1);
    BOOST_REQUIRE(old);
    for (int i = 0; i < 200; ++i) {
      message m;
      m.session_id = old->id;
      m.role = msg_role::user;
      m.content = "left unindexed by a crash " + std::to_string(i);
      BOOST_REQUIRE((*store)->append(m));
      ++rows;
    }
    BOOST_REQUIRE(*fts_backlog((*store)->connection()) == rows);
  }
  start();
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metrics->indexed_rows.load() < every_index * rows && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  BOOST_TEST(metrics->indexed_rows.load() == every_index * rows);
  auto reader = store_reader::open(params);
  BOOST_REQUIRE(reader);
  BOOST_TEST(*fts_backlog((*reader)->connection()) == 0);
}

// The writer's log is checkpointed by the other thread (policies/wal_checkpoint):
// with SQLite's own checkpoint off and none run by the writer, only that thread
// can have copied the rows into the database file while the writer is open.
BOOST_FIXTURE_TEST_CASE(the_checkpointer_thread_copies_the_log_into_the_file, actor_fixture) {
  start();
  {
    auto reader = store_reader::open(params);
    BOOST_REQUIRE(reader);
    BOOST_REQUIRE_EQUAL(*(*reader)->connection().page_bytes(), 8192); // a new file's pages
  }
  auto file_bytes = [&] { return std::filesystem::file_size(params.path); };
  auto before = file_bytes();
  std::vector<message> batch;
  for (int i = 0; i < 2400; ++i) // two rows per 8 KiB page: ~1,200 pages of log, past 1,000
    batch.push_back(text(std::string(4000, static_cast<char>('a' + i % 26))));
  BOOST_REQUIRE_EQUAL(call<message_ids>(st_append_atom_v, batch).ids.size(), 2400u);
  // The deadline only bounds a hang; the assertions are on the counters.
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (metrics->wal_checkpoints_background.load() < 1
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  BOOST_REQUIRE(metrics->wal_checkpoints_background.load() >= 1);
  BOOST_TEST(metrics->wal_checkpoints_inline.load() == 0); // the writer never copied
  BOOST_TEST(file_bytes() >= before + 2400u * 4000u);
}

// The checkpointer's connection closes inside the storage actor's shutdown, before
// the writer's: once the actor is gone, the writer closed last and removed the log.
BOOST_FIXTURE_TEST_CASE(once_the_storage_actor_is_gone_no_connection_keeps_the_log,
                        actor_fixture) {
  start();
  call<int64_t>(st_append_atom_v, text("one row"));
  BOOST_REQUIRE(std::filesystem::exists(params.path + "-wal"));
  self->send_exit(storage, caf::exit_reason::user_shutdown);
  self->wait_for(storage);
  storage = nullptr;
  BOOST_TEST(!std::filesystem::exists(params.path + "-wal"));
  BOOST_TEST(!std::filesystem::exists(params.path + "-shm"));
}

BOOST_AUTO_TEST_SUITE_END() // storage_actor_test
