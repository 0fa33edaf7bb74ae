// The run loop of a soak run, the same for every target (soak_target.hpp): starts the
// driver, ticks while the users drive (per-second samples, the continuous checks every
// check_every_s: live bound, compaction loop, unanswered turns, restarted sessions, the
// target still answering; the progress line), drains, runs the end-of-run checks (every
// acknowledged message stored exactly once, every planted marker found by recall with
// its session, RSS plateau, a fallback compaction inside a summarizer outage when the
// scenario asks for one) and writes the report. The steps are soak_run's (soak_run.hpp).
//
// Thread: call from main (it blocks for the whole run).
#pragma once

#include <ostream>

#include "apps/common/soak/soak_report.hpp"
#include "apps/common/soak/soak_runner.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "apps/common/soak/soak_target.hpp"

namespace mneme::soak {

// The exit codes of a soak run (the `mneme` program's): every invariant held; a
// violation, no report or a failed start; a bad scenario or configuration.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

// `result` comes with the header figures the target's setup knows (database, threshold
// and live bound; a live bound of 0 is derived from the first session state polled: the
// session's window). Shuts the target down before the report.
// Returns the exit code: 0 every invariant held, 1 a violation or no report.
int drive_and_report(const soak_scenario& sc, soak_target& target, soak_result& result,
                     const soak_options& opt, std::ostream& out, std::ostream& err);

} // namespace mneme::soak
