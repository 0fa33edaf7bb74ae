// The turns of `mneme-bench runtime` while the runtime is up (bench_runtime.cpp runs
// the benchmark's steps around it): the options, the run's shape, what the run counts,
// and turn_driver, which sends the waves and the lone probes and sweeps the idle
// sessions out. Only mneme-bench's runtime benchmark includes it.
// Thread: the bench's own (main) thread; a turn_driver lives between the runtime's start
// and its stop and blocks on every reply it awaits (a scoped actor).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/runtime.hpp"

namespace mneme::bench {

// The benchmark's flags (bench_runtime.cpp declares them with their ranges).
struct runtime_options {
  int sessions = 10000;
  int messages = 200;
  int active = 0; // 0 = all sessions at once
  int64_t threshold_tokens = 4000;
  int64_t user_chars = 400;
  int retries = 2;
  bool evict = false;
  int probes = 200;
  bool json = false;
};

// The turns of a run, from the options.
struct runtime_shape {
  int wave_turns = 0; // turns every session gets in the waves
  int probes = 0;     // probed sessions (--evict only)
  // Turn numbers per session: a probed session gets two more turns (evicted, then
  // resident), numbered after the waves' turns; every session has room for them so the
  // store check stays one index.
  int turns = 0;
  size_t population = 0;
};

// What the run counted. Allocated (and touched) before the memory baseline is read, so
// the baseline includes it.
struct runtime_tally {
  std::vector<uint8_t> turns_state;    // turn_bit per (session, turn)
  std::vector<int64_t> turn_us, rehydrate_us, resident_us;
  std::vector<uint64_t> session_hash;  // of the session id last answering, per session
  std::vector<int64_t> overhead_us;    // of every committed compaction
  int64_t acknowledged_turns = 0, failed = 0, retried = 0, hosted_sessions = 0;
  int64_t max_resident = 0, incomplete_sweeps = 0, session_spawns = 0;
  std::map<std::string, int64_t> error_counts;
  std::map<std::string, std::string> error_examples;
  double elapsed_s = 0, sweep_s = 0;
};

// The turns while the runtime is up: the waves, the lone probes and the eviction sweeps,
// recorded into the tally. Lives on the bench's thread, between the runtime's start and
// its stop.
class turn_driver {
 public:
  turn_driver(caf::actor_system& sys, runtime& rt, const runtime_options& o,
              const runtime_shape& shape, std::atomic<int64_t>& clock_offset, runtime_tally& t);
  turn_driver(const turn_driver&) = delete;
  turn_driver& operator=(const turn_driver&) = delete;

  // Each turn sent to the sessions in groups of --active; a group's replies are awaited
  // (and its failed turns sent again) before the next group is sent.
  void send_waves();
  // Each probed session once while evicted, then once while resident.
  void send_probes();
  // Every idle session evicted (the gateway's clock moved past idle_evict_seconds);
  // waits until the supervisor hosts none.
  void evict_all();
  // The supervisor's counters; nullopt when it did not answer.
  std::optional<supervisor_stats> supervisor();

 private:
  using pending_turn = decltype(std::declval<caf::scoped_actor&>()->request(
    std::declval<runtime&>().gateway(), std::chrono::milliseconds{}, gw_message_atom_v,
    std::string{}, std::string{}, std::string{}));

  void send_group(int first, int last, int turn);
  void send_attempt(int turn);
  void send_probe(int session, int turn, std::vector<int64_t>& latencies_us);
  pending_turn request_turn(int session, int turn);
  void acknowledge(int session, int turn, const turn_reply& r);
  void count_error(const caf::error& e);

  caf::actor_system& sys_;
  runtime& rt_;
  caf::scoped_actor self_;
  const runtime_options& o_;
  const runtime_shape& shape_;
  std::atomic<int64_t>& clock_offset_;
  runtime_tally& tally_;
  const std::string filler_;
  const std::chrono::milliseconds wait_;
  std::vector<pending_turn> pending_;
  std::vector<int> todo_, again_;   // sessions of the group still to send, failed again
};

} // namespace mneme::bench
