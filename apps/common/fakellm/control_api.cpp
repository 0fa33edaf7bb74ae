// The control API of the fake LLM server (see fake_llm_server.hpp): /health,
// /control/faults (GET/POST/DELETE) and /control/stats. Runs on the loop thread;
// reads and replaces the shared scenario under the server's mutex.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "apps/common/fakellm/server_impl.hpp"
#include "apps/common/fakellm/wire_format.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"

namespace mneme::fakellm {

using json = nlohmann::json;

std::string stats_json(const fake_llm_stats& s, double elapsed_s) {
  json injected = json::object();
  for (int k = 0; k < fault_kind_count; ++k)
    injected[std::string(to_string(static_cast<fault_kind>(k)))] = s.injected[static_cast<size_t>(k)];
  json doc = {{"requests", {{"chat", s.chat_requests}, {"summary", s.summary_requests},
                            {"compaction", s.compaction_requests},
                            {"embedding", s.embedding_requests},
                            {"messages", s.messages_requests},
                            {"control", s.control_requests}, {"bad", s.bad_requests}}},
              {"server_compactions", s.server_compactions},
              {"window_overflows", s.window_overflows},
              {"max_chat_prompt_tokens", s.max_chat_prompt_tokens},
              {"injected", std::move(injected)},
              {"connections", {{"accepted", s.connections_accepted}, {"open", s.connections_open}}},
              {"tool_pairing", {{"orphan_calls", s.orphan_tool_calls},
                                {"orphan_results", s.orphan_tool_results},
                                {"requests_with_orphans", s.requests_with_orphans}}},
              {"elapsed_s", elapsed_s},
              {"server_threads", 1}};
  return doc.dump();
}

response_plan fake_llm_server::impl::handle_control(const http_request& req) {
  auto path = req.path();
  auto method_error = [&] {
    return json_plan(405, error_body("method " + req.method + " not allowed on " + std::string(path),
                                     "invalid_request_error", "method_not_allowed"),
                     req.keep_alive);
  };
  std::lock_guard<std::mutex> guard{mtx};
  ++counters.control_requests;
  if (path == "/health") {
    if (req.method != "GET") return method_error();
    return json_plan(200, R"({"status":"ok"})", req.keep_alive);
  }
  if (path == "/control/stats") {
    if (req.method != "GET") return method_error();
    return json_plan(200, stats_json(counters, elapsed_locked()), req.keep_alive);
  }
  if (path != "/control/faults") {
    ++counters.bad_requests;
    return json_plan(404, error_body("no such endpoint: " + std::string(path.substr(0, 200)),
                                     "invalid_request_error", "not_found"),
                     req.keep_alive);
  }
  if (req.method == "POST") {
    auto s = parse_scenario_json(req.body);
    if (!s)
      return json_plan(400, error_body(render_error(s.error()), "invalid_request_error",
                                       "invalid_scenario"),
                       req.keep_alive);
    scn = std::move(*s);
    injected_per_rule.assign(scn.plan.rules.size(), 0);
    scenario_start = scenario_now();
    log->info("port={} event=scenario_set rules={} seed={}", bound_port.load(), scn.plan.rules.size(),
              scn.plan.seed);
  } else if (req.method == "DELETE") {
    scn.plan.rules.clear();
    injected_per_rule.clear();
    scenario_start = scenario_now();
    log->info("port={} event=faults_cleared", bound_port.load());
  } else if (req.method != "GET") {
    return method_error();
  }
  auto doc = to_json(scn);
  doc["elapsed_s"] = elapsed_locked();
  doc["listener_refused"] = listener_refused(scn.plan, elapsed_locked());
  return json_plan(200, doc.dump(-1, ' ', false, json::error_handler_t::replace), req.keep_alive);
}

} // namespace mneme::fakellm
