// The soak's HTTP clients; see soak_http_client.hpp.
#include "apps/common/soak/soak_http_client.hpp"

#include <cctype>
#include <sstream>

#include <fmt/format.h>
#include <httplib.h>

#include "apps/common/api/json_codec.hpp"
#include "messages/trigger.hpp"

namespace mneme::soak {

namespace {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
constexpr auto connect_timeout = std::chrono::seconds(5);
constexpr const char* json_type = "application/json";

// The error of an HTTP answer that is not 2xx: the API's {"error":{code,message}}.
call_error http_error(const httplib::Response& res) {
  call_error e;
  e.status = res.status;
  auto body = json::parse(res.body, nullptr, false);
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    e.code = body["error"].value("code", "");
    e.message = body["error"].value("message", "");
  }
  if (e.code.empty())
    e.code = fmt::format("http_{}", res.status);
  if (e.message.empty())
    e.message = res.body.substr(0, 200);
  return e;
}

// The error of a call that got no answer; a read that ran the whole timeout timed out.
call_error transport_error(httplib::Error err, clock_type::duration took,
                           std::chrono::milliseconds read_timeout) {
  call_error e;
  e.timed_out = err == httplib::Error::Read && took >= read_timeout;
  e.code = e.timed_out ? "timeout" : "connection";
  e.message = httplib::to_string(err);
  return e;
}

call_result<json> decode(httplib::Result& res, clock_type::time_point started,
                         std::chrono::milliseconds read_timeout) {
  if (!res)
    return transport_error(res.error(), clock_type::now() - started, read_timeout);
  if (res->status < 200 || res->status >= 300)
    return http_error(*res);
  auto body = json::parse(res->body, nullptr, false);
  if (body.is_discarded())
    return call_error{"bad_response", "the answer is not JSON: " + res->body.substr(0, 200),
                      res->status, false};
  return body;
}

trigger trigger_named(const std::string& name) {
  for (size_t t = 0; t < runtime_metrics::trigger_slots; ++t) {
    auto candidate = to_string(static_cast<trigger>(t));
    if (candidate.size() == name.size()
        && std::equal(candidate.begin(), candidate.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a))
                    == std::tolower(static_cast<unsigned char>(b));
           }))
      return static_cast<trigger>(t);
  }
  return trigger::none;
}

// A json value of the wrong shape becomes "bad_response" instead of an exception.
template <class F>
auto guarded_decode(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const json::exception& e) {
    return call_error{"bad_response", std::string{"unexpected JSON: "} + e.what(), 200, false};
  }
}

std::unique_ptr<httplib::Client> make_client(const std::string& base_url,
                                             std::chrono::milliseconds read_timeout) {
  auto c = std::make_unique<httplib::Client>(base_url);
  c->set_connection_timeout(connect_timeout);
  c->set_read_timeout(read_timeout);
  c->set_write_timeout(read_timeout);
  c->set_keep_alive(true);
  // A POST's head and body leave in two writes: without this the body waits for the
  // daemon's delayed acknowledgement (~40 ms per call).
  c->set_tcp_nodelay(true);
  return c;
}

} // namespace

std::string encode_path_segment(const std::string& key) {
  std::string out;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::optional<daemon_counters> parse_daemon_metrics(const std::string& text) {
  daemon_counters out;
  bool seen_restarts = false;
  std::istringstream lines{text};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    auto space = line.rfind(' ');
    if (space == std::string::npos)
      continue;
    auto head = line.substr(0, space);
    double value = 0;
    try {
      value = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
      continue;
    }
    auto name = head.substr(0, head.find('{'));
    auto label = [&head](const std::string& k) -> std::string {
      auto at = head.find(k + "=\"");
      if (at == std::string::npos)
        return {};
      at += k.size() + 2;
      return head.substr(at, head.find('"', at) - at);
    };
    if (name == "mneme_session_restarts_total") {
      out.session_restarts = static_cast<int64_t>(value);
      seen_restarts = true;
    } else if (name == "mneme_compaction_exhausted_total") {
      out.compaction_exhausted = static_cast<int64_t>(value);
    } else if (name == "mneme_compactions_total") {
      auto t = static_cast<size_t>(trigger_named(label("trigger")));
      auto outcome = label("outcome");
      if (outcome == to_label(compaction_outcome_label::committed))
        out.compactions.committed[t] = static_cast<uint64_t>(value);
      else if (outcome == to_label(compaction_outcome_label::fallback))
        out.compactions.fallback[t] = static_cast<uint64_t>(value);
    }
  }
  if (!seen_restarts)
    return std::nullopt;
  return out;
}

