// What a failed summarizer call leads to (SPEC §3 "LLM failure", issue 25 item 4):
// the local fallback summary, a plain abort, or the abort of an auth/quota
// failure; the summarizer's health as GET /v1/health shows it; and the gate that
// keeps the auth error line to one per endpoint per minute. Pure, standard
// library only, no clock (the caller passes now). Called by the session actor
// (glue in actors/session/session_compaction.cpp); the health and the gate live
// in runtime_metrics, shared by every session, under its mutex.
//
// Rules:
//   1. auth (401, 403) or quota (402, a quota/billing body) -> abort_auth,
//      whatever abort_on_summary_failure says: a configuration problem, not a
//      bad transcript. The transcript stays as it is (no fallback row), the
//      session cools down (cooldown_reason starts with auth_cooldown_reason),
//      and while that cooldown lasts the T3 message cap does not compact
//      fallback-only either (policies/failure_protection.cpp check()): a local
//      summary would replace the middle with a lossy dump on every cap while
//      the operator fixes a key. A caller that must make room (the window
//      guard) may still decide to use the fallback on abort_auth; that is its
//      override, not this policy's.
//   2. any other failure -> abort when abort_on_summary_failure, else fallback.
//
// Health (one value per runtime):
//      ok --auth/quota failure--> auth_failed --a summarizer answer--> ok
//   Other failures leave it as it is: a timeout says nothing about the key.
//   Clearing needs an answer from the summarizer, so it clears after the
//   operator fixed the key and a session's cooldown ran out (or a manual
//   /compress, which bypasses the cooldown, succeeded).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "messages/llm_error_kind.hpp"

namespace mneme {

enum class summary_failure_action : uint8_t {
  fallback,    // commit the local fallback summary
  abort,       // commit nothing (abort_on_summary_failure: true)
  abort_auth,  // commit nothing: the summarizer refused our credentials or quota
};

std::string_view to_string(summary_failure_action a);

summary_failure_action on_summary_failure(llm_error_kind kind, bool abort_on_summary_failure);

// The cooldown reason of an auth/quota abort starts with this word.
inline constexpr std::string_view auth_cooldown_reason = "summarizer_auth_failed";

// "summarizer_auth_failed: <detail>" (the detail never holds the key: the LLM
// client redacts it from every error).
std::string auth_cooldown_reason_for(std::string_view detail);

// True when a persisted cooldown_reason is an auth/quota abort's.
bool is_auth_cooldown(std::string_view cooldown_reason);

// An endpoint URL as a log line may show it: without user:password@ and without
// the query string (where a key might travel), e.g.
// "https://k:s@api.example.com/v1/chat?key=x" -> "https://api.example.com/v1/chat".
std::string endpoint_for_log(std::string_view url);

enum class summarizer_health : uint8_t { ok, auth_failed };

std::string_view to_string(summarizer_health h);

enum class summarizer_event : uint8_t { answered, auth_failed, other_failure };

summarizer_health next_summarizer_health(summarizer_health now, summarizer_event e);

// Lets one event per key through in each interval (the first event after the
// interval since the last one let through); counts what it held back. Keys are
// endpoints (a handful), so the map stays small.
struct keyed_interval_gate {
  int64_t interval_ms = 60000;

  // True when this event may be logged; then `suppressed` is how many events of
  // this key were held back since its previous line.
  bool allow(const std::string& key, int64_t now_ms, int64_t& suppressed);

 private:
  struct entry {
    int64_t last_ms = 0;
    int64_t held = 0;
  };
  std::unordered_map<std::string, entry> keys_;
};

} // namespace mneme
