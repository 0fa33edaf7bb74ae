// `mneme-bench recall [--messages N] [--dir D] [--json] [--search-only]`: the recall figures of
// issue 4 on the generated corpus of testing/recall_corpus (default 1,000,000 rows of
// mixed languages and sizes):
//   - search latency of recall_search including the anchored view, over every
//     quality probe plus common-word queries [search_p50_ms, search_p99_ms];
//   - indexing throughput of each index filled the way the storage actor's
//     background indexer fills it when idle (store/fts_indexer: one transaction per
//     tick of policies/index_pacing's run and log budget, a single-row INSERT per row,
//     watermark row updated) against FTS5's bulk insert
//     (one INSERT ... SELECT of every row in one transaction) with the same tokenizer
//     over the same rows, in the same run, both ways with the storage actor's
//     checkpoints (bench_checkpointer: a second thread copies the log back, the
//     writer only past the inline bound), in the writer thread's processor
//     seconds (the thread whose time bounds the indexer's rows/s): index_pairs (7)
//     adjacent pairs of runs in alternating order, the median of the pairs'
//     ratios [index_ratio_<name>, index_ratio_min: the lowest of the three; the
//     ratio of the two ways' medians beside them, index_ratio_of_medians_<name>,
//     index_ratio_min_of_medians; every run's seconds, index_runs_s_*; the same
//     pairs in the whole process's processor seconds, the checkpointer's copying
//     included, index_ratio_process_<name>, index_ratio_min_process];
//     FTS5's 'rebuild' command beside it [index_ratio_vs_rebuild_<name>]; and the
//     committed indexer itself (store/fts_indexer, all three indexes, an idle
//     writer's ticks, one index per tick) against FTS5's bulk transaction for
//     each index, on copies of the unindexed corpus, the median of 3 adjacent
//     pairs' ratios, timed as above [index_ratio_all; the whole process's,
//     index_ratio_all_process; per index, the writer's seconds on that index,
//     index_ratio_all_<name>, index_ratio_all_min: the lowest of the three];
//   - what a request waits for behind a paced tick of the real indexer (all three
//     indexes, synchronous=FULL) on a copy of the unindexed corpus, requests
//     simulated after a pseudo-random number of rows [index_wait_max_ms,
//     index_wait_p99_ms, index_row_max_ms: the longest stretch between two
//     checks, index_tick_end_max_ms: from the last check to the end of the commit];
//   - what indexing would cost the append path if it ran inside the append
//     transaction: rows/s of 512-row group commits and the p99 of single-row commits,
//     with and without indexing each commit's rows (the storage actor indexes in the
//     background instead, store/fts_indexer), synchronous=FULL as the actor runs;
//   - index sizes against the messages table [index_bytes_*, table_bytes];
//   - the quality suite's figures on this corpus [recall_at_3, leaks].
//   - the frequent-term shape (frequent_terms.hpp: heavy users whose rows carry
//     数据, 日志, pipeline, ledger in 25-50 % of them) and the corpus's common words,
//     timed per plan of sqlite_recall.hpp in the same run [plan_<plan>_*].
// --search-only stops after the search and quality figures (repeated latency runs).
// The flags are declared at the registration at the end of this file (`mneme-bench
// recall --help`). Only this program links this file.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>
#include <sqlite3.h>

#include "apps/mneme-bench/bench_checkpointer.hpp"
#include "apps/mneme-bench/bench_recall_vectors.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/frequent_terms.hpp"
#include "apps/mneme-bench/index_ways.hpp"
#include "apps/mneme-bench/recall_measure.hpp"
#include "messages/mneme_types.hpp"
#include "policies/index_pacing.hpp"
#include "policies/percentile.hpp"
#include "store/recall.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "testing/recall_corpus.hpp"

namespace mneme::bench {

namespace {

// The FTS5 settings the schema gives mneme's indexes (store/migrations.cpp), read
// from the corpus database so the comparison uses whatever the schema says.
struct fts_settings {
  int automerge = 4;        // FTS5's default when the schema sets none
  bool scoped = false;      // a second `scope` column (schema v7, tenant in the index)
};

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Processor time of this process: indexing is single-threaded CPU work, and on a
// shared machine wall time would measure the neighbours' load instead.
double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

bool exec(sqlite3* db, const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg) == SQLITE_OK)
    return true;
  std::fprintf(stderr, "sqlite: %s\n  in: %.200s\n", msg ? msg : "?", sql.c_str());
  sqlite3_free(msg);
  return false;
}

int64_t scalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK
      && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

