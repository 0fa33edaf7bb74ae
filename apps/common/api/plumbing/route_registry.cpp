// The API's routes; see route_registry.hpp.
#include "apps/common/api/plumbing/route_registry.hpp"

#include <cassert>

#include <nlohmann/json.hpp>

#include "policies/metric_families.hpp"

namespace mneme::api {

void reshape_refusal(http_response& r, const route_row* row) {
  if (!row || !row->refusal || r.status < 400)
    return;
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (!body.is_object() || body.size() != 1 || !body.contains("error"))
    return;
  const auto& e = body["error"];
  if (!e.is_object() || e.size() != 2 || !e.contains("code") || !e.contains("message")
      || !e["code"].is_string() || !e["message"].is_string())
    return;
  r.body = row->refusal(r.status, e["code"].get<std::string>(), e["message"].get<std::string>());
}

void route_registry::add(std::string method, std::string pattern, route_handler handler,
                         route_access access, route_kind kind, refusal_body refusal) {
  assert(handler);
  auto index = table_.add(method, pattern);
  assert(index == rows_.size());
  (void)index;
  rows_.push_back({std::move(method), std::move(pattern), std::move(handler), access, kind,
                   std::move(refusal)});
}

void route_registry::add_token_free(std::string pattern, route_handler handler) {
  add("GET", std::move(pattern), std::move(handler), route_access::open);
  rows_.back().token_free = true;
}

void route_registry::add_metrics(std::function<std::string()> section) {
  metrics_.push_back(std::move(section));
}

route_registry::found route_registry::find(std::string_view method,
                                           std::string_view raw_path) const {
  auto match = table_.find(method, raw_path);
  found out;
  if (match.route)
    out.row = &rows_[*match.route];
  if (match.first_at_path)
    out.at_path = &rows_[*match.first_at_path];
  out.args = std::move(match.args);
  out.allowed = std::move(match.allowed);
  return out;
}

std::string route_registry::metrics_text() const {
  std::string out;
  for (const auto& section : metrics_)
    out += section();
  return merge_metric_families(out); // the doors' door-labelled families, one each
}

} // namespace mneme::api
