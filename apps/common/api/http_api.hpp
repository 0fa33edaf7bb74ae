// The route table of the daemon's HTTP/JSON API (docs/api.md; SPEC §8): each route
// decodes its request (request_decoder.hpp), asks the runtime's actors through a
// caf::scoped_actor with a timeout, and answers JSON from json_codec.hpp; every error
// is {"error":{"code","message"}} with the status of http_status.hpp. Bearer auth
// (every route but GET /v1/health when a token is set), the body limit (413, whatever
// the content type) and JSON for httplib's own errors are installed with the routes.
// Routing is route_table.hpp's on the raw path (an encoded '/' in a key works); an
// unknown path is 404, a known path under another method 405 with an Allow header.
//
// Shutdown: after begin_shutdown() every new request is answered 503 shutting_down and
// a request whose actor answer fails from then on is answered 503 too; in_flight()
// counts requests inside a handler, so the daemon can wait for them to finish.
//
// Threads: handlers run on httplib's worker threads (never CAF threads), where a
// blocking receive is fine; install() once before the server listens; begin_shutdown()
// and in_flight() from any thread. The actor handles are copied at construction, so
// handlers never read the runtime object while it stops (except /metrics, which the
// daemon serves only before it stops the runtime).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/runtime.hpp"

namespace httplib {
class Server;
}

namespace mneme::api {

struct http_api_options {
  std::string auth_token;                          // empty = no token required
  int64_t max_body_bytes = 4 * 1024 * 1024;        // larger bodies: 413
  std::string default_user = "default";            // search without ?user=
  std::string version;                             // reported by /v1/health
  std::chrono::milliseconds read_timeout{30000};   // reads of state, lists, export, search
  std::shared_ptr<spdlog::logger> log;             // null = no logging
};

// Default and largest `limit` of GET /v1/sessions.
inline constexpr int64_t session_list_default_limit = 100;
inline constexpr int64_t session_list_max_limit = 100000;

class http_api {
 public:
  // REQUIRES: rt was started on sys and outlives every request served by this object.
  http_api(caf::actor_system& sys, const runtime& rt, http_api_options opt);
  http_api(const http_api&) = delete;
  http_api& operator=(const http_api&) = delete;

  // Registers the routes, auth, body limit and error bodies on `server`.
  void install(httplib::Server& server);

  void begin_shutdown();
  bool shutting_down() const;
  int64_t in_flight() const;

  struct impl; // the handlers' shared state (http_api.cpp)

 private:
  std::shared_ptr<impl> impl_;
};

} // namespace mneme::api
