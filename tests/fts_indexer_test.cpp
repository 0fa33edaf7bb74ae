// Tests of the asynchronous recall indexing (store/sqlite/fts_indexer, schemas v5 and
// v7): the watermarks (one per index, the lowest in fts_state.indexed_through),
// the row and byte bounds of a round, paced ticks (one index per tick, the one
// furthest behind; yield after a row; a large row that may not go yet stops the
// tick before it and lets another index move; why a tick stopped), all-or-nothing
// ticks, index integrity after indexing, and the in-place upgrade of a version 4
// file.
#include <algorithm>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <limits>
#include <ostream>
#include <utility>
#include <vector>
#include <string>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "policies/wal_checkpoint.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/migrations.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(fts_indexer_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

int64_t scalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  BOOST_REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK,
                        sqlite3_errmsg(db));
  BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  auto v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

const char* const fts_tables[] = {"fts_words", "fts_cjk", "fts_trigram"};

struct indexer_fixture {
  testing::temp_dir dir{"mneme-indexer"};
  store_params params;
  std::unique_ptr<sqlite_store> store;
  std::string sid;

  indexer_fixture() {
    params.path = dir.file("i.db");
    params.synchronous_full = false;
    auto s = sqlite_store::open(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    session_record rec;
    rec.user_id = "u";
    rec.session_key = "k";
    auto r = store->create_session(rec, 1);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    sid = r->id;
  }

  db_connection& db() { return store->connection(); }
  sqlite3* raw() { return db().native_handle(); }

  int64_t add(std::string text) {
    message m;
    m.session_id = sid;
    m.role = msg_role::user;
    m.content = std::move(text);
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  int64_t watermark() {
    auto w = fts_watermark(db());
    BOOST_REQUIRE_MESSAGE(w, err_of(w));
    return *w;
  }

  int64_t backlog() {
    auto b = fts_backlog(db());
    BOOST_REQUIRE_MESSAGE(b, err_of(b));
    return *b;
  }

  int64_t index(int64_t rows, int64_t bytes = fts_index_batch_bytes) {
    auto n = index_pending(db(), rows, bytes);
    BOOST_REQUIRE_MESSAGE(n, err_of(n));
    return *n;
  }

  // Entries of one index (docsize rows: one per indexed message).
  int64_t entries(const char* table) {
    return scalar(raw(), std::string{"SELECT count(*) FROM "} + table + "_docsize");
  }

  // Entries of each index.
  void require_entries(int64_t expected) {
    for (auto* t : fts_tables)
      BOOST_TEST(entries(t) == expected, t);
  }

  // Entries of the words, cjk and trigram indexes.
  void require_entries(int64_t words, int64_t cjk, int64_t trigram) {
    BOOST_TEST(entries("fts_words") == words);
    BOOST_TEST(entries("fts_cjk") == cjk);
    BOOST_TEST(entries("fts_trigram") == trigram);
  }

  // FTS5's check compares an index with every row of messages: only for an
  // index that is caught up.
  void require_integrity_of(const char* t) {
    auto sql = std::string{"INSERT INTO "} + t + "(" + t + ", rank) VALUES ('integrity-check', 1)";
    BOOST_TEST(sqlite3_exec(raw(), sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK, t);
  }

  void require_integrity() {
    for (auto* t : fts_tables)
      require_integrity_of(t);
  }

  fts_index_figures index_watermarks() {
    auto w = fts_index_watermarks(db());
    BOOST_REQUIRE_MESSAGE(w, err_of(w));
    return *w;
  }

  fts_index_figures index_backlogs() {
    auto b = fts_index_backlogs(db());
    BOOST_REQUIRE_MESSAGE(b, err_of(b));
    return *b;
  }

  int64_t matches(const char* table, const char* term) {
    return scalar(raw(), std::string{"SELECT count(*) FROM "} + table + " WHERE " + table
                           + " MATCH '" + term + "'");
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(the_batch_bounds_are_65536_rows_and_32_mib) {
  BOOST_TEST(fts_index_batch_rows == 65536);
  BOOST_TEST(fts_index_batch_bytes == 32 * 1024 * 1024);
}

BOOST_FIXTURE_TEST_CASE(an_append_is_not_indexed_until_the_indexer_runs, indexer_fixture) {
  auto id = add("the aardvark 数据库 appears");
  BOOST_TEST(watermark() == 0);
  BOOST_TEST(backlog() == 1);
  require_entries(0);
  BOOST_TEST(index(10) == 1);
  BOOST_TEST(watermark() == id);
  BOOST_TEST(backlog() == 0);
  require_entries(1);
  BOOST_TEST(matches("fts_words", "aardvark") == 1);
  BOOST_TEST(matches("fts_cjk", "数据") == 1);
  BOOST_TEST(matches("fts_trigram", "ardva") == 1);
  require_integrity();
}

BOOST_FIXTURE_TEST_CASE(indexing_with_nothing_pending_changes_nothing, indexer_fixture) {
  BOOST_TEST(index(10) == 0);
  auto id = add("one row");
  BOOST_TEST(index(10) == 1);
  BOOST_TEST(index(10) == 0);
  BOOST_TEST(watermark() == id);
  require_entries(1);
}

struct rows_case {
  int64_t pending;
  int64_t max_rows;
};

std::ostream& operator<<(std::ostream& os, const rows_case& c) {
  return os << c.pending << " pending, max " << c.max_rows;
}

const rows_case rows_cases[] = {{10, 1}, {10, 3}, {10, 10}, {10, 50}, {300, 128}};

BOOST_DATA_TEST_CASE_F(indexer_fixture, a_batch_takes_at_most_max_rows_in_id_order,
                       data::make(rows_cases), c) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < c.pending; ++i)
    ids.push_back(add("row " + std::to_string(i)));
  auto take = std::min(c.pending, c.max_rows);
  BOOST_TEST(index(c.max_rows) == take);
  BOOST_TEST(watermark() == ids[static_cast<size_t>(take - 1)]);
  BOOST_TEST(backlog() == c.pending - take);
  require_entries(take);
}

struct bytes_case {
  std::vector<int64_t> sizes; // text bytes of the pending rows, in id order
  int64_t max_bytes;
  int64_t rows_taken;
};

std::ostream& operator<<(std::ostream& os, const bytes_case& c) {
  return os << c.sizes.size() << " rows, budget " << c.max_bytes;
}

const bytes_case bytes_cases[] = {
  {{100, 100, 100}, 250, 2},            // stops before the row that passes the budget
  {{100, 100, 100}, 300, 3},            // exactly the budget fits
  {{200 * 1024, 100, 100}, 64 * 1024, 1}, // a 200 KB tool output is a batch alone
  {{100, 200 * 1024, 100}, 64 * 1024, 1}, // and waits for the next batch
  {{10, 10, 10, 10}, 1, 1},             // at least one row, always
};

BOOST_DATA_TEST_CASE_F(indexer_fixture, a_batch_stays_within_its_byte_budget,
                       data::make(bytes_cases), c) {
  std::vector<int64_t> ids;
  for (auto size : c.sizes)
    ids.push_back(add(std::string(static_cast<size_t>(size), 'x')));
  BOOST_TEST(index(100, c.max_bytes) == c.rows_taken);
  BOOST_TEST(watermark() == ids[static_cast<size_t>(c.rows_taken - 1)]);
  require_entries(c.rows_taken);
}

BOOST_FIXTURE_TEST_CASE(the_byte_budget_counts_utf8_bytes_not_characters, indexer_fixture) {
  std::string han;
  for (int i = 0; i < 50; ++i)
    han += "\xE6\x95\xB0"; // 数: 50 characters, 150 bytes
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(add(han));
  BOOST_TEST(index(100, 400) == 2); // 3 rows are 450 bytes, over the budget (but only 150 characters)
  BOOST_TEST(watermark() == ids[1]);
  require_entries(2);
}

// A plan that lets every row go, within the given bounds.
index_tick_plan open_plan(int64_t rows = 1000, int64_t bytes = fts_index_batch_bytes) {
  index_tick_plan plan;
  plan.max_rows = rows;
  plan.max_bytes = bytes;
  plan.large_row_bytes = 1000;
  plan.large_rows_through = std::numeric_limits<int64_t>::max();
  plan.run = plan.max_run = {rows, bytes};
  return plan;
}

struct yield_case {
  int64_t pending;
  int yield_after; // should_yield() answers true from this call on
  int64_t rows_taken;
  index_stop stop;
  int calls; // should_yield() is asked after each row
  bool waited; // should_yield() answered true at some point
};

std::ostream& operator<<(std::ostream& os, const yield_case& c) {
  return os << c.pending << " pending, yield after row " << c.yield_after;
}

const yield_case yield_cases[] = {
  {100, 1, 1, index_stop::yielded, 1, true},     // a waiting request: one row, then commit
  {100, 40, 40, index_stop::yielded, 40, true},  // the rows done so far, no more
  {100, 100, 100, index_stop::yielded, 100, true}, // the last row; a request waits: no read on
  {100, 999, 100, index_stop::caught_up, 100, false}, // asked after the last row too
};

BOOST_DATA_TEST_CASE_F(indexer_fixture, a_tick_commits_what_it_did_when_asked_to_yield,
                       data::make(yield_cases), c) {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < c.pending; ++i)
    ids.push_back(add("yielding row " + std::to_string(i)));
  int calls = 0;
  auto done = index_pending(db(), open_plan(), [&] { return ++calls >= c.yield_after; });
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(done->rows == c.rows_taken);
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(c.stop));
  BOOST_TEST(calls == c.calls);
  BOOST_TEST(done->waited == c.waited);
  // One index, the first of three equal ones; the lowest watermark stays.
  BOOST_TEST(static_cast<int>(done->index) == static_cast<int>(fts_index::words));
  BOOST_TEST(done->index_watermark == ids[static_cast<size_t>(c.rows_taken - 1)]);
  BOOST_TEST(index_watermarks()[0] == done->index_watermark); // committed, not just counted
  BOOST_TEST(done->watermark == 0);
  BOOST_TEST(watermark() == 0);
  BOOST_TEST(!done->all_caught_up);
  BOOST_TEST(!db().in_transaction());
  require_entries(c.rows_taken, 0, 0);
  BOOST_TEST(matches("fts_words", "yielding") == c.rows_taken);
  BOOST_TEST(backlog() == c.pending);
  BOOST_TEST(index_backlogs() == (fts_index_figures{c.pending - c.rows_taken, c.pending, c.pending}),
             boost::test_tools::per_element());
  if (c.rows_taken == c.pending)
    require_integrity_of("fts_words");
}

// The statements SQLite runs on a connection from the moment `armed` is set
// (sqlite3_trace_v2, expanded SQL of each statement as it starts).
struct statement_log {
  bool armed = false;
  std::vector<std::string> sql;
  static int record(unsigned, void* self, void* stmt, void*) {
    auto* log = static_cast<statement_log*>(self);
    if (log->armed) {
      char* text = sqlite3_expanded_sql(static_cast<sqlite3_stmt*>(stmt));
      log->sql.emplace_back(text ? text : "?");
      sqlite3_free(text);
    }
    return 0;
  }
};

// A request seen after a row waits for that row and the commit only: no index
// statement runs after the check, however many rows the tick had done (a range
// INSERT over the tick's rows at its end would make the wait grow with the tick).
BOOST_FIXTURE_TEST_CASE(after_a_request_is_seen_the_tick_only_moves_the_watermark_and_commits,
                        indexer_fixture) {
  for (int i = 0; i < 200; ++i)
    add("waiting row " + std::to_string(i) + " 数据库");
  statement_log log;
  sqlite3_trace_v2(raw(), SQLITE_TRACE_STMT, &statement_log::record, &log);
  int calls = 0;
  auto done = index_pending(db(), open_plan(), [&] {
    log.armed = ++calls >= 150;
    return log.armed;
  });
  sqlite3_trace_v2(raw(), 0, nullptr, nullptr);
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(done->rows == 150);
  // The indexer's own statements after the check (FTS5's internal ones, which
  // write the pending lists at COMMIT, name 'main'.'fts_..._data' instead).
  std::vector<std::string> ours;
  for (auto& sql : log.sql)
    if (sql.rfind("INSERT INTO fts_", 0) == 0 || sql.rfind("UPDATE fts_state", 0) == 0
        || sql == "COMMIT")
      ours.push_back(sql.substr(0, 16));
  BOOST_TEST(ours == (std::vector<std::string>{"UPDATE fts_state", "COMMIT"}),
             boost::test_tools::per_element());
  require_entries(150, 0, 0);
  BOOST_TEST(matches("fts_words", "waiting") == 150);
}

// FTS5 segments of an index (one %_idx row per leaf page of each segment).
int64_t segments(sqlite3* db, const char* table) {
  return scalar(db, std::string{"SELECT count(DISTINCT segid) FROM "} + table + "_idx");
}

BOOST_FIXTURE_TEST_CASE(a_tick_writes_one_segment_per_index_however_often_it_checks_for_requests,
                        indexer_fixture) {
  for (int i = 0; i < 300; ++i)
    add("segment row " + std::to_string(i) + " 数据库 " + std::to_string(i * 7));
  int calls = 0;
  // Three ticks, one per index in position order (all start equal).
  for (auto* t : fts_tables) {
    auto done = index_pending(db(), open_plan(), [&] {
      ++calls;
      return false;
    });
    BOOST_REQUIRE_MESSAGE(done, err_of(done));
    BOOST_TEST(fts_index_table(done->index) == std::string{t});
    BOOST_TEST(done->rows == 300);
    BOOST_TEST(segments(raw(), t) == 1, t);
  }
  BOOST_TEST(calls == 3 * 300);
  BOOST_TEST(watermark() == 300);
  add("one more row");
  BOOST_TEST(index(10) == 1);
  for (auto* t : fts_tables)
    BOOST_TEST(segments(raw(), t) == 2, t); // one more per tick (commit)
  require_integrity();
}

// A tick commits once the log it wrote (the page cache's spills) reaches its
// budget: with a cache of a few pages the first rows spill, so the tick stops
// early, keeps the watermark invariant, and the next ticks index the rest.
BOOST_FIXTURE_TEST_CASE(a_tick_commits_once_its_log_reaches_the_budget, indexer_fixture) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 2000; ++i)
    ids.push_back(add("spilling row " + std::to_string(i) + " alpha" + std::to_string(i * 31)
                      + " 数据库" + std::to_string(i) + " beta" + std::to_string(i * 17)));
  BOOST_REQUIRE(sqlite3_exec(raw(), "PRAGMA cache_size=4", nullptr, nullptr, nullptr) == SQLITE_OK);
  auto plan = open_plan(5000);
  plan.max_log_bytes = 1; // the first row that spills a page ends the tick
  auto done = index_pending(db(), plan);
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(index_stop::budget));
  BOOST_TEST(done->rows >= 1);
  BOOST_TEST(done->rows < 2000);
  BOOST_TEST(done->index_watermark == ids[static_cast<size_t>(done->rows - 1)]);
  require_entries(done->rows, 0, 0);
  // Without a log budget one tick takes the rest of the words index (the other
  // two, further behind, go first).
  auto plan_rest = open_plan(5000);
  for (int tick = 0; tick < 3; ++tick) {
    auto rest = index_pending(db(), plan_rest);
    BOOST_REQUIRE_MESSAGE(rest, err_of(rest));
    BOOST_TEST(static_cast<int>(rest->stop) == static_cast<int>(index_stop::caught_up));
    BOOST_TEST(rest->all_caught_up == (tick == 2));
    if (rest->index == fts_index::words)
      BOOST_TEST(done->rows + rest->rows == 2000);
    else
      BOOST_TEST(rest->rows == 2000);
  }
  require_entries(2000);
  require_integrity();
}

