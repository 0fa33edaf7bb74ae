// A soak scenario: how many simulated users, for how long, what they send, which faults
// the in-process fake LLM injects and when, the mneme configuration overrides that make
// compactions happen within the run, and the bounds of the invariants. Read from a YAML
// file (configs/soak/*.yaml, documented in docs/soak.md); strict like the config loader:
// an unknown key, a wrong type or an out-of-range value is an error naming the key's
// dotted path. Pure parsing (plus reading the file): any thread.
//
//   name: quick                  # shown in the report (default: the file's stem)
//   users: 300                   # simulated users, one session key each (1..100000)
//   duration_s: 60               # driving time; the drain and checks come after
//   seed: 7                      # seeds the message mix and think times
//   think_ms: {min: 200, max: 1500}   # pause between a reply and the user's next message
//   mix:
//     chinese_share: 0.3         # share of user turns written in Chinese
//     tool_small_share: 0.2      # share of turns that carry a small tool result
//     tool_large_share: 0.01     # share that carry a large one
//     tool_large_kb: {min: 20, max: 200}
//     user_chars: {min: 200, max: 1200}
//     marker_every: 4            # every 4th message of a user carries a marker word
//     tools_offered_share: 1.0   # share of prose turns offering tools (model tool loops)
//     tool_result_large_share: 0.01  # share of executed tool results that are large
//   config: {...}                # mneme configuration overrides, same keys as mneme.yaml
//   fake_llm: {...}              # the fake LLM scenario (configs/fakellm/example.yaml):
//                                # seed, window_tokens, answer_tokens, faults with
//                                # kind/purpose/fraction/start_s/end_s and parameters
//   invariants:
//     max_live_tokens: 0         # the live-context bound (0 = the model window)
//     max_compactions_per_hour: 240   # per session, in any sliding hour
//     rss_max_growth: 0.25       # RSS growth over the second half (fraction)
//     check_every_s: 5           # continuous checks
//     drain_s: 60                # how long in-flight turns may take after the end
//     require_fallback_in_outage: true  # a fallback compaction inside a summary outage
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/fakellm/scenario.hpp"
#include "caf/expected.hpp"

namespace mneme::soak {

struct int_range {
  int64_t min = 0;
  int64_t max = 0;
};

struct message_mix {
  double chinese_share = 0.3;
  double tool_small_share = 0.2;
  double tool_large_share = 0.01;
  int_range tool_large_kb{20, 200};
  int_range user_chars{200, 1200};
  int64_t marker_every = 4;
  // Model tool loops (soak_agent.hpp): the share of prose turns that offer the users'
  // tools to the model, and the share of the results the runner sends back that are
  // large (tool_large_kb) instead of small.
  double tools_offered_share = 1.0;
  double tool_result_large_share = 0.01;
};

// Deprecated keys are accepted with a warning (soak_scenario::warnings) so older
// scenario files keep loading: invariants.live_bound_factor (the bound is the model
// window since the window guard; max_live_tokens overrides it).
struct invariant_bounds {
  int64_t max_live_tokens = 0;          // 0 = the model window (window guard, SPEC §5.6)
  int64_t max_compactions_per_hour = 240;
  double rss_max_growth = 0.25;
  double check_every_s = 5;
  double drain_s = 60;
  bool require_fallback_in_outage = false;
};

struct soak_scenario {
  std::string name;
  std::string origin;            // the file it came from ("" for text)
  int64_t users = 300;
  double duration_s = 60;
  uint64_t seed = 7;
  int_range think_ms{200, 1500};
  message_mix mix;
  std::string config_yaml;       // mneme configuration overrides as YAML ("" = none)
  fakellm::scenario fake_llm;
  invariant_bounds invariants;
  std::vector<std::string> warnings; // "path: reason" of each deprecated key found
};

// Parses scenario text; `origin` names it in errors. Errors: errc::config_invalid with
// "path: reason" (every problem found, one per line).
caf::expected<soak_scenario> parse_soak_scenario(std::string_view yaml, std::string origin);
caf::expected<soak_scenario> load_soak_scenario(const std::string& path);

// The scenario's fault windows on the time axis of the run, for the report and the
// plots: every non-latency rule with an end, and whether it hits summaries.
struct outage_window {
  double from_s = 0;
  double to_s = 0;
  std::string kind;
  std::string purpose;
  double fraction = 1;
};
std::vector<outage_window> outage_windows(const soak_scenario& s);

} // namespace mneme::soak
