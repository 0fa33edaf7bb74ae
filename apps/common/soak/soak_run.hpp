// One soak run against one target, from the first user's message to the report, in
// named steps (soak_loop.hpp's drive_and_report makes one and runs it):
//   drive()   starts the target's driver and ticks until the scenario's duration ran out
//             or the target stopped answering;
//   drain()   lets the turns in flight finish (drain_s at most), stops the driver, runs
//             the continuous checks a last time and takes the run-wide figures;
//   verify()  the end-of-run checks: every acknowledged message stored exactly once,
//             every planted marker found by recall in its session, the model's own
//             recall of markers; then shuts the target down;
//   judge()   the verdicts over the whole run: compactions by trigger, a fallback
//             compaction inside a summarizer outage, the RSS plateau;
//   report()  writes the report, prints the result lines, returns the exit code.
// A tick (driving: every 250 ms on a terminal, 500 ms piped; draining: every 200 ms)
// takes the per-second samples, keeps the last 10 s of turn latencies, runs the
// continuous checks every check_every_s and prints the progress line.
// The drive side is in soak_loop.cpp, verify / judge / report in soak_verify.cpp.
//
// Thread: one object per run, used from main only (it blocks for the whole run); the
// target's driver shares only the ledger with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_report.hpp"
#include "apps/common/soak/soak_runner.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "apps/common/soak/soak_target.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

// The violations of one run: each (invariant, session) recorded once and printed when
// first seen.
class violation_log {
 public:
  explicit violation_log(std::ostream& out) : out_(out) {}
  // `tty`: the progress line is being redrawn on a terminal and must be cleared first.
  void add(violation v, bool tty);
  bool any_of(const std::string& invariant) const;
  const std::vector<violation>& all() const { return all_; }

 private:
  std::ostream& out_;
  std::set<std::string> seen_;
  std::vector<violation> all_;
};

// The progress line's turns per second: measured anew at most once a second, over the
// time since the last measurement.
class answer_rate {
 public:
  double update(double t_s, int64_t answered);

 private:
  int64_t last_answered_ = 0;
  double last_t_s_ = 0;
  double rate_ = 0;
};

class soak_run {
 public:
  // `result` comes with the header figures the target's setup knows (see soak_loop.hpp).
  soak_run(const soak_scenario& sc, soak_target& target, soak_result& result,
           const soak_options& opt, std::ostream& out, std::ostream& err);
  soak_run(const soak_run&) = delete;
  soak_run& operator=(const soak_run&) = delete;

  // drive, drain, verify, judge, report; the exit code (soak_loop.hpp).
  int run();

 private:
  using clock_type = std::chrono::steady_clock;

  // Seconds since driving started.
  double now_s() const;

  // drive and drain (soak_loop.cpp)
  void drive();
  void drain();
  void take_run_figures();
  void tick(double t, bool draining);
  void sample(double t);
  void sample_compactions(double t);
  void sample_live(double t);
  void keep_recent_latencies(double t);
  void print_progress(double t, bool draining);

  // the continuous checks (soak_loop.cpp)
  void continuous_checks(double t);
  void check_live_bound(double t);
  void poll_sessions(double t);
  void learn_live_bound(int64_t threshold, int64_t context_window);
  void check_compaction_loop(double t);
  void check_turns_and_actors(double t);

  // verify, judge, report (soak_verify.cpp)
  void verify();
  void read_back_store();
  void read_compaction_log();
  void check_ledger();
  void find_markers(const std::vector<planted_marker>& markers);
  void ask_model_for_markers(const std::vector<planted_marker>& markers);
  void take_totals();
  void judge();
  void count_compactions();
  void check_rss();
  int report();

  const soak_scenario& sc_;
  soak_target& target_;
  soak_result& result_;
  const soak_options& opt_;
  std::ostream& out_;
  std::ostream& err_;
  const bool tty_;
  violation_log violations_;
  const clock_type::time_point begin_;
  std::shared_ptr<soak_ledger> ledger_;
  clock_type::time_point t0_;   // driving started: the run's time origin
  double t_end_ = 0;            // driving and draining ended

  // Per-session polling: the next user to poll, and each key's (session id, committed
  // compactions) at the last poll and the times new compactions were seen.
  int64_t poll_cursor_ = 0;
  std::map<std::string, std::pair<std::string, int64_t>> compactions_seen_;
  std::map<std::string, std::vector<double>> compaction_times_;
  compaction_counts seen_counts_;   // the target's counters already in the ledger

  // Ticks: when the next sample, check and piped progress line are due.
  double next_sample_ = 0;
  double next_check_ = 0;
  double next_line_ = 0;
  size_t turn_cursor_ = 0;
  std::deque<std::pair<double, double>> recent_;   // (t, latency ms) of the last 10 s
  answer_rate rate_;

  // The end of the run: the fault figures and the stored tagged rows by tag.
  fault_figures faults_;
  std::map<std::string, stored_rows> by_tag_;
};

} // namespace mneme::soak