// Indexing everything (clean shutdown) runs ticks under the default pacing, so
// it too commits whenever a tick's spilled log reaches the budget: with a
// page cache of a few pages, rows far below one batch's row bound take several
// transactions, each leaving the watermark invariant intact.
int commits_seen = 0;
int count_commit(void*) {
  ++commits_seen;
  return 0; // let it commit
}

BOOST_FIXTURE_TEST_CASE(indexing_everything_commits_at_the_default_log_budget, indexer_fixture) {
  std::string filler;
  for (int w = 0; w < 150; ++w)
    filler += " word" + std::to_string(w) + " 数据" + std::to_string(w % 7);
  for (int i = 0; i < 3000; ++i)
    add("budget row " + std::to_string(i) + filler);
  BOOST_REQUIRE(sqlite3_exec(raw(), "PRAGMA cache_size=4", nullptr, nullptr, nullptr) == SQLITE_OK);
  commits_seen = 0;
  sqlite3_commit_hook(raw(), &count_commit, nullptr);
  int64_t batches = 0;
  auto rows = index_all_pending(db(), &batches);
  sqlite3_commit_hook(raw(), nullptr, nullptr);
  BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
  BOOST_TEST(*rows == 3000);
  BOOST_TEST(batches > 1); // 3,000 rows are far below fts_index_batch_rows
  BOOST_TEST(commits_seen == batches);
  BOOST_TEST(backlog() == 0);
  require_entries(3000);
  require_integrity();
}

