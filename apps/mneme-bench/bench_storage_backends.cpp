// mneme-bench storage --backend postgres: the PostgreSQL store beside the SQLite store,
// the same work through the same storage actor in one run (issue 26's benchmark).
//   1. ingest: N session actors x M appends, each durable when acknowledged (SQLite
//      synchronous=FULL; PostgreSQL synchronous_commit=on, fsync on), 3 runs of each
//      backend alternating; the medians and their ratio (target: PostgreSQL >= 0.5x).
//      Beside them, the ceiling of that ratio: each raw library writing the same
//      messages into a bare table in the same group size (bare_ingest.hpp), 3 runs each.
//   2. acknowledgement latency, both backends paced at half PostgreSQL's median peak;
//      on PostgreSQL 3 runs, alternating with the bare table written by an ideal
//      group committer at the same rate (the floor of the store's p99 on the server).
//   3. compaction commit of a 5,000-message session (head 4, tail 20), median of 5,
//      called on each store directly (no actor).
//   4. recall: the generated corpus of `mneme-bench recall` (recall_measure.hpp;
//      --recall-messages, default 200,000) written into each backend (SQLite then
//      indexed as its idle indexer would), then every probe and the common-word
//      queries searched through the backend's recall_source (open_recall_source, the
//      recall pool's own): search p50 / p99 over all of them, recall@3 over the probes
//      as the quality suite computes it (target: PostgreSQL p99 <= 50 ms, recall@3
//      equal to SQLite's). One corpus per backend per run.
// PostgreSQL: --pg-url names a server whose database the
// bench may create schemas in (each run works in a new schema, dropped at the end);
// without it the bench starts a throw-away cluster of Debian's postgresql 15 in /tmp
// (testing/pg_test_cluster.hpp, the tests' too) and removes it at exit.
// Only mneme-bench links this file; the entry point is declared in
// bench_storage_backends.hpp and reached from `mneme-bench storage`.
#include "apps/mneme-bench/bench_storage_backends.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "apps/mneme-bench/bare_ingest.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/recall_measure.hpp"
#include "apps/mneme-bench/pg_bench_schemas.hpp"
#include "apps/mneme-bench/storage_ingest.hpp"
#include "policies/percentile.hpp"
#include "store/pg/pg_store.hpp"
#include "store/recall_sources.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "testing/pg_test_cluster.hpp"