daemon_client::daemon_client(const std::string& base_url, const std::string& token,
                             std::chrono::milliseconds read_timeout)
  : http_(make_client(base_url, read_timeout)), read_timeout_(read_timeout) {
  if (!token.empty())
    http_->set_bearer_token_auth(token);
}

daemon_client::~daemon_client() = default;

void daemon_client::stop() { http_->stop(); }

call_result<json> daemon_client::get_json(const std::string& path) {
  auto started = clock_type::now();
  auto res = http_->Get(path.c_str());
  return decode(res, started, read_timeout_);
}

call_result<json> daemon_client::post_json(const std::string& path, const json& body) {
  auto started = clock_type::now();
  auto res = http_->Post(path.c_str(), api::dump_json(body), json_type);
  return decode(res, started, read_timeout_);
}

call_result<int64_t> daemon_client::append(const std::string& key, const std::string& user,
                                           const message& row) {
  auto calls = json::array();
  for (const auto& c : row.tool_calls)
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  json body{{"user", user},
            {"role", std::string{to_string(row.role)}},
            {"content", row.content},
            {"tool_call_id", row.tool_call_id},
            {"tool_name", row.tool_name},
            {"tool_calls", std::move(calls)}};
  auto r = post_json("/v1/sessions/" + encode_path_segment(key) + "/messages", body);
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<int64_t> { return r->at("id").get<int64_t>(); });
}

call_result<turn_reply> daemon_client::turn(const std::string& key, const std::string& user,
                                            const std::string& content) {
  return post_turn(key, {{"user", user}, {"content", content}});
}

call_result<turn_reply> daemon_client::agent_turn(const std::string& key, const std::string& user,
                                                  const turn_input& in) {
  json body{{"user", user}};
  if (in.is_continuation()) {
    auto results = json::array();
    for (const auto& r : in.tool_results)
      results.push_back({{"tool_call_id", r.tool_call_id}, {"content", r.content},
                         {"is_error", r.is_error}});
    body["tool_results"] = std::move(results);
  } else {
    body["content"] = in.content;
    if (in.abandon_pending)
      body["abandon_pending"] = true;
  }
  if (in.set_tools)
    body["tools"] = json::parse(in.tools_json);
  return post_turn(key, body);
}

call_result<turn_reply> daemon_client::post_turn(const std::string& key, const json& body) {
  auto r = post_json("/v1/sessions/" + encode_path_segment(key) + "/turns", body);
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<turn_reply> {
    const auto& j = *r;
    turn_reply t;
    t.finish_reason = j.value("finish_reason", "");
    if (auto calls = j.find("tool_calls"); calls != j.end() && calls->is_array())
      for (const auto& c : *calls)
        t.tool_calls.push_back({c.at("id").get<std::string>(), c.value("name", ""),
                                c.value("arguments", "")});
    t.session_id = j.at("session_id").get<std::string>();
    t.answer = j.value("answer", "");
    t.notice = j.value("notice", "");
    t.live_messages = j.value("live_messages", int64_t{0});
    t.live_tokens = j.at("live_tokens").get<int64_t>();
    t.prompt_tokens = j.value("prompt_tokens", int64_t{0});
    const auto& reports = j.at("compactions");
    for (const auto& c : reports) {
      compaction_report rep;
      rep.by = trigger_named(c.value("trigger", ""));
      rep.committed = c.value("committed", false);
      rep.used_fallback = c.value("used_fallback", false);
      rep.tokens_before = c.value("tokens_before", int64_t{0});
      rep.tokens_after = c.value("tokens_after", int64_t{0});
      t.compactions.push_back(rep);
    }
    return t;
  });
}

call_result<session_poll> daemon_client::state(const std::string& key, const std::string& user) {
  auto r = get_json("/v1/sessions/" + encode_path_segment(key) + "?live=false"
                    + (user.empty() ? std::string{} : "&user=" + encode_path_segment(user)));
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<session_poll> {
    const auto& j = *r;
    session_poll p;
    p.session_id = j.at("session").at("id").get<std::string>();
    p.live_tokens = j.at("live_tokens").get<int64_t>();
    p.threshold_tokens = j.value("threshold_tokens", int64_t{0});
    p.context_window = j.value("context_window", int64_t{0});
    for (const auto& n : j.at("compactions_by_trigger"))
      p.compactions += n.get<int64_t>();
    return p;
  });
}

call_result<std::vector<std::string>> daemon_client::session_ids(const std::string& user,
                                                                 int64_t limit) {
  auto r = get_json(fmt::format("/v1/sessions?user={}&limit={}", encode_path_segment(user),
                                limit));
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<std::vector<std::string>> {
    std::vector<std::string> ids;
    for (const auto& s : r->at("sessions"))
      ids.push_back(s.at("id").get<std::string>());
    return ids;
  });
}

