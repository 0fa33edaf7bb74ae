// The routes of the daemon's HTTP/JSON API (docs/api.md; SPEC §8), asynchronous: each
// request becomes a short-lived event-based CAF actor that asks the runtime's actors
// (every ask with a timeout) and completes the request's reply from their answers, so
// a turn waiting for the model holds no thread. JSON from json_codec.hpp; every error is
// {"error":{"code","message"}} with the status of http_status.hpp (a door answers in its
// own wire's shape).
//
// Where things are: plumbing/ holds what every route shares (the route registry, who
// may call, the checks, answering, asking the runtime, the requests in flight); routes/
// holds the routes, one file per resource (routes/route_groups.hpp lists them); doors/
// holds the doors, one folder per wire format with its codec; front/ the connections.
//
// admit() is the front's verdict on a request head, before any body byte is read: 401
// without a valid bearer token (every route but GET /v1/health when a credential is
// configured: gateway.auth_token means admin, gateway.tokens_file holds scoped tokens,
// tokens/token_store.hpp), 404 an unknown path, 405 + Allow a known path under another
// method (204 + Allow for OPTIONS), 503 shutting_down once shutdown began; a refusal at
// a door's path has that door's error shape. Routing is plumbing/route_table.hpp's on
// the raw path (an encoded '/' in a key works).
//
// Scopes (policies/access_scope.hpp, docs/api.md "Authentication"): handle() resolves
// the token again and decides per route before the route runs: /metrics is admin-only
// (403), a user token naming another user in a path, query or body is 403, and a user
// token on a {key} whose stored session belongs to another user is 404 as an unknown
// key; the user of a user token's request is the token's user.
//
// Names are strict (policies/client_text.hpp): the {key} of every route that writes,
// every user (path, query or body), checkpoint names and fact keys must be 1..N bytes of
// valid UTF-8 without control characters, else 400 naming the parameter and nothing is
// stored. The {key} of a GET route accepts any stored key, so keys stored before this
// rule stay readable.
//
// Shutdown: after begin_shutdown() every new request is answered 503 shutting_down and
// a request whose actor answer fails from then on is answered 503 too; in_flight()
// counts requests not yet completed; fail_pending() answers every one of them 503
// shutting_down at once (the daemon calls it when its drain window ends).
//
// Threads: admit() and handle() on the front's I/O threads (neither blocks: /metrics,
// which reads SQLite, runs on one thread of this object's own); continuations on CAF's
// scheduler; begin_shutdown(), in_flight(), fail_pending() and set_tokens() from any thread. The actor
// handles are copied at construction, so no route reads the runtime object while it
// stops (except /metrics, which the daemon serves only before it stops the runtime).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/runtime.hpp"
#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/tokens/token_store.hpp"

namespace mneme::api {

struct api_state;

struct http_api_options {
  std::string auth_token;                          // the admin token; empty = none
  // The scoped tokens of gateway.tokens_file; null = no tokens file. With neither a
  // token nor a tokens file every caller is admin.
  std::shared_ptr<const token_set> tokens;
  int64_t max_body_bytes = 4 * 1024 * 1024;        // larger bodies: 413
  std::string default_user = "default";            // search without ?user=
  std::string version;                             // reported by /v1/health
  std::chrono::milliseconds read_timeout{30000};   // reads of state, lists, export, search
  std::shared_ptr<spdlog::logger> log;             // null = no logging
  int64_t unauthorized_logs_per_second = 5;        // 401s logged at info, the rest counted
  // More Prometheus text appended to GET /metrics (the front's connection counters).
  std::function<std::string()> extra_metrics;
};

// Default and largest `limit` of GET /v1/sessions.
inline constexpr int64_t session_list_default_limit = 100;
inline constexpr int64_t session_list_max_limit = 100000;
// GET /v1/sessions/{key}/rows: rows per page by default and at most.
inline constexpr int64_t rows_page_default = 200;
inline constexpr int64_t rows_page_max = 1000;

class http_api {
 public:
  // REQUIRES: rt was started on sys and outlives every request served by this object.
  http_api(caf::actor_system& sys, const runtime& rt, http_api_options opt);
  ~http_api();
  http_api(const http_api&) = delete;
  http_api& operator=(const http_api&) = delete;

  // The verdict on a request head (no body yet); nullopt = read the body, then handle().
  std::optional<http_response> admit(const http_request& head) const;
  // An error the front answers itself after admit() (413) in the shape of the route at
  // the head's path (a door's wire format); any other answer unchanged.
  void reshape(const http_request& head, http_response& r) const;
  // Whether the front may serve the head on a reserve connection (its connection limits
  // are reached): GET /v1/health, GET /metrics and admin-token requests (any request when
  // no credential is configured: every caller is admin then).
  bool reserved(const http_request& head) const;
  // Runs the request's route; `reply` is completed later, exactly once.
  void handle(http_request req, http_reply reply);

  void begin_shutdown();
  bool shutting_down() const;
  int64_t in_flight() const;
  // Answers every request not yet completed with 503 shutting_down; how many.
  size_t fail_pending();

  const http_api_options& options() const;

  // Replaces the scoped tokens (the daemon's SIGHUP reload); requests admitted from now
  // on are checked against `tokens`. REQUIRES: tokens is not null.
  void set_tokens(std::shared_ptr<const token_set> tokens);

 private:
  std::shared_ptr<api_state> state_; // what every route shares (plumbing/api_state.hpp)
};

} // namespace mneme::api
