// What every door's answer shares; see door_answer.hpp.
#include "apps/common/api/doors/door_answer.hpp"

namespace mneme::api {

int64_t committed_compactions(const turn_reply& r) {
  int64_t n = 0;
  for (const auto& x : r.compactions)
    n += x.committed ? 1 : 0;
  return n;
}

header_list mneme_answer_headers(const std::string& session_id, int64_t compactions,
                                 bool with_count, int64_t rebased) {
  header_list h;
  if (!session_id.empty())
    h.emplace_back("X-Mneme-Session-Id", session_id);
  if (with_count)
    h.emplace_back("X-Mneme-Compactions", std::to_string(compactions));
  if (rebased > 0)
    h.emplace_back("X-Mneme-Rebased", std::to_string(rebased));
  return h;
}

void add_idempotency_headers(header_list& h, bool replayed, std::string_view error_code) {
  if (replayed)
    h.emplace_back(idempotent_replayed_header, "true");
  if (error_code == "idempotency_in_flight")
    h.emplace_back("Retry-After", "1");
}

std::string door_metrics_text(std::string_view door, std::string_view route, int64_t stateless,
                              int64_t errors, const door_conversations::counters& h) {
  const std::string prefix = "mneme_" + std::string{door};
  const std::string requests = prefix + "_requests_total";
  std::string out = "# HELP " + requests + " Requests of " + std::string{route} + " by style\n"
                    + "# TYPE " + requests + " counter\n";
  auto styled = [&](const char* style, int64_t v) {
    out += requests + "{style=\"" + style + "\"} " + std::to_string(v) + "\n";
  };
  styled("stateless", stateless);
  styled("stateful", h.stateful.load());
  styled("full_history", h.full_history.load());
  auto counter = [&](const char* suffix, const char* help, int64_t v) {
    auto name = prefix + suffix;
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " "
           + std::to_string(v) + "\n";
  };
  counter("_rebased_total",
          "Requests whose history contradicted the stored one (rolled back to the last common row)",
          h.rebased.load());
  counter("_replayed_total",
          "Requests answered with their stored answer again (a resent, answered transcript)",
          h.replayed.load());
  counter("_history_reads_total",
          "Requests that read every row of their session to match the history",
          h.history_reads.load());
  counter("_errors_total", "Requests answered with an error", errors);
  return out;
}

std::string door_label_metrics_text(std::string_view label, int64_t stateless, int64_t errors,
                                    const door_conversations::counters& h) {
  const std::string door = "door=\"" + std::string{label} + "\"";
  std::string out =
    "# HELP mneme_door_requests_total Requests of the clients' doors by door and style\n"
    "# TYPE mneme_door_requests_total counter\n";
  auto styled = [&](const char* style, int64_t v) {
    out += "mneme_door_requests_total{" + door + ",style=\"" + style + "\"} "
           + std::to_string(v) + "\n";
  };
  styled("stateless", stateless);
  styled("stateful", h.stateful.load());
  styled("full_history", h.full_history.load());
  auto counter = [&](const char* name, const char* help, int64_t v) {
    out += std::string{"# HELP "} + name + " " + help + "\n# TYPE " + name + " counter\n" + name
           + "{" + door + "} " + std::to_string(v) + "\n";
  };
  counter("mneme_door_rebased_total",
          "Door requests whose history contradicted the stored one (rolled back)",
          h.rebased.load());
  counter("mneme_door_replayed_total", "Door requests answered with their stored answer again",
          h.replayed.load());
  counter("mneme_door_history_reads_total",
          "Door requests that read every row of their session to match the history",
          h.history_reads.load());
  counter("mneme_door_errors_total", "Door requests answered with an error", errors);
  return out;
}

} // namespace mneme::api