// The storage actor's clean shutdown indexes its whole backlog on a writer that
// watches its log (its COMMITs checkpoint nothing): checkpoint_between_ticks after
// each tick keeps the log about one tick long. The control, the same backlog
// without it, shows the log holding every tick.
struct watched_backlog {
  int64_t ticks = 0;        // index_all_pending's count
  int64_t calls = 0;        // after_tick calls
  bool each_call_after_a_commit = true; // a watermark had risen at every call
  int64_t longest_log = 0;  // pages, after any tick
  int64_t final_log = 0;
};

watched_backlog index_watched_backlog(indexer_fixture& f, bool checkpoint) {
  std::string filler;
  for (int w = 0; w < 150; ++w)
    filler += " word" + std::to_string(w) + " 数据" + std::to_string(w % 7);
  for (int i = 0; i < 9000; ++i)
    f.add("shutdown row " + std::to_string(i) + filler);
  BOOST_REQUIRE(sqlite3_exec(f.raw(), "PRAGMA cache_size=4; PRAGMA wal_checkpoint(TRUNCATE)", nullptr,
                             nullptr, nullptr) == SQLITE_OK);
  f.db().watch_wal();
  watched_backlog out;
  // The sum of the three watermarks rises with every committed tick.
  auto sum = [&] {
    auto marks = f.index_watermarks();
    return marks[0] + marks[1] + marks[2];
  };
  int64_t last_sum = sum();
  auto rows = index_all_pending(f.db(), &out.ticks, [&](const index_progress&) {
    ++out.calls;
    auto now = sum();
    if (now <= last_sum)
      out.each_call_after_a_commit = false;
    else
      last_sum = now;
    out.longest_log = std::max(out.longest_log, f.db().wal_pages());
    if (checkpoint)
      checkpoint_between_ticks(f.db());
  });
  BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
  BOOST_REQUIRE(*rows == 9000);
  out.final_log = f.db().wal_pages();
  return out;
}

