// The tool-loop invariants of a soak run (issue 29 item 6) and their report figures, kept
// apart from the run loop (soak_loop.cpp) that calls them:
//   orphan_tool_row  no request the fake LLM received had a call without its results or
//                    a result without its call (the fake's audit; checked continuously),
//   tool_loop_end    every tool loop ended: a text answer, the round cap at exactly
//                    gateway.max_tool_rounds, or an error; none left open after the drain,
//   lost_message / stored_not_once  every acknowledged tool result the runner sent is
//                    stored exactly once, with its content (the message check extended).
// The verdicts are policies/soak_tool_checks.hpp and policies/soak_checks.hpp; this file
// turns them into violations and report figures. Thread: the run loop's (main).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_target.hpp"
#include "policies/soak_checks.hpp"
#include "policies/soak_tool_checks.hpp"

namespace mneme::soak {

struct violation;

// What report.json's "tool_loops" and "tool_pairing" hold.
struct tool_loop_figures {
  int64_t loops_started = 0;
  tool_loop_verdict loops;
  tool_round_figures rounds;
  ledger_verdict results;             // the tool results the runner sent, by tag
  bool pairing_audited = false;
  int64_t orphan_tool_calls = 0;
  int64_t orphan_tool_results = 0;
  int64_t requests_with_orphans = 0;
};

// The orphan_tool_row violation when the fake LLM's audit counted any orphan.
std::optional<violation> orphan_violation(const fault_figures& faults, double t_s);

// The end-of-run checks: fills `out` and returns the violations. `stored` holds every
// stored row carrying a tag (tool result tags included).
std::vector<violation> check_tool_invariants(const soak_ledger& ledger,
                                             const std::vector<stored_rows>& stored,
                                             const fault_figures& faults,
                                             int64_t max_tool_rounds, double t_s,
                                             tool_loop_figures& out);

nlohmann::json tool_loops_json(const tool_loop_figures& f);

// The rows report.md's summary table gets: (figure, value).
std::vector<std::pair<std::string, std::string>> tool_loop_rows(const tool_loop_figures& f);

} // namespace mneme::soak