namespace mneme::bench {
namespace {

// Part 4 on one backend: the corpus written into the store `params` names (empty), then
// searched through a recall source of its own; throws std::runtime_error on an error.
struct recall_run {
  corpus_report corpus;
  recall_figures figures;
  double index_seconds = 0;
};

recall_run measure_backend_recall(const store_params& params, int64_t messages) {
  auto fail = [](const caf::error& e) { return std::runtime_error{"recall: " + render_error(e)}; };
  auto built = build_recall_corpus(params, bench_corpus_spec(messages));
  if (!built)
    throw fail(built.error());
  recall_run out;
  out.corpus = std::move(built->report);
  out.index_seconds = built->index_seconds;
  built->store.reset(); // searched as the recall pool does: its own connection only
  auto source = open_recall_source(params);
  if (!source)
    throw fail(source.error());
  auto figures = measure_recall(**source, out.corpus);
  if (!figures)
    throw fail(figures.error());
  out.figures = std::move(*figures);
  return out;
}

int run(const storage_backends_options& o) {
  auto bodies = make_bodies(4000, 42);
  std::string url = o.pg_url;
  if (url.empty()) {
    std::fprintf(stderr, "storage: starting a throw-away PostgreSQL cluster\n");
    url = testing::pg_test_cluster::shared().base_url();
  }
  pg_bench_schemas pg{url, "mneme_bench", "storage"};
  char tmpl[] = "/tmp/mneme-bench-backends-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    return 1;
  std::string dir = tmpl;
  int sqlite_runs = 0;
  auto sqlite_fresh = [&] {
    store_params p;
    p.path = fresh_file{dir, "ingest" + std::to_string(sqlite_runs++) + ".db"}.path;
    return p;
  };

  constexpr int repeats = 3;
  std::vector<double> sqlite_rates;
  std::vector<double> pg_rates;
  std::vector<double> pg_batches;
  int64_t errors = 0;
  for (int r = 0; r < repeats; ++r) { // orders alternate: sqlite pg, pg sqlite, ...
    auto one = [&](bool postgres) {
      auto res = run_ingest(postgres ? pg.fresh() : sqlite_fresh(), o.sessions, o.per_session,
                            bodies, 0);
      (postgres ? pg_rates : sqlite_rates).push_back(res.msgs_per_s);
      if (postgres)
        pg_batches.push_back(res.mean_batch);
      errors += res.errors;
    };
    one(r % 2 == 1);
    one(r % 2 == 0);
  }
  auto sqlite_rate = median_or_zero(sqlite_rates);
  auto pg_rate = median_or_zero(pg_rates);

  // 1b. The raw libraries on a bare table, in the group size mneme's PostgreSQL store
  // committed: the ceiling of the ratio above (bare_ingest.hpp).
  const auto bare_batch = std::max<int64_t>(1, std::llround(median_or_zero(pg_batches)));
  const auto bare_rows = static_cast<int64_t>(o.sessions) * o.per_session;
  std::vector<double> sqlite_bare_rates;
  std::vector<double> pg_bare_rates;
  for (int r = 0; r < repeats; ++r) {
    auto one = [&](bool postgres) {
      if (postgres)
        pg_bare_rates.push_back(pg_bare_ingest(pg.fresh_url(), bare_rows, bodies, bare_batch));
      else
        sqlite_bare_rates.push_back(sqlite_bare_ingest(
          fresh_file{dir, "bare" + std::to_string(r) + ".db"}.path, bare_rows, bodies,
          bare_batch));
    };
    one(r % 2 == 1);
    one(r % 2 == 0);
  }
  const auto sqlite_bare = median_or_zero(sqlite_bare_rates);
  const auto pg_bare = median_or_zero(pg_bare_rates);
  auto paced_rate = pg_rate / 2;
  int paced_per_session = o.per_session / 2 > 0 ? o.per_session / 2 : 1;
  // 2. Acknowledgement latency at half the peak: the store, and beside it the bare
  // table written by an ideal group committer at the same rate (its floor on this
  // server: the commit's own WAL flush), alternating, `repeats` runs each.
  std::vector<double> pg_ack_p50s;
  std::vector<double> pg_ack_p99s;
  std::vector<double> bare_ack_p50s;
  std::vector<double> bare_ack_p99s;
  for (int r = 0; r < repeats; ++r) {
    auto one = [&](bool bare) {
      if (bare) {
        auto acks = pg_bare_paced_acks(pg.fresh_url(),
                                       static_cast<int64_t>(o.sessions) * paced_per_session,
                                       bodies, paced_rate);
        bare_ack_p50s.push_back(percentile_or_zero(acks, 0.50));
        bare_ack_p99s.push_back(percentile_or_zero(acks, 0.99));
        return;
      }
      auto paced = run_ingest(pg.fresh(), o.sessions, paced_per_session, bodies, paced_rate);
      pg_ack_p50s.push_back(paced.p50_ms);
      pg_ack_p99s.push_back(paced.p99_ms);
      errors += paced.errors;
    };
    one(r % 2 == 1);
    one(r % 2 == 0);
  }
  const auto pg_ack_p99 = median_or_zero(pg_ack_p99s);
  const auto bare_ack_p99 = median_or_zero(bare_ack_p99s);
  auto sqlite_paced = run_ingest(sqlite_fresh(), o.sessions, paced_per_session, bodies,
                                 paced_rate);
  errors += sqlite_paced.errors;

  double pg_compaction = 0;
  double sqlite_compaction = 0;
  {
    auto store = pg_store::open(pg.fresh());
    if (!store) {
      std::fprintf(stderr, "storage: %s\n", render_error(store.error()).c_str());
      return 1;
    }
    pg_compaction = compaction_commit_ms(**store, bodies, 5);
  }
  {
    auto store = sqlite_store::open(sqlite_fresh());
    if (!store) {
      std::fprintf(stderr, "storage: %s\n", render_error(store.error()).c_str());
      return 1;
    }
    sqlite_compaction = compaction_commit_ms(**store, bodies, 5);
  }
  store_params sqlite_recall_params = sqlite_fresh();
  sqlite_recall_params.synchronous_full = false; // the corpus measures searches, not writes
  auto sqlite_recall = measure_backend_recall(sqlite_recall_params, o.recall_messages);
  auto pg_recall = measure_backend_recall(pg.fresh(), o.recall_messages);
  std::filesystem::remove_all(dir);
  auto& lr = sqlite_recall.figures;
  auto& pr = pg_recall.figures;

  nlohmann::json out = {
    {"sessions", o.sessions},
    {"per_session", o.per_session},
    {"sqlite_ingest_msgs_per_s", sqlite_rate},
    {"pg_ingest_msgs_per_s", pg_rate},
    {"sqlite_ingest_runs_msgs_per_s", sqlite_rates},
    {"pg_ingest_runs_msgs_per_s", pg_rates},
    {"pg_ingest_ratio", pg_rate / sqlite_rate},
    {"bare_batch_rows", bare_batch},
    {"sqlite_bare_msgs_per_s", sqlite_bare},
    {"pg_bare_msgs_per_s", pg_bare},
    {"sqlite_bare_runs_msgs_per_s", sqlite_bare_rates},
    {"pg_bare_runs_msgs_per_s", pg_bare_rates},
    {"pg_bare_ratio", pg_bare / sqlite_bare},
    {"pg_ingest_vs_bare", pg_rate / pg_bare}, // the store against PostgreSQL's own ceiling
    {"ingest_errors", errors},
    {"ack_rate_msgs_per_s", paced_rate},
    {"pg_ack_p50_ms", median_or_zero(pg_ack_p50s)},
    {"pg_ack_p99_ms", pg_ack_p99},
    {"pg_ack_runs_p99_ms", pg_ack_p99s},
    {"pg_bare_ack_p50_ms", median_or_zero(bare_ack_p50s)},
    {"pg_bare_ack_p99_ms", bare_ack_p99},
    {"pg_bare_ack_runs_p99_ms", bare_ack_p99s},
    {"pg_ack_p99_vs_bare", bare_ack_p99 > 0 ? pg_ack_p99 / bare_ack_p99 : 0},
    {"sqlite_ack_p50_ms", sqlite_paced.p50_ms},
    {"sqlite_ack_p99_ms", sqlite_paced.p99_ms},
    {"pg_compaction_commit_ms", pg_compaction},
    {"sqlite_compaction_commit_ms", sqlite_compaction},
    {"recall_messages", pg_recall.corpus.messages},
    {"recall_sessions", pg_recall.corpus.sessions},
    {"recall_probes", pg_recall.corpus.probes.size()},
    {"recall_searches", pr.latencies_ms.size()},
    {"sqlite_search_p50_ms", percentile_or_zero(lr.latencies_ms, 0.50)},
    {"sqlite_search_p99_ms", percentile_or_zero(lr.latencies_ms, 0.99)},
    {"sqlite_recall_at_3", lr.outcome.recall_at_3()},
    {"pg_search_p50_ms", percentile_or_zero(pr.latencies_ms, 0.50)},
    {"pg_search_p99_ms", percentile_or_zero(pr.latencies_ms, 0.99)},
    {"pg_recall_at_3", pr.outcome.recall_at_3()},
    {"sqlite_probe_p99_ms", percentile_or_zero(lr.outcome.latencies_ms, 0.99)},
    {"pg_probe_p99_ms", percentile_or_zero(pr.outcome.latencies_ms, 0.99)},
    {"sqlite_common_query_p99_ms", percentile_or_zero(lr.common_ms, 0.99)},
    {"pg_common_query_p99_ms", percentile_or_zero(pr.common_ms, 0.99)},
    {"sqlite_recall_leaks", lr.outcome.leaks},
    {"pg_recall_leaks", pr.outcome.leaks},
    {"sqlite_corpus_ingest_s", sqlite_recall.corpus.ingest_seconds},
    {"sqlite_corpus_index_s", sqlite_recall.index_seconds},
    {"pg_corpus_ingest_s", pg_recall.corpus.ingest_seconds},
    {"pg_corpus_index_s", pg_recall.index_seconds},
    {"sqlite_probe_p99_ms_by_form", probe_p99_by_form(sqlite_recall.corpus, lr.outcome)},
    {"pg_probe_p99_ms_by_form", probe_p99_by_form(pg_recall.corpus, pr.outcome)},
  };
  // A leak (another user's or a rolled-back fact found) fails the run like an error.
  const bool ok = errors == 0 && lr.outcome.leaks == 0 && pr.outcome.leaks == 0;
  if (o.json) {
    std::printf("%s\n", out.dump().c_str());
    return ok ? 0 : 1;
  }
  std::printf("%s", fmt::format(
    "storage backends ({} sessions x {} messages, durable acknowledgements)\n"
    "  1. ingest through the storage actor   SQLite {:>8.0f} msgs/s   PostgreSQL {:>8.0f} msgs/s"
    "   ratio {:.2f} (target >= 0.5)\n"
    "     the raw libraries, bare table, {} rows a commit  SQLite {:>8.0f}   PostgreSQL {:>8.0f}"
    "   ratio {:.2f} (the ceiling of the ratio above); PostgreSQL's store / bare {:.2f}\n"
    "  2. ack latency at {:.0f} msgs/s        SQLite p50 {:.2f} p99 {:.2f} ms"
    "   PostgreSQL p50 {:.2f} p99 {:.2f} ms (bare table, ideal group commit: p50 {:.2f} p99 {:.2f})\n"
    "  3. compaction commit of 5,000 messages SQLite {:.2f} ms   PostgreSQL {:.2f} ms\n"
    "  4. recall, {} messages, {} searches  SQLite p50 {:.2f} p99 {:.2f} ms recall@3 {:.4f}"
    "   PostgreSQL p50 {:.2f} p99 {:.2f} ms recall@3 {:.4f} (target p99 <= 50 ms, recall@3 equal)\n"
    "  errors {}\n",
    o.sessions, o.per_session, sqlite_rate, pg_rate, pg_rate / sqlite_rate, bare_batch,
    sqlite_bare, pg_bare, pg_bare / sqlite_bare, pg_rate / pg_bare, paced_rate,
    sqlite_paced.p50_ms, sqlite_paced.p99_ms, median_or_zero(pg_ack_p50s), pg_ack_p99,
    median_or_zero(bare_ack_p50s), bare_ack_p99,
    sqlite_compaction, pg_compaction, pg_recall.corpus.messages, pr.latencies_ms.size(),
    percentile_or_zero(lr.latencies_ms, 0.50), percentile_or_zero(lr.latencies_ms, 0.99),
    lr.outcome.recall_at_3(), percentile_or_zero(pr.latencies_ms, 0.50),
    percentile_or_zero(pr.latencies_ms, 0.99), pr.outcome.recall_at_3(), errors).c_str());
  if (lr.outcome.leaks + pr.outcome.leaks > 0)
    std::printf("  recall leaks: SQLite %lld, PostgreSQL %lld (target 0)\n",
                static_cast<long long>(lr.outcome.leaks), static_cast<long long>(pr.outcome.leaks));
  return ok ? 0 : 1;
}

} // namespace

int run_storage_backends_bench(const storage_backends_options& o) {
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "storage --backend postgres: %s\n", e.what());
    return 1;
  }
}

} // namespace mneme::bench
