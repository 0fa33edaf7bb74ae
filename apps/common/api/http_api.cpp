// The daemon's routes; see http_api.hpp.
//
// Decisions where the SPEC is silent:
//   - a read by {key} first asks the gateway (open session under the key, rehydrated if
//     needed), then takes {key} as a stored session id (any state, ended included);
//   - GET /v1/sessions/{key} of a session that is not open answers a snapshot built
//     from the store (record, live rows and their token sum) instead of a session
//     actor's;
//   - checkpoints and export resolve {key} in the store only (newest open session under
//     the key, else a session id) and never start a session actor;
//   - POST /compact without around_id is T12 (whole session), with it T13;
//   - the session id of an append's answer comes from the gateway's state after the
//     append (a reset in between names the new session);
//   - POST /checkpoints with a name the session already has (active or undone by a
//     rollback) is 409 checkpoint_exists unless "replace":true; the check reads the
//     store's list first, so two simultaneous creates of a new name both succeed;
//   - facts: {user} and {key} are path segments (percent-decoded after the split: a
//     user may hold an encoded '/', the fact key is the rest of the path); PUT answers the active version, DELETE the tombstone (nothing
//     is deleted), both 200; a remove of a key without an active fact is 404;
//   - POST /v1/sessions/{key}/facts puts the facts of the session's own user into it
//     (a "user" naming someone else is refused: facts never cross tenants); a key that
//     is not open starts a session for "user" (or gateway.default_user) like an append.
#include "apps/common/api/http_api.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <numeric>

#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/bearer_auth.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/metrics_exporter.hpp"
#include "apps/common/api/request_decoder.hpp"
#include "apps/common/api/route_table.hpp"
#include "policies/facts_context.hpp"
#include "store/facts.hpp"

namespace mneme::api {

struct http_api::impl {
  caf::actor_system& sys;
  const runtime& rt;
  http_api_options opt;
  gateway_actor gateway;
  storage_actor storage;
  supervisor_actor supervisor;
  recall_actor recall;
  std::shared_ptr<runtime_metrics> metrics;
  std::chrono::milliseconds turn_timeout;
  std::function<time_ms()> clock;
  std::atomic<bool> shutting_down{false};
  std::atomic<int64_t> in_flight{0};
  std::shared_ptr<spdlog::logger> log;

  impl(caf::actor_system& s, const runtime& r, http_api_options o)
    : sys(s),
      rt(r),
      opt(std::move(o)),
      gateway(r.gateway()),
      storage(r.storage()),
      supervisor(r.supervisor()),
      recall(r.recall()),
      metrics(r.metrics()),
      turn_timeout(r.turn_timeout()),
      clock(r.config().clock ? r.config().clock : system_clock_ms),
      log(opt.log ? opt.log
                  : std::make_shared<spdlog::logger>(
                    "api", std::make_shared<spdlog::sinks::null_sink_mt>())) {}

