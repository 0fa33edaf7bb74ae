// The daemon's HTTP server: an httplib::Server with the API routes (http_api.hpp)
// listening on host:port, served by its own thread and worker pool (never CAF threads).
//
// Shutdown order (the daemon's, see apps/mneme/cmd_serve.cpp): begin_shutdown() refuses
// new requests with 503 and stops accepting; wait_idle() lets requests inside a handler
// finish; then the caller stops the runtime (a request still waiting fails with 503
// shutting_down) and join()s the server.
//
// Threads: start, begin_shutdown, wait_idle, join from one controlling thread
// (main); port() from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "caf/expected.hpp"

#include "apps/common/api/http_api.hpp"

namespace httplib {
class Server;
}

namespace mneme::api {

class http_server {
 public:
  // REQUIRES: rt was started on sys and outlives this server's requests.
  http_server(caf::actor_system& sys, const runtime& rt, http_api_options opt,
              size_t worker_threads = 32);
  ~http_server(); // begin_shutdown() and join()
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  // Binds host:port (0 = a free port) and starts serving: the bound port, or
  // errc::bad_request (already started) / errc::internal naming host and port ("port P
  // is in use" when another listener holds it: SO_REUSEADDR only, never SO_REUSEPORT).
  caf::expected<int> start(const std::string& host, int port);

  // New requests get 503 shutting_down; the listener closes. Idempotent.
  void begin_shutdown();
  // Waits until no request is inside a handler, at most `max`; true when idle.
  bool wait_idle(std::chrono::milliseconds max);
  // Joins the listener thread and the worker pool. Idempotent.
  void join();

  int port() const { return port_; }
  http_api& api() { return *api_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<http_api> api_;
  std::thread listener_;
  int port_ = 0;
};

} // namespace mneme::api
