// The outcome of a soak run and how it is written down: report.json (every figure),
// report.md (a human summary with the plots) and the plots themselves (gnuplot when it
// is on PATH: PNG via pngcairo or png, else SVG; without gnuplot the .dat and .gp files
// stay with a note in report.md on how to render them). Called once from the main
// thread after the run; touches only files under the report directory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "apps/common/soak/soak_tool_invariants.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

// A broken invariant: which one, where, and the figures.
struct violation {
  std::string invariant;   // live_bound, compaction_loop, lost_message, unfindable_marker, ...
  std::string session;     // session key or id; "" when run-wide
  std::string detail;
  double t_s = 0;
};

// One per-second sample of the live contexts (the last reported live tokens of every
// user) and the sampled users' own values.
struct live_sample {
  double t_s = 0;
  int64_t max = 0;
  int64_t p50 = 0;
  int64_t p90 = 0;
  std::vector<int64_t> sampled;   // users 0..k-1
};

// One compaction attempt of the run as the target's compaction log holds it (issue 45:
// what each summary kept): when, how it was written, what became of it, and the
// identifiers of the replaced rows its summary contained (policies/identifier_retention).
struct retention_point {
  double t_s = 0;                 // since the run's start
  std::string mode;               // summarizer, fallback, external, micro, ...
  std::string outcome;            // committed, retried, grew, ...
  int64_t identifiers_in = 0;
  int64_t identifiers_kept = 0;
};

struct soak_result {
  const soak_scenario* scenario = nullptr;
  std::string target = "in-process";   // or the daemon's URL (mneme soak --server)
  std::vector<std::string> nodes;      // --server with several URLs: each node's URL
  std::string database;
  std::vector<std::string> notes;      // what the reader must know (config not applied, ...)
  double drive_s = 0;               // driving time
  double total_s = 0;               // driving + drain + checks
  int64_t threshold_tokens = 0;
  int64_t live_bound = 0;
  soak_ledger::progress totals;
  ledger_verdict ledger;
  int64_t markers_planted = 0;
  int64_t markers_unfindable = 0;
  int64_t markers_found_archived = 0;
  int64_t fallback_in_outage = 0;
  std::map<std::string, int64_t> compactions_by_trigger;
  int64_t max_compactions_per_hour = 0;   // the busiest session's figure
  std::map<std::string, int64_t> errors;
  std::vector<turn_event> turns;
  std::vector<compaction_event> compactions;
  int64_t started_at_ms = 0;          // wall clock at the run's start (the log's at_ms)
  std::vector<retention_point> retention;   // every logged attempt, in time order
  std::map<std::string, int64_t> faults_by_kind;
  int64_t faults_injected = 0;
  bool faults_set = true;            // false: --no-faults, the scenario's faults not set
  int64_t llm_chat_requests = 0;
  int64_t llm_summary_requests = 0;
  int64_t supervisor_restarts = 0;
  int64_t supervisor_exhausted = 0;
  std::vector<rss_sample> rss;       // the process's RSS minus the ledger's own records
  std::vector<rss_sample> rss_raw;   // the process's RSS as sampled
  rss_verdict rss_check;
  // Several nodes: each node's RSS samples and plateau verdict, by its URL.
  std::map<std::string, std::vector<rss_sample>> rss_by_node;
  std::map<std::string, rss_verdict> rss_check_by_node;
  std::vector<live_sample> live;
  tool_loop_figures tools;           // model tool loops (soak_tool_invariants.hpp)
  std::vector<violation> violations;
};

nlohmann::json report_json(const soak_result& r);

// Writes report.json, report.md and the plots into `dir` (created). Returns the path
// of report.md, or an empty string with `error` set.
std::string write_report(const soak_result& r, const std::string& dir, std::string& error);

} // namespace mneme::soak
