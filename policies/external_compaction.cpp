// Who compacts; the decision table is in external_compaction.hpp.
#include "policies/external_compaction.hpp"

#include <algorithm>
#include <cassert>

#include "policies/utf8.hpp"

namespace mneme {

std::string_view to_string(backend_kind b) {
  switch (b) {
    case backend_kind::chat_completions: return "chat_completions";
    case backend_kind::responses: return "responses";
    case backend_kind::codex_app_server: return "codex_app_server";
  }
  return "unknown";
}

std::string_view to_string(compactor c) {
  switch (c) {
    case compactor::mneme: return "mneme";
    case compactor::server_first: return "server_first";
    case compactor::backend_native: return "backend_native";
    case compactor::backend_endpoint: return "backend_endpoint";
    case compactor::nobody: return "nobody";
    case compactor::count_: break;
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, backend_kind b) { return os << to_string(b); }
std::ostream& operator<<(std::ostream& os, compactor c) { return os << to_string(c); }

std::ostream& operator<<(std::ostream& os, const external_compaction_decision& d) {
  return os << "{who=" << d.who << " server_compact_threshold=" << d.server_compact_threshold
            << " mneme_threshold=" << d.mneme_threshold << "}";
}

bool supports_native_compaction(std::string_view model_name,
                                const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return !p.empty() && contains_ignoring_case(model_name, p);
  });
}

external_compaction_decision decide_external_compaction(const compression_params& params,
                                                        backend_kind backend,
                                                        std::string_view model_name,
                                                        int64_t threshold,
                                                        int64_t context_window) {
  assert(threshold > 0 && context_window > 0);
  threshold = std::max<int64_t>(1, threshold);
  context_window = std::max<int64_t>(1, context_window);
  external_compaction_decision d;
  if (backend == backend_kind::codex_app_server) {
    switch (params.codex_app_server_auto) {
      case codex_mode::native: d.who = compactor::backend_native; return d;
      case codex_mode::off: d.who = compactor::nobody; return d;
      case codex_mode::managed:
        d.who = compactor::backend_endpoint;
        d.mneme_threshold = threshold;
        return d;
    }
  }
  if (params.codex_responses_native && supports_native_compaction(model_name)) {
    const int64_t asked = params.codex_responses_compact_threshold > 0
                              ? params.codex_responses_compact_threshold
                              : threshold;
    const int64_t server = std::clamp<int64_t>(asked, 1, context_window);
    const int64_t margin = std::max<int64_t>(
        1, (context_window - server) * k_server_first_margin_percent / 100);
    d.who = compactor::server_first;
    d.server_compact_threshold = server;
    d.mneme_threshold = std::min(context_window, server + margin);
    return d;
  }
  d.who = compactor::mneme;
  d.mneme_threshold = threshold;
  return d;
}

} // namespace mneme
