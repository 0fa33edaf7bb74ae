// Summary failure actions, summarizer health and the per-endpoint log gate; see
// summary_failure.hpp for the rules.
#include "policies/summary_failure.hpp"

#include <algorithm>

namespace mneme {

std::string_view to_string(summary_failure_action a) {
  switch (a) {
    case summary_failure_action::fallback: return "fallback";
    case summary_failure_action::abort: return "abort";
    case summary_failure_action::abort_auth: return "abort_auth";
  }
  return "unknown";
}

summary_failure_action on_summary_failure(llm_error_kind kind, bool abort_on_summary_failure) {
  if (kind == llm_error_kind::auth || kind == llm_error_kind::quota)
    return summary_failure_action::abort_auth;
  return abort_on_summary_failure ? summary_failure_action::abort
                                  : summary_failure_action::fallback;
}

std::string auth_cooldown_reason_for(std::string_view detail) {
  std::string out{auth_cooldown_reason};
  if (!detail.empty()) {
    out += ": ";
    out.append(detail);
  }
  return out;
}

bool is_auth_cooldown(std::string_view cooldown_reason) {
  return cooldown_reason.substr(0, auth_cooldown_reason.size()) == auth_cooldown_reason;
}

std::string endpoint_for_log(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const size_t scheme = url.find("://");
  const size_t host_from = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t path_from = std::min(url.size(), url.find('/', host_from));
  const size_t at = url.substr(0, path_from).rfind('@');
  if (at == std::string_view::npos || at < host_from) return std::string{url};
  return std::string{url.substr(0, host_from)} + std::string{url.substr(at + 1)};
}

std::string_view to_string(summarizer_health h) {
  switch (h) {
    case summarizer_health::ok: return "ok";
    case summarizer_health::auth_failed: return "auth_failed";
  }
  return "unknown";
}

summarizer_health next_summarizer_health(summarizer_health now, summarizer_event e) {
  switch (e) {
    case summarizer_event::answered: return summarizer_health::ok;
    case summarizer_event::auth_failed: return summarizer_health::auth_failed;
    case summarizer_event::other_failure: return now;
  }
  return now;
}

bool keyed_interval_gate::allow(const std::string& key, int64_t now_ms, int64_t& suppressed) {
  auto [it, fresh] = keys_.try_emplace(key);
  entry& e = it->second;
  if (!fresh && now_ms - e.last_ms < interval_ms) {
    ++e.held;
    return false;
  }
  suppressed = e.held;
  e.held = 0;
  e.last_ms = now_ms;
  return true;
}

} // namespace mneme