BOOST_AUTO_TEST_CASE(indexing_a_backlog_on_a_watched_log_checkpoints_between_the_ticks) {
  indexer_fixture control_store, checkpointed_store;
  auto control = index_watched_backlog(control_store, false);
  auto checkpointed = index_watched_backlog(checkpointed_store, true);
  BOOST_TEST_MESSAGE("log pages: control " << control.final_log << " after " << control.ticks
                                            << " ticks; checkpointed at most " << checkpointed.longest_log);
  // The control's log holds every tick, several times the policy's point.
  BOOST_REQUIRE(control.final_log > 3 * wal_checkpoint_params{}.background_pages);
  BOOST_TEST(checkpointed.ticks > 1);
  BOOST_TEST(checkpointed.calls == checkpointed.ticks);
  BOOST_TEST(checkpointed.each_call_after_a_commit);
  BOOST_TEST(checkpointed.longest_log < control.final_log / 2);
  BOOST_TEST(checkpointed.final_log < control.final_log / 2);
  checkpointed_store.require_entries(9000);
  checkpointed_store.require_integrity();
}

BOOST_FIXTURE_TEST_CASE(a_tick_ends_at_its_run_and_the_next_run_grows_unless_a_request_waited,
                        indexer_fixture) {
  for (int i = 0; i < 100; ++i)
    add("growing run row " + std::to_string(i));
  auto plan = open_plan();
  plan.run = {8, 1 << 20};
  plan.max_run = {16, 1 << 20};
  auto done = index_pending(db(), plan, [] { return false; });
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(done->rows == 8);
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(index_stop::budget));
  BOOST_TEST(done->next_run.rows == 16);
  plan.run = done->next_run;
  auto longer = index_pending(db(), plan, [] { return false; });
  BOOST_REQUIRE_MESSAGE(longer, err_of(longer));
  BOOST_TEST(longer->rows == 16);
  BOOST_TEST(longer->next_run.rows == 16); // at the longest run
  auto waited = index_pending(db(), plan, [] { return true; });
  BOOST_REQUIRE_MESSAGE(waited, err_of(waited));
  BOOST_TEST(waited->rows == 1);
  BOOST_TEST(waited->waited);
  BOOST_TEST(waited->next_run.rows == plan.run.rows); // not grown
  // Each tick filled the index furthest behind: words, cjk, trigram.
  require_entries(8, 16, 1);
}

