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
//     user may hold an encoded '/', the fact key is the rest of the path); PUT answers
//     the active version, DELETE the tombstone (nothing is deleted), both 200; a remove
//     of a key without an active fact is 404;
//   - POST /v1/sessions/{key}/facts puts the facts of the session's own user into it
//     (a "user" naming someone else is refused: facts never cross tenants); a key that
//     is not open starts a session for "user" (or gateway.default_user) like an append;
//   - scopes (policies/access_scope.hpp): the owner of a {key} is looked up in the
//     store as checkpoints and export resolve it (never starting a session actor); a
//     key without a stored session is open to a user token (an append opens it for the
//     token's user). GET /v1/sessions with a user token lists that user's sessions
//     (?user=another is 403). Two users racing to open the same new key: the loser's
//     write is refused by the gateway (400, as without tokens).
//
// Every route below is a chain of asks: `ask<T>(c, actor, timeout, args...).then(f)`
// sends the request from the call's actor and runs f(expected<T>) in that actor when
// the answer (or the error: timeout, receiver down) arrives. A route ends by calling
// send_json / send_error / fail exactly once on every path.
#include "apps/common/api/http_api.hpp"

#include <unistd.h>

#include <atomic>
#include <cassert>
#include <fstream>
#include <limits>
#include <mutex>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/sinks/null_sink.h>

#include "apps/common/api/plumbing/bearer_auth.hpp"
#include "apps/common/api/routes/context_service.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/metrics_exporter.hpp"
#include "apps/common/api/doors/openai_chat/openai_door.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "apps/common/api/routes/turn_stream.hpp"
#include "apps/common/api/front/http_forward.hpp"
#include "policies/access_scope.hpp"
#include "policies/builtin_tools.hpp"
#include "policies/client_text.hpp"
#include "policies/facts_context.hpp"
#include "policies/lease_policy.hpp"
#include "policies/log_rate.hpp"
#include "policies/recall_grouping.hpp"
#include "store/facts.hpp"

namespace mneme::api {

namespace {

constexpr const char* json_type = "application/json";

struct call;
using call_ptr = std::shared_ptr<call>;

// How a route runs: in a request actor (asks the runtime, never blocks), or on the
// API's one blocking thread (/metrics: scoped_actor asks and SQLite reads).
enum class route_kind { actor, blocking };
using route_fn = void (*)(const call_ptr&);

struct route_entry {
  route_fn fn;
  route_kind kind;
  route_access access; // what the route needs of the caller's scope
};

} // namespace

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
  std::shared_ptr<spdlog::logger> log;
  route_table routes;
  std::vector<route_entry> entries; // at the index route_table::add returned
  mutable std::mutex unauthorized_mu; // guards unauthorized_logs
  mutable log_rate_gate unauthorized_logs;
  mutable std::atomic<int64_t> unauthorized{0};
  std::atomic<int64_t> refused_by_scope{0}; // 403s and hidden 404s of user tokens
  mutable std::mutex tokens_mu; // guards tokens
  std::shared_ptr<const token_set> tokens;
  boost::asio::thread_pool blocking{1};
  openai_door door; // POST /v1/chat/completions, GET /v1/models
  // Node mode: sends a request to the node serving its key (http_forward.hpp); null
  // with one daemon per database.
  std::unique_ptr<request_forwarder> forwarder;
  std::string advertise_url; // this node's (gateway.advertise_url), copied at construction

  // A request not yet completed, and the actor that serves it (once spawned).
  struct pending_request {
    http_reply reply;
    caf::actor_addr actor;
  };
  std::mutex pending_mu; // guards pending, next_id
  std::unordered_map<uint64_t, pending_request> pending;
  uint64_t next_id = 0;

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
                    "api", std::make_shared<spdlog::sinks::null_sink_mt>())),
      unauthorized_logs{opt.unauthorized_logs_per_second},
      tokens(opt.tokens),
      door(door_config()) {
    const auto& g = r.config().gateway;
    if (!g.node_id.empty()) {
      forward_limits limits;
      limits.total_timeout = turn_timeout;
      limits.retry_after_seconds = g.lease_seconds;
      forwarder = std::make_unique<request_forwarder>(g.node_id, limits);
      advertise_url = g.advertise_url;
    }
  }

  openai_door_config door_config() const {
    openai_door_config c;
    c.gateway = gateway;
    c.storage = storage;
    c.chat = rt.chat_pool();
    c.model_name = rt.config().model.name;
    c.turn_timeout = turn_timeout;
    c.read_timeout = opt.read_timeout;
    c.clock = clock;
    const auto& g = rt.config().gateway;
    c.visibility.daemon_system_prompt = !g.system_prompt.empty() || !g.skills_dir.empty();
    for (auto t : {builtin_tool::session_search, builtin_tool::memory, builtin_tool::skill_view})
      c.visibility.builtin_names.emplace_back(tool_name_of(t));
    c.log = log;
    return c;
  }

  // The scope of the request's bearer token; nullopt when none is valid. Every caller
  // is admin when neither gateway.auth_token nor a tokens file is configured.
  std::optional<access_scope> scope_of(const http_request& req) const {
    std::shared_ptr<const token_set> scoped;
    {
      std::lock_guard lock{tokens_mu};
      scoped = tokens;
    }
    if (opt.auth_token.empty() && !scoped)
      return access_scope::admin();
    const auto authorization = req.header("Authorization"); // presented points into it
    auto presented = bearer_token(authorization);
    if (!presented)
      return std::nullopt;
    if (!opt.auth_token.empty() && constant_time_equals(*presented, opt.auth_token))
      return access_scope::admin();
    return scoped ? scoped->find(*presented) : std::nullopt;
  }

  uint64_t track(http_reply reply) {
    std::lock_guard lock{pending_mu};
    auto id = ++next_id;
    pending.emplace(id, pending_request{std::move(reply), {}});
    return id;
  }

  // Remembers the request's actor, so fail_pending() can end it (unless it is done).
  void served_by(uint64_t id, caf::actor_addr actor) {
    std::lock_guard lock{pending_mu};
    if (auto i = pending.find(id); i != pending.end())
      i->second.actor = std::move(actor);
  }

  void complete(uint64_t id, const http_reply& reply, http_response res) {
    reply.answer(std::move(res));
    forget(id);
  }

  // The request was completed another way (a stream that ended).
  void forget(uint64_t id) {
    std::lock_guard lock{pending_mu};
    pending.erase(id);
  }
};

