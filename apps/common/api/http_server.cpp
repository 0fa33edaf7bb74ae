// The daemon's HTTP server; see http_server.hpp.
#include "apps/common/api/http_server.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <httplib.h>

#include "messages/errc.hpp"

namespace mneme::api {

http_server::http_server(caf::actor_system& sys, const runtime& rt, http_api_options opt,
                         size_t worker_threads)
  : server_(std::make_unique<httplib::Server>()),
    api_(std::make_unique<http_api>(sys, rt, std::move(opt))) {
  server_->new_task_queue = [worker_threads] { return new httplib::ThreadPool(worker_threads); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second daemon
  // binds the same port and the two share its requests.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  api_->install(*server_);
}

http_server::~http_server() {
  begin_shutdown();
  join();
}

caf::expected<int> http_server::start(const std::string& host, int port) {
  if (listener_.joinable())
    return caf::make_error(errc::bad_request, "the HTTP server is already started");
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0)
      return caf::make_error(errc::internal, "cannot listen on " + host + " (a free port)");
  } else {
    errno = 0;
    if (!server_->bind_to_port(host, port)) {
      auto why = errno == EADDRINUSE ? "port " + std::to_string(port) + " is in use"
                                     : std::string{errno != 0 ? std::strerror(errno)
                                                              : "the address is unusable"};
      return caf::make_error(errc::internal,
                             "cannot listen on " + host + ":" + std::to_string(port) + ": "
                               + why);
    }
    port_ = port;
  }
  listener_ = std::thread{[this] { server_->listen_after_bind(); }};
  // stop() is a no-op until the loop runs: wait for it so a shutdown right after start
  // cannot be lost.
  while (!server_->is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port_;
}

void http_server::begin_shutdown() {
  api_->begin_shutdown();
  server_->stop();
}

bool http_server::wait_idle(std::chrono::milliseconds max) {
  auto deadline = std::chrono::steady_clock::now() + max;
  while (api_->in_flight() > 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void http_server::join() {
  if (listener_.joinable())
    listener_.join();
}

} // namespace mneme::api
