// mneme-bench storage: the single writer against raw SQLite doing the same work.
//   1. ingest: N session actors each append M messages (one in flight per session,
//      the next sent on the acknowledgement) through the storage actor; baseline:
//      one thread, same schema, one prepared INSERT, transactions of the same mean
//      batch size, no actors. Then the acknowledgement latency at half that peak
//      rate (sessions paced by timers). Full-text indexing is off the append path
//      (schema v5): the rows left unindexed when the last append was acknowledged
//      and the time the actor's idle ticks take to index them are reported. The
//      raw loop checkpoints the write-ahead log inside its COMMITs, as SQLite does
//      by default; the storage actor leaves that to its checkpointer thread
//      (policies/wal_checkpoint): the checkpoints each side ran are reported.
//   2. multi-process: 4 processes appending to one file, one transaction per message,
//      busy timeout 1 s (the pattern that gives "database is locked"), against the
//      same 4 producers sending through one runtime (64 appends in flight each).
//   3. compaction commit of a 5,000-message session (head 4, tail 20): time, and the
//      number of message rows rewritten (the only rows a full-text index trigger
//      can fire on), counted by a temporary trigger on the writer connection.
// Rates of parts 1 and 2 are medians of 3 runs of each side (ingest and raw
// alternate; *_runs_* keys list every run); the batch sizes are the first ingest
// run's. Messages: mixed sizes (98% 50-2,000 chars, 2% 20-200 KB tool outputs),
// English and Chinese. Every run uses fresh files in a temporary directory (same disk as /tmp),
// PRAGMA synchronous=FULL. Options: --json, --sessions N (1000), --per-session M (30),
// --mp-messages K (500 per process), --dir PATH, --only ingest|raw|paced|mp (just
// part 1's ingest through the actor and its index catch-up, its raw baseline at
// batch 370, its paced run at --rate R msgs/s (default 15,000: about half the
// ingest peak, figures: docs/benchmarks.md#storage), or one run of each side of
// part 2: for profiling one side, or for comparing two builds on one part). The flags are
// declared, with their ranges, at the registration at the end of this file (`mneme-bench
// storage --help`). Only this program links this file.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/bench_storage_backends.hpp"
#include "apps/mneme-bench/storage_ingest.hpp"
#include "policies/percentile.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme::bench {
namespace {

constexpr auto request_timeout = std::chrono::seconds(60);

// The parameters of a new, empty SQLite store named `name` in `dir`.
store_params sqlite_in(const std::string& dir, const std::string& name) {
  store_params params;
  params.path = fresh_file{dir, name}.path;
  return params;
}

// --- 1. raw SQLite baseline: one thread, same schema, one prepared INSERT

double run_raw(const std::string& dir, size_t sessions, int per_session,
               const std::vector<std::string>& bodies, int64_t batch) {
  fresh_file file{dir, "raw.db"};
  store_params params;
  params.path = file.path;
  std::vector<std::string> ids;
  {
    auto store = sqlite_store::open(params); // the same schema and indexes
    for (size_t i = 0; i < sessions; ++i)
      ids.push_back((*store)->create_session(session_record{}, 1)->id);
  }
  sqlite3* db = nullptr;
  sqlite3_open(file.path.c_str(), &db);
  register_fts_tokenizers(db); // the same schema: neither path indexes on append (v5)
  // The writer's settings (store/db_connection), its page cache included: a
  // 370-row group can pass SQLite's 2 MB default cache and spill.
  auto settings = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-"
                  + std::to_string(writer_cache_kib);
  sqlite3_exec(db, settings.c_str(), nullptr, nullptr, nullptr);
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO messages(session_id, role, content, timestamp_ms,"
                     " token_estimate) VALUES (?1, ?2, ?3, ?4, ?5)",
                     -1, &ins, nullptr);
  auto total = static_cast<int64_t>(sessions) * per_session;
  auto t0 = steady::now();
  int64_t in_txn = 0;
  for (int64_t k = 0; k < total; ++k) {
    if (in_txn == 0)
      sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    auto s = static_cast<size_t>(k) % sessions;
    auto seq = k / static_cast<int64_t>(sessions);
    const auto& body = bodies[(s * 7 + static_cast<size_t>(seq)) % bodies.size()];
    sqlite3_bind_text(ins, 1, ids[s].c_str(), -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 2, seq % 2 == 0 ? "user" : "assistant", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
    sqlite3_bind_int64(ins, 4, 1700000000000 + seq);
    sqlite3_bind_int64(ins, 5, static_cast<int64_t>(body.size() / 4));
    sqlite3_step(ins);
    sqlite3_reset(ins);
    if (++in_txn == batch || k + 1 == total) {
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
      in_txn = 0;
    }
  }
  auto elapsed = ms_since(t0);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  return static_cast<double>(total) / (elapsed / 1000.0);
}

// --- 2. four processes, one transaction per message, busy timeout 1 s

struct multiprocess_result {
  double msgs_per_s = 0;
  int64_t lock_errors = 0;
  int64_t stored = 0;
  double mean_batch = 1; // rows per commit: the baseline commits every row alone
};

multiprocess_result run_multiprocess_baseline(const std::string& dir, int per_process,
                                              const std::vector<std::string>& bodies) {
  fresh_file file{dir, "mp.db"};
  store_params params;
  params.path = file.path;
  std::string sid;
  {
    auto store = sqlite_store::open(params);
    sid = (*store)->create_session(session_record{}, 1)->id;
  }
  constexpr int procs = 4;
  int pipes[procs][2];
  pid_t pids[procs];
  auto t0 = steady::now();
  for (int p = 0; p < procs; ++p) {
    if (pipe(pipes[p]) != 0)
      std::exit(1);
    pids[p] = fork();
    if (pids[p] == 0) {
      sqlite3* db = nullptr;
      sqlite3_open(file.path.c_str(), &db);
      register_fts_tokenizers(db);
      sqlite3_busy_timeout(db, 1000);
      sqlite3_exec(db, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr);
      sqlite3_stmt* ins = nullptr;
      sqlite3_prepare_v2(db,
                         "INSERT INTO messages(session_id, role, content) VALUES (?1, 'user', ?2)",
                         -1, &ins, nullptr);
      int64_t counts[2] = {0, 0}; // stored, lock errors
      for (int i = 0; i < per_process; ++i) {
        const auto& body = bodies[static_cast<size_t>(p * per_process + i) % bodies.size()];
        sqlite3_bind_text(ins, 1, sid.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
        auto rc = sqlite3_step(ins); // autocommit: one transaction per message
        sqlite3_reset(ins);
        if (rc == SQLITE_DONE)
          ++counts[0];
        else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
          ++counts[1];
        else
          std::fprintf(stderr, "baseline insert failed: %s\n", sqlite3_errmsg(db));
      }
      sqlite3_finalize(ins);
      sqlite3_close(db);
      if (write(pipes[p][1], counts, sizeof(counts)) != sizeof(counts))
        _exit(1);
      _exit(0);
    }
    close(pipes[p][1]);
  }
  multiprocess_result r;
  for (int p = 0; p < procs; ++p) {
    int64_t counts[2] = {0, 0};
    if (read(pipes[p][0], counts, sizeof(counts)) == sizeof(counts)) {
      r.stored += counts[0];
      r.lock_errors += counts[1];
    }
    close(pipes[p][0]);
    waitpid(pids[p], nullptr, 0);
  }
  r.msgs_per_s = static_cast<double>(r.stored) / (ms_since(t0) / 1000.0);
  return r;
}

// The same 4 producers inside one runtime: each keeps `window` appends in flight.
multiprocess_result run_multiprocess_mneme(const std::string& dir, int per_process,
                                           const std::vector<std::string>& bodies) {
  fresh_file file{dir, "mp-mneme.db"};
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  store_params params;
  params.path = file.path;
  auto metrics = std::make_shared<storage_metrics>();
  auto storage = *spawn_storage(sys, params, nullptr, metrics);
  caf::scoped_actor self{sys};
  auto sid = create_sessions(self, storage, 1).front();
  auto base_commits = metrics->group_commits.load();
  constexpr int procs = 4;
  constexpr int window = 64;
  std::atomic<int64_t> stored{0};
  std::atomic<int64_t> errors{0};
  auto t0 = steady::now();
  std::vector<std::thread> producers;
  for (int p = 0; p < procs; ++p)
    producers.emplace_back([&, p] {
      caf::scoped_actor me{sys};
      int sent = 0;
      int answered = 0;
      auto send_next = [&] {
        const auto& body = bodies[static_cast<size_t>(p * per_process + sent) % bodies.size()];
        me->send(storage, st_append_atom_v, make_message(sid, body, sent));
        ++sent;
      };
      while (sent < std::min(window, per_process))
        send_next();
      while (answered < per_process) {
        me->receive([&](int64_t) { stored.fetch_add(1); },
                    [&](caf::error&) { errors.fetch_add(1); });
        ++answered;
        if (sent < per_process)
          send_next();
      }
    });
  for (auto& t : producers)
    t.join();
  multiprocess_result r;
  r.stored = stored.load();
  r.lock_errors = errors.load();
  r.msgs_per_s = static_cast<double>(r.stored) / (ms_since(t0) / 1000.0);
  auto commits = metrics->group_commits.load() - base_commits;
  r.mean_batch = commits > 0 ? static_cast<double>(r.stored) / static_cast<double>(commits) : 0;
  self->send_exit(storage, caf::exit_reason::user_shutdown);
  return r;
}

// Runs one side of part 2 `runs` times: every rate goes to `rates`; the result
// has their median (and the median of the runs' mean batches) and the errors and
// rows of all runs.
template <class Run>
multiprocess_result repeat_multiprocess(int runs, std::vector<double>& rates, Run run) {
  multiprocess_result all;
  std::vector<double> batches;
  for (int r = 0; r < runs; ++r) {
    auto one = run();
    rates.push_back(one.msgs_per_s);
    batches.push_back(one.mean_batch);
    all.lock_errors += one.lock_errors;
    all.stored += one.stored;
  }
  all.msgs_per_s = median_or_zero(rates);
  all.mean_batch = median_or_zero(batches);
  return all;
}

// --- 3. compaction commit of a 5,000-message session

struct compaction_result {
  double commit_ms = 0;
  int64_t rows_rewritten = 0;
  int64_t archived = 0;
};

compaction_result run_compaction(const std::string& dir, const std::vector<std::string>& bodies,
                                 int reps) {
  fresh_file file{dir, "compaction.db"};
  store_params params;
  params.path = file.path;
  auto store = std::move(*sqlite_store::open(params));
  auto* db = store->connection().native_handle();
  sqlite3_exec(db,
               "CREATE TEMP TABLE rewrites(n INTEGER); INSERT INTO rewrites VALUES (0);"
               "CREATE TEMP TRIGGER count_rewrites AFTER UPDATE ON main.messages"
               " BEGIN UPDATE rewrites SET n = n + 1; END;",
               nullptr, nullptr, nullptr);
  compaction_result r;
  try {
    r.commit_ms = compaction_commit_ms(*store, bodies, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compaction: %s\n", e.what());
    std::exit(1);
  }
  r.archived = compaction_archived_rows;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT n FROM temp.rewrites", -1, &st, nullptr);
  if (sqlite3_step(st) == SQLITE_ROW)
    r.rows_rewritten = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return r;
}

// The flags of `mneme-bench storage`; parts as in the header comment.
struct storage_options {
  bool json = false;
  size_t sessions = 1000;
  int per_session = 30;
  int mp_messages = 500;
  std::string dir;
  std::string only; // "": every part
  double paced_rate = 15000; // --only paced
  bool rate_given = false;
  std::string backend = "sqlite";
  std::string pg_url;
  int64_t recall_messages = 200000; // --backend postgres: the recall part's corpus
  bool recall_messages_given = false;
};

int run_storage_bench(const storage_options& o) {
  const bool json = o.json;
  const size_t sessions = o.sessions;
  const int per_session = o.per_session;
  const int mp_messages = o.mp_messages;
  std::string dir = o.dir;
  const std::string& only = o.only;
  const double paced_rate = o.paced_rate;
  if (o.backend == "postgres") {
    if (!only.empty() || o.rate_given || !o.dir.empty()) {
      std::fprintf(stderr, "--backend postgres runs every part of both backends: --only, --rate"
                           " and --dir apply to the SQLite bench alone\n");
      return exit_usage;
    }
    return run_storage_backends_bench({json, sessions, per_session, o.pg_url,
                                       o.recall_messages});
  }
  if (!o.pg_url.empty() || o.recall_messages_given) {
    std::fprintf(stderr, "--pg-url and --recall-messages apply to --backend postgres\n");
    return exit_usage;
  }
  if (o.rate_given && only != "paced") {
    std::fprintf(stderr, "--rate applies to --only paced (the full run paces at half its ingest rate)\n");
    return exit_usage;
  }
  // One session's pace between its appends, in microseconds, at least 1 and finite.
  auto pace_us = 1e6 * static_cast<double>(sessions) / paced_rate;
  if (!(std::isfinite(paced_rate) && paced_rate > 0 && pace_us >= 1 && pace_us < 1e12)) {
    std::fprintf(stderr, "--rate takes a positive number of messages per second that gives each"
                         " session 1 us to 1e12 us between its appends\n");
    return exit_usage;
  }
  bool own_dir = dir.empty();
  if (own_dir) {
    char tmpl[] = "/tmp/mneme-bench-storage-XXXXXX";
    if (mkdtemp(tmpl) == nullptr)
      return 1;
    dir = tmpl;
  }
  auto bodies = make_bodies(4000, 42);
  if (only == "ingest") {
    auto ingest = run_ingest(sqlite_in(dir, "ingest.db"), sessions, per_session, bodies, 0);
    std::printf("ingest %.0f msgs/s, mean batch %.1f, errors %lld, index catch-up %.0f ms\n",
                ingest.msgs_per_s, ingest.mean_batch, static_cast<long long>(ingest.errors),
                ingest.index_catchup_ms);
  } else if (only == "raw") {
    std::printf("raw %.0f msgs/s at batch 370\n", run_raw(dir, sessions, per_session, bodies, 370));
  } else if (only == "paced") {
    auto paced = run_ingest(sqlite_in(dir, "paced.db"), sessions, per_session / 2 > 0 ? per_session / 2 : 1, bodies,
                            paced_rate);
    std::printf("paced %.0f msgs/s: ack p50 %.2f ms, p99 %.2f ms, errors %lld, index backlog %lld,"
                " checkpoints %lld by the checkpointer, %lld by the writer, mean batch %.1f\n",
                paced.msgs_per_s, paced.p50_ms, paced.p99_ms, static_cast<long long>(paced.errors),
                static_cast<long long>(paced.index_backlog),
                static_cast<long long>(paced.wal_checkpoints_background),
                static_cast<long long>(paced.wal_checkpoints_inline), paced.mean_batch);
  } else if (only == "mp") {
    auto base = run_multiprocess_baseline(dir, mp_messages, bodies);
    auto ours = run_multiprocess_mneme(dir, mp_messages, bodies);
    std::printf("4 processes %.0f msgs/s, mneme 4 producers %.0f msgs/s (mean batch %.1f), speedup %.2f\n",
                base.msgs_per_s, ours.msgs_per_s, ours.mean_batch, ours.msgs_per_s / base.msgs_per_s);
  }
  if (!only.empty()) {
    if (own_dir)
      std::filesystem::remove_all(dir);
    return exit_ok;
  }
  // Each side runs `repeats` times and the medians are compared (a shared, noisy
  // machine); ingest and raw alternate, so neither always runs on a disk still
  // writing back the other's pages. Fork the baseline processes before any actor
  // system starts threads.
  constexpr int repeats = 3;
  std::vector<double> mp_base_rates;
  auto mp_base = repeat_multiprocess(repeats, mp_base_rates, [&] {
    return run_multiprocess_baseline(dir, mp_messages, bodies);
  });
  std::vector<double> ingest_rates;
  std::vector<double> raw_rates;
  auto ingest = run_ingest(sqlite_in(dir, "ingest.db"), sessions, per_session, bodies, 0); // its batches are reported
  ingest_rates.push_back(ingest.msgs_per_s);
  auto ingest_again = [&] {
    auto again = run_ingest(sqlite_in(dir, "ingest.db"), sessions, per_session, bodies, 0);
    ingest_rates.push_back(again.msgs_per_s);
    ingest.errors += again.errors;
  };
  auto raw_batch = std::max<int64_t>(1, static_cast<int64_t>(ingest.mean_batch + 0.5));
  for (int r = 0; r < repeats; ++r) { // orders: ingest raw, raw ingest, ingest raw, ...
    if (r > 0 && r % 2 == 0)
      ingest_again();
    raw_rates.push_back(run_raw(dir, sessions, per_session, bodies, raw_batch));
    if (r % 2 == 1)
      ingest_again();
  }
  auto ingest_rate = median_or_zero(ingest_rates);
  auto raw = median_or_zero(raw_rates);
  auto paced = run_ingest(sqlite_in(dir, "paced.db"), sessions, per_session / 2 > 0 ? per_session / 2 : 1, bodies,
                          ingest_rate / 2);
  std::vector<double> mp_mneme_rates;
  auto mp_mneme = repeat_multiprocess(repeats, mp_mneme_rates, [&] {
    return run_multiprocess_mneme(dir, mp_messages, bodies);
  });
  auto compaction = run_compaction(dir, bodies, 5);
  if (own_dir)
    std::filesystem::remove_all(dir);

  nlohmann::json batches = nlohmann::json::object();
  for (auto& [label, n] : ingest.batches)
    batches[label] = n;
  nlohmann::json out = {
    {"sessions", sessions},
    {"messages", ingest.messages},
    {"ingest_msgs_per_s", ingest_rate},
    {"raw_msgs_per_s", raw},
    {"ingest_runs_msgs_per_s", ingest_rates},
    {"raw_runs_msgs_per_s", raw_rates},
    {"raw_batch_size", raw_batch},
    {"ingest_ratio", ingest_rate / raw},
    {"ingest_errors", ingest.errors},
    {"mean_batch", ingest.mean_batch},
    {"batch_size_distribution", batches},
    {"ack_rate_msgs_per_s", paced.msgs_per_s},
    {"ack_p50_ms", paced.p50_ms},
    {"ack_p99_ms", paced.p99_ms},
    {"index_backlog_after_ingest", ingest.index_backlog},
    {"index_catchup_ms", ingest.index_catchup_ms},
    {"wal_checkpoints_checkpointer", ingest.wal_checkpoints_background},
    {"wal_checkpoints_writer", ingest.wal_checkpoints_inline},
    {"index_backlog_after_paced", paced.index_backlog},
    {"baseline_msgs_per_s", mp_base.msgs_per_s},
    {"baseline_lock_errors", mp_base.lock_errors},
    {"baseline_runs_msgs_per_s", mp_base_rates},
    {"mneme_4producers_runs_msgs_per_s", mp_mneme_rates},
    {"mneme_4producers_msgs_per_s", mp_mneme.msgs_per_s},
    {"mneme_4producers_mean_batch", mp_mneme.mean_batch},
    {"mneme_lock_errors", mp_mneme.lock_errors},
    {"multiprocess_speedup", mp_mneme.msgs_per_s / mp_base.msgs_per_s},
    {"compaction_rows_archived", compaction.archived},
    {"compaction_commit_ms", compaction.commit_ms},
    {"fts_rows_rewritten", compaction.rows_rewritten},
  };
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("%s", fmt::format(
    "storage benchmark ({} sessions x {} messages, synchronous=FULL)\n"
    "  1. ingest through the storage actor   {:>10.0f} msgs/s  (mean batch {:.1f})\n"
    "     raw SQLite, 1 thread, batch {:<4}    {:>10.0f} msgs/s  ratio {:.2f} (target >= 0.80)\n"
    "     ack latency at {:.0f} msgs/s        p50 {:.2f} ms  p99 {:.2f} ms (target <= 10)\n"
    "     index backlog after ingest {} rows, indexed in {:.0f} ms when idle; after paced {} rows\n",
    sessions, per_session, ingest_rate, ingest.mean_batch, raw_batch, raw,
    ingest_rate / raw, paced.msgs_per_s, paced.p50_ms, paced.p99_ms,
    ingest.index_backlog, ingest.index_catchup_ms, paced.index_backlog).c_str());
  std::printf("     batch sizes:");
  for (auto& [label, n] : ingest.batches)
    std::printf(" %s:%lld", label.c_str(), static_cast<long long>(n));
  std::printf("\n%s", fmt::format(
    "  2. 4 processes, 1 txn/message, 1 s busy {:>10.0f} msgs/s  lock errors {}\n"
    "     mneme, 4 producers, one runtime      {:>10.0f} msgs/s  (mean batch {:.1f})  lock errors {}  speedup {:.1f}x (target >= 10)\n"
    "  3. compaction commit of 5,000 messages  {:>10.2f} ms      rows archived {}  message rows rewritten {}\n",
    mp_base.msgs_per_s, mp_base.lock_errors, mp_mneme.msgs_per_s, mp_mneme.mean_batch,
    mp_mneme.lock_errors,
    mp_mneme.msgs_per_s / mp_base.msgs_per_s, compaction.commit_ms, compaction.archived,
    compaction.rows_rewritten).c_str());
  return 0;
}

} // namespace

MNEME_BENCH("storage", "durable appends vs raw SQLite, 4 writer processes, compaction commit;"
                       " --backend postgres: PostgreSQL beside SQLite",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<storage_options>();
              cmd.add_option("--sessions", o->sessions, "sessions appending at once")
                ->check(integer_range<size_t>(1, 1000000));
              cmd.add_option("--per-session", o->per_session, "messages each session appends")
                ->check(integer_range(1));
              cmd.add_option("--mp-messages", o->mp_messages,
                             "messages per process in the multi-process part")
                ->check(integer_range(1));
              cmd.add_option("--dir", o->dir, "directory of the files (default: a fresh one "
                                              "under /tmp, removed at the end)");
              cmd.add_option("--only", o->only, "run one part alone: ingest, raw (batch 370), "
                                                "paced or mp (one run of each side)")
                ->check(CLI::IsMember({"ingest", "raw", "paced", "mp"}));
              auto* rate = cmd.add_option("--rate", o->paced_rate,
                                          "with --only paced: the paced rate in msgs/s")
                             ->check(CLI::TypeValidator<double>{""})
                             ->check(CLI::Validator{[](std::string& v) {
                                                      return std::strtod(v.c_str(), nullptr) > 0
                                                               ? std::string{}
                                                               : "must be above 0, got " + v;
                                                    },
                                                    "> 0"});
              cmd.add_option("--backend", o->backend,
                             "sqlite (default: the SQLite parts below) or postgres (PostgreSQL "
                             "beside SQLite: ingest, acknowledgement latency, compaction commit, "
                             "recall)")
                ->check(CLI::IsMember({"sqlite", "postgres"}));
              cmd.add_option("--pg-url", o->pg_url,
                             "with --backend postgres: a server to use (the bench creates and "
                             "drops schemas there); default: a throw-away cluster in /tmp");
              auto* recall = cmd.add_option("--recall-messages", o->recall_messages,
                                            "with --backend postgres: messages of the recall "
                                            "part's generated corpus, written into each backend")
                               ->check(integer_range(int64_t{1000}));
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o, rate, recall] {
                o->rate_given = rate->count() > 0;
                o->recall_messages_given = recall->count() > 0;
                return run_storage_bench(*o);
              };
            });

} // namespace mneme::bench