namespace {

using impl = http_api::impl;

// One request on its way through the runtime (the OpenAI door sees it as a
// door_request).
struct call final : door_request, std::enable_shared_from_this<call> {
  std::shared_ptr<impl> api;
  http_request req;
  query_params query;
  std::vector<std::string> path; // the decoded captures of the route
  access_scope who;               // the scope of the request's token
  uint64_t id = 0;
  http_reply reply;
  caf::event_based_actor* self = nullptr; // valid inside the request actor only

  call() = default;
  call(const call&) = delete;
  call& operator=(const call&) = delete;
  // A chain that ended without answering (a bug) still answers.
  ~call() {
    if (api && !reply.completed())
      finish(http_response{500, json_type,
                           dump_json(error_json("internal", "the request ended without an answer")),
                           {}, false});
  }

  void finish(http_response res) { api->complete(id, reply, std::move(res)); }

  const http_request& request() const override { return req; }
  const access_scope& scope() const override { return who; }
  caf::event_based_actor* actor() const override { return self; }
  const http_reply& reply_channel() const override { return reply; }
  void answer(http_response res) override { finish(std::move(res)); }
  void streamed() override { api->forget(id); }
  void refused_for_scope() override { api->refused_by_scope.fetch_add(1); }
  bool forward_elsewhere(const caf::error& err) override;
};

http_response json_response(int status, const json& body) {
  return http_response{status, json_type, dump_json(body), {}, false};
}

void send_json(const call_ptr& c, int status, const json& body) {
  c->finish(json_response(status, body));
}

void send_error(const call_ptr& c, int status, const std::string& code, const std::string& msg) {
  send_json(c, status, error_json(code, msg));
}

std::string raw_path(const http_request& req) { return std::string{raw_path_of(req.target)}; }

// The status and JSON body of a failed ask (or decode).
std::pair<int, json> error_answer(const call_ptr& c, const caf::error& err) {
  auto& api = *c->api;
  if (api.shutting_down.load() && err != errc::bad_request && err != errc::not_found)
    return {503, error_json("shutting_down", "the daemon is shutting down")};
  auto status = http_status_of(err);
  if (status >= 500)
    api.log->warn("method={} path={} status={} error={}", c->req.method,
                  log_quoted(raw_path(c->req)), status, log_quoted(render_error(err)));
  auto body = error_json(error_code_of(err), error_message_of(err));
  if (auto r = turn_reply_of(err)) { // an exhausted turn: the new session, the notice,
    auto turn = to_json(*r);         // the compactions it tried
    turn.erase("answer");
    turn.erase("prompt_tokens");
    body.update(turn);
  }
  return {status, std::move(body)};
}

// Node mode: a key served by another node (errc::lease_elsewhere, whose context
// carries the owner's URL) sends the request there; true when it did (the owner's
// answer completes the request).
bool call::forward_elsewhere(const caf::error& err) {
  auto& a = *api;
  if (!a.forwarder || err != errc::lease_elsewhere || a.shutting_down.load())
    return false;
  const auto& ctx = err.context();
  if (ctx.size() < 2 || !ctx.match_element<std::string>(1))
    return false;
  const auto& owner_url = ctx.get_as<std::string>(1);
  if (!should_forward(!req.header(forwarded_by_header).empty(), owner_url, a.advertise_url))
    return false;
  a.metrics->requests_forwarded.fetch_add(1, std::memory_order_relaxed);
  forward_sink sink;
  sink.answer = [c = shared_from_this()](http_response res) {
    if (res.status == 503 && res.body.find("lease_owner_unreachable") != std::string::npos)
      c->api->metrics->forward_failures.fetch_add(1, std::memory_order_relaxed);
    c->finish(std::move(res));
  };
  // The owner's stream completes the request (nothing is left for fail_pending to end).
  sink.open_stream = [c = shared_from_this()](int status, std::string content_type,
                                              header_list headers) {
    auto stream = c->reply.stream(status, std::move(content_type), std::move(headers));
    c->api->forget(c->id);
    return stream;
  };
  a.forwarder->forward(req, owner_url, std::move(sink));
  return true;
}

void fail(const call_ptr& c, const caf::error& err) {
  if (c->forward_elsewhere(err))
    return;
  auto [status, body] = error_answer(c, err);
  send_json(c, status, body);
}

// Runs f inside the request actor, turning an exception into a 500 (a route never
// kills its actor without answering).
template <class F, class... Xs>
void guarded(const call_ptr& c, const F& f, Xs&&... xs) {
  try {
    f(std::forward<Xs>(xs)...);
  } catch (const std::exception& e) {
    c->api->log->error("method={} path={} event=exception what={}", c->req.method,
                       log_quoted(raw_path(c->req)), log_quoted(e.what()));
    send_error(c, 500, "internal", "internal error");
  }
}

// A request to one actor, sent by then(f); f receives expected<T>.
template <class T, class Handle, class... Ts>
class asking {
 public:
  asking(call_ptr c, Handle h, std::chrono::milliseconds timeout, Ts... xs)
    : c_(std::move(c)), h_(std::move(h)), timeout_(timeout), args_(std::move(xs)...) {}

