// The daemon's HTTP server: the event-driven front (http_front.hpp: connections, bounds,
// strict HTTP) serving the API's routes (http_api.hpp) on host:port.
//
// Shutdown order (the daemon's, see apps/mneme/cmd_serve.cpp): begin_shutdown() stops
// accepting (the port is free from then on) and answers new requests 503 shutting_down;
// wait_idle() lets requests in flight finish, at most the drain window; fail_pending()
// answers every request still waiting 503 shutting_down; then the caller stops the
// runtime and join()s the server, which writes what is left and closes every connection.
//
// Threads: start, begin_shutdown, wait_idle, fail_pending, join from one controlling
// thread (main); port(), api() and front() from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "caf/expected.hpp"

#include "apps/common/api/http_api.hpp"
#include "apps/common/api/front/http_front.hpp"

namespace mneme::api {

class http_server {
 public:
  // REQUIRES: rt was started on sys and outlives this server's requests.
  // `limits.max_body_bytes` is taken from opt.max_body_bytes.
  http_server(caf::actor_system& sys, const runtime& rt, http_api_options opt,
              size_t io_threads = 2, front_limits limits = {});
  ~http_server(); // begin_shutdown(), fail_pending() and join()
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Binds host:port (0 = a free port) and starts serving: the bound port, or
  // errc::bad_request (already started) / errc::internal naming host and port ("port P
  // is in use" when another listener holds it: SO_REUSEADDR only, never SO_REUSEPORT).
  caf::expected<int> start(const std::string& host, int port);

  // New requests get 503 shutting_down; the listener closes. Idempotent.
  void begin_shutdown();
  // Waits until no request is in flight, at most `max`; true when idle.
  bool wait_idle(std::chrono::milliseconds max);
  // Answers every request still in flight 503 shutting_down; how many.
  size_t fail_pending();
  // Writes the answers still on their way (at most a moment), closes every connection,
  // joins the I/O threads. Idempotent.
  void join();

  int port() const { return port_; }
  http_api& api() { return *api_; }
  http_front& front() { return *front_; }

 private:
  std::unique_ptr<http_api> api_;
  std::unique_ptr<http_front> front_;
  int port_ = 0;
};

} // namespace mneme::api
