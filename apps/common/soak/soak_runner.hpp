// One soak run, start to finish: the in-process fake LLM with the scenario's faults, one
// runtime on the scenario's configuration, the driver playing every simulated user for
// the scenario's duration, the continuous checks (every check_every_s: live bound,
// compaction loop, unanswered turns, restarted sessions), the progress line, the drain,
// the end-of-run checks (every acknowledged message stored exactly once, read back
// through a read-only connection; every planted marker found by recall with its
// session; RSS plateau; a fallback compaction inside a summarizer outage when the
// scenario asks for one) and the report.
//
// run_soak_server does the same against a running daemon over HTTP (--server).
//
// Thread: call from main (it blocks for the whole run). Not reentrant: it reads the
// process's own RSS.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "apps/common/soak/soak_scenario.hpp"

namespace mneme::soak {

struct soak_options {
  std::string report_dir = "soak-report";
  std::string config_file;             // base configuration; the scenario's config wins
  std::string db;                      // empty = a fresh temporary file (kept, printed)
  std::optional<int64_t> users;        // override the scenario's
  std::optional<double> duration_s;    // override the scenario's
  bool progress_tty = false;           // \r-updated line (else one line every 10 s)
};

// `mneme soak --server URL`: drive a running daemon over HTTP (soak_http_target.hpp).
struct server_options {
  std::vector<std::string> urls;       // http://HOST:PORT of the daemon, or of each node
  std::string token;                   // bearer token ("" = none)
  std::string fakellm_url;             // the fake LLM the daemon uses ("" = not controlled)
  bool no_faults = false;              // run a scenario with faults without setting them
  int64_t connections = 16;            // calls in flight at most
};

// Exit codes: 0 every invariant held, 1 a violation (or the run could not finish),
// 2 bad input (configuration).
int run_soak(soak_scenario scenario, const soak_options& opt, std::ostream& out,
             std::ostream& err);

// The same run against a running daemon: the scenario's users, mix, fault windows (set on
// the fake LLM at --fakellm when the drive starts) and invariants; the daemon's own
// configuration (the scenario's config: block is not applied; the report says so).
// `opt.config_file` and `opt.db` must be empty. Exit codes as run_soak's; 2 also when
// the daemon or the fake LLM does not answer at the start, the token is refused, or the
// scenario has faults but neither --fakellm nor --no-faults was given.
int run_soak_server(soak_scenario scenario, const soak_options& opt,
                    const server_options& server, std::ostream& out, std::ostream& err);

} // namespace mneme::soak
