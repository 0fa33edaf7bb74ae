// mneme-bench runtime: many concurrent sessions in one process through the whole
// runtime (gateway -> session -> storage / chat pool / summarizer pool) against the
// in-process fake LLM server. Every session has one turn in flight at a time; a turn
// adds two messages (the user's and the answer). The threshold is capped so that
// sessions compact during the run (a compaction needs more rows than head + tail, i.e.
// more than 12 turns with the default protect_first_n 3 and protect_last_n 20).
// Waves: each turn is sent to the sessions in groups of --active (default: all of them);
// a group's replies are awaited before the next group is sent. With --evict the gateway
// evicts every idle session after each group (its clock advanced past
// idle_evict_seconds), so the next message rehydrates it from the store: resident
// sessions then stay bounded by --active, not by --sessions, and the memory left after
// the last sweep is what the evicted sessions cost.
// Turns: a turn answered with a turn_reply is acknowledged. A turn answered with an
// error (a runtime deadline, an overloaded queue, the bench's own wait running out) is
// not: it is counted by error kind and sent again after its group, up to --retries
// times; a turn never acknowledged is a failed turn, never a lost message.
// Lost messages: after the runtime has stopped, a read-only connection streams every
// stored user row once (no listing, no actor, no timeout) and marks the (session, turn)
// it carries; an acknowledged turn whose user row is not stored is lost. When that check
// cannot run, the JSON says so (lost_check) and lost_messages is null.
// Memory: peak RSS (VmHWM) over the whole run; per session of the population, per
// distinct session the gateway hosted, and with --evict the RSS after the final sweep
// with and without malloc_trim(0), and the heap left per evicted session (heap in use
// after the final sweep minus before the run, over the hosted sessions). The bench's
// own bookkeeping is allocated before the baseline is read.
// Latency: turn_ms_* is a turn's time from send to its reply being read, under a group
// of --active concurrent turns. With --evict, --probes P sessions spread evenly over
// the population are then sent one turn at a time: first while evicted (rehydrate_ms_*:
// the store lookup, the respawn and the turn against the fake), then at once again
// while resident (resident_turn_ms_*); the difference is what a rehydration costs
// alone, without the queueing of a group.
// Options:
//   --sessions N          sessions in the population (default 10000, at most 1000000)
//   --messages M          messages per session, user + answer (default 200)
//   --active W            sessions driven (and resident) at once (default N)
//   --threshold-tokens T  threshold cap (default 4000)
//   --user-chars C        size of each user message (default 400)
//   --retries R           times a failed turn is sent again (default 2)
//   --evict               evict idle sessions after every group
//   --probes P            with --evict: lone turns to evicted sessions (default 200)
//   --json                one JSON object on stdout
// The flags are declared, with their ranges, at the registration at the end of this
// file (`mneme-bench runtime --help`). The run's steps: runtime_bench (setup, measure,
// check, report); the turns while the runtime is up: turn_driver; the turns' text and
// the store's read-back: runtime_turns.hpp. Only this program links this file.
#include <malloc.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "apps/mneme-bench/bench_stats.hpp"
#include "apps/mneme-bench/runtime_driver.hpp"
#include "apps/mneme-bench/runtime_turns.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {

namespace {

using clock_type = std::chrono::steady_clock;

int64_t rss_bytes() {
  return proc_status_bytes("/proc/self", "VmRSS:");
}

// The C heap over every malloc arena: bytes handed out (mmapped chunks included) and
// bytes free but kept by malloc; RSS beyond both is mappings (SQLite, code, stacks).
// `sqlite` is the part of in_use that SQLite holds (page caches, statements).
struct heap_figures {
  int64_t in_use = 0;
  int64_t free = 0;
  int64_t sqlite = 0;
};

heap_figures heap_now() {
  auto m = mallinfo2();
  return {static_cast<int64_t>(m.uordblks + m.hblkhd), static_cast<int64_t>(m.fordblks),
          static_cast<int64_t>(sqlite3_memory_used())};
}

double ms_of_us(int64_t us) {
  return static_cast<double>(us) / 1000.0;
}

constexpr int max_sessions = 1000000;

// The process's memory at the points the report names.
struct memory_figures {
  int64_t rss_before = 0;
  heap_figures heap_before;
  int64_t peak_rss = 0;        // VmHWM once the last group was answered (and evicted)
  int64_t rss_after_evict = 0; // with --evict: every session evicted, runtime still up
  int64_t rss_after_trim = 0;  // the same after malloc_trim(0): free heap kept by malloc
  heap_figures heap_after_evict;
};

// One run of the benchmark, in its steps: setup (the fake LLM, a scratch database, the
// runtime's configuration, the bookkeeping and the memory baseline), measure (the
// runtime started, the waves, the probes, the memory figures, the runtime stopped),
// check (the stored rows read back) and report.
class runtime_bench {
 public:
  explicit runtime_bench(runtime_options o) : o_(std::move(o)) {}
  runtime_bench(const runtime_bench&) = delete;
  runtime_bench& operator=(const runtime_bench&) = delete;