// Processor seconds of each run of each way, in the order they ran: the writer
// thread's (the runs), and the whole process's, the checkpointer thread's
// copying included (the *_process runs).
struct index_figures {
  std::string name;
  std::string tokenize;
  // FTS5's bulk insert: one INSERT ... SELECT of every row, one transaction.
  std::vector<double> bulk_runs, bulk_process_runs;
  // The background indexer's ticks over the same rows; ours_runs[i] ran right
  // before or right after bulk_runs[i] (a pair).
  std::vector<double> ours_runs, ours_process_runs;
  // FTS5's 'rebuild' command over the same rows (its own build path), fewer runs.
  std::vector<double> rebuild_runs;
  // Checkpoints of the ticks' runs, all runs together: by the thread, by the writer.
  int64_t ours_background_checkpoints = 0;
  int64_t ours_inline_checkpoints = 0;
};

// Each tokenizer's bulk insert and ticks run this many times, as adjacent pairs
// in alternating order (bulk then ticks, ticks then bulk, ...), and 'rebuild'
// after every second pair (4 runs). Processor time varies with the neighbours'
// load on a shared machine, and the load drifts over minutes, so the throughput
// ratio is the median of the pairs' ratios: both runs of a pair see about the
// same load (figures: docs/benchmarks.md#recall).
constexpr int index_pairs = 7;
constexpr int index_rebuild_every = 2;

// The median of reference[i] / ours[i] over the pairs (1 when there are none).
// Above 1: ours took less processor time than the reference.
double median_paired_ratio(const std::vector<double>& reference, const std::vector<double>& ours) {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(reference.size(), ours.size()); ++i)
    if (ours[i] > 0)
      ratios.push_back(reference[i] / ours[i]);
  return ratios.empty() ? 1.0 : median_or_zero(ratios);
}

// The ratio of the two ways' medians (reported beside the median of the pairs' ratios).
double ratio_of_medians(const std::vector<double>& reference, const std::vector<double>& ours) {
  auto o = median_or_zero(ours);
  return o <= 0 ? 1.0 : median_or_zero(reference) / o;
}

// Pages `db` has written to its log so far (db_connection::pages_written).
int64_t pages_written(sqlite3* db) {
  int current = 0, highwater = 0;
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highwater, 0);
  return current;
}

// The storage actor's indexing path for one index, as store/fts_indexer runs it
// when the actor is idle: ticks of policies/index_pacing's run length (growing
// from the first run to the longest by next_index_run while nothing waits, within
// the batch bounds), each one transaction: the pending rows stepped in id order,
// each row added by its own single-row INSERT, the tick ending after the row that
// brings the log it spilled to the plan's budget (one index per tick, as the
// product's ticks since schema v7); then the watermark row
// updated, COMMIT, and the log's checkpoint planned as the storage actor plans it.
void index_in_batches(sqlite3* db, const std::string& table, const fts_settings& fts,
                      bench_checkpointer& checkpoints) {
  sqlite3_stmt* rows_st = nullptr;
  sqlite3_stmt* add = nullptr;
  sqlite3_stmt* advance = nullptr;
  auto rows_sql = std::string{"SELECT id, content"} + (fts.scoped ? ", scope" : "")
                  + " FROM src_rows WHERE id > ?1 ORDER BY id LIMIT ?2";
  sqlite3_prepare_v2(db, rows_sql.c_str(), -1, &rows_st, nullptr);
  auto cols = std::string{fts.scoped ? "(rowid, content, scope)" : "(rowid, content)"};
  auto add_sql = "INSERT INTO " + table + cols
                 + (fts.scoped ? " VALUES (?1, ?2, ?3)" : " VALUES (?1, ?2)");
  sqlite3_prepare_v2(db, add_sql.c_str(), -1, &add, nullptr);
  sqlite3_prepare_v2(db, "UPDATE bench_watermark SET through = ?1", -1, &advance, nullptr);
  index_pacing_params pacing;
  auto plan = plan_index_tick(pacing, 0, -1, {});
  auto run = plan.run;
  auto page_bytes = scalar(db, "PRAGMA page_size");
  for (int64_t from = 0;;) {
    auto tick_rows = std::min(plan.max_rows, run.rows);
    auto tick_bytes = std::min(plan.max_bytes, run.bytes);
    exec(db, "BEGIN IMMEDIATE");
    sqlite3_bind_int64(rows_st, 1, from);
    sqlite3_bind_int64(rows_st, 2, tick_rows);
    int64_t through = from, rows = 0, bytes = 0;
    auto written_at_start = pages_written(db);
    while (sqlite3_step(rows_st) == SQLITE_ROW) {
      // Loads the text once; SQLite's documented order: the text, then its length.
      auto* text = reinterpret_cast<const char*>(sqlite3_column_text(rows_st, 1));
      auto size = static_cast<int64_t>(sqlite3_column_bytes(rows_st, 1));
      if (rows > 0 && bytes + size > tick_bytes)
        break;
      through = sqlite3_column_int64(rows_st, 0);
      sqlite3_bind_int64(add, 1, through);
      // As store/fts_indexer binds it: the row's text without a copy (valid until
      // rows_st steps again, after the insert).
      sqlite3_bind_text(add, 2, text, static_cast<int>(size), SQLITE_STATIC);
      if (fts.scoped)
        sqlite3_bind_value(add, 3, sqlite3_column_value(rows_st, 2));
      sqlite3_step(add);
      sqlite3_reset(add);
      bytes += size;
      ++rows;
      if (tick_log_spent(plan, (pages_written(db) - written_at_start) * page_bytes))
        break;
    }
    sqlite3_reset(rows_st);
    if (rows == 0) {
      exec(db, "COMMIT");
      break;
    }
    sqlite3_bind_int64(advance, 1, through);
    sqlite3_step(advance);
    sqlite3_reset(advance);
    exec(db, "COMMIT");
    checkpoints.after_commit();
    from = through;
    run = next_index_run(run, plan.max_run);
  }
  sqlite3_finalize(rows_st);
  sqlite3_finalize(add);
  sqlite3_finalize(advance);
}

