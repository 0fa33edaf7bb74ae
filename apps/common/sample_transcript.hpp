// Deterministic sample transcripts of realistic shape: a system prompt, user turns in
// English and Chinese, assistant answers, tool calls with small and large results.
// Used by `mneme run`'s dry run, tests and benchmarks. Pure function of its arguments;
// safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

struct sample_shape {
  std::size_t min_messages = 800;   // at least this many rows (system prompt included)
  int64_t min_tokens = 0;           // and keep adding turns until the estimate reaches this
  uint64_t seed = 1;
  double tool_turn_share = 0.25;    // share of turns that call a tool
  double large_result_share = 0.05; // share of tool results of 20-200 KB
};

// Rows carry ids 1..n, session_id "sample", timestamps one second apart from
// 1,700,000,000,000 ms, and token_estimate filled by the project's estimator.
std::vector<message> make_sample_transcript(const sample_shape& shape);

} // namespace mneme