  // The exit code: 0 every turn acknowledged and none lost, 1 otherwise or when the
  // bench could not run, exit_usage for contradicting options.
  int run();

 private:
  bool setup();
  void configure_runtime();
  void allocate_tally();
  bool measure();
  void take_memory_figures();
  void check();
  int report() const;
  void report_turns(nlohmann::json& j) const;
  void report_memory(nlohmann::json& j) const;
  void report_store(nlohmann::json& j) const;

  runtime_options o_;
  fakellm::fake_llm_server server_;
  std::string dir_;                          // the scratch database's directory
  runtime_config rc_;
  std::shared_ptr<std::atomic<int64_t>> clock_offset_ =
    std::make_shared<std::atomic<int64_t>>(0); // added to the runtime's clock (eviction)
  runtime_shape shape_;
  runtime_tally tally_;
  memory_figures memory_;
  store_check check_;
  int64_t lost_ = 0, stored_unacknowledged_ = 0, stored_twice_ = 0;
};

int runtime_bench::run() {
  if (o_.active == 0)
    o_.active = o_.sessions;
  if (o_.active > o_.sessions) {
    std::cerr << "mneme-bench runtime: --active " << o_.active << " exceeds --sessions "
              << o_.sessions << "\n";
    return exit_usage;
  }
  if (!setup() || !measure())
    return 1;
  check();
  return report();
}

bool runtime_bench::setup() {
  if (!server_.start()) {
    std::cerr << "fake LLM server did not start\n";
    return false;
  }
  char tmpl[] = "/tmp/mneme-bench-runtime-XXXXXX";
  if (!mkdtemp(tmpl))
    return false;
  dir_ = tmpl;
  configure_runtime();
  allocate_tally();
  memory_.rss_before = rss_bytes();
  memory_.heap_before = heap_now();
  return true;
}

// The threshold capped (--threshold-tokens), both pools' queues as long as the
// population, the scratch database without fsync, and with --evict a clock the bench
// moves past idle_evict_seconds.
void runtime_bench::configure_runtime() {
  rc_.compression.threshold_tokens = o_.threshold_tokens;
  rc_.model.base_url = server_.base_url();
  chat_pool_params cp;
  cp.max_queue = std::max<int64_t>(cp.max_queue, o_.sessions);
  summarizer_params sp;
  sp.base_url = server_.base_url();
  sp.max_queue = std::max<int64_t>(sp.max_queue, o_.sessions);
  rc_.chat = *llm::make_chat_pool_config(rc_.model, cp);
  rc_.summarizer = *llm::make_summary_pool_config(sp, rc_.model, rc_.compression);
  rc_.database.path = dir_ + "/bench.db";
  rc_.database.synchronous_full = false;
  rc_.gateway.idle_evict_seconds = o_.evict ? 60 : 0;
  rc_.clock = [offset = clock_offset_] { return system_clock_ms() + offset->load(); };
}

void runtime_bench::allocate_tally() {
  shape_.wave_turns = o_.messages / 2;
  shape_.probes = o_.evict ? std::min(o_.probes, o_.sessions) : 0;
  shape_.turns = shape_.wave_turns + (shape_.probes > 0 ? 2 : 0);
  shape_.population = static_cast<size_t>(o_.sessions);
  const auto population = shape_.population;
  const auto probes = static_cast<size_t>(shape_.probes);
  tally_.turns_state.assign(population * static_cast<size_t>(shape_.turns), 0);
  tally_.turn_us.reserve(population * static_cast<size_t>(shape_.wave_turns));
  tally_.rehydrate_us.reserve(probes);
  tally_.resident_us.reserve(probes);
  tally_.session_hash.assign(population, 0);
  tally_.overhead_us.reserve(population * 2);
}

bool runtime_bench::measure() {
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto started = runtime::start(sys, rc_);
  if (!started) {
    std::cerr << render_error(started.error()) << "\n";
    return false;
  }
  auto& rt = **started;
  turn_driver driver{sys, rt, o_, shape_, *clock_offset_, tally_};
  auto begin = clock_type::now();
  driver.send_waves();
  tally_.elapsed_s = std::chrono::duration<double>(clock_type::now() - begin).count();
  driver.send_probes();
  if (shape_.probes > 0)
    driver.evict_all();
  take_memory_figures();
  if (auto st = driver.supervisor())
    tally_.session_spawns = st->spawned;
  rt.stop();
  return true;
}

void runtime_bench::take_memory_figures() {
  memory_.peak_rss = proc_status_bytes("/proc/self", "VmHWM:");
  if (!o_.evict)
    return;
  memory_.rss_after_evict = rss_bytes();
  memory_.heap_after_evict = heap_now();
  malloc_trim(0);
  memory_.rss_after_trim = rss_bytes();
}

// Every acknowledged turn was committed before its reply; the writer is closed now.
void runtime_bench::check() {
  server_.stop();
  check_ = check_stored_turns(rc_.database.path, o_.sessions, shape_.turns, tally_.turns_state);
  std::filesystem::remove_all(dir_);
  for (auto st : tally_.turns_state) {
    lost_ += (st & acknowledged) && !(st & stored) ? 1 : 0;
    stored_unacknowledged_ += !(st & acknowledged) && (st & stored) ? 1 : 0;
    stored_twice_ += (st & stored_twice) ? 1 : 0;
  }
}

int runtime_bench::report() const {
  nlohmann::json j;
  report_turns(j);
  report_memory(j);
  report_store(j);
  if (o_.json) {
    std::cout << j.dump() << "\n";
  } else {
    for (auto& [k, v] : j.items())
      std::cout << fmt::format("{:<30} {}\n", k, v.dump());
  }
  return tally_.failed == 0 && check_.error.empty() && lost_ == 0 ? 0 : 1;
}

void runtime_bench::report_turns(nlohmann::json& j) const {
  auto ms = [](const std::vector<int64_t>& us, double p) {
    return ms_of_us(percentile_or_zero(us, p));
  };
  const auto& t = tally_;
  j["sessions"] = o_.sessions;
  j["active_sessions"] = o_.active;
  j["messages_per_session"] = shape_.wave_turns * 2;
  j["threshold_tokens"] = o_.threshold_tokens;
  j["user_chars"] = o_.user_chars;
  j["evict"] = o_.evict;
  j["elapsed_s"] = t.elapsed_s;
  j["eviction_sweeps_s"] = t.sweep_s;
  j["msgs_per_s"] = static_cast<double>(t.acknowledged_turns * 2) / t.elapsed_s;
  j["turns_sent"] = static_cast<int64_t>(o_.sessions) * shape_.wave_turns + 2 * shape_.probes;
  j["turns_acknowledged"] = t.acknowledged_turns;
  j["turns_retried"] = t.retried;
  j["turns_failed"] = t.failed; // not acknowledged after every retry (a probe: at once)
  j["turn_ms_p50"] = ms(t.turn_us, 0.5);
  j["turn_ms_p99"] = ms(t.turn_us, 0.99);
  j["probes"] = shape_.probes;
  if (shape_.probes > 0) {
    j["rehydrate_ms_p50"] = ms(t.rehydrate_us, 0.5);
    j["rehydrate_ms_p99"] = ms(t.rehydrate_us, 0.99);
    j["resident_turn_ms_p50"] = ms(t.resident_us, 0.5);
    j["resident_turn_ms_p99"] = ms(t.resident_us, 0.99);
  }
  j["turn_errors"] = t.error_counts;
  j["turn_error_examples"] = t.error_examples;
  j["hosted_sessions"] = t.hosted_sessions;
  j["session_spawns"] = t.session_spawns; // spawns + rehydrations (supervisor)
  j["max_resident_sessions"] = t.max_resident;
  j["eviction_sweeps_incomplete"] = t.incomplete_sweeps;
}

void runtime_bench::report_memory(nlohmann::json& j) const {
  const auto& m = memory_;
  const auto hosted = tally_.hosted_sessions;
  j["rss_before_bytes"] = m.rss_before;
  j["heap_in_use_before_bytes"] = m.heap_before.in_use;
  j["peak_rss_bytes"] = m.peak_rss;
  j["rss_bytes_per_session"] = (m.peak_rss - m.rss_before) / o_.sessions;
  j["rss_bytes_per_hosted_session"] = hosted > 0 ? m.peak_rss / hosted : 0;
  if (o_.evict) {
    j["rss_after_evict_bytes"] = m.rss_after_evict;
    j["rss_after_trim_bytes"] = m.rss_after_trim;
    j["evicted_bytes_per_session"] = (m.rss_after_evict - m.rss_before) / o_.sessions;
    j["heap_in_use_after_evict_bytes"] = m.heap_after_evict.in_use;
    j["heap_bytes_per_evicted_session"] =
      hosted > 0 ? (m.heap_after_evict.in_use - m.heap_before.in_use) / hosted : 0;
    j["heap_free_after_evict_bytes"] = m.heap_after_evict.free;
    j["sqlite_heap_after_evict_bytes"] = m.heap_after_evict.sqlite;
  }
}

// The compactions and the lost-message check; lost_messages is null when the check
// could not run.
void runtime_bench::report_store(nlohmann::json& j) const {
  const auto& overhead_us = tally_.overhead_us;
  j["compactions"] = overhead_us.size();
  j["compaction_overhead_ms_p50"] = ms_of_us(median_or_zero(overhead_us));
  j["compaction_overhead_ms_p99"] = ms_of_us(percentile_or_zero(overhead_us, 0.99));
  const bool checked = check_.error.empty();
  j["lost_check"] = checked ? std::string{"ran"} : "could not run: " + check_.error;
  j["lost_check_s"] = check_.seconds;
  if (!checked) {
    j["lost_messages"] = nullptr;
    return;
  }
  j["lost_messages"] = lost_;
  j["stored_sessions"] = check_.stored_sessions;
  j["stored_user_rows"] = check_.user_rows;
  j["stored_unacknowledged_turns"] = stored_unacknowledged_;
  j["stored_twice_turns"] = stored_twice_;
  j["unrecognised_user_rows"] = check_.unrecognised_user_rows;
  j["transcript_bytes_per_session"] = check_.live_bytes / o_.sessions;
}

} // namespace