// Indexing throughput per tokenizer: the background indexer's batches vs FTS5 bulk.
std::vector<index_figures> measure_indexing(const std::string& main_db, const std::string& dir,
                                            const fts_settings& fts) {
  std::vector<index_figures> out(3);
  out[0].name = "unicode61";
  out[0].tokenize = "unicode61 remove_diacritics 2";
  out[1].name = "cjk";
  out[1].tokenize = "mneme_cjk";
  out[2].name = "trigram";
  out[2].tokenize = "trigram";
  auto path = dir + "/indexing.db";
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  // Without SQLite's per-connection mutex, as store/db_connection opens the writer
  // (one thread per connection): the per-row way makes more API calls than the bulk way.
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                  nullptr);
  register_fts_tokenizers(db);
  // The page size of the corpus file (the store's, before the first page is written).
  sqlite3* corpus_db = nullptr;
  sqlite3_open_v2(main_db.c_str(), &corpus_db, SQLITE_OPEN_READONLY, nullptr);
  auto page_bytes = scalar(corpus_db, "PRAGMA page_size");
  sqlite3_close(corpus_db);
  exec(db, "PRAGMA page_size=" + std::to_string(page_bytes > 0 ? page_bytes : 4096));
  // The writer's page cache and secure-delete mode (store/db_connection), for every way.
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA secure_delete=FAST;"
           " PRAGMA cache_size=-" + std::to_string(writer_cache_kib));
  exec(db, "ATTACH '" + main_db + "' AS src");
  if (fts.scoped)
    exec(db, "CREATE TABLE src_rows(id INTEGER PRIMARY KEY, content TEXT NOT NULL, scope TEXT);"
             "INSERT INTO src_rows SELECT id, content, scope FROM src.recall_source;");
  else
    exec(db, "CREATE TABLE src_rows(id INTEGER PRIMARY KEY, content TEXT NOT NULL);"
             "INSERT INTO src_rows SELECT id, content FROM src.messages;");
  exec(db, "DETACH src");
  exec(db, "CREATE TABLE bench_watermark(through INTEGER NOT NULL); INSERT INTO bench_watermark VALUES (0);"
           " PRAGMA wal_checkpoint(TRUNCATE)");
  // From here every way's log is checkpointed as the storage actor's is.
  auto checkpoints = std::make_unique<bench_checkpointer>(path, page_bytes > 0 ? page_bytes : 4096);
  checkpoints->watch(db);
  auto columns = std::string{fts.scoped ? "content, scope" : "content"};
  auto create = [&](const std::string& t, const fts_settings& fs, const index_figures& f) {
    exec(db, "CREATE VIRTUAL TABLE " + t + " USING fts5(" + columns + ", content='src_rows',"
             " content_rowid='id', tokenize='" + f.tokenize + "');"
             "INSERT INTO " + t + "(" + t + ", rank) VALUES ('automerge', "
             + std::to_string(fs.automerge) + ")");
  };
  for (auto& f : out) {
    auto t = "idx_" + f.name;
    auto run_way = [&](int way) {
      create(t, fts, f);
      checkpoints->wait_idle();
      auto background_before = checkpoints->background_checkpoints();
      auto inline_before = checkpoints->inline_checkpoints();
      auto t0 = cpu_seconds();
      auto w0 = thread_cpu_seconds();
      if (way == 0) {
        exec(db, "BEGIN IMMEDIATE; INSERT INTO " + t + "(rowid, " + columns + ") SELECT id, "
                 + columns + " FROM src_rows; COMMIT");
        checkpoints->after_commit();
      } else if (way == 1) {
        index_in_batches(db, t, fts, *checkpoints);
      } else {
        exec(db, "INSERT INTO " + t + "(" + t + ") VALUES ('rebuild')");
        checkpoints->after_commit();
      }
      auto writer_s = thread_cpu_seconds() - w0;
      checkpoints->wait_idle(); // the run's copying is part of its processor time
      auto process_s = cpu_seconds() - t0;
      if (way == 0) {
        f.bulk_runs.push_back(writer_s);
        f.bulk_process_runs.push_back(process_s);
      } else if (way == 1) {
        f.ours_runs.push_back(writer_s);
        f.ours_process_runs.push_back(process_s);
        f.ours_background_checkpoints += checkpoints->background_checkpoints() - background_before;
        f.ours_inline_checkpoints += checkpoints->inline_checkpoints() - inline_before;
      } else {
        f.rebuild_runs.push_back(writer_s);
      }
      // Outside the timing: the next run starts with an empty write-ahead log.
      exec(db, "DROP TABLE " + t + "; UPDATE bench_watermark SET through = 0;"
               " PRAGMA wal_checkpoint(TRUNCATE)");
    };
    for (int pair = 0; pair < index_pairs; ++pair) {
      run_way(pair % 2);
      run_way(1 - pair % 2);
      if (pair % index_rebuild_every == 0)
        run_way(2);
    }
  }
  checkpoints.reset(); // its connection closes first: the writer's close removes the log
  sqlite3_close(db);
  remove_db_files(path);
  return out;
}

