// The daemon soak target; see soak_http_target.hpp.
#include "apps/common/soak/soak_http_target.hpp"

#include <thread>

#include <fmt/format.h>

#include "apps/common/soak/soak_driver.hpp"
#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "messages/recall_types.hpp"

namespace mneme::soak {

namespace {

constexpr auto control_timeout = std::chrono::seconds(10);
constexpr int64_t sessions_per_user_max = 100000;   // the API's list limit

std::string describe(const call_error& e) {
  if (e.status == 0)
    return fmt::format("{} ({})", e.code, e.message);
  return fmt::format("HTTP {} {}: {}", e.status, e.code, e.message);
}

} // namespace

http_target::http_target(const http_target_options& opt, nlohmann::json faults)
  : opt_(opt), faults_(std::move(faults)), api_(opt.server_url, opt.token, control_timeout) {}

http_target::~http_target() { shutdown(); }

std::unique_ptr<http_target> http_target::connect(const http_target_options& opt,
                                                  nlohmann::json faults, std::string& why) {
  std::unique_ptr<http_target> t{new http_target(opt, std::move(faults))};
  auto health = t->api_.health();
  if (!health) {
    why = fmt::format("the daemon at {} does not answer GET /v1/health: {}", opt.server_url,
                      describe(health.error()));
    return nullptr;
  }
  t->version_ = health->value("version", "");
  t->reports_rss_ = health->value("rss_bytes", int64_t{-1}) > 0;
  if (!t->reports_rss_)
    t->notes_.push_back("The daemon's GET /v1/health reports no rss_bytes: the RSS plateau "
                        "was not checked.");
  auto access = t->api_.check_access();
  if (!access) {
    why = access.error().status == 401
            ? fmt::format("the daemon at {} refused the {} (HTTP 401): pass the daemon's "
                          "gateway.auth_token with --token", opt.server_url,
                          opt.token.empty() ? "request without a token" : "token given")
            : fmt::format("the daemon at {} refused GET /v1/sessions: {}", opt.server_url,
                          describe(access.error()));
    return nullptr;
  }
  if (!t->api_.counters()) {
    why = fmt::format("the daemon at {} serves no usable GET /metrics", opt.server_url);
    return nullptr;
  }
  if (!opt.fakellm_url.empty()) {
    t->llm_ = std::make_unique<fakellm_control>(opt.fakellm_url);
    auto stats = t->llm_->stats();
    if (!stats) {
      why = fmt::format("the fake LLM at {} does not answer GET /control/stats: {}",
                        opt.fakellm_url, describe(stats.error()));
      return nullptr;
    }
  }
  return t;
}

void http_target::start_driving(const drive_plan& plan) {
  users_ = plan.users;
  if (llm_) {
    if (auto base = llm_->stats())
      llm_baseline_ = *base;
    // The scenario's clock starts now: its fault windows are run time.
    if (opt_.set_faults)
      if (auto e = llm_->set_scenario(faults_))
        fault_problem_ = fmt::format("the fake LLM at {} refused the scenario's faults: {}",
                                     opt_.fakellm_url, describe(*e));
  }
  http_driver_params dp;
  dp.base_url = opt_.server_url;
  dp.token = opt_.token;
  dp.turn_timeout = opt_.turn_timeout;
  dp.connections = opt_.connections;
  dp.plan = plan;
  driver_ = std::make_unique<http_driver>(std::move(dp));
}

void http_target::stop_driving() {
  if (driver_)
    driver_->stop();
}

std::optional<session_poll> http_target::poll_session(const std::string& key) {
  auto s = api_.state(key);
  if (!s)
    return std::nullopt;
  return *s;
}

std::optional<compaction_counts> http_target::compactions() {
  auto c = api_.counters();
  if (!c)
    return std::nullopt;
  return c->compactions;
}

std::optional<supervisor_stats> http_target::supervisor() {
  auto c = api_.counters();
  if (!c)
    return std::nullopt;
  supervisor_stats s;
  s.restarts = c->session_restarts;
  s.exhausted = c->compaction_exhausted;
  return s;
}

std::optional<rss_figures> http_target::rss() {
  if (!reports_rss_)
    return std::nullopt;
  auto h = api_.health();
  if (!h)
    return std::nullopt;
  auto bytes = h->value("rss_bytes", int64_t{-1});
  if (bytes <= 0)
    return std::nullopt;
  return rss_figures{bytes, bytes};
}

fault_figures http_target::faults() {
  if (!llm_) {
    fault_figures none;
    none.injected_by_runner = false;
    return none;
  }
  auto now = llm_->stats();
  if (!now)
    return last_faults_;
  fault_figures f;
  f.injected_by_runner = opt_.set_faults && fault_problem_.empty();
  for (const auto& [kind, n] : now->injected) {
    auto base = llm_baseline_.injected.count(kind) ? llm_baseline_.injected.at(kind) : 0;
    if (n - base > 0) {
      f.by_kind[kind] = n - base;
      f.total += n - base;
    }
  }
  f.chat_requests = now->chat_requests - llm_baseline_.chat_requests;
  f.summary_requests = now->summary_requests - llm_baseline_.summary_requests;
  f.pairing_audited = now->pairing_audited;
  f.orphan_tool_calls = now->orphan_tool_calls - llm_baseline_.orphan_tool_calls;
  f.orphan_tool_results = now->orphan_tool_results - llm_baseline_.orphan_tool_results;
  f.requests_with_orphans = now->requests_with_orphans - llm_baseline_.requests_with_orphans;
  last_faults_ = f;
  return f;
}

std::string http_target::liveness_problem() {
  if (!fault_problem_.empty())
    return fault_problem_;
  // Two failed health calls a second apart: one may be a busy moment.
  for (int attempt = 0;; ++attempt) {
    auto h = api_.health();
    if (h)
      return {};
    if (attempt == 1)
      return fmt::format("the daemon at {} stopped answering GET /v1/health: {}",
                         opt_.server_url, describe(h.error()));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::vector<std::string> http_target::visit_stored_rows(
  const std::function<void(const std::string&, const std::string&)>& visit) {
  std::vector<std::string> problems;
  for (int64_t u = 0; u < users_; ++u) {
    auto uid = user_id(u);
    auto ids = api_.session_ids(uid, sessions_per_user_max);
    if (!ids) {
      problems.push_back(fmt::format("GET /v1/sessions?user={}: {}", uid, describe(ids.error())));
      continue;
    }
    for (const auto& id : *ids) {
      auto rows = api_.export_rows(id);
      if (!rows) {
        problems.push_back(fmt::format("GET /v1/sessions/{}/export: {}", id,
                                       describe(rows.error())));
        continue;
      }
      for (const auto& r : *rows)
        if (!r.is_summary)
          visit(id, r.content);
    }
  }
  return problems;
}

caf::expected<std::string> http_target::ask(const std::string& key, const std::string& user,
                                            const std::string& text) {
  auto r = api_.turn(key, user, text);
  if (!r)
    return caf::make_error(errc::internal, "POST /turns: " + describe(r.error()));
  return std::move(r->answer);
}

caf::expected<std::vector<marker_hit>> http_target::search(const std::string& user_id,
                                                           const std::string& query) {
  auto found = api_.search(user_id, query, recall_max_sessions);
  if (!found)
    return caf::make_error(errc::internal, "GET /v1/search: " + describe(found.error()));
  return std::move(*found);
}

void http_target::shutdown() { stop_driving(); }

} // namespace mneme::soak