BOOST_FIXTURE_TEST_CASE(a_run_ends_before_the_row_that_would_pass_its_bytes, indexer_fixture) {
  for (int i = 0; i < 6; ++i)
    add(std::string(100, 'b'));
  auto plan = open_plan();
  plan.run = {1000, 250}; // two 100-byte rows per run
  plan.max_run = plan.run;
  auto done = index_pending(db(), plan);
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(done->rows == 2);
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(index_stop::budget));
}

struct stop_case {
  const char* what;
  std::vector<int64_t> sizes; // text bytes of the pending rows, in id order
  int64_t max_rows;
  int64_t max_bytes;
  int64_t large_rows_through_index; // index into sizes (-1: no large row may go)
  int64_t rows_taken;
  index_stop stop;
  int64_t deferred_index; // index into sizes of the deferred row, -1 when none
};

std::ostream& operator<<(std::ostream& os, const stop_case& c) {
  return os << c.what;
}

const stop_case stop_cases[] = {
  {"everything pending fits: caught up", {100, 100, 100}, 10, 10000, -1, 3,
   index_stop::caught_up, -1},
  {"max_rows reached with more pending: budget", {100, 100, 100}, 2, 10000, -1, 2,
   index_stop::budget, -1},
  {"max_rows equal to the backlog: the read ends at the limit, budget", {100, 100}, 2, 10000,
   -1, 2, index_stop::budget, -1},
  {"the byte budget: budget", {100, 100, 100}, 10, 250, -1, 2, index_stop::budget, -1},
  {"a large row that may not go stops the tick before it", {100, 5000, 100}, 10, 100000, -1, 1,
   index_stop::large_row_due, 1},
  {"a large row at the head: nothing indexed, the watermark stays", {5000, 100}, 10, 100000, -1,
   0, index_stop::large_row_due, 0},
  {"a large row within the bound goes, the next one waits", {5000, 100, 5000, 100}, 10, 100000,
   0, 2, index_stop::large_row_due, 2},
  {"large rows within the bound all go", {5000, 100, 5000}, 10, 100000, 2, 3,
   index_stop::caught_up, -1},
};