// What a request arriving during a paced tick waits for, on the storage actor's
// own path (store/fts_indexer index_pending with the default pacing plan of an
// idle writer) over a copy of the unindexed corpus. A simulated request arrives
// after a pseudo-random number of rows (1 to one run, fixed seed) and the tick
// commits; `wait` is the time from the check before its arrival (the worst
// moment to arrive) to the end of the commit. Wall milliseconds: they include
// the machine's load.
struct wait_figures {
  double wait_max_ms = 0;     // longest observed wait of a simulated request
  double wait_p99_ms = 0;
  double row_max_ms = 0;      // longest stretch between two checks (one row)
  double end_max_ms = 0;      // longest stretch from a check to the tick's return
  int64_t requests = 0;
};

wait_figures measure_tick_waits(const std::string& unindexed_copy) {
  wait_figures out;
  store_params p;
  p.path = unindexed_copy;
  p.synchronous_full = true; // as the storage actor runs
  auto store = sqlite_store::open(p);
  if (!store)
    return out;
  auto& db = (*store)->connection();
  // As in the storage actor, no checkpoint runs inside a tick's COMMIT: its
  // checkpointer thread copies the log meanwhile (here: between ticks, untimed).
  db.watch_wal();
  index_pacing_params pacing;
  auto plan = plan_index_tick(pacing, 0, -1, {}); // an idle writer: every row may go
  uint64_t lcg = 12345;
  auto next_gap = [&] {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((lcg >> 33) % static_cast<uint64_t>(plan.run.rows)) + 1;
  };
  std::vector<double> waits;
  int64_t until_request = next_gap();
  for (;;) {
    auto last_check = clock_type::now();
    bool requested = false;
    auto done = index_pending(db, plan, [&] {
      auto now = clock_type::now();
      auto since_check = std::chrono::duration<double, std::milli>(now - last_check).count();
      out.row_max_ms = std::max(out.row_max_ms, since_check);
      if (--until_request > 0) {
        last_check = now;
        return false;
      }
      requested = true; // arrived right after the previous check
      until_request = next_gap();
      return true;
    });
    auto end = clock_type::now();
    if (!done || done->rows == 0)
      break;
    auto tail = std::chrono::duration<double, std::milli>(end - last_check).count();
    out.end_max_ms = std::max(out.end_max_ms, tail);
    if (requested) {
      waits.push_back(tail);
      ++out.requests;
    }
    plan.run = done->waited ? first_index_run(pacing) : done->next_run;
    checkpoint_between_ticks(db);
  }
  out.wait_max_ms = percentile_or_zero(waits, 1.0);
  out.wait_p99_ms = percentile_or_zero(waits, 0.99);
  store->reset();
  return out;
}

