// The ceiling of `mneme-bench storage --backend postgres`'s ingest ratio: the same
// messages written by each raw library, with no mneme code in the way, into a bare
// table of the same columns (no search columns, no index but the primary key, no
// state table), `batch` rows per durable transaction (SQLite: WAL, synchronous=FULL,
// the writer's page cache; PostgreSQL: synchronous_commit=on). mneme's own ingest does
// strictly more work per row on each backend, so pg_bare / sqlite_bare bounds the
// ratio mneme's PostgreSQL store can reach on this machine. pg_bare_paced_acks is the
// same writer paced: the floor of the store's acknowledgement latency at a rate. Only
// mneme-bench links this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mneme::bench {

// Messages per second; `rows` rows cycling through `bodies`, one prepared INSERT.
// Throws std::runtime_error naming a failed step.
double sqlite_bare_ingest(const std::string& path, int64_t rows,
                          const std::vector<std::string>& bodies, int64_t batch);
// `url`: an empty schema of its own (pg_bench_schemas::fresh_url()).
double pg_bare_ingest(const std::string& url, int64_t rows,
                      const std::vector<std::string>& bodies, int64_t batch);

// The same table written at `rate` rows a second by an ideal group committer: row k
// arrives at k / rate, each transaction takes every row that has arrived and commits
// (synchronous_commit=on), and a row's acknowledgement latency is its commit's end
// minus its arrival. Returns the latencies (ms), in arrival order.
std::vector<double> pg_bare_paced_acks(const std::string& url, int64_t rows,
                                       const std::vector<std::string>& bodies, double rate);

} // namespace mneme::bench