  template <class F>
  void then(F f) {
    if (!h_) {
      f(caf::expected<T>{caf::make_error(errc::shutting_down, "the runtime is stopped")});
      return;
    }
    auto c = c_;
    std::apply(
      [&](auto&... xs) {
        c->self->request(h_, timeout_, xs...)
          .then([c, f](T& x) { guarded(c, f, caf::expected<T>{std::move(x)}); },
                [c, f](caf::error& e) { guarded(c, f, caf::expected<T>{std::move(e)}); });
      },
      args_);
  }

 private:
  call_ptr c_;
  Handle h_;
  std::chrono::milliseconds timeout_;
  std::tuple<Ts...> args_;
};

template <class T, class Handle, class... Ts>
asking<T, Handle, std::decay_t<Ts>...> ask(const call_ptr& c, const Handle& h,
                                           std::chrono::milliseconds timeout, Ts&&... xs) {
  return {c, h, timeout, std::forward<Ts>(xs)...};
}

std::chrono::milliseconds read_timeout(const call_ptr& c) { return c->api->opt.read_timeout; }

// --- strict names (policies/client_text.hpp): false when the 400 was sent

bool check(const call_ptr& c, std::string_view what, std::string_view text, size_t max_bytes) {
  auto v = check_name(text, max_bytes);
  if (v.ok())
    return true;
  send_error(c, 400, "bad_request", describe_name_problem(v, what, max_bytes));
  return false;
}

bool check_key(const call_ptr& c, const std::string& key) {
  return check(c, "the session key", key, session_key_max_bytes);
}

void refuse_scope(const call_ptr& c, const std::string& why) {
  c->api->refused_by_scope.fetch_add(1);
  c->api->log->debug("event=forbidden scope={} method={} path={}", log_quoted(to_string(c->who)),
                     c->req.method, log_quoted(raw_path(c->req)));
  send_error(c, 403, "forbidden", why);
}

// A user the request names, against the token's scope: a user token may name only its
// own user, and naming none means it (policies/access_scope.hpp). False when the 403
// was sent.
bool scoped_user(const call_ptr& c, std::string_view what, std::string& user) {
  access_question q{route_access::user_named, c->who, user, std::nullopt};
  if (decide_access(q) != access_verdict::allow) {
    refuse_scope(c, std::string{what} + ": a token of " + to_string(c->who)
                      + " may not act for another user");
    return false;
  }
  user = acting_user(c->who, user);
  return true;
}

// A user from a body or query: empty means the default (or the key's owner), or the
// token's user for a user token.
bool check_optional_user(const call_ptr& c, std::string_view what, std::string& user) {
  return (user.empty() || check(c, what, user, user_max_bytes)) && scoped_user(c, what, user);
}

// A {key} of a read route: any stored key, but bounded.
bool check_read_key(const call_ptr& c, const std::string& key) {
  if (key.size() <= session_key_max_bytes)
    return true;
  send_error(c, 400, "bad_request",
             "the session key is longer than " + std::to_string(session_key_max_bytes)
               + " bytes");
  return false;
}

// The session behind {key} in the store: the newest open session under the key, else
// a stored session with that id.
template <class F>
void stored_session(const call_ptr& c, const std::string& key, F then) {
  session_filter f;
  f.session_key = key;
  f.open_only = true;
  f.limit = 1;
  ask<std::vector<session_record>>(c, c->api->storage, read_timeout(c), st_list_atom_v, f)
    .then([c, key, then](caf::expected<std::vector<session_record>> found) {
      if (!found)
        return then(caf::expected<session_record>{found.error()});
      if (!found->empty())
        return then(caf::expected<session_record>{std::move(found->front())});
      ask<session_record>(c, c->api->storage, read_timeout(c), st_session_atom_v, key)
        .then([key, then](caf::expected<session_record> rec) {
          if (!rec && rec.error() == errc::not_found)
            return then(caf::expected<session_record>{
              caf::make_error(errc::not_found, unknown_key_message(key))});
          then(std::move(rec));
        });
    });
}

// The id of stored_session().
template <class F>
void stored_session_id(const call_ptr& c, const std::string& key, F then) {
  stored_session(c, key, [then](caf::expected<session_record> rec) {
    if (!rec)
      return then(caf::expected<std::string>{rec.error()});
    then(caf::expected<std::string>{rec->id});
  });
}

// Runs `fn` when the token may reach the session {key} names: always for an admin; for
// a user token when the stored session is its own or none is stored (a 404 as for an
// unknown key otherwise: whether the key exists is not revealed).
void with_owned_key(const call_ptr& c, route_fn fn) {
  if (c->who.is_admin())
    return fn(c);
  auto key = c->path[0];
  stored_session(c, key, [c, key, fn](caf::expected<session_record> rec) {
    if (!rec && rec.error() != errc::not_found)
      return fail(c, rec.error());
    access_question q{route_access::key_owned, c->who, {}, std::nullopt};
    if (rec)
      q.key_owner = rec->user_id;
    if (decide_access(q) != access_verdict::allow) {
      c->api->refused_by_scope.fetch_add(1);
      return send_error(c, 404, "not_found", unknown_key_message(key));
    }
    fn(c);
  });
}

// Optional query parameters: false when the 400 was sent.
bool bool_param(const call_ptr& c, const char* name, bool& out) {
  auto v = c->query.find(name);
  if (!v)
    return true;
  auto b = parse_bool_param(name, *v);
  if (!b) {
    fail(c, b.error());
    return false;
  }
  out = *b;
  return true;
}

template <class Int>
bool int_param(const call_ptr& c, const char* name, int64_t min, int64_t max, Int& out) {
  auto v = c->query.find(name);
  if (!v)
    return true;
  auto n = parse_int_param(name, *v, min, max);
  if (!n) {
    fail(c, n.error());
    return false;
  }
  out = static_cast<Int>(*n);
  return true;
}

bool utf8_param(const call_ptr& c, const char* name, const std::string& text) {
  if (auto at = first_invalid_utf8(text)) {
    send_error(c, 400, "bad_request",
               std::string{"parameter '"} + name + "' is not valid UTF-8 (byte "
                 + std::to_string(*at) + ")");
    return false;
  }
  return true;
}

// --- routes

// The daemon's resident memory from /proc/self/statm (mneme soak --server checks that it
// plateaus); -1 when unknown.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident))
    return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void health(const call_ptr& c) {
  ask<supervisor_stats>(c, c->api->supervisor, read_timeout(c), sv_stats_atom_v)
    .then([c](caf::expected<supervisor_stats> stats) {
      json body{{"status", "ok"}, {"version", c->api->opt.version}};
      // "auth_failed" from a summarizer answer of 401/403/quota until the next
      // summarizer answer (policies/summary_failure.hpp).
      body["summarizer"] = std::string{to_string(
        c->api->metrics ? c->api->metrics->summarizer() : summarizer_health::ok)};
      body["sessions_hosted"] = stats ? stats->hosted : int64_t{-1};
      body["rss_bytes"] = resident_bytes();
      send_json(c, 200, body);
    });
}

void metrics(const call_ptr& c) {
  auto text = render_metrics_text(c->api->sys, c->api->rt);
  if (c->api->opt.extra_metrics)
    text += c->api->opt.extra_metrics();
  text += c->api->door.metrics_text();
  text += "# HELP mneme_http_unauthorized_total Requests refused for a missing or wrong token\n"
          "# TYPE mneme_http_unauthorized_total counter\n"
          "mneme_http_unauthorized_total "
          + std::to_string(c->api->unauthorized.load()) + "\n"
          "# HELP mneme_http_forbidden_total Requests of user tokens refused for their scope "
          "(403, and 404 for another user's session)\n"
          "# TYPE mneme_http_forbidden_total counter\n"
          "mneme_http_forbidden_total "
          + std::to_string(c->api->refused_by_scope.load()) + "\n";
  c->finish(http_response{200, "text/plain; version=0.0.4", std::move(text), {}, false});
}

void list_sessions(const call_ptr& c) {
  session_filter f;
  f.user_id = c->query.value_or("user", "");
  f.session_key = c->query.value_or("key", "");
  f.limit = session_list_default_limit;
  if (!check_optional_user(c, "parameter 'user'", f.user_id)
      || !check_read_key(c, f.session_key) || !bool_param(c, "open_only", f.open_only)
      || !int_param(c, "limit", 1, session_list_max_limit, f.limit))
    return;
  ask<std::vector<session_record>>(c, c->api->storage, read_timeout(c), st_list_atom_v, f)
    .then([c](caf::expected<std::vector<session_record>> found) {
      if (!found)
        return fail(c, found.error());
      auto list = json::array();
      for (const auto& s : *found)
        list.push_back(to_json(s));
      send_json(c, 200, {{"sessions", std::move(list)}});
    });
}

json checkpoints_json(const std::vector<checkpoint_record>& cs) {
  auto out = json::array();
  for (const auto& cp : cs)
    out.push_back(to_json(cp));
  return out;
}

// The state answer: snapshot + live rows (when asked) + the session's checkpoints.
void answer_state(const call_ptr& c, session_snapshot snap,
                  std::optional<std::vector<message>> live) {
  auto sid = snap.record.id;
  ask<std::vector<checkpoint_record>>(c, c->api->storage, read_timeout(c), st_checkpoints_atom_v,
                                      sid)
    .then([c, snap = std::move(snap), live = std::move(live)](
            caf::expected<std::vector<checkpoint_record>> cps) {
      if (!cps)
        return fail(c, cps.error());
      auto body = to_json(snap);
      if (live)
        body["live"] = to_json(*live);
      body["checkpoints"] = checkpoints_json(*cps);
      send_json(c, 200, body);
    });
}

// GET /v1/sessions/{key} of a key that is not open: a stored session by id (an ended
// one stays readable).
void stored_state(const call_ptr& c, const std::string& key, bool with_live) {
  ask<session_record>(c, c->api->storage, read_timeout(c), st_session_atom_v, key)
    .then([c, key, with_live](caf::expected<session_record> rec) {
      if (!rec) {
        if (rec.error() == errc::not_found)
          return send_error(c, 404, "not_found", unknown_key_message(key));
        return fail(c, rec.error());
      }
      auto id = rec->id;
      ask<std::vector<message>>(c, c->api->storage, read_timeout(c), st_live_atom_v, id)
        .then([c, rec = std::move(*rec), with_live](caf::expected<std::vector<message>> rows) {
          if (!rows)
            return fail(c, rows.error());
          session_snapshot snap;
          snap.record = rec;
          snap.live_messages = static_cast<int64_t>(rows->size());
          snap.live_tokens = std::accumulate(rows->begin(), rows->end(), int64_t{0},
                                             [](int64_t n, const message& m) {
                                               return n + m.token_estimate;
                                             });
          std::optional<std::vector<message>> live;
          if (with_live)
            live = std::move(*rows);
          answer_state(c, std::move(snap), std::move(live));
        });
    });
}

void session_state(const call_ptr& c) {
  auto key = c->path[0];
  bool with_live = true;
  if (!check_read_key(c, key) || !bool_param(c, "live", with_live))
    return;
  ask<session_snapshot>(c, c->api->gateway, read_timeout(c), gw_state_atom_v, key)
    .then([c, key, with_live](caf::expected<session_snapshot> hosted) {
      if (!hosted) {
        if (hosted.error() == errc::not_found)
          return stored_state(c, key, with_live);
        return fail(c, hosted.error());
      }
      if (!with_live)
        return answer_state(c, std::move(*hosted), std::nullopt);
      ask<std::vector<message>>(c, c->api->gateway, read_timeout(c), gw_live_atom_v, key)
        .then([c, snap = std::move(*hosted)](caf::expected<std::vector<message>> rows) {
          if (!rows)
            return fail(c, rows.error());
          answer_state(c, snap, std::move(*rows));
        });
    });
}

// The answer of an append: {"id", "session_id"} with the session the gateway holds now.
template <class Extra>
void answer_appended(const call_ptr& c, const std::string& key, int64_t id,
                     std::string fallback_sid, Extra extra) {
  ask<session_snapshot>(c, c->api->gateway, read_timeout(c), gw_state_atom_v, key)
    .then([c, id, fallback_sid, extra](caf::expected<session_snapshot> snap) {
      json body{{"id", id}};
      body["session_id"] = snap ? snap->record.id : fallback_sid;
      extra(body);
      send_json(c, 201, body);
    });
}

void append(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_append(c->req.body);
  if (!in)
    return fail(c, in.error());
  if (!check_optional_user(c, "field 'user'", in->user))
    return;
  ask<int64_t>(c, c->api->gateway, c->api->turn_timeout, gw_append_atom_v, key,
               std::move(in->user), std::move(in->row))
    .then([c, key](caf::expected<int64_t> id) {
      if (!id)
        return fail(c, id.error());
      answer_appended(c, key, *id, std::string{}, [](json&) {});
    });
}

void turn(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_turn(c->req.body);
  if (!in)
    return fail(c, in.error());
  if (!check_optional_user(c, "field 'user'", in->user))
    return;
  std::shared_ptr<turn_event_relay> relay;
  if (in->stream) {
    relay = std::make_shared<turn_event_relay>(c->reply);
    in->input.stream = relay;
  }
  ask<turn_reply>(c, c->api->gateway, c->api->turn_timeout, gw_turn_atom_v, key,
                  std::move(in->user), std::move(in->input))
    .then([c, relay](caf::expected<turn_reply> reply) {
      if (!relay) {
        if (!reply)
          return fail(c, reply.error());
        return send_json(c, 200, to_json(*reply));
      }
      if (reply) {
        relay->finish(to_json(*reply));
      } else {
        if (c->forward_elsewhere(reply.error())) // refused before any piece was relayed
          return;
        auto [status, body] = error_answer(c, reply.error());
        if (!relay->fail(body))
          return send_json(c, status, body); // nothing streamed yet: a plain HTTP error
      }
      c->api->forget(c->id); // the stream completed the request
    });
}

// --- the context service (issue 27 item 2; context_service.hpp)

using context_decoder = caf::expected<context_call> (*)(std::string_view);

void context_route(const call_ptr& c, context_decoder decode) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode(c->req.body);
  if (!in)
    return fail(c, in.error());
  if (!check_optional_user(c, "field 'user'", in->user))
    return;
  auto op = in->rq.op;
  ask<context_reply>(c, c->api->gateway, c->api->turn_timeout, gw_context_atom_v, key,
                     std::move(in->user), std::move(in->rq))
    .then([c, op](caf::expected<context_reply> reply) {
      if (!reply)
        return fail(c, reply.error());
      send_json(c, 200, context_reply_json(*reply, op));
    });
}