// The product's own indexer against FTS5's bulk insert, all three indexes at once,
// on copies of the unindexed corpus (the mneme schema with its index settings,
// synchronous=FULL as the storage actor runs). Ours: store/fts_indexer's
// index_pending in the ticks of an idle writer (growing runs, nothing waiting),
// until caught up, one index per tick. Bulk: one transaction per index with one
// INSERT ... SELECT and the index's watermark moved. Both ways with the storage actor's checkpoints
// (bench_checkpointer). The writer thread's processor seconds (and the whole
// process's beside), `repeats` adjacent pairs of runs in alternating order;
// ratio() is the median of the pairs' ratios, ours_s and bulk_s the medians of
// each way's runs; the same per index (the writer thread's seconds in the ticks
// that filled it against those in its bulk transaction, checkpoints left out). The per-index figures
// above come from a copy of the indexer's way of working on one index; these run
// the committed code.
struct all_index_figures {
  double ours_s = 0;
  double bulk_s = 0;
  std::vector<double> ours_runs, bulk_runs;
  std::vector<double> ours_process_runs, bulk_process_runs;
  // The writer thread's seconds of each run spent on each index (by fts_index
  // position): the ticks that filled it, and FTS5's bulk transaction for it.
  std::array<std::vector<double>, fts_index_count> ours_index_runs, bulk_index_runs;
  // ours_runs[i] and bulk_runs[i] ran one right after the other (a pair).
  double ratio() const { return median_paired_ratio(bulk_runs, ours_runs); }
};

// Returns the figures, or an error when either way failed or did not index
// every row (a failed run must not be reported as a fast one).
caf::expected<all_index_figures> measure_indexer_all(const std::string& unindexed,
                                                     const std::string& work, int repeats) {
  all_index_figures out;
  auto run_path = work + "/all.db";
  auto drop_run = [&] { remove_db_files(run_path); };
  auto fail = [&](std::string what) -> caf::expected<all_index_figures> {
    drop_run();
    return caf::make_error(errc::internal, "index_ratio_all: " + what);
  };
  for (int rep = 0; rep < 2 * repeats; ++rep) {
    bool ours = (rep % 2 == 0) == (rep / 2 % 2 == 0); // ours, bulk, bulk, ours, ours, ...
    drop_run();
    std::filesystem::copy_file(unindexed, run_path);
    store_params p;
    p.path = run_path;
    p.synchronous_full = true;
    auto store = sqlite_store::open(p);
    if (!store)
      return fail(render_error(store.error()));
    auto& db = (*store)->connection();
    auto page_bytes = scalar(db.native_handle(), "PRAGMA page_size");
    auto checkpoints = std::make_unique<bench_checkpointer>(run_path, page_bytes);
    checkpoints->watch(db.native_handle());
    auto t0 = cpu_seconds();
    auto w0 = thread_cpu_seconds();
    index_thread_seconds by_index{};
    auto after_commit = [&] { checkpoints->after_commit(); };
    if (ours) {
      if (auto ticks = fill_indexes_by_ticks(db, after_commit, &by_index); !ticks)
        return fail(render_error(ticks.error()));
    } else {
      if (auto err = fill_indexes_in_bulk(db, after_commit, &by_index))
        return fail("the bulk transaction failed: " + render_error(err));
    }
    auto writer_s = thread_cpu_seconds() - w0;
    for (std::size_t i = 0; i < fts_index_count; ++i)
      (ours ? out.ours_index_runs : out.bulk_index_runs)[i].push_back(by_index[i]);
    checkpoints->wait_idle();
    auto process_s = cpu_seconds() - t0;
    checkpoints.reset(); // its connection closes before the writer's
    (ours ? out.ours_runs : out.bulk_runs).push_back(writer_s);
    (ours ? out.ours_process_runs : out.bulk_process_runs).push_back(process_s);
    // Both ways end with every row in all three indexes.
    if (auto indexed = check_all_indexed(db); !indexed)
      return fail(std::string{ours ? "the indexer: " : "the bulk insert: "}
                  + render_error(indexed.error()));
    store->reset();
  }
  drop_run();
  out.ours_s = median_or_zero(out.ours_runs);
  out.bulk_s = median_or_zero(out.bulk_runs);
  return out;
}

struct append_figures {
  double group_rows_per_s = 0;
  double single_commit_p99_ms = 0;
};

