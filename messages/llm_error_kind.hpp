// The kinds an LLM failure is classified into (SPEC §2 T6-T9, §3 summary failures).
// Produced by policies/error_classifier (HTTP status + body) and by the LLM client
// (transport failures); consumed by trigger evaluation and failure protection.
// Standard library only. actors/llm maps each kind onto a mneme::errc.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace mneme {

enum class llm_error_kind : uint8_t {
  none,                      // success
  // transport (set by the client from curl's result)
  refused, dns, tls, idle_timeout, total_timeout, network,
  // HTTP answers (set by classify_http_answer)
  payload_too_large,         // 413                          -> T6
  long_context_rate_limit,   // 429 long context / extra usage -> T7
  rate_limited,              // other 429
  output_too_large,          // 400 output/max_tokens does not fit -> T8
  context_overflow,          // 400 (or 5xx) overflow phrases -> T9
  unsupported_parameter,     // 400 unsupported parameter: NOT an overflow
  auth,                      // 401 / 403
  quota,                     // 402 / insufficient quota
  server_error,              // other 5xx
  bad_request,               // other 4xx
  // body (set by the client's parser)
  malformed,                 // not JSON / missing choices
  empty_answer,              // content empty (reasoning-only included)
};

inline std::string_view to_string(llm_error_kind k) {
  switch (k) {
    case llm_error_kind::none: return "none";
    case llm_error_kind::refused: return "refused";
    case llm_error_kind::dns: return "dns";
    case llm_error_kind::tls: return "tls";
    case llm_error_kind::idle_timeout: return "idle_timeout";
    case llm_error_kind::total_timeout: return "total_timeout";
    case llm_error_kind::network: return "network";
    case llm_error_kind::payload_too_large: return "payload_too_large";
    case llm_error_kind::long_context_rate_limit: return "long_context_rate_limit";
    case llm_error_kind::rate_limited: return "rate_limited";
    case llm_error_kind::output_too_large: return "output_too_large";
    case llm_error_kind::context_overflow: return "context_overflow";
    case llm_error_kind::unsupported_parameter: return "unsupported_parameter";
    case llm_error_kind::auth: return "auth";
    case llm_error_kind::quota: return "quota";
    case llm_error_kind::server_error: return "server_error";
    case llm_error_kind::bad_request: return "bad_request";
    case llm_error_kind::malformed: return "malformed";
    case llm_error_kind::empty_answer: return "empty_answer";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, llm_error_kind k) { return os << to_string(k); }

} // namespace mneme
