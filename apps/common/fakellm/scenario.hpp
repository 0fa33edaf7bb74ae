// A fake LLM scenario: the fault plan plus the answer settings a scenario may
// override. Read from a YAML file (mneme-fakellm --scenario) or from the JSON
// body of POST /control/faults; both have the same shape, see
// configs/fakellm/example.yaml:
//
//   seed: 42                 # PRNG seed of fractions and jitter (default 1)
//   window_tokens: 200000    # optional: context window; prompts above it get a 400
//   answer_tokens: 64        # optional: size of chat answers
//   report_usage: true       # optional: false = answers carry no "usage"
//   native_compaction_models: [gpt-5, codex]  # optional: model-name substrings that
//                            # compact server-side (server_compaction.hpp)
//   tool_call_fraction: 0.5  # optional: share of answers to requests offering tools
//                            # that call them (fake_tool_calls.hpp), 0..1
//   tool_rounds: 3           # optional: tool rounds per user message, then text
//   embedding_mode: paraphrase # optional: bag_of_words (default) | paraphrase, the
//                            # vectors of POST /v1/embeddings (policies/fake_embedding.hpp)
//   faults:                  # rules in priority order, see fault_plan.hpp
//     - kind: unavailable
//       fraction: 0.25
//       model: gpt           # substring of the request's model
//       purpose: summary     # any | chat | summary
//       start_s: 10          # window in seconds since the scenario started
//       end_s: 20
//
// Unknown keys, wrong types and invalid values are rejected with the key's path
// (errc::config_invalid). Pure parsing; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/common/fakellm/fault_plan.hpp"
#include "policies/fake_embedding.hpp"
#include "caf/expected.hpp"

namespace mneme::fakellm {

struct scenario {
  fault_plan plan;
  std::optional<int64_t> window_tokens;
  std::optional<int64_t> answer_tokens;
  std::optional<bool> report_usage;
  std::optional<std::vector<std::string>> native_compaction_models;
  std::optional<double> tool_call_fraction; // answers to requests offering tools that call them
  std::optional<int64_t> tool_rounds;       // tool rounds per user message, then text
  std::optional<fake_embedding_mode> embedding_mode; // POST /v1/embeddings' vectors
};

// `root` names the document in error paths (e.g. "scenario" or the file name).
caf::expected<scenario> parse_scenario(const nlohmann::json& doc,
                                       const std::string& root = "scenario");
caf::expected<scenario> parse_scenario_json(std::string_view text,
                                            const std::string& root = "scenario");
caf::expected<scenario> parse_scenario_yaml(std::string_view text,
                                            const std::string& root = "scenario");
caf::expected<scenario> load_scenario_file(const std::string& yaml_path);

// The scenario in the same JSON shape parse_scenario accepts (round-trips).
nlohmann::json to_json(const scenario& s);

} // namespace mneme::fakellm