void context(const call_ptr& c) { context_route(c, decode_context_call); }
void usage(const call_ptr& c) { context_route(c, decode_usage_call); }
void model_error(const call_ptr& c) { context_route(c, decode_model_error_call); }

void compact(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_compact(c->req.body);
  if (!in)
    return fail(c, in.error());
  auto done = [c](caf::expected<compaction_report> report) {
    if (!report)
      return fail(c, report.error());
    send_json(c, 200, to_json(*report));
  };
  if (in->around_id)
    ask<compaction_report>(c, c->api->gateway, c->api->turn_timeout, gw_local_atom_v, key,
                           *in->around_id, in->radius)
      .then(done);
  else
    ask<compaction_report>(c, c->api->gateway, c->api->turn_timeout, gw_command_atom_v, key,
                           trigger::t12_manual_session, std::move(in->focus))
      .then(done);
}

void make_checkpoint(const call_ptr& c, const std::string& key, const std::string& name) {
  ask<checkpoint_record>(c, c->api->gateway, read_timeout(c), gw_checkpoint_atom_v, key, name)
    .then([c](caf::expected<checkpoint_record> cp) {
      if (!cp)
        return fail(c, cp.error());
      send_json(c, 201, to_json(*cp));
    });
}

void create_checkpoint(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_checkpoint(c->req.body);
  if (!in)
    return fail(c, in.error());
  if (!check(c, "field 'name'", in->name, checkpoint_name_max_bytes))
    return;
  if (in->replace)
    return make_checkpoint(c, key, in->name);
  auto name = in->name;
  stored_session_id(c, key, [c, key, name](caf::expected<std::string> id) {
    if (!id) // an unknown key falls through: the gateway answers 404
      return make_checkpoint(c, key, name);
    ask<std::vector<checkpoint_record>>(c, c->api->storage, read_timeout(c),
                                        st_checkpoints_atom_v, *id)
      .then([c, key, name](caf::expected<std::vector<checkpoint_record>> cps) {
        if (!cps)
          return fail(c, cps.error());
        for (const auto& cp : *cps)
          if (cp.name == name)
            return send_error(c, 409, "checkpoint_exists",
                              "checkpoint '" + name + "' exists (after #"
                                + std::to_string(cp.last_message_id)
                                + "); send \"replace\":true to move it to now");
        make_checkpoint(c, key, name);
      });
  });
}

