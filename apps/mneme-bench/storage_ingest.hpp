// The ingest part of `mneme-bench storage`, shared by its SQLite run
// (bench_storage.cpp) and its side-by-side run of both backends
// (bench_storage_backends.cpp): N session actors appending M messages each through
// one storage actor, unpaced (peak rate) or paced (acknowledgement latency), on a
// store of either backend. Only mneme-bench links this unit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "caf/scoped_actor.hpp"

#include "actors/storage/storage_actor.hpp"
#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme::bench {

using steady = std::chrono::steady_clock;

double ms_since(steady::time_point t0);

// `n` message bodies: 98% 50-2,000 characters, 2% 20-200 KB tool outputs; 35% Chinese.
std::vector<std::string> make_bodies(size_t n, unsigned seed);

// Row `seq` of session `sid` (user and assistant alternate).
message make_message(const std::string& sid, const std::string& body, int64_t seq);

// A SQLite file path in `dir` with no file (nor log) left from an earlier run.
struct fresh_file {
  std::string path;
  fresh_file(const std::string& dir, const std::string& name);
};

// Creates `n` sessions (user "bench", keys k0, k1, ...) through the actor; returns their ids.
std::vector<std::string> create_sessions(caf::scoped_actor& self, const storage_actor& st,
                                         size_t n);

struct ingest_result {
  double msgs_per_s = 0;
  int64_t messages = 0;
  int64_t errors = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double mean_batch = 0;
  std::vector<std::pair<std::string, int64_t>> batches;
  int64_t index_backlog = 0;    // rows not yet indexed when the last append was acked
  double index_catchup_ms = 0;  // then, until the idle ticks indexed them all
  int64_t wal_checkpoints_background = 0; // during the whole run, catch-up included
  int64_t wal_checkpoints_inline = 0;
};

// Runs `sessions` x `per_session` appends through a fresh storage actor on the store
// `params` names (an empty one). pace_rate > 0 paces the total offered load at that
// many messages per second; 0 sends each append on the previous one's acknowledgement.
ingest_result run_ingest(const store_params& params, size_t sessions, int per_session,
                         const std::vector<std::string>& bodies, double pace_rate);

} // namespace mneme::bench
