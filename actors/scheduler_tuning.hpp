// The CAF scheduler settings of mneme's actor system: how long an idle worker thread polls
// its queue before it sleeps on its condition variable. Applied by the daemon's host
// (apps/common/host/runtime_host) and by mneme-bench's in-process daemon, so the benchmark
// measures what the daemon runs. Only those two call it.
//
// Why: CAF 0.17's work-stealing worker polls an empty queue 100 times back to back
// (stealing every 10th poll), then moderate_poll_attempts times with a 50 us sleep
// between polls, and only then waits on a condition variable, woken by the next job
// enqueued to it (and every 10 ms to steal). Each of those sleeps is a wake-up of the
// thread: with CAF's 500 moderate attempts an idle worker burns ~25 ms of wake-ups after
// every burst of work, and an agent round or a door request is a few such bursts per
// worker. None (0): after its back-to-back polls a worker waits on its condition
// variable. Measured side by side (docs/benchmarks.md "agent" and "proxy"): processor
// per round at low load 1,925 µs with 50 attempts, 1,175 with none; per door request at
// 1,000 clients 1,859 against 1,612; the added p50 and p99 did not grow. The price: a
// job queued behind a running one is taken by a sleeping worker only at that worker's
// next 10 ms steal, not within the 2.5 ms of 50 moderate polls.
#pragma once

#include <cstddef>

#include "caf/actor_system_config.hpp"

namespace mneme {

inline constexpr size_t moderate_poll_attempts = 0; // CAF's default: 500

// Sets the work-stealing poll settings on cfg; call before the actor system is created.
inline void tune_scheduler(caf::actor_system_config& cfg) {
  cfg.set("work-stealing.moderate-poll-attempts", moderate_poll_attempts);
}

} // namespace mneme
