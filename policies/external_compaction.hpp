// Who compacts a session when someone else can (SPEC §6): the Codex app-server
// mode (compression.codex_app_server_auto: native | managed | off) and OpenAI's
// native server-side compaction (compression.codex_responses_native, matching
// models only). Pure function of the configuration, the backend kind, the
// model name and the threshold computed by policies/threshold; standard
// library only, any thread. Called once when a session starts (and again when
// its window changes); the session keeps the decision.
//
// Decision table, first matching row wins:
//   backend codex_app_server, mode native  -> backend_native: the backend
//        compacts its own threads; mneme runs no automatic compaction.
//   backend codex_app_server, mode managed -> backend_endpoint: mneme's
//        triggers fire at `threshold` as usual but the compaction is a call to
//        the backend's compaction endpoint instead of the summarizer.
//   backend codex_app_server, mode off     -> nobody: no automatic compaction.
//   codex_responses_native and the model name contains one of
//   k_native_compaction_model_patterns (ASCII case-insensitive)
//                                          -> server_first: every request
//        carries server_compact_threshold; mneme's own triggers move to
//        mneme_threshold, strictly later, so the server always compacts first
//        and mneme only acts as a backstop.
//   otherwise                              -> mneme at `threshold`.
// Manual and error triggers (T6-T9, T12-T15) are not governed by this table.
//
// server_first numbers (decision; SPEC: "mneme's own trigger is deliberately
// set later"):
//   server = codex_responses_compact_threshold when > 0, else `threshold`;
//            clamped to [1, window].
//   mneme  = server + max(1, 10% of (window - server)), and never above the
//            window; when server == window both are the window.
//   With a 200,000 window and server 150,000: mneme = 155,000.
// The codex_app_server_auto setting is ignored for backends that are not a
// Codex app server, and codex_responses_native for Codex app servers.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "policies/compression_params.hpp"

namespace mneme {

inline constexpr int64_t k_server_first_margin_percent = 10;  // of the window left

// Models whose API compacts server-side when asked (Responses API, GPT-5 family).
inline const std::vector<std::string> k_native_compaction_model_patterns{"gpt-5", "codex"};

// backend_kind (model.backend) is declared in compression_params.hpp.

enum class compactor : uint8_t {
  mneme,             // mneme's triggers and summarizer, as configured
  server_first,      // the API compacts at server_compact_threshold; mneme later
  backend_native,    // a Codex app server compacts its own threads
  backend_endpoint,  // mneme triggers, the backend's compaction endpoint compacts
  nobody,            // automatic compaction off
  count_             // not a compactor: how many there are (new ones go above)
};

std::string_view to_string(backend_kind b);
std::string_view to_string(compactor c);
std::ostream& operator<<(std::ostream& os, backend_kind b);
std::ostream& operator<<(std::ostream& os, compactor c);

struct external_compaction_decision {
  compactor who = compactor::mneme;
  int64_t server_compact_threshold = 0;  // sent with every request; 0 = send none
  int64_t mneme_threshold = 0;           // mneme's automatic triggers; 0 = none run
  bool mneme_triggers_enabled() const { return mneme_threshold > 0; }
};

std::ostream& operator<<(std::ostream& os, const external_compaction_decision& d);

bool supports_native_compaction(std::string_view model_name,
                                const std::vector<std::string>& patterns
                                = k_native_compaction_model_patterns);

// REQUIRES: threshold > 0, context_window > 0.
external_compaction_decision decide_external_compaction(const compression_params& params,
                                                        backend_kind backend,
                                                        std::string_view model_name,
                                                        int64_t threshold,
                                                        int64_t context_window);

} // namespace mneme