BOOST_DATA_TEST_CASE_F(indexer_fixture, a_tick_reports_why_it_stopped_and_never_passes_a_waiting_large_row,
                       data::make(stop_cases), c) {
  std::vector<int64_t> ids;
  for (auto size : c.sizes)
    ids.push_back(add(std::string(static_cast<size_t>(size), 'z')));
  auto plan = open_plan(c.max_rows, c.max_bytes);
  plan.large_rows_through = c.large_rows_through_index < 0
                              ? 0 : ids[static_cast<size_t>(c.large_rows_through_index)];
  auto done = index_pending(db(), plan);
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(done->rows == c.rows_taken);
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(c.stop));
  BOOST_TEST(done->deferred_id
             == (c.deferred_index < 0 ? 0 : ids[static_cast<size_t>(c.deferred_index)]));
  // The words index moved (or, when none could, is the one reported waiting).
  BOOST_TEST(static_cast<int>(done->index) == static_cast<int>(fts_index::words));
  auto expected_mark = c.rows_taken == 0 ? 0 : ids[static_cast<size_t>(c.rows_taken - 1)];
  BOOST_TEST(done->index_watermark == expected_mark);
  BOOST_TEST(index_watermarks()[0] == expected_mark);
  BOOST_TEST(watermark() == 0); // the other two wait for their own ticks
  auto pending = static_cast<int64_t>(c.sizes.size());
  BOOST_TEST(index_backlogs()[0] == pending - c.rows_taken);
  BOOST_TEST(backlog() == pending);
  require_entries(c.rows_taken, 0, 0);
}

BOOST_FIXTURE_TEST_CASE(a_deferred_large_row_is_indexed_once_allowed_and_the_rows_behind_it_follow,
                        indexer_fixture) {
  add("before the tool output");
  auto large = add(std::string(200 * 1024, 'q') + " needle");
  auto last = add("after the tool output");
  auto plan = open_plan();
  plan.large_rows_through = 0;
  // Each index takes the row before the large one, then waits.
  for (auto* t : fts_tables) {
    auto held = index_pending(db(), plan);
    BOOST_REQUIRE_MESSAGE(held, err_of(held));
    BOOST_TEST(fts_index_table(held->index) == std::string{t});
    BOOST_TEST(held->rows == 1);
    BOOST_TEST(held->deferred_id == large);
  }
  // Then no index can move: the tick reports the wait and commits nothing.
  auto stuck = index_pending(db(), plan);
  BOOST_REQUIRE_MESSAGE(stuck, err_of(stuck));
  BOOST_TEST(stuck->rows == 0);
  BOOST_TEST(static_cast<int>(stuck->stop) == static_cast<int>(index_stop::large_row_due));
  BOOST_TEST(stuck->deferred_id == large);
  BOOST_TEST(!stuck->all_caught_up);
  BOOST_TEST(watermark() == large - 1);
  BOOST_TEST(matches("fts_words", "needle") == 0);
  plan.large_rows_through = large;
  for (int tick = 0; tick < 3; ++tick) {
    auto rest = index_pending(db(), plan);
    BOOST_REQUIRE_MESSAGE(rest, err_of(rest));
    BOOST_TEST(rest->rows == 2);
    BOOST_TEST(rest->all_caught_up == (tick == 2));
  }
  BOOST_TEST(watermark() == last);
  for (auto* t : fts_tables)
    BOOST_TEST(matches(t, "needle") == 1, t);
  require_entries(3);
  require_integrity();
}