void list_checkpoints(const call_ptr& c) {
  if (!check_read_key(c, c->path[0]))
    return;
  stored_session_id(c, c->path[0], [c](caf::expected<std::string> id) {
    if (!id)
      return fail(c, id.error());
    ask<std::vector<checkpoint_record>>(c, c->api->storage, read_timeout(c),
                                        st_checkpoints_atom_v, *id)
      .then([c](caf::expected<std::vector<checkpoint_record>> cps) {
        if (!cps)
          return fail(c, cps.error());
        send_json(c, 200, {{"checkpoints", checkpoints_json(*cps)}});
      });
  });
}

void rollback(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_name(c->req.body);
  if (!in)
    return fail(c, in.error());
  ask<std::vector<message>>(c, c->api->gateway, c->api->turn_timeout, gw_rollback_atom_v, key,
                            std::move(in->name))
    .then([c, key](caf::expected<std::vector<message>> live) {
      if (!live)
        return fail(c, live.error());
      if (!live->empty())
        return send_json(c, 200,
                         {{"session_id", live->front().session_id}, {"live", to_json(*live)}});
      stored_session_id(c, key, [c](caf::expected<std::string> id) {
        send_json(c, 200, {{"session_id", id ? *id : std::string{}}, {"live", json::array()}});
      });
    });
}