MNEME_BENCH("runtime", "sessions x messages through the whole runtime against the fake LLM",
            [](CLI::App& cmd) -> bench_action {
              auto o = std::make_shared<runtime_options>();
              cmd.add_option("--sessions", o->sessions, "sessions in the population")
                ->check(integer_range(1, max_sessions));
              cmd.add_option("--messages", o->messages, "messages per session, user + answer")
                ->check(integer_range(2));
              cmd.add_option("--active", o->active,
                             "sessions driven (and with --evict resident) at once; "
                             "0 = all, at most --sessions")
                ->check(integer_range(0, max_sessions));
              cmd.add_option("--threshold-tokens", o->threshold_tokens, "threshold cap")
                ->check(integer_range(int64_t{1}));
              cmd.add_option("--user-chars", o->user_chars, "size of each user message")
                ->check(integer_range(int64_t{1}));
              cmd.add_option("--retries", o->retries, "times a failed turn is sent again")
                ->check(integer_range(0));
              cmd.add_flag("--evict", o->evict, "evict idle sessions after every group");
              cmd.add_option("--probes", o->probes,
                             "with --evict: sessions then sent lone turns, evicted and resident")
                ->check(integer_range(0, max_sessions));
              cmd.add_flag("--json", o->json, "one JSON object on stdout");
              return [o] { return runtime_bench{*o}.run(); };
            });

} // namespace mneme::bench
