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
  : opt_(opt), faults_(std::move(faults)) {
  for (const auto& url : opt.server_urls)
    api_.push_back(std::make_unique<daemon_client>(url, opt.token, control_timeout));
}

http_target::~http_target() { shutdown(); }

std::unique_ptr<http_target> http_target::connect(const http_target_options& opt,
                                                  nlohmann::json faults, std::string& why) {
  std::unique_ptr<http_target> t{new http_target(opt, std::move(faults))};
  bool rss_everywhere = true;
  for (size_t i = 0; i < opt.server_urls.size(); ++i) {
    const auto& url = opt.server_urls[i];
    auto& api = *t->api_[i];
    auto health = api.health();
    if (!health) {
      why = fmt::format("the daemon at {} does not answer GET /v1/health: {}", url,
                        describe(health.error()));
      return nullptr;
    }
    auto version = health->value("version", "");
    if (i == 0)
      t->version_ = version;
    else if (version != t->version_)
      t->version_ += " / " + version;
    rss_everywhere = rss_everywhere && health->value("rss_bytes", int64_t{-1}) > 0;
    auto access = api.check_access();
    if (!access) {
      why = access.error().status == 401
              ? fmt::format("the daemon at {} refused the {} (HTTP 401): pass the daemon's "
                            "gateway.auth_token with --token", url,
                            opt.token.empty() ? "request without a token" : "token given")
              : fmt::format("the daemon at {} refused GET /v1/sessions: {}", url,
                            describe(access.error()));
      return nullptr;
    }
    if (!api.counters()) {
      why = fmt::format("the daemon at {} serves no usable GET /metrics", url);
      return nullptr;
    }
  }
  t->reports_rss_ = rss_everywhere;
  if (!t->reports_rss_)
    t->notes_.push_back(fmt::format("{} GET /v1/health reports no rss_bytes: the RSS plateau "
                                    "was not checked.", opt.server_urls.size() == 1
                                                          ? "The daemon's" : "A node's"));
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
  dp.base_urls = opt_.server_urls;
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

daemon_client& http_target::reader() {
  auto& c = *api_[read_cursor_];
  read_cursor_ = (read_cursor_ + 1) % api_.size();
  return c;
}

std::optional<session_poll> http_target::poll_session(const std::string& key,
                                                      const std::string& user) {
  auto s = reader().state(key, user);
  if (!s)
    return std::nullopt;
  return *s;
}

std::optional<compaction_counts> http_target::compactions() {
  compaction_counts sum;
  for (auto& api : api_) {
    auto c = api->counters();
    if (!c)
      return std::nullopt;   // a partial sum would look like counters going back
    for (size_t t = 0; t < sum.committed.size(); ++t) {
      sum.committed[t] += c->compactions.committed[t];
      sum.fallback[t] += c->compactions.fallback[t];
    }
  }
  return sum;
}

std::optional<supervisor_stats> http_target::supervisor() {
  supervisor_stats s;
  for (auto& api : api_) {
    auto c = api->counters();
    if (!c)
      return std::nullopt;
    s.restarts += c->session_restarts;
    s.exhausted += c->compaction_exhausted;
  }
  return s;
}

std::optional<rss_figures> http_target::rss() {
  if (!reports_rss_ || api_.size() != 1)
    return std::nullopt;   // several nodes: rss_by_node()
  auto h = api_[0]->health();
  if (!h)
    return std::nullopt;
  auto bytes = h->value("rss_bytes", int64_t{-1});
  if (bytes <= 0)
    return std::nullopt;
  return rss_figures{bytes, bytes};
}

std::vector<std::pair<std::string, int64_t>> http_target::rss_by_node() {
  std::vector<std::pair<std::string, int64_t>> out;
  if (!reports_rss_ || api_.size() == 1)
    return out;
  for (size_t i = 0; i < api_.size(); ++i)
    if (auto h = api_[i]->health(); h && h->value("rss_bytes", int64_t{-1}) > 0)
      out.emplace_back(opt_.server_urls[i], h->value("rss_bytes", int64_t{-1}));
  return out;
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
  for (size_t i = 0; i < api_.size(); ++i)
    for (int attempt = 0;; ++attempt) {
      auto h = api_[i]->health();
      if (h)
        break;
      if (attempt == 1)
        return fmt::format("the {} at {} stopped answering GET /v1/health: {}",
                           api_.size() == 1 ? "daemon" : "node", opt_.server_urls[i],
                           describe(h.error()));
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  return {};
}

std::vector<std::string> http_target::each_session(
  const std::function<std::string(const std::string& session_id)>& visit) {
  std::vector<std::string> problems;
  for (int64_t u = 0; u < users_; ++u) {
    auto uid = user_id(u);
    auto ids = reader().session_ids(uid, sessions_per_user_max);
    if (!ids) {
      problems.push_back(fmt::format("GET /v1/sessions?user={}: {}", uid, describe(ids.error())));
      continue;
    }
    for (const auto& id : *ids)
      if (auto problem = visit(id); !problem.empty())
        problems.push_back(std::move(problem));
  }
  return problems;
}

std::vector<std::string> http_target::visit_stored_rows(
  const std::function<void(const std::string&, const std::string&)>& visit) {
  return each_session([&](const std::string& id) {
    auto rows = reader().export_rows(id);
    if (!rows)
      return fmt::format("GET /v1/sessions/{}/export: {}", id, describe(rows.error()));
    for (const auto& r : *rows)
      if (!r.is_summary)
        visit(id, r.content);
    return std::string{};
  });
}

std::vector<std::string> http_target::visit_compaction_log(
  const std::function<void(const compaction_log_entry&)>& visit) {
  return each_session([&](const std::string& id) {
    auto log = reader().compaction_log(id);
    if (!log)
      return fmt::format("GET /v1/sessions/{}/compactions: {}", id, describe(log.error()));
    for (const auto& e : *log)
      visit(e);
    return std::string{};
  });
}

caf::expected<std::string> http_target::ask(const std::string& key, const std::string& user,
                                            const std::string& text) {
  auto r = reader().turn(key, user, text);
  if (!r)
    return caf::make_error(errc::internal, "POST /turns: " + describe(r.error()));
  return std::move(r->answer);
}

caf::expected<std::vector<marker_hit>> http_target::search(const std::string& user_id,
                                                           const std::string& query) {
  auto found = reader().search(user_id, query, recall_max_sessions);
  if (!found)
    return caf::make_error(errc::internal, "GET /v1/search: " + describe(found.error()));
  return std::move(*found);
}

void http_target::shutdown() { stop_driving(); }

} // namespace mneme::soak