// The append path of the store with synchronous=FULL: 512-row groups, then single
// appends; `indexed` also indexes each commit's rows right after it (the cost the
// background indexer takes off the acknowledgement path).
append_figures measure_appends(const std::string& dir, bool indexed, int64_t group_rows,
                               int64_t singles) {
  append_figures out;
  store_params p;
  p.path = dir + (indexed ? "/append_indexed.db" : "/append_plain.db");
  std::filesystem::remove(p.path);
  auto store = sqlite_store::open(p);
  if (!store)
    return out;
  auto& s = **store;
  session_record rec;
  rec.user_id = "bench";
  rec.session_key = "k";
  auto sid = s.create_session(rec, 1)->id;
  // Rows shaped like the corpus: reuse a small generated corpus's texts.
  std::vector<message> rows;
  {
    store_params scratch;
    scratch.path = ":memory:";
    auto mem = sqlite_store::open(scratch);
    corpus_spec spec;
    spec.messages = 2000;
    spec.fact_every_n_sessions = 0;
    generate_corpus(**mem, spec);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2((*mem)->connection().native_handle(), "SELECT content FROM messages",
                       -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      message m;
      m.session_id = sid;
      m.content = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      rows.push_back(std::move(m));
    }
    sqlite3_finalize(st);
  }
  auto t0 = clock_type::now();
  for (int64_t done = 0; done < group_rows;) {
    std::vector<message> batch;
    for (int i = 0; i < 512 && done < group_rows; ++i, ++done)
      batch.push_back(rows[static_cast<std::size_t>(done) % rows.size()]);
    s.begin_group();
    s.insert_batch_in_group(batch);
    s.commit_group();
    if (indexed)
      index_all_pending(s.connection());
  }
  out.group_rows_per_s = static_cast<double>(group_rows) / seconds_since(t0);
  std::vector<double> ms;
  for (int64_t i = 0; i < singles; ++i) {
    auto t1 = clock_type::now();
    s.append(rows[static_cast<std::size_t>(i) % rows.size()]);
    if (indexed)
      index_all_pending(s.connection());
    ms.push_back(seconds_since(t1) * 1000);
  }
  out.single_commit_p99_ms = percentile_or_zero(ms, 0.99);
  store->reset();
  remove_db_files(p.path);
  return out;
}

// The flags of `mneme-bench recall`.
struct recall_options {
  int64_t messages = 1000000;
  std::string dir = "/tmp";
  bool json = false;
  bool search_only = false; // skip the indexing and append comparisons
  bool vectors = false;     // hybrid against fts instead (bench_recall_vectors.hpp)
  frequent_shape_spec frequent;
  std::vector<frequent_term_plan> plans = {frequent_term_plan::newest_first,
                                           frequent_term_plan::rank_all};
};

