// The CAF scheduler settings of mneme's actor system: how long an idle worker thread polls
// its queue before it sleeps on its condition variable. Applied by the daemon's host
// (apps/common/host/runtime_host) and by mneme-bench's in-process daemon, so the benchmark
// measures what the daemon runs. Only those two call it.
//
// Why: CAF 0.17's work-stealing worker polls an empty queue 100 times back to back, then
// moderate_poll_attempts times with a 50 us sleep between polls, and only then waits on a
// condition variable (woken by the next enqueue). With CAF's 500 moderate attempts an idle
// worker burns ~25 ms of wake-ups after every burst of work; an agent round is a few such
// bursts per worker, so at low load most of the process's processor time per round was
// that polling (docs/benchmarks.md "agent": cpu_us_per_round). 50 attempts keep ~2.5 ms of
// fast pick-up after a burst; later work wakes the worker through the condition variable.
#pragma once

#include <cstddef>

#include "caf/actor_system_config.hpp"

namespace mneme {

inline constexpr size_t moderate_poll_attempts = 50; // CAF's default: 500

// Sets the work-stealing poll settings on cfg; call before the actor system is created.
inline void tune_scheduler(caf::actor_system_config& cfg) {
  cfg.set("work-stealing.moderate-poll-attempts", moderate_poll_attempts);
}

} // namespace mneme
