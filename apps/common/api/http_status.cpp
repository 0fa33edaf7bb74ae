// Error -> HTTP status and JSON code; see http_status.hpp.
#include "apps/common/api/http_status.hpp"

#include "caf/sec.hpp"

#include "policies/key_namespace.hpp"

namespace mneme::api {

namespace {

bool is_mneme(const caf::error& err) {
  return err.category() == caf::detail::error_factory<errc>::category;
}

} // namespace

int http_status_of(errc code) {
  switch (code) {
    case errc::bad_request:
    case errc::foreign_session: return 400;
    case errc::not_found: return 404;
    case errc::overloaded: return 429;
    case errc::shutting_down: return 503;
    case errc::config_invalid:
    case errc::internal: return 500;
    case errc::session_busy: return 409;
    case errc::storage_failed:
    case errc::storage_disk_full:
    case errc::storage_corrupt:
    case errc::storage_locked:
    case errc::storage_schema_too_new:
    case errc::storage_readonly:
    case errc::storage_cant_open: return 500;
    case errc::llm_idle_timeout:
    case errc::llm_total_timeout: return 504;
    case errc::llm_long_context_rate_limit:
    case errc::llm_rate_limited:
    case errc::llm_quota: return 503;
    case errc::llm_refused:
    case errc::llm_dns:
    case errc::llm_tls:
    case errc::llm_network:
    case errc::llm_payload_too_large:
    case errc::llm_output_too_large:
    case errc::llm_context_overflow:
    case errc::llm_unsupported_parameter:
    case errc::llm_auth:
    case errc::llm_server_error:
    case errc::llm_bad_request:
    case errc::llm_malformed:
    case errc::llm_empty_answer:
    case errc::compaction_failed: return 502;
    case errc::compaction_locked:
    case errc::compaction_exhausted:
    case errc::nothing_to_compact:
    case errc::compaction_in_flight: return 409;
    case errc::context_unfittable: return 413; // the request cannot be made to fit
    case errc::tool_results_pending:
    case errc::tool_round_cap: return 409;
    case errc::lease_elsewhere: // reaches a client only when forwarding failed
    case errc::lease_lost: return 503;
    case errc::idempotency_key_reused: return 422;
    case errc::idempotency_in_flight:
    case errc::idempotency_unanswered: return 409;
  }
  return 500;
}

int http_status_of(const caf::error& err) {
  if (is_mneme(err))
    return http_status_of(static_cast<errc>(err.code()));
  if (err == caf::sec::request_timeout)
    return 504;
  return 500;
}

std::string error_code_of(const caf::error& err) {
  if (is_mneme(err)) {
    auto code = static_cast<errc>(err.code());
    // A user token never sees it (answered as an unknown key); to an admin naming the
    // wrong user it is the bad request it always was.
    return code == errc::foreign_session ? "bad_request" : to_string(code);
  }
  if (err == caf::sec::request_timeout)
    return "request_timeout";
  return "internal";
}

std::string error_message_of(const caf::error& err) {
  const auto& ctx = err.context();
  if (is_mneme(err) && !ctx.empty() && ctx.match_element<std::string>(0))
    return without_namespaces(ctx.get_as<std::string>(0)); // a client sees its own key
  if (is_mneme(err))
    return without_namespaces(render_error(err));
  return caf::to_string(err);
}

std::string unknown_key_message(const std::string& key) {
  return "no session under key or id '" + key + "'";
}

bool hidden_from(const access_scope& who, const caf::error& err) {
  return !who.is_admin() && err == errc::foreign_session;
}

caf::error as_seen_by(const access_scope& who, const caf::error& err, const std::string& key) {
  if (hidden_from(who, err))
    return caf::make_error(errc::not_found, unknown_key_message(key));
  return err;
}

} // namespace mneme::api