void export_jsonl(const call_ptr& c) {
  if (!check_read_key(c, c->path[0]))
    return;
  stored_session_id(c, c->path[0], [c](caf::expected<std::string> id) {
    if (!id)
      return fail(c, id.error());
    ask<std::string>(c, c->api->storage, read_timeout(c), st_export_atom_v, *id)
      .then([c](caf::expected<std::string> text) {
        if (!text)
          return fail(c, text.error());
        c->finish(http_response{200, "application/x-ndjson", std::move(*text), {}, false});
      });
  });
}

void search(const call_ptr& c) {
  auto& api = *c->api;
  if (!api.recall)
    return send_error(c, 404, "not_found", "search is unavailable: the database is in memory");
  recall_request rq;
  rq.query = c->query.value_or("q", "");
  if (rq.query.empty())
    return send_error(c, 400, "bad_request", "parameter 'q' is missing or empty");
  if (!utf8_param(c, "q", rq.query))
    return;
  const auto* named = c->query.find("user");
  rq.user_id = named ? *named : std::string{};
  // A limit above the maximum is clamped and the answer says so; a limit below
  // 1 or not an integer is a 400 (policies/recall_grouping.hpp).
  int64_t limit = recall_default_sessions;
  if ((named && !check(c, "parameter 'user'", rq.user_id, user_max_bytes))
      || !scoped_user(c, "parameter 'user'", rq.user_id))
    return;
  if (rq.user_id.empty())
    rq.user_id = api.opt.default_user;
  if (!int_param(c, "limit", 1, std::numeric_limits<int64_t>::max(), limit)
      || !bool_param(c, "include_inactive", rq.include_inactive))
    return;
  const auto clamped = clamp_recall_limit(limit, recall_max_sessions);
  rq.max_sessions = clamped.sessions;
  auto started = std::chrono::steady_clock::now();
  ask<recall_result>(c, api.recall, read_timeout(c), rc_search_atom_v, std::move(rq))
    .then([c, started, limit_clamped = clamped.clamped](caf::expected<recall_result> found) {
      if (auto& m = c->api->metrics)
        m->search_latency.observe_us(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - started)
                                       .count());
      if (!found)
        return fail(c, found.error());
      found->limit_clamped = limit_clamped;
      send_json(c, 200, to_json(*found));
    });
}

// --- facts (semantic memory, docs/memory.md)

void list_facts(const call_ptr& c) {
  fact_query q;
  q.user_id = c->path[0];
  q.text = c->query.value_or("q", "");
  if (!check(c, "the user", q.user_id, user_max_bytes) || !utf8_param(c, "q", q.text)
      || !int_param(c, "limit", 1, fact_query_max_limit, q.limit)
      || !bool_param(c, "include_inactive", q.include_inactive))
    return;
  ask<std::vector<fact_record>>(c, c->api->storage, read_timeout(c), st_facts_atom_v,
                                std::move(q))
    .then([c](caf::expected<std::vector<fact_record>> found) {
      if (!found)
        return fail(c, found.error());
      send_json(c, 200, {{"facts", to_json(*found)}});
    });
}

bool check_fact_path(const call_ptr& c) {
  return check(c, "the user", c->path[0], user_max_bytes)
         && check(c, "the fact key", c->path[1], fact_key_max_bytes);
}