int run_recall_bench(const recall_options& o) {
  if (o.vectors)
    return run_vector_recall_bench({o.messages, o.dir, o.json});
  const int64_t messages = o.messages;
  const std::string& dir = o.dir;
  const bool json = o.json;
  const bool search_only = o.search_only;
  auto work = dir + "/mneme-bench-recall-" + std::to_string(::getpid());
  std::filesystem::create_directories(work);
  store_params params;
  params.path = work + "/recall.db";
  params.synchronous_full = false; // building the corpus measures nothing durable
  auto store = sqlite_store::open(params);
  if (!store) {
    std::fprintf(stderr, "%s\n", render_error(store.error()).c_str());
    return 1;
  }
  auto corpus = generate_corpus(**store, bench_corpus_spec(messages));
  if (!corpus) {
    std::fprintf(stderr, "%s\n", render_error(corpus.error()).c_str());
    return 1;
  }
  auto shape = add_frequent_term_users(**store, o.frequent);
  if (!shape) {
    std::fprintf(stderr, "%s\n", render_error(shape.error()).c_str());
    return 1;
  }
  // A copy of the unindexed corpus for the waits of requests behind a paced tick.
  wait_figures waits;
  if (!search_only) {
    exec((*store)->connection().native_handle(), "PRAGMA wal_checkpoint(TRUNCATE)");
    std::filesystem::copy_file(params.path, work + "/waits.db");
    waits = measure_tick_waits(work + "/waits.db");
    remove_db_files(work + "/waits.db");
    // The same unindexed state for index_ratio_all: the TRUNCATE checkpoint above
    // put every row in the file, and nothing has written to it since.
    std::filesystem::copy_file(params.path, work + "/unindexed.db");
  }
  // The storage actor indexes in the background; measure searches on a caught-up index.
  if (auto indexed = index_all_pending((*store)->connection()); !indexed) {
    std::fprintf(stderr, "%s\n", render_error(indexed.error()).c_str());
    return 1;
  }
  auto* raw = (*store)->connection().native_handle();
  exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)");
  fts_settings fts;
  fts.scoped = scalar(raw, "SELECT count(*) FROM sqlite_schema WHERE name = 'recall_source'") == 1;
  if (auto am = scalar(raw, "SELECT v FROM fts_words_config WHERE k = 'automerge'"); am > 0)
    fts.automerge = static_cast<int>(am);
  std::map<std::string, int64_t> bytes;
  for (auto* name : {"messages", "fts_words", "fts_cjk", "fts_trigram"})
    bytes[name] = scalar(raw, std::string{"SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = '"}
                                + name + "' OR name LIKE '" + name + "\\_%' ESCAPE '\\'");
  store->reset();

  auto reader = store_reader::open(params);
  if (!reader) {
    std::fprintf(stderr, "%s\n", render_error(reader.error()).c_str());
    return 1;
  }
  auto searched = measure_recall(**reader, *corpus);
  if (!searched) {
    std::fprintf(stderr, "%s\n", render_error(searched.error()).c_str());
    return 1;
  }
  const probe_outcome* outcome = &searched->outcome;
  const std::vector<double>& latencies = searched->latencies_ms;
  const std::vector<double>& common_ms = searched->common_ms;
  auto by_plan = time_plans(**reader, *shape, common_query_requests(*corpus), o.plans, 10);
  if (!by_plan) {
    std::fprintf(stderr, "%s\n", render_error(by_plan.error()).c_str());
    return 1;
  }
  reader->reset();

  std::vector<index_figures> indexing;
  all_index_figures all_indexes;
  append_figures plain, indexed;
  if (!search_only) {
    indexing = measure_indexing(params.path, work, fts);
    auto all = measure_indexer_all(work + "/unindexed.db", work, 3);
    std::filesystem::remove(work + "/unindexed.db");
    if (!all) {
      std::fprintf(stderr, "%s\n", render_error(all.error()).c_str());
      std::filesystem::remove_all(work);
      return 1;
    }
    all_indexes = std::move(*all);
    plain = measure_appends(work, false, 20480, 300);
    indexed = measure_appends(work, true, 20480, 300);
  }
  double ratio_min = 1e9, ratio_min_of_medians = 1e9, ratio_min_process = 1e9;
  for (auto& f : indexing) {
    ratio_min = std::min(ratio_min, median_paired_ratio(f.bulk_runs, f.ours_runs));
    ratio_min_of_medians = std::min(ratio_min_of_medians, ratio_of_medians(f.bulk_runs, f.ours_runs));
    ratio_min_process = std::min(ratio_min_process,
                                 median_paired_ratio(f.bulk_process_runs, f.ours_process_runs));
  }

  nlohmann::json j;
  j["bench"] = "recall";
  j["messages"] = corpus->messages;
  j["sessions"] = corpus->sessions;
  j["content_bytes"] = corpus->content_bytes;
  j["ingest_seconds"] = corpus->ingest_seconds;
  j["ingest_rows_per_s"] = static_cast<double>(corpus->messages) / corpus->ingest_seconds;
  j["searches"] = latencies.size();
  j["search_p50_ms"] = percentile_or_zero(latencies, 0.50);
  j["search_p99_ms"] = percentile_or_zero(latencies, 0.99);
  j["search_max_ms"] = percentile_or_zero(latencies, 1.0);
  j["common_query_p50_ms"] = percentile_or_zero(common_ms, 0.50);
  j["common_query_p99_ms"] = percentile_or_zero(common_ms, 0.99);
  for (auto& [word, share] : shape->fractions)
    j["frequent_share_" + word] = share;
  report_plans(j, *by_plan);
  for (auto& f : indexing) {
    auto rows = static_cast<double>(corpus->messages);
    auto rate = [&](const std::vector<double>& runs) { return rows / std::max(1e-9, median_or_zero(runs)); };
    j["index_bulk_rows_per_s_" + f.name] = rate(f.bulk_runs);
    j["index_rebuild_rows_per_s_" + f.name] = rate(f.rebuild_runs);
    j["index_batched_rows_per_s_" + f.name] = rate(f.ours_runs);
    j["index_runs_s_bulk_" + f.name] = f.bulk_runs;
    j["index_runs_s_batched_" + f.name] = f.ours_runs;
    j["index_runs_s_rebuild_" + f.name] = f.rebuild_runs;
    j["index_ratio_" + f.name] = median_paired_ratio(f.bulk_runs, f.ours_runs);
    j["index_ratio_of_medians_" + f.name] = ratio_of_medians(f.bulk_runs, f.ours_runs);
    j["index_ratio_vs_rebuild_" + f.name] = ratio_of_medians(f.rebuild_runs, f.ours_runs);
    j["index_runs_s_bulk_process_" + f.name] = f.bulk_process_runs;
    j["index_runs_s_batched_process_" + f.name] = f.ours_process_runs;
    j["index_ratio_process_" + f.name] = median_paired_ratio(f.bulk_process_runs, f.ours_process_runs);
    j["index_checkpoints_batched_thread_" + f.name] = f.ours_background_checkpoints;
    j["index_checkpoints_batched_writer_" + f.name] = f.ours_inline_checkpoints;
  }
  if (!search_only) {
    j["index_ratio_min"] = ratio_min;
    j["index_ratio_min_of_medians"] = ratio_min_of_medians;
    j["index_ratio_min_process"] = ratio_min_process;
    j["index_all_rows_per_s_ours"] = static_cast<double>(corpus->messages)
                                     / std::max(1e-9, all_indexes.ours_s);
    j["index_all_rows_per_s_bulk"] = static_cast<double>(corpus->messages)
                                     / std::max(1e-9, all_indexes.bulk_s);
    j["index_all_runs_s_ours"] = all_indexes.ours_runs;
    j["index_all_runs_s_bulk"] = all_indexes.bulk_runs;
    j["index_ratio_all"] = all_indexes.ratio();
    j["index_ratio_all_of_medians"] = ratio_of_medians(all_indexes.bulk_runs, all_indexes.ours_runs);
    j["index_all_runs_s_ours_process"] = all_indexes.ours_process_runs;
    j["index_all_runs_s_bulk_process"] = all_indexes.bulk_process_runs;
    j["index_ratio_all_process"] = median_paired_ratio(all_indexes.bulk_process_runs,
                                                       all_indexes.ours_process_runs);
    // The committed indexer per index (its ticks on that index against FTS5's
    // bulk transaction for it, the same runs as index_ratio_all; the writer's
    // checkpoints after the commits left out on both sides: index_ways.hpp).
    double all_min = 1e9;
    for (std::size_t i = 0; i < fts_index_count; ++i) {
      auto name = indexing.at(i).name; // unicode61, cjk, trigram: fts_index order
      auto r = median_paired_ratio(all_indexes.bulk_index_runs[i], all_indexes.ours_index_runs[i]);
      j["index_ratio_all_" + name] = r;
      j["index_all_runs_s_ours_" + name] = all_indexes.ours_index_runs[i];
      j["index_all_runs_s_bulk_" + name] = all_indexes.bulk_index_runs[i];
      all_min = std::min(all_min, r);
    }
    j["index_ratio_all_min"] = all_min;
    j["index_wait_max_ms"] = waits.wait_max_ms;
    j["index_wait_p99_ms"] = waits.wait_p99_ms;
    j["index_wait_requests"] = waits.requests;
    j["index_row_max_ms"] = waits.row_max_ms;
    j["index_tick_end_max_ms"] = waits.end_max_ms;
    j["append_rows_per_s_without_indexes"] = plain.group_rows_per_s;
    j["append_rows_per_s_with_indexes"] = indexed.group_rows_per_s;
    j["append_ratio_with_indexes"] = indexed.group_rows_per_s / plain.group_rows_per_s;
    j["single_append_p99_ms_without_indexes"] = plain.single_commit_p99_ms;
    j["single_append_p99_ms_with_indexes"] = indexed.single_commit_p99_ms;
  }
  j["table_bytes"] = bytes["messages"];
  j["index_bytes_unicode61"] = bytes["fts_words"];
  j["index_bytes_cjk"] = bytes["fts_cjk"];
  j["index_bytes_trigram"] = bytes["fts_trigram"];
  j["probes"] = corpus->probes.size();
  j["recall_at_3"] = outcome->recall_at_3();
  j["leaks"] = outcome->leaks;
  std::filesystem::remove_all(work);
  if (json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (auto& [k, v] : j.items())
      std::printf("%-40s %s\n", k.c_str(), v.dump().c_str());
  }
  bool pass = outcome->recall_at_3() >= 0.99 && outcome->leaks == 0;
  return pass ? 0 : 1;
}

} // namespace