call_result<std::vector<exported_row>> daemon_client::export_rows(const std::string& session_id) {
  auto started = clock_type::now();
  auto res = http_->Get(("/v1/sessions/" + encode_path_segment(session_id) + "/export").c_str());
  if (!res)
    return transport_error(res.error(), clock_type::now() - started, read_timeout_);
  if (res->status != 200)
    return http_error(*res);
  std::vector<exported_row> rows;
  std::istringstream lines{res->body};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty())
      continue;
    auto j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("content") || !j["content"].is_string())
      return call_error{"bad_response", "an export line is not a row: " + line.substr(0, 200),
                        res->status, false};
    rows.push_back({j["content"].get<std::string>(), j.value("is_summary", false)});
  }
  return rows;
}

call_result<std::vector<compaction_log_entry>>
daemon_client::compaction_log(const std::string& session_id) {
  auto r = get_json("/v1/sessions/" + encode_path_segment(session_id) + "/compactions");
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<std::vector<compaction_log_entry>> {
    std::vector<compaction_log_entry> log;
    for (const auto& a : r->at("attempts")) {
      compaction_log_entry e;
      e.session_id = session_id;
      e.at_ms = a.at("at_ms").get<int64_t>();
      e.trigger = a.value("trigger", "");
      e.mode = a.value("mode", "");
      e.outcome = a.value("outcome", "");
      e.identifiers_in = a.value("identifiers_in", int64_t{0});
      e.identifiers_kept = a.value("identifiers_kept", int64_t{0});
      log.push_back(std::move(e));
    }
    return log;
  });
}

call_result<std::vector<marker_hit>> daemon_client::search(const std::string& user,
                                                           const std::string& query,
                                                           int64_t limit) {
  httplib::Params params{{"q", query}, {"user", user}, {"limit", std::to_string(limit)}};
  auto started = clock_type::now();
  auto res = http_->Get("/v1/search", params, httplib::Headers{});
  auto r = decode(res, started, read_timeout_);
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<std::vector<marker_hit>> {
    std::vector<marker_hit> hits;
    for (const auto& h : r->at("hits"))
      hits.push_back({h.at("session_id").get<std::string>(), h.value("kind", "") == "archived"});
    return hits;
  });
}

call_result<json> daemon_client::health() { return get_json("/v1/health"); }

call_result<bool> daemon_client::check_access() {
  auto r = get_json("/v1/sessions?limit=1");
  if (!r)
    return r.error();
  return true;
}

call_result<daemon_counters> daemon_client::counters() {
  auto started = clock_type::now();
  auto res = http_->Get("/metrics");
  if (!res)
    return transport_error(res.error(), clock_type::now() - started, read_timeout_);
  if (res->status != 200)
    return http_error(*res);
  auto parsed = parse_daemon_metrics(res->body);
  if (!parsed)
    return call_error{"bad_response", "/metrics has no mneme_session_restarts_total",
                      res->status, false};
  return *parsed;
}

fakellm_control::fakellm_control(const std::string& base_url)
  : http_(make_client(base_url, std::chrono::seconds(10))) {}

fakellm_control::~fakellm_control() = default;

std::optional<call_error> fakellm_control::set_scenario(const json& scenario) {
  auto started = clock_type::now();
  auto res = http_->Post("/control/faults", scenario.dump(), json_type);
  if (!res)
    return transport_error(res.error(), clock_type::now() - started, std::chrono::seconds(10));
  if (res->status != 200)
    return http_error(*res);
  return std::nullopt;
}

call_result<fakellm_counts> fakellm_control::stats() {
  auto started = clock_type::now();
  auto res = http_->Get("/control/stats");
  auto r = decode(res, started, std::chrono::seconds(10));
  if (!r)
    return r.error();
  return guarded_decode([&]() -> call_result<fakellm_counts> {
    fakellm_counts c;
    for (const auto& [kind, n] : r->at("injected").items())
      c.injected[kind] = n.get<int64_t>();
    c.chat_requests = r->at("requests").at("chat").get<int64_t>();
    c.summary_requests = r->at("requests").at("summary").get<int64_t>();
    if (auto tp = r->find("tool_pairing"); tp != r->end() && tp->is_object()) {
      c.pairing_audited = true;
      c.orphan_tool_calls = tp->value("orphan_calls", int64_t{0});
      c.orphan_tool_results = tp->value("orphan_results", int64_t{0});
      c.requests_with_orphans = tp->value("requests_with_orphans", int64_t{0});
    }
    return c;
  });
}

} // namespace mneme::soak
