// The soak's check of the model's own recall (issue 29 item 7): after the run, a few
// planted markers are asked about in a fresh session of their user with the phrasing the
// fake LLM answers with a session_search call ("What did we discuss earlier about
// MARKER?", apps/common/fakellm/fake_tool_calls.hpp rule 0). mneme runs that call itself;
// the fake then quotes the result, whose snippet marks the match as >>>MARKER<<<. An
// answered probe without the marked match is a violation (model_recall_missed); a probe
// whose turn failed (an injected fault) is retried, and counted unanswered after that.
// Called from the run loop's thread (soak_loop.cpp) once the driver stopped.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_report.hpp"
#include "apps/common/soak/soak_target.hpp"

namespace mneme::soak {

inline constexpr size_t model_recall_probes = 3; // markers asked about
inline constexpr int model_recall_attempts = 3;  // turns per marker before giving up

struct model_recall_outcome {
  int64_t asked = 0;
  int64_t found = 0;      // the answer carried >>>marker<<< from a session_search result
  int64_t unanswered = 0; // every attempt's turn failed
  std::vector<violation> violations;
};

// Probes the first model_recall_probes markers (each asked once per user; keys
// "model-recall-<n>"). t_s stamps the violations.
model_recall_outcome check_model_recall(soak_target& target,
                                        const std::vector<planted_marker>& markers, double t_s);

} // namespace mneme::soak
