// The `compression:` block of the configuration (SPEC §9) and the model profile the
// threshold is computed from. Plain values; the defaults are the SPEC's defaults.
// Filled once by apps/common/config/app_config and then passed by value; never mutated
// by an actor. Standard library only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mneme {

enum class tail_mode : uint8_t { count, tokens };
enum class codex_mode : uint8_t { native, managed, off };
// Which API the model block's backend speaks (model.backend); decides who may
// compact besides mneme (policies/external_compaction.hpp).
enum class backend_kind : uint8_t { chat_completions, responses, codex_app_server };
// The wire protocol an LLM endpoint speaks (model.api, auxiliary.compression.api):
// OpenAI's chat completions or Anthropic's Messages API (actors/llm/messages_api_wire.hpp).
enum class llm_api : uint8_t { openai, anthropic };

struct compression_params {
  bool enabled = true;                       // M: master switch for T1-T11
  double threshold = 0.50;                   // ratio of the effective window
  int64_t threshold_tokens = 0;              // absolute cap, 0 = none
  double target_ratio = 0.20;                // summary budget ratio
  // Below this share of the replaced rows' identifiers kept, the summarizer is asked
  // once more with the missing ones listed (policies/retention_retry.hpp); 0 = off.
  double min_retention = 0.0;
  int protect_first_n = 3;
  int protect_last_n = 20;
  int min_tail_user_messages = 1;
  mneme::tail_mode tail_mode = tail_mode::count;
  int max_attempts = 3;
  bool in_place = true;
  bool abort_on_summary_failure = false;
  std::map<std::string, double> model_thresholds;  // substring -> ratio, longest key wins
  int64_t summary_failure_cooldown_seconds = 600;
  double anti_thrash_min_savings = 0.10;
  int64_t anti_thrash_lock_seconds = 300;
  int64_t proactive_prune_tokens = 0;        // 0 = only when the main path is locked
  int64_t proactive_prune_min_result_chars = 8000;
  int64_t proactive_prune_min_reclaim_tokens = 4096;
  int64_t tool_output_eviction_chars = 16000; // evict answered tool outputs larger; 0 = off
  double max_row_share = 0.5;                // a row above this share of the window enters
                                             // the live context as a marker (oversized_row.hpp)
  bool micro_compact = false;
  int micro_compact_every_n_turns = 1;
  int64_t micro_compact_defrag_threshold_tokens = 2000;
  int64_t idle_compact_after_seconds = 0;    // 0 = off
  int64_t hygiene_hard_message_limit = 5000; // T3
  int64_t hygiene_timeout_seconds = 60;      // idle timeout of a hygiene summary call
  int64_t hygiene_total_ceiling_seconds = 180;
  int64_t hygiene_failure_cooldown_seconds = 600;
  int64_t context_timeout_seconds = 60;      // idle timeout (no byte) of a summary call
  int64_t context_total_ceiling_seconds = 300;
  codex_mode codex_app_server_auto = codex_mode::native;
  bool codex_responses_native = false;       // OpenAI server-side compaction, opt-in
  int64_t codex_responses_compact_threshold = 0; // 0 = derive from the threshold

  // Not in Hermes' block but fixed by the SPEC; exposed for tests and tuning.
  std::vector<std::string> reasoning_model_patterns{"o1", "o3", "o4", "reasoner", "thinking"};
};

// The `model:` block: what the threshold is computed from.
struct model_params {
  std::string name = "fake-chat";
  int64_t context_length = 200000;
  int64_t max_tokens = 0;                    // output reserve; 0 = unset
  std::string base_url = "builtin";          // "builtin" = the in-process fake LLM
  backend_kind backend = backend_kind::chat_completions; // the API the backend speaks
  llm_api api = llm_api::openai;             // the wire protocol of base_url
  std::string api_key;                       // never logged
  std::string api_key_file;
};

} // namespace mneme