void put_fact_route(const call_ptr& c) {
  if (!check_fact_path(c))
    return;
  auto in = decode_fact_put(c->req.body);
  if (!in)
    return fail(c, in.error());
  fact_record f;
  f.user_id = c->path[0];
  f.key = c->path[1];
  f.value = std::move(in->value);
  f.source_session = std::move(in->source_session);
  ask<fact_record>(c, c->api->storage, read_timeout(c), st_fact_put_atom_v, std::move(f),
                   int64_t{c->api->clock()})
    .then([c](caf::expected<fact_record> stored) {
      if (!stored)
        return fail(c, stored.error());
      send_json(c, 200, to_json(*stored));
    });
}

void remove_fact_route(const call_ptr& c) {
  if (!check_fact_path(c))
    return;
  ask<fact_record>(c, c->api->storage, read_timeout(c), st_fact_del_atom_v, c->path[0],
                   c->path[1], int64_t{c->api->clock()})
    .then([c](caf::expected<fact_record> retired) {
      if (!retired)
        return fail(c, retired.error());
      send_json(c, 200, to_json(*retired));
    });
}

// Facts of `user` into the key's session (sid: its id when open, else empty).
void inject_for(const call_ptr& c, const std::string& key, const std::string& user,
                const std::string& sid, facts_inject_request in) {
  fact_query q;
  q.user_id = user;
  q.text = in.query;
  q.limit = in.limit;
  ask<std::vector<fact_record>>(c, c->api->storage, read_timeout(c), st_facts_atom_v,
                                std::move(q))
    .then([c, key, user, sid](caf::expected<std::vector<fact_record>> found) {
      if (!found)
        return fail(c, found.error());
      std::vector<remembered_fact> facts;
      for (auto& f : *found)
        facts.push_back({std::move(f.key), std::move(f.value)});
      auto row = facts_context_message(facts, sid, c->api->clock());
      auto shown = static_cast<int64_t>(std::min(facts.size(), facts_context_max_facts));
      auto content = row.content;
      ask<int64_t>(c, c->api->gateway, c->api->turn_timeout, gw_append_atom_v, key, user, row)
        .then([c, key, user, sid, shown, content](caf::expected<int64_t> id) {
          if (!id)
            return fail(c, id.error());
          answer_appended(c, key, *id, sid, [user, shown, content](json& body) {
            body["user"] = user;
            body["facts"] = shown;
            body["content"] = content;
          });
        });
    });
}

void inject_facts(const call_ptr& c) {
  auto key = c->path[0];
  if (!check_key(c, key))
    return;
  auto in = decode_facts_inject(c->req.body, fact_query_max_limit);
  if (!in)
    return fail(c, in.error());
  if (!check_optional_user(c, "field 'user'", in->user))
    return;
  ask<session_snapshot>(c, c->api->gateway, read_timeout(c), gw_state_atom_v, key)
    .then([c, key, in = std::move(*in)](caf::expected<session_snapshot> hosted) {
      std::string user = in.user;
      std::string sid;
      if (hosted) {
        if (!user.empty() && user != hosted->record.user_id)
          return send_error(c, 400, "bad_request",
                            "field 'user': session '" + key + "' belongs to another user");
        user = hosted->record.user_id;
        sid = hosted->record.id;
      } else if (hosted.error() != errc::not_found) {
        return fail(c, hosted.error());
      }
      if (user.empty())
        user = c->api->opt.default_user;
      inject_for(c, key, user, sid, in);
    });
}

// --- the OpenAI door (openai_door.hpp)

void openai_chat(const call_ptr& c) { c->api->door.chat(c); }
void openai_models(const call_ptr& c) { c->api->door.models(c); }