// An index waiting for a large row does not hold back one that is past it: the
// tick tries the next index of the order, and the lowest watermark stays put.
BOOST_FIXTURE_TEST_CASE(an_index_waiting_for_a_large_row_lets_an_index_past_it_move,
                        indexer_fixture) {
  auto small = add("before the tool output");
  auto large = add(std::string(200 * 1024, 'q') + " needle");
  add("after the tool output");
  auto last = add("last row");
  auto plan = open_plan(1);
  BOOST_REQUIRE(index_pending(db(), plan)); // words: the first row only
  plan.max_rows = 3;
  plan.run = plan.max_run = {3, plan.run.bytes};
  BOOST_REQUIRE(index_pending(db(), plan)); // cjk: through the third row
  BOOST_REQUIRE(index_pending(db(), plan)); // trigram: likewise
  BOOST_REQUIRE(index_watermarks() == (fts_index_figures{small, large + 1, large + 1}));
  auto waiting = open_plan();
  waiting.large_rows_through = 0; // the large row may not go now
  auto done = index_pending(db(), waiting);
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_TEST(static_cast<int>(done->index) == static_cast<int>(fts_index::cjk));
  BOOST_TEST(done->rows == 1);
  BOOST_TEST(done->index_watermark == last);
  BOOST_TEST(static_cast<int>(done->stop) == static_cast<int>(index_stop::caught_up));
  BOOST_TEST(done->deferred_id == 0); // cjk stopped for another reason: try again
  BOOST_TEST(!done->all_caught_up);
  BOOST_TEST(done->watermark == small);
  // cjk is caught up, words waits: trigram goes.
  auto next = index_pending(db(), waiting);
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(static_cast<int>(next->index) == static_cast<int>(fts_index::trigram));
  BOOST_TEST(next->rows == 1);
  // Only words is left, behind its large row.
  auto stuck = index_pending(db(), waiting);
  BOOST_REQUIRE_MESSAGE(stuck, err_of(stuck));
  BOOST_TEST(stuck->rows == 0);
  BOOST_TEST(stuck->deferred_id == large);
  BOOST_TEST(index_backlogs() == (fts_index_figures{3, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(watermark() == small);
  // Once it may go, words catches up and every index is.
  auto done_all = index_pending(db(), open_plan());
  BOOST_REQUIRE_MESSAGE(done_all, err_of(done_all));
  BOOST_TEST(done_all->rows == 3);
  BOOST_TEST(done_all->all_caught_up);
  BOOST_TEST(watermark() == last);
  require_integrity();
}

// The indexer hands each row's text to the three inserts without copying it (a
// view of the pending-rows statement's column): a row is indexed from its whole
// text whether it fits its page or spills to overflow pages, and the view of one
// row does not leak into the next.
BOOST_FIXTURE_TEST_CASE(every_index_takes_the_whole_text_of_small_and_overflowing_rows,
                        indexer_fixture) {
  std::vector<std::pair<int64_t, std::string>> rows; // id, the word that ends its text
  for (int i = 0; i < 6; ++i) {
    auto end = "tailword" + std::string(1, static_cast<char>('a' + i)) + "zq";
    auto body = i % 2 == 0 ? std::string(60, 'x') : std::string(50 * 1024, 'x');
    rows.emplace_back(add(body + " " + end), end);
  }
  BOOST_TEST(index(100) == 6);
  for (const auto& [id, end] : rows)
    for (auto* t : fts_tables) {
      BOOST_TEST(matches(t, end.c_str()) == 1, t << " " << end);
      BOOST_TEST(scalar(raw(), std::string{"SELECT rowid FROM "} + t + " WHERE " + t + " MATCH '"
                                 + end + "'")
                   == id,
                 t << " " << end);
    }
  require_integrity();
}

// Indexing everything from unequal watermarks counts each message once: the
// rows above the lowest watermark, whichever indexes already had some of them.
BOOST_FIXTURE_TEST_CASE(indexing_everything_counts_the_messages_missing_from_any_index,
                        indexer_fixture) {
  for (int i = 0; i < 10; ++i)
    add("uneven row " + std::to_string(i));
  for (int tick = 0; tick < 4; ++tick) // words, cjk, trigram, words: 4 rows each
    BOOST_REQUIRE(index_pending(db(), open_plan(4)));
  BOOST_REQUIRE(index_watermarks() == (fts_index_figures{8, 4, 4}));
  BOOST_TEST(index_backlogs() == (fts_index_figures{2, 6, 6}), boost::test_tools::per_element());
  int64_t ticks = 0;
  auto n = index_all_pending(db(), &ticks);
  BOOST_REQUIRE_MESSAGE(n, err_of(n));
  BOOST_TEST(*n == 6);
  BOOST_TEST(ticks == 3);
  BOOST_TEST(watermark() == 10);
  require_entries(10);
  require_integrity();
}

BOOST_FIXTURE_TEST_CASE(indexing_everything_leaves_consistent_indexes_with_one_entry_per_row,
                        indexer_fixture) {
  for (int i = 0; i < 700; ++i)
    add(i % 3 == 0 ? "中文消息 " + std::to_string(i) : "english message " + std::to_string(i));
  add(std::string(200 * 1024, 'y'));
  auto n = index_all_pending(db());
  BOOST_REQUIRE_MESSAGE(n, err_of(n));
  BOOST_TEST(*n == 701);
  BOOST_TEST(backlog() == 0);
  BOOST_TEST(watermark() == scalar(raw(), "SELECT max(id) FROM messages"));
  require_entries(701);
  require_integrity();
  BOOST_TEST(matches("fts_words", "english") == 466);
  BOOST_TEST(matches("fts_cjk", "消息") == 234);
}

BOOST_FIXTURE_TEST_CASE(a_failed_batch_moves_neither_the_watermark_nor_any_index,
                        indexer_fixture) {
  add("first row indexed");
  BOOST_TEST(index(10) == 1);
  auto mark = watermark();
  add("second row pending");
  // The watermark update is the batch's last statement: make it fail.
  BOOST_REQUIRE(sqlite3_exec(raw(),
                             "CREATE TRIGGER test_block BEFORE UPDATE ON fts_state"
                             " BEGIN SELECT RAISE(ABORT, 'blocked by test'); END;",
                             nullptr, nullptr, nullptr) == SQLITE_OK);
  auto failed = index_pending(db(), 10);
  BOOST_REQUIRE(!failed);
  BOOST_TEST(render_error(failed.error()).find("blocked by test") != std::string::npos);
  BOOST_TEST(!db().in_transaction());
  BOOST_TEST(watermark() == mark);
  require_entries(1);
  BOOST_TEST(matches("fts_words", "pending") == 0);
  BOOST_REQUIRE(sqlite3_exec(raw(), "DROP TRIGGER test_block", nullptr, nullptr, nullptr)
                == SQLITE_OK);
  BOOST_TEST(index(10) == 1); // the retry indexes the row once
  require_entries(2);
  BOOST_TEST(matches("fts_words", "pending") == 1);
  require_integrity();
}

BOOST_FIXTURE_TEST_CASE(message_text_cannot_be_rewritten_so_an_indexed_row_never_goes_stale,
                        indexer_fixture) {
  auto id = add("original text");
  BOOST_TEST(index(10) == 1);
  auto sql = "UPDATE messages SET content = 'changed' WHERE id = " + std::to_string(id);
  BOOST_TEST(sqlite3_exec(raw(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK);
  BOOST_TEST(matches("fts_words", "original") == 1);
}

BOOST_FIXTURE_TEST_CASE(appends_fire_no_full_text_trigger, indexer_fixture) {
  BOOST_TEST(scalar(raw(), "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                           " AND tbl_name IN ('messages', 'message_state')"
                           " AND sql LIKE '%fts_%'") == 0);
}

BOOST_AUTO_TEST_CASE(a_version_4_file_upgrades_in_place_with_its_rows_already_indexed) {
  testing::temp_dir dir{"mneme-indexer-v4"};
  store_params p;
  p.path = dir.file("v4.db");
  {
    sqlite3* raw = nullptr;
    BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &raw) == SQLITE_OK);
    BOOST_REQUIRE(register_fts_tokenizers(raw) == SQLITE_OK);
    for (int v = 0; v < 4; ++v)
      BOOST_REQUIRE_MESSAGE(sqlite3_exec(raw, schema_migrations()[v].sql, nullptr, nullptr,
                                         nullptr) == SQLITE_OK,
                            sqlite3_errmsg(raw));
    BOOST_REQUIRE(sqlite3_exec(raw,
                               "PRAGMA user_version = 4;"
                               "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                               " VALUES ('old', 'u', 'k', 1);"
                               "INSERT INTO messages(session_id, role, content)"
                               " VALUES ('old', 'user', 'indexed by the old trigger');"
                               "INSERT INTO messages(session_id, role, content)"
                               " VALUES ('old', 'user', 'also by the old trigger 数据库');",
                               nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  {
    auto store = sqlite_store::open(p);
    BOOST_REQUIRE_MESSAGE(store, err_of(store));
    auto& db = (*store)->connection();
    auto* raw = db.native_handle();
    BOOST_TEST(scalar(raw, "PRAGMA user_version") == latest_schema_version());
    BOOST_TEST(latest_schema_version() >= 5);
    BOOST_TEST(*fts_watermark(db) == 2);
    BOOST_TEST(*fts_backlog(db) == 0);
    BOOST_TEST(scalar(raw, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"
                           " AND tbl_name IN ('messages', 'message_state')"
                           " AND sql LIKE '%fts_%'") == 0);
    BOOST_TEST(scalar(raw, "SELECT count(*) FROM fts_words_docsize") == 2);
    message m;
    m.session_id = "old";
    m.role = msg_role::user;
    m.content = "written after the upgrade";
    BOOST_REQUIRE((*store)->append(m));
    BOOST_TEST(*fts_backlog(db) == 1);
    auto n = index_all_pending(db);
    BOOST_REQUIRE_MESSAGE(n, err_of(n));
    BOOST_TEST(*n == 1);
    BOOST_TEST(scalar(raw, "SELECT count(*) FROM fts_words_docsize") == 3);
  }
}

BOOST_AUTO_TEST_SUITE_END() // fts_indexer_test
