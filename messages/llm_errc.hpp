// The one table between the LLM failure kinds (messages/llm_error_kind.hpp) and the
// project's error codes (messages/errc.hpp). The LLM client maps kind -> errc when it
// fails a call; the session maps errc -> kind when it classifies the failure it got
// back. Both directions read this table, so they cannot drift. Also where an LLM
// failure carries the upstream's Retry-After (upstream_retry_after_of). Header-only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "messages/errc.hpp"
#include "messages/llm_error_kind.hpp"

namespace mneme {

// Every failure kind exactly once (llm_error_kind::none is not a failure).
inline constexpr std::array<std::pair<llm_error_kind, errc>, 18> llm_errc_table{{
  {llm_error_kind::refused, errc::llm_refused},
  {llm_error_kind::dns, errc::llm_dns},
  {llm_error_kind::tls, errc::llm_tls},
  {llm_error_kind::idle_timeout, errc::llm_idle_timeout},
  {llm_error_kind::total_timeout, errc::llm_total_timeout},
  {llm_error_kind::network, errc::llm_network},
  {llm_error_kind::payload_too_large, errc::llm_payload_too_large},
  {llm_error_kind::long_context_rate_limit, errc::llm_long_context_rate_limit},
  {llm_error_kind::rate_limited, errc::llm_rate_limited},
  {llm_error_kind::output_too_large, errc::llm_output_too_large},
  {llm_error_kind::context_overflow, errc::llm_context_overflow},
  {llm_error_kind::unsupported_parameter, errc::llm_unsupported_parameter},
  {llm_error_kind::auth, errc::llm_auth},
  {llm_error_kind::quota, errc::llm_quota},
  {llm_error_kind::server_error, errc::llm_server_error},
  {llm_error_kind::bad_request, errc::llm_bad_request},
  {llm_error_kind::malformed, errc::llm_malformed},
  {llm_error_kind::empty_answer, errc::llm_empty_answer},
}};

// The code of a failure kind; errc::internal for llm_error_kind::none (not a failure).
constexpr errc to_errc(llm_error_kind kind) {
  for (const auto& [k, code] : llm_errc_table)
    if (k == kind)
      return code;
  return errc::internal;
}

// The failure kind of an LLM error code; nullopt for a code that is not an LLM failure.
constexpr std::optional<llm_error_kind> llm_kind_of(errc code) {
  for (const auto& [kind, c] : llm_errc_table)
    if (c == code)
      return kind;
  return std::nullopt;
}

// The wait an upstream asked for: an LLM failure whose HTTP answer (429, 503, 529)
// carried a usable Retry-After has the context (text, int64_t seconds), the seconds
// already bounded by policies/retry_after.hpp; the doors and the turn routes pass it on
// to their client as Retry-After. nullopt for any other error (no LLM code, no value).
inline std::optional<int64_t> upstream_retry_after_of(const caf::error& err) {
  if (err.category() != caf::atom("mneme") || !llm_kind_of(static_cast<errc>(err.code())))
    return std::nullopt;
  const auto& ctx = err.context();
  if (ctx.size() < 2 || !ctx.match_element<int64_t>(1))
    return std::nullopt;
  return ctx.get_as<int64_t>(1);
}

} // namespace mneme