std::string joined(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

http_response error_response(int status, const std::string& code, const std::string& msg) {
  return json_response(status, error_json(code, msg));
}

// The refusal of a request without a valid token (counted; logged at most
// unauthorized_logs_per_second times a second).
http_response unauthorized_response(const impl& api, const http_request& head) {
  api.unauthorized.fetch_add(1);
  int64_t suppressed = 0;
  bool logged = false;
  {
    std::lock_guard lock{api.unauthorized_mu};
    logged = api.unauthorized_logs.allow(api.clock(), suppressed);
  }
  if (logged)
    api.log->info("event=unauthorized client={} method={} path={} suppressed_before={}",
                  log_quoted(head.remote), log_quoted(head.method),
                  log_quoted(raw_path_of(head.target)), suppressed);
  auto r = error_response(401, "unauthorized", "a valid 'Authorization: Bearer TOKEN' is required");
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

// Every route and what it needs of the caller's scope (policies/access_scope.hpp):
// key_owned routes take the {key} as their first capture, user_named routes with a
// capture take the {user} there (others name it in the query or body).
void add_routes(impl& api) {
  auto add = [&api](const char* method, std::string_view pattern, route_fn fn,
                    route_access access, route_kind kind = route_kind::actor) {
    api.routes.add(method, pattern);
    api.entries.push_back({fn, kind, access});
  };
  using a = route_access;
  const std::string s = "/v1/sessions/{}";
  add("GET", "/v1/health", health, a::open);
  add("GET", "/metrics", metrics, a::admin_only, route_kind::blocking);
  add("GET", "/v1/sessions", list_sessions, a::user_named);
  add("GET", "/v1/search", search, a::user_named);
  add("POST", "/v1/chat/completions", openai_chat, a::user_named);
  add("GET", "/v1/models", openai_models, a::user_named);
  add("GET", s, session_state, a::key_owned);
  add("POST", s + "/messages", append, a::key_owned);
  add("POST", s + "/turns", turn, a::key_owned);
  add("POST", s + "/compact", compact, a::key_owned);
  add("POST", s + "/checkpoints", create_checkpoint, a::key_owned);
  add("GET", s + "/checkpoints", list_checkpoints, a::key_owned);
  add("POST", s + "/rollback", rollback, a::key_owned);
  add("GET", s + "/export", export_jsonl, a::key_owned);
  add("POST", s + "/facts", inject_facts, a::key_owned);
  add("POST", s + "/context", context, a::key_owned);
  add("POST", s + "/usage", usage, a::key_owned);
  add("POST", s + "/model_error", model_error, a::key_owned);
  const std::string u = "/v1/users/{}/facts";
  add("GET", u, list_facts, a::user_named);
  add("PUT", u + "/{*}", put_fact_route, a::user_named);
  add("DELETE", u + "/{*}", remove_fact_route, a::user_named);
}

} // namespace

http_api::http_api(caf::actor_system& sys, const runtime& rt, http_api_options opt)
  : impl_(std::make_shared<impl>(sys, rt, std::move(opt))) {
  add_routes(*impl_);
}

http_api::~http_api() { impl_->blocking.join(); }

std::optional<http_response> http_api::admit(const http_request& head) const {
  auto verdict = admit_head(head);
  if (verdict && is_door_path(raw_path_of(head.target)) && verdict->status >= 400) {
    auto body = nlohmann::json::parse(verdict->body, nullptr, false);
    if (body.is_object() && body.contains("error")) {
      auto door_answer = openai_error_response(verdict->status, body["error"].value("code", ""),
                                               body["error"].value("message", ""));
      verdict->body = std::move(door_answer.body);
    }
  }
  return verdict;
}

std::optional<http_response> http_api::admit_head(const http_request& head) const {
  auto& api = *impl_;
  auto path = raw_path_of(head.target);
  bool is_health = (head.method == "GET" || head.method == "HEAD") && path == "/v1/health";
  if (!is_health && !api.scope_of(head))
    return unauthorized_response(api, head);
  if (api.shutting_down.load())
    return error_response(503, "shutting_down", "the daemon is shutting down");
  auto found = api.routes.find(head.method, path);
  if (found.route)
    return std::nullopt;
  auto shown = std::string{path};
  if (found.allowed.empty())
    return error_response(404, "not_found",
                          "no route " + head.method + " " + percent_decode(shown));
  http_response r;
  if (head.method == "OPTIONS") {
    r.status = 204;
  } else {
    r = error_response(405, "method_not_allowed",
                       head.method + " is not allowed on " + percent_decode(shown)
                         + " (allowed: " + joined(found.allowed) + ")");
  }
  r.headers.emplace_back("Allow", joined(found.allowed));
  return r;
}

void http_api::handle(http_request req, http_reply reply) {
  auto api = impl_;
  auto c = std::make_shared<call>();
  c->api = api;
  c->id = api->track(reply);
  c->reply = std::move(reply);
  c->req = std::move(req);
  if (api->shutting_down.load())
    return send_error(c, 503, "shutting_down", "the daemon is shutting down");
  auto found = api->routes.find(c->req.method, raw_path_of(c->req.target));
  if (!found.route) // admit() let it through, so this is a race with nothing: answer 404
    return send_error(c, 404, "not_found", "no route " + c->req.method);
  c->path = std::move(found.args);
  c->query = parse_query(c->req.target);
  auto entry = api->entries[*found.route];
  // The token again: a reload between admit() and now may have revoked it.
  auto who = api->scope_of(c->req);
  access_question q{entry.access, who, {}, std::nullopt};
  if (entry.access == route_access::user_named && !c->path.empty())
    q.named_user = c->path[0];
  switch (decide_access(q)) {
    case access_verdict::allow: break;
    case access_verdict::unauthorized: return c->finish(unauthorized_response(*api, c->req));
    case access_verdict::forbidden:
    case access_verdict::hidden:
      c->who = *who;
      return refuse_scope(c, entry.access == route_access::admin_only
                               ? "this route needs an admin token"
                               : "the path's user: a token of " + to_string(*who)
                                   + " may not act for another user");
  }
  c->who = who ? *who : access_scope::admin();
  if (entry.kind == route_kind::blocking) {
    boost::asio::post(api->blocking, [c, fn = entry.fn] { guarded(c, fn, c); });
    return;
  }
  auto id = c->id;
  auto actor = api->sys.spawn([c, entry](caf::event_based_actor* self) {
    c->self = self;
    if (entry.access == route_access::key_owned)
      guarded(c, with_owned_key, c, entry.fn);
    else
      guarded(c, entry.fn, c);
  });
  api->served_by(id, actor.address());
}

void http_api::begin_shutdown() { impl_->shutting_down.store(true); }
bool http_api::shutting_down() const { return impl_->shutting_down.load(); }

int64_t http_api::in_flight() const {
  std::lock_guard lock{impl_->pending_mu};
  return static_cast<int64_t>(impl_->pending.size());
}

size_t http_api::fail_pending() {
  std::unordered_map<uint64_t, impl::pending_request> waiting;
  {
    std::lock_guard lock{impl_->pending_mu};
    waiting.swap(impl_->pending);
  }
  size_t answered = 0;
  for (auto& [_, p] : waiting) {
    if (p.reply.answer(error_response(503, "shutting_down", "the daemon is shutting down")))
      ++answered;
    // The actor may wait for an answer that never comes (its receiver stopped): end it,
    // so the actor system can shut down without waiting for the request's timeout.
    if (auto a = caf::actor_cast<caf::actor>(p.actor))
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  return answered;
}

const http_api_options& http_api::options() const { return impl_->opt; }

void http_api::set_tokens(std::shared_ptr<const token_set> tokens) {
  assert(tokens);
  std::lock_guard lock{impl_->tokens_mu};
  impl_->tokens = std::move(tokens);
}

} // namespace mneme::api
