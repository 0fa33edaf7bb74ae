// Names of the project's error codes; see errc.hpp.
#include "messages/errc.hpp"

#include "caf/message.hpp"

namespace mneme {

std::string to_string(errc x) {
  switch (x) {
    case errc::bad_request: return "bad_request";
    case errc::config_invalid: return "config_invalid";
    case errc::not_found: return "not_found";
    case errc::overloaded: return "overloaded";
    case errc::shutting_down: return "shutting_down";
    case errc::internal: return "internal";
    case errc::foreign_session: return "foreign_session";
    case errc::session_busy: return "session_busy";
    case errc::storage_failed: return "storage_failed";
    case errc::storage_disk_full: return "storage_disk_full";
    case errc::storage_corrupt: return "storage_corrupt";
    case errc::storage_locked: return "storage_locked";
    case errc::storage_schema_too_new: return "storage_schema_too_new";
    case errc::storage_readonly: return "storage_readonly";
    case errc::storage_cant_open: return "storage_cant_open";
    case errc::llm_refused: return "llm_refused";
    case errc::llm_dns: return "llm_dns";
    case errc::llm_tls: return "llm_tls";
    case errc::llm_idle_timeout: return "llm_idle_timeout";
    case errc::llm_total_timeout: return "llm_total_timeout";
    case errc::llm_network: return "llm_network";
    case errc::llm_payload_too_large: return "llm_payload_too_large";
    case errc::llm_long_context_rate_limit: return "llm_long_context_rate_limit";
    case errc::llm_rate_limited: return "llm_rate_limited";
    case errc::llm_output_too_large: return "llm_output_too_large";
    case errc::llm_context_overflow: return "llm_context_overflow";
    case errc::llm_unsupported_parameter: return "llm_unsupported_parameter";
    case errc::llm_auth: return "llm_auth";
    case errc::llm_quota: return "llm_quota";
    case errc::llm_server_error: return "llm_server_error";
    case errc::llm_bad_request: return "llm_bad_request";
    case errc::llm_malformed: return "llm_malformed";
    case errc::llm_empty_answer: return "llm_empty_answer";
    case errc::compaction_locked: return "compaction_locked";
    case errc::compaction_failed: return "compaction_failed";
    case errc::compaction_exhausted: return "compaction_exhausted";
    case errc::nothing_to_compact: return "nothing_to_compact";
    case errc::compaction_in_flight: return "compaction_in_flight";
    case errc::context_unfittable: return "context_unfittable";
    case errc::tool_results_pending: return "tool_results_pending";
    case errc::tool_round_cap: return "tool_round_cap";
    case errc::lease_elsewhere: return "lease_elsewhere";
    case errc::lease_lost: return "lease_lost";
    case errc::idempotency_key_reused: return "idempotency_key_reused";
    case errc::idempotency_in_flight: return "idempotency_in_flight";
    case errc::idempotency_unanswered: return "idempotency_unanswered";
  }
  return "unknown(" + std::to_string(static_cast<int>(x)) + ")";
}

std::string render_error(const caf::error& err) {
  if (!err)
    return "none";
  if (err.category() != caf::atom("mneme"))
    return caf::to_string(err);
  auto str = "mneme::" + to_string(static_cast<errc>(err.code()));
  const auto& ctx = err.context();
  if (!ctx.empty()) {
    if (ctx.match_element<std::string>(0)) // the text; what follows is data for callers
      str += ": " + ctx.get_as<std::string>(0);
    else
      str += ": " + caf::to_string(ctx);
  }
  return str;
}

} // namespace mneme