  // One request/response with an actor; CAF's errors (timeout, receiver down) included.
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask(const Handle& h, std::chrono::milliseconds timeout, Ts&&... xs) {
    if (!h)
      return caf::make_error(errc::shutting_down, "the runtime is stopped");
    caf::scoped_actor self{sys};
    caf::expected<T> out{caf::error{}};
    self->request(h, timeout, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }
};

namespace {

using request = httplib::Request;
using response = httplib::Response;
using impl = http_api::impl;

constexpr const char* json_type = "application/json";

// What the router hands a handler besides the request: the decoded path captures
// ({key}, {user}, ...) in pattern order, and the body (empty for GET).
struct route_args {
  std::vector<std::string> path;
  std::string body;
};

void send_json(response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), json_type);
}

void send_error(response& res, int status, const std::string& code, const std::string& msg) {
  send_json(res, status, error_json(code, msg));
}

void send_error(impl& api, const request& req, response& res, const caf::error& err) {
  if (api.shutting_down.load() && err != errc::bad_request && err != errc::not_found) {
    send_error(res, 503, "shutting_down", "the daemon is shutting down");
    return;
  }
  auto status = http_status_of(err);
  if (status >= 500)
    api.log->warn("method={} path={} status={} error={}", req.method, req.path, status,
                  render_error(err));
  send_error(res, status, error_code_of(err), error_message_of(err));
}

// The session id behind {key} in the store: the newest open session under the key,
// else a stored session with that id.
caf::expected<std::string> stored_session_id(impl& api, const std::string& key) {
  session_filter f;
  f.session_key = key;
  f.open_only = true;
  f.limit = 1;
  auto found = api.ask<std::vector<session_record>>(api.storage, api.opt.read_timeout,
                                                    st_list_atom_v, f);
  if (!found)
    return found.error();
  if (!found->empty())
    return found->front().id;
  auto rec = api.ask<session_record>(api.storage, api.opt.read_timeout, st_session_atom_v, key);
  if (rec)
    return rec->id;
  if (rec.error() == errc::not_found)
    return caf::make_error(errc::not_found, "no session under key or id '" + key + "'");
  return rec.error();
}

std::string param_or(const request& req, const char* name, std::string fallback) {
  return req.has_param(name) ? req.get_param_value(name) : std::move(fallback);
}

// --- handlers: each answers `res` completely

// The daemon's resident memory from /proc/self/statm (mneme soak --server checks that it
// plateaus); -1 when unknown.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident))
    return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void health(impl& api, const request&, const route_args&, response& res) {
  json body{{"status", "ok"}, {"version", api.opt.version}};
  auto stats = api.ask<supervisor_stats>(api.supervisor, api.opt.read_timeout, sv_stats_atom_v);
  body["sessions_hosted"] = stats ? stats->hosted : int64_t{-1};
  body["rss_bytes"] = resident_bytes();
  send_json(res, 200, body);
}

void metrics(impl& api, const request&, const route_args&, response& res) {
  res.status = 200;
  res.set_content(render_metrics_text(api.sys, api.rt), "text/plain; version=0.0.4");
}

void list_sessions(impl& api, const request& req, const route_args&, response& res) {
  session_filter f;
  f.user_id = param_or(req, "user", "");
  f.session_key = param_or(req, "key", "");
  if (req.has_param("open_only")) {
    auto b = parse_bool_param("open_only", req.get_param_value("open_only"));
    if (!b)
      return send_error(api, req, res, b.error());
    f.open_only = *b;
  }
  f.limit = session_list_default_limit;
  if (req.has_param("limit")) {
    auto n = parse_int_param("limit", req.get_param_value("limit"), 1, session_list_max_limit);
    if (!n)
      return send_error(api, req, res, n.error());
    f.limit = *n;
  }
  auto found = api.ask<std::vector<session_record>>(api.storage, api.opt.read_timeout,
                                                    st_list_atom_v, f);
  if (!found)
    return send_error(api, req, res, found.error());
  auto list = json::array();
  for (const auto& s : *found)
    list.push_back(to_json(s));
  send_json(res, 200, {{"sessions", std::move(list)}});
}

json checkpoints_json(const std::vector<checkpoint_record>& cs) {
  auto out = json::array();
  for (const auto& c : cs)
    out.push_back(to_json(c));
  return out;
}

void session_state(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  bool with_live = true;
  if (req.has_param("live")) {
    auto b = parse_bool_param("live", req.get_param_value("live"));
    if (!b)
      return send_error(api, req, res, b.error());
    with_live = *b;
  }
  session_snapshot snap;
  std::vector<message> live;
  auto hosted = api.ask<session_snapshot>(api.gateway, api.opt.read_timeout, gw_state_atom_v,
                                          key);
  if (hosted) {
    snap = std::move(*hosted);
    if (with_live) {
      auto rows = api.ask<std::vector<message>>(api.gateway, api.opt.read_timeout,
                                                gw_live_atom_v, key);
      if (!rows)
        return send_error(api, req, res, rows.error());
      live = std::move(*rows);
    }
  } else if (hosted.error() == errc::not_found) {
    // Not an open key: a stored session by id (an ended one stays readable).
    auto rec = api.ask<session_record>(api.storage, api.opt.read_timeout, st_session_atom_v,
                                       key);
    if (!rec) {
      if (rec.error() == errc::not_found)
        return send_error(res, 404, "not_found", "no session under key or id '" + key + "'");
      return send_error(api, req, res, rec.error());
    }
    auto rows = api.ask<std::vector<message>>(api.storage, api.opt.read_timeout,
                                              st_live_atom_v, rec->id);
    if (!rows)
      return send_error(api, req, res, rows.error());
    snap.record = std::move(*rec);
    snap.live_messages = static_cast<int64_t>(rows->size());
    snap.live_tokens = std::accumulate(rows->begin(), rows->end(), int64_t{0},
                                       [](int64_t n, const message& m) {
                                         return n + m.token_estimate;
                                       });
    live = std::move(*rows);
  } else {
    return send_error(api, req, res, hosted.error());
  }
  auto cps = api.ask<std::vector<checkpoint_record>>(api.storage, api.opt.read_timeout,
                                                     st_checkpoints_atom_v, snap.record.id);
  if (!cps)
    return send_error(api, req, res, cps.error());
  auto body = to_json(snap);
  if (with_live)
    body["live"] = to_json(live);
  body["checkpoints"] = checkpoints_json(*cps);
  send_json(res, 200, body);
}

void append(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_append(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  auto id = api.ask<int64_t>(api.gateway, api.turn_timeout, gw_append_atom_v, key,
                             std::move(in->user), std::move(in->row));
  if (!id)
    return send_error(api, req, res, id.error());
  json body{{"id", *id}};
  auto snap = api.ask<session_snapshot>(api.gateway, api.opt.read_timeout, gw_state_atom_v,
                                        key);
  body["session_id"] = snap ? snap->record.id : std::string{};
  send_json(res, 201, body);
}

void turn(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_turn(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  auto reply = api.ask<turn_reply>(api.gateway, api.turn_timeout, gw_message_atom_v, key,
                                   std::move(in->user), std::move(in->content));
  if (!reply)
    return send_error(api, req, res, reply.error());
  send_json(res, 200, to_json(*reply));
}

void compact(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_compact(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  auto report = in->around_id
                  ? api.ask<compaction_report>(api.gateway, api.turn_timeout, gw_local_atom_v,
                                               key, *in->around_id, in->radius)
                  : api.ask<compaction_report>(api.gateway, api.turn_timeout,
                                               gw_command_atom_v, key,
                                               trigger::t12_manual_session,
                                               std::move(in->focus));
  if (!report)
    return send_error(api, req, res, report.error());
  send_json(res, 200, to_json(*report));
}

void create_checkpoint(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_checkpoint(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  if (!in->replace) {
    // An unknown key falls through: the gateway answers 404.
    if (auto id = stored_session_id(api, key)) {
      auto cps = api.ask<std::vector<checkpoint_record>>(api.storage, api.opt.read_timeout,
                                                         st_checkpoints_atom_v, *id);
      if (!cps)
        return send_error(api, req, res, cps.error());
      for (const auto& c : *cps)
        if (c.name == in->name)
          return send_error(res, 409, "checkpoint_exists",
                            "checkpoint '" + in->name + "' exists (after #"
                              + std::to_string(c.last_message_id)
                              + "); send \"replace\":true to move it to now");
    }
  }
  auto cp = api.ask<checkpoint_record>(api.gateway, api.opt.read_timeout, gw_checkpoint_atom_v,
                                       key, std::move(in->name));
  if (!cp)
    return send_error(api, req, res, cp.error());
  send_json(res, 201, to_json(*cp));
}

void list_checkpoints(impl& api, const request& req, const route_args& a, response& res) {
  auto id = stored_session_id(api, a.path[0]);
  if (!id)
    return send_error(api, req, res, id.error());
  auto cps = api.ask<std::vector<checkpoint_record>>(api.storage, api.opt.read_timeout,
                                                     st_checkpoints_atom_v, *id);
  if (!cps)
    return send_error(api, req, res, cps.error());
  send_json(res, 200, {{"checkpoints", checkpoints_json(*cps)}});
}

void rollback(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_name(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  auto live = api.ask<std::vector<message>>(api.gateway, api.turn_timeout, gw_rollback_atom_v,
                                            key, std::move(in->name));
  if (!live)
    return send_error(api, req, res, live.error());
  std::string sid;
  if (!live->empty()) {
    sid = live->front().session_id;
  } else if (auto id = stored_session_id(api, key)) {
    sid = *id;
  }
  send_json(res, 200, {{"session_id", sid}, {"live", to_json(*live)}});
}

void export_jsonl(impl& api, const request& req, const route_args& a, response& res) {
  auto id = stored_session_id(api, a.path[0]);
  if (!id)
    return send_error(api, req, res, id.error());
  auto text = api.ask<std::string>(api.storage, api.opt.read_timeout, st_export_atom_v, *id);
  if (!text)
    return send_error(api, req, res, text.error());
  res.status = 200;
  res.set_content(std::move(*text), "application/x-ndjson");
}

void search(impl& api, const request& req, const route_args&, response& res) {
  if (!api.recall)
    return send_error(res, 404, "not_found", "search is unavailable: the database is in memory");
  recall_request rq;
  rq.query = param_or(req, "q", "");
  if (rq.query.empty())
    return send_error(res, 400, "bad_request", "parameter 'q' is missing or empty");
  if (auto at = first_invalid_utf8(rq.query))
    return send_error(res, 400, "bad_request",
                      "parameter 'q' is not valid UTF-8 (byte " + std::to_string(*at) + ")");
  rq.user_id = param_or(req, "user", api.opt.default_user);
  if (rq.user_id.empty())
    return send_error(res, 400, "bad_request", "parameter 'user' is empty");
  if (req.has_param("limit")) {
    auto n = parse_int_param("limit", req.get_param_value("limit"), 1, recall_max_sessions);
    if (!n)
      return send_error(api, req, res, n.error());
    rq.max_sessions = static_cast<int32_t>(*n);
  }
  if (req.has_param("include_inactive")) {
    auto b = parse_bool_param("include_inactive", req.get_param_value("include_inactive"));
    if (!b)
      return send_error(api, req, res, b.error());
    rq.include_inactive = *b;
  }
  auto started = std::chrono::steady_clock::now();
  auto found = api.ask<recall_result>(api.recall, api.opt.read_timeout, rc_search_atom_v,
                                      std::move(rq));
  if (api.metrics)
    api.metrics->search_latency.observe_us(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now()
                                                            - started)
        .count());
  if (!found)
    return send_error(api, req, res, found.error());
  send_json(res, 200, to_json(*found));
}

// --- facts (semantic memory, docs/memory.md)

void list_facts(impl& api, const request& req, const route_args& a, response& res) {
  fact_query q;
  q.user_id = a.path[0];
  if (auto err = check_text_param("the user", q.user_id))
    return send_error(api, req, res, err);
  q.text = param_or(req, "q", "");
  if (auto at = first_invalid_utf8(q.text))
    return send_error(res, 400, "bad_request",
                      "parameter 'q' is not valid UTF-8 (byte " + std::to_string(*at) + ")");
  if (req.has_param("limit")) {
    auto n = parse_int_param("limit", req.get_param_value("limit"), 1, fact_query_max_limit);
    if (!n)
      return send_error(api, req, res, n.error());
    q.limit = *n;
  }
  if (req.has_param("include_inactive")) {
    auto b = parse_bool_param("include_inactive", req.get_param_value("include_inactive"));
    if (!b)
      return send_error(api, req, res, b.error());
    q.include_inactive = *b;
  }
  auto found = api.ask<std::vector<fact_record>>(api.storage, api.opt.read_timeout,
                                                 st_facts_atom_v, std::move(q));
  if (!found)
    return send_error(api, req, res, found.error());
  send_json(res, 200, {{"facts", to_json(*found)}});
}

void put_fact_route(impl& api, const request& req, const route_args& a, response& res) {
  fact_record f;
  f.user_id = a.path[0];
  f.key = a.path[1];
  if (auto err = check_text_param("the user", f.user_id))
    return send_error(api, req, res, err);
  if (auto err = check_text_param("the fact key", f.key))
    return send_error(api, req, res, err);
  auto in = decode_fact_put(a.body);
  if (!in)
    return send_error(api, req, res, in.error());
  f.value = std::move(in->value);
  f.source_session = std::move(in->source_session);
  auto stored = api.ask<fact_record>(api.storage, api.opt.read_timeout, st_fact_put_atom_v,
                                     std::move(f), int64_t{api.clock()});
  if (!stored)
    return send_error(api, req, res, stored.error());
  send_json(res, 200, to_json(*stored));
}

void remove_fact_route(impl& api, const request& req, const route_args& a, response& res) {
  auto user = a.path[0];
  auto key = a.path[1];
  if (auto err = check_text_param("the user", user))
    return send_error(api, req, res, err);
  if (auto err = check_text_param("the fact key", key))
    return send_error(api, req, res, err);
  auto retired = api.ask<fact_record>(api.storage, api.opt.read_timeout, st_fact_del_atom_v,
                                      std::move(user), std::move(key), int64_t{api.clock()});
  if (!retired)
    return send_error(api, req, res, retired.error());
  send_json(res, 200, to_json(*retired));
}

void inject_facts(impl& api, const request& req, const route_args& a, response& res) {
  auto key = a.path[0];
  auto in = decode_facts_inject(a.body, fact_query_max_limit);
  if (!in)
    return send_error(api, req, res, in.error());
  std::string user = in->user;
  std::string sid;
  auto hosted = api.ask<session_snapshot>(api.gateway, api.opt.read_timeout, gw_state_atom_v,
                                          key);
  if (hosted) {
    if (!user.empty() && user != hosted->record.user_id)
      return send_error(res, 400, "bad_request",
                        "field 'user': session '" + key + "' belongs to another user");
    user = hosted->record.user_id;
    sid = hosted->record.id;
  } else if (hosted.error() != errc::not_found) {
    return send_error(api, req, res, hosted.error());
  }
  if (user.empty())
    user = api.opt.default_user;
  fact_query q;
  q.user_id = user;
  q.text = in->query;
  q.limit = in->limit;
  auto found = api.ask<std::vector<fact_record>>(api.storage, api.opt.read_timeout,
                                                 st_facts_atom_v, std::move(q));
  if (!found)
    return send_error(api, req, res, found.error());
  std::vector<remembered_fact> facts;
  for (auto& f : *found)
    facts.push_back({std::move(f.key), std::move(f.value)});
  auto row = facts_context_message(facts, sid, api.clock());
  auto id = api.ask<int64_t>(api.gateway, api.turn_timeout, gw_append_atom_v, key, user, row);
  if (!id)
    return send_error(api, req, res, id.error());
  auto snap = api.ask<session_snapshot>(api.gateway, api.opt.read_timeout, gw_state_atom_v,
                                        key);
  auto shown = std::min(facts.size(), facts_context_max_facts);
  send_json(res, 201, {{"id", *id},
                       {"session_id", snap ? snap->record.id : sid},
                       {"user", user},
                       {"facts", static_cast<int64_t>(shown)},
                       {"content", row.content}});
}

using handler_fn = void (*)(impl&, const request&, const route_args&, response&);

// The route table and, at the same index, each route's handler.
struct router {
  route_table table;
  std::vector<handler_fn> handlers;

  void add(const char* method, std::string_view pattern, handler_fn fn) {
    table.add(method, pattern);
    handlers.push_back(fn);
  }
};

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

// Reads the body into `a.body`, at most max_body_bytes whatever its content type (no
// form parsing: every body is JSON); false when `res` already holds the error.
bool read_body(impl& api, const request& req, const httplib::ContentReader& reader,
               route_args& a, response& res) {
  auto limit = static_cast<size_t>(api.opt.max_body_bytes);
  bool too_large = false;
  auto receive = [&](const char* data, size_t n) {
    if (a.body.size() + n > limit) {
      too_large = true;
      return false;
    }
    a.body.append(data, n);
    return true;
  };
  bool ok = req.is_multipart_form_data()
              ? reader([](const httplib::MultipartFormData&) { return true; }, receive)
              : reader(receive);
  if (too_large || res.status == 413) {
    send_error(res, 413, "payload_too_large",
               "the body is larger than " + std::to_string(limit) + " bytes");
    return false;
  }
  if (!ok) {
    send_error(res, 400, "bad_request", "the request body could not be read");
    return false;
  }
  if (req.is_multipart_form_data()) {
    send_error(res, 400, "bad_request", "a multipart body is not accepted: send JSON");
    return false;
  }
  return true;
}

// Finds the route on the raw path (404 unknown path, 405 + Allow known path under
// another method), reads the body when `reader` is given, and runs the handler.
void dispatch(impl& api, const router& r, const request& req, response& res,
              const httplib::ContentReader* reader) {
  auto found = r.table.find(req.method, raw_path_of(req.target));
  if (!found.route) {
    if (found.allowed.empty())
      return send_error(res, 404, "not_found", "no route " + req.method + " " + req.path);
    res.set_header("Allow", joined(found.allowed));
    if (req.method == "OPTIONS") {
      res.status = 204;
      return;
    }
    return send_error(res, 405, "method_not_allowed",
                      req.method + " is not allowed on " + req.path + " (allowed: "
                        + joined(found.allowed) + ")");
  }
  route_args a;
  a.path = std::move(found.args);
  if (!reader)
    a.body = req.body; // read by httplib (a method it gave no content reader)
  else if (!read_body(api, req, *reader, a, res))
    return;
  r.handlers[*found.route](api, req, a, res);
}

// Counts the request in flight, refuses it while shutting down, and turns an
// exception into a 500 (never crashes the daemon).
void guarded(impl& api, const router& r, const request& req, response& res,
             const httplib::ContentReader* reader) {
  api.in_flight.fetch_add(1);
  if (api.shutting_down.load()) {
    send_error(res, 503, "shutting_down", "the daemon is shutting down");
  } else {
    try {
      dispatch(api, r, req, res, reader);
    } catch (const std::exception& e) {
      api.log->error("method={} path={} event=exception what={}", req.method, req.path,
                     e.what());
      send_error(res, 500, "internal", "internal error");
    }
  }
  api.in_flight.fetch_sub(1);
}

const char* reason_code(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 413: return "payload_too_large";
    case 414: return "uri_too_long";
    case 503: return "shutting_down";
    default: return status >= 500 ? "internal" : "bad_request";
  }
}

} // namespace

http_api::http_api(caf::actor_system& sys, const runtime& rt, http_api_options opt)
  : impl_(std::make_shared<impl>(sys, rt, std::move(opt))) {}

void http_api::begin_shutdown() { impl_->shutting_down.store(true); }
bool http_api::shutting_down() const { return impl_->shutting_down.load(); }
int64_t http_api::in_flight() const { return impl_->in_flight.load(); }

void http_api::install(httplib::Server& server) {
  auto api = impl_;
  server.set_payload_max_length(static_cast<size_t>(api->opt.max_body_bytes));
  server.set_pre_routing_handler([api](const request& req, response& res) {
    if (api->opt.auth_token.empty() || (req.method == "GET" && req.path == "/v1/health"))
      return httplib::Server::HandlerResponse::Unhandled;
    if (bearer_matches(req.get_header_value("Authorization"), api->opt.auth_token))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, 401, "unauthorized", "a valid 'Authorization: Bearer TOKEN' is required");
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own errors (unknown route, body too large) get the same JSON shape.
  server.set_error_handler([api](const request& req, response& res) {
    if (!res.body.empty())
      return;
    std::string msg;
    switch (res.status) {
      case 404: msg = "no route " + req.method + " " + req.path; break;
      case 413:
        msg = "the body is larger than " + std::to_string(api->opt.max_body_bytes) + " bytes";
        break;
      default: msg = "request rejected with HTTP " + std::to_string(res.status); break;
    }
    res.set_content(dump_json(error_json(reason_code(res.status), msg)), json_type);
  });
  auto r = std::make_shared<router>();
  const std::string s = "/v1/sessions/{}";
  r->add("GET", "/v1/health", health);
  r->add("GET", "/metrics", metrics);
  r->add("GET", "/v1/sessions", list_sessions);
  r->add("GET", "/v1/search", search);
  r->add("GET", s, session_state);
  r->add("POST", s + "/messages", append);
  r->add("POST", s + "/turns", turn);
  r->add("POST", s + "/compact", compact);
  r->add("POST", s + "/checkpoints", create_checkpoint);
  r->add("GET", s + "/checkpoints", list_checkpoints);
  r->add("POST", s + "/rollback", rollback);
  r->add("GET", s + "/export", export_jsonl);
  r->add("POST", s + "/facts", inject_facts);
  const std::string u = "/v1/users/{}/facts";
  r->add("GET", u, list_facts);
  r->add("PUT", u + "/{*}", put_fact_route);
  r->add("DELETE", u + "/{*}", remove_fact_route);
  // Every method goes to the one router (httplib's own matching sees decoded paths); a
  // method with a body reads it through a content reader, which bypasses httplib's
  // 8 KB cap on form-urlencoded bodies (curl -d sends that type).
  auto plain = [api, r](const request& req, response& res) {
    guarded(*api, *r, req, res, nullptr);
  };
  auto with_body = [api, r](const request& req, response& res,
                            const httplib::ContentReader& reader) {
    guarded(*api, *r, req, res, &reader);
  };
  server.Get(".*", plain);
  server.Options(".*", plain);
  server.Post(".*", with_body);
  server.Put(".*", with_body);
  server.Patch(".*", with_body);
  server.Delete(".*", with_body);
  server.Delete(".*", plain); // a DELETE without a body
}

} // namespace mneme::api