MNEME_BENCH("recall", "full-text recall: latency, indexing vs FTS5 bulk, sizes, recall@3",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<recall_options>();
              cmd.add_option("--messages", o->messages, "messages of the generated corpus")
                ->check(integer_range(int64_t{1000}));
              cmd.add_option("--dir", o->dir, "directory of the work files (removed at the end)");
              cmd.add_flag("--search-only", o->search_only,
                           "stop after the search and quality figures");
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              cmd.add_flag("--vectors", o->vectors,
                           "hybrid against full-text search: latency, index, recall@3");
              cmd.add_option("--frequent-users", o->frequent.users,
                             "heavy users of the frequent-term shape (0: none)")
                ->check(integer_range(int32_t{0}));
              cmd.add_option("--frequent-rows", o->frequent.rows_per_user,
                             "rows of each heavy user")
                ->check(integer_range(int64_t{200}));
              cmd.add_option("--plan", o->plans,
                             "plans timed side by side: newest_first, rank_all")
                ->transform(CLI::CheckedTransformer(
                  std::map<std::string, frequent_term_plan>{
                    {"newest_first", frequent_term_plan::newest_first},
                    {"rank_all", frequent_term_plan::rank_all}}));
              return [o] { return run_recall_bench(*o); };
            });

} // namespace mneme::bench
