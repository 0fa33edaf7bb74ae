// The soak runner's verdicts on model tool loops (issue 29 item 6), as pure functions over
// what the runner and the fake LLM counted: the tool-pairing audit of one request the fake
// LLM receives (no call without its results, no result without its call), whether every
// tool loop ended (a text answer, the round cap at exactly gateway.max_tool_rounds, or an
// error) and the figures report.md shows (tool rounds per turn, loop time). Standard
// library and the std-only messages/transcript.hpp only; no clock, no I/O; any thread.
//
// Who calls: apps/common/fakellm (the audit, per chat request) and apps/common/soak (the
// loop verdict at the end of a run). Kept apart from soak_checks.hpp so the tool-loop
// checks can grow without touching the other invariants.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme::soak {

// Orphans in one request's messages, by the OpenAI rule: the calls of an assistant row
// are answered by the run of tool rows directly after it, each call once.
struct pairing_audit {
  int64_t orphan_calls = 0;    // calls without a result in the run after their row
  int64_t orphan_results = 0;  // tool rows outside such a run, answering no call of its
                               // row, or answering a call a second time
  bool clean() const { return orphan_calls == 0 && orphan_results == 0; }
};

pairing_audit audit_tool_pairing(const std::vector<message>& messages);

// How the runner saw one tool loop (one user message offering tools) end.
enum class loop_end : uint8_t {
  text,       // the model answered text
  round_cap,  // the gateway refused to call the model again (errc::tool_round_cap)
  error,      // a call of the loop failed (an LLM failure, a timeout, a reset)
};

std::string_view to_string(loop_end e);

struct tool_loop_record {
  int64_t rounds = 0;       // model answers with tool calls in the loop
  loop_end end = loop_end::text;
  double loop_ms = 0;       // from the user message to the end
};

struct tool_loop_verdict {
  int64_t loops = 0;
  std::map<std::string, int64_t> by_end;   // to_string(loop_end) -> loops
  int64_t cap_rounds = 0;                  // the cap checked against (given or learned)
  int64_t unended = 0;                     // loops started and never ended
  int64_t over_cap = 0;                    // a loop that went on past the cap
  int64_t cap_mismatch = 0;                // a round cap reported at another round
  std::vector<std::string> examples;       // up to 5, what was wrong
  bool ok() const { return unended == 0 && over_cap == 0 && cap_mismatch == 0; }
};

// Every loop ends: `started` loops began, `ended` are the records of those that ended.
// With `max_rounds` > 0 (the target's gateway.max_tool_rounds): a loop never has more
// rounds than the cap, a text answer comes after fewer rounds than the cap (the model is
// not called once the cap is reached), and a round cap is reported at exactly the cap.
// With 0 (unknown, e.g. a daemon's own configuration) the cap is learned from the first
// round-cap record and the others must agree with it.
tool_loop_verdict check_tool_loops(const std::vector<tool_loop_record>& ended, int64_t started,
                                   int64_t max_rounds);

// The figures report.md shows: loops by rounds (0 = answered without a tool call), the
// mean and p99 of the rounds, the p50 / p99 of the loop time of the loops with at least
// one round (nullopt when none).
struct tool_round_figures {
  std::map<int64_t, int64_t> loops_by_rounds;
  double mean_rounds = 0;
  int64_t p99_rounds = 0;
  int64_t loops_with_calls = 0;
  std::optional<double> loop_ms_p50;
  std::optional<double> loop_ms_p99;
};

tool_round_figures tool_round_stats(const std::vector<tool_loop_record>& ended);

} // namespace mneme::soak
