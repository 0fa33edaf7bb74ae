// The daemon's HTTP server; see http_server.hpp.
#include "apps/common/api/http_server.hpp"

#include <thread>

namespace mneme::api {

namespace {

front_limits with_body_limit(front_limits limits, const http_api_options& opt) {
  limits.max_body_bytes = opt.max_body_bytes;
  return limits;
}

std::string family(const char* name, const char* type, const char* help) {
  return std::string{"# HELP "} + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

// The front's figures in Prometheus text format.
std::string render_front_text(const http_front& front) {
  const auto& c = front.counters();
  auto n = [](const std::atomic<int64_t>& x) { return std::to_string(x.load()); };
  std::string out;
  out += family("mneme_http_connections_open", "gauge", "Client connections open now");
  out += "mneme_http_connections_open " + std::to_string(front.open_connections()) + "\n";
  out += family("mneme_http_connections_total", "counter", "Client connections accepted");
  out += "mneme_http_connections_total " + n(c.accepted) + "\n";
  out += family("mneme_http_connections_refused_total", "counter",
                "Connections closed at once: no regular slot (gateway.max_connections, "
                "gateway.max_connections_per_address) and no reserve slot");
  out += "mneme_http_connections_refused_total " + n(c.refused) + "\n";
  out += family("mneme_http_reserve_total", "counter",
                "The connection reserve kept for health, metrics and admin requests: "
                "connections accepted on it, of which displaced a waiting one, "
                "requests served and refused on it");
  out += "mneme_http_reserve_total{event=\"accepted\"} " + n(c.reserve_accepted) + "\n";
  out += "mneme_http_reserve_total{event=\"displaced\"} " + n(c.reserve_displaced) + "\n";
  out += "mneme_http_reserve_total{event=\"served\"} " + n(c.reserve_served) + "\n";
  out += "mneme_http_reserve_total{event=\"refused\"} " + n(c.reserve_refused) + "\n";
  out += family("mneme_http_timeouts_total", "counter",
                "Connections closed by a deadline: headers, body, keep-alive idle");
  out += "mneme_http_timeouts_total{phase=\"header\"} " + n(c.header_timeouts) + "\n";
  out += "mneme_http_timeouts_total{phase=\"body\"} " + n(c.body_timeouts) + "\n";
  out += "mneme_http_timeouts_total{phase=\"idle\"} " + n(c.idle_closed) + "\n";
  out += family("mneme_http_bad_requests_total", "counter",
                "Requests refused by strict HTTP parsing (400, connection closed)");
  out += "mneme_http_bad_requests_total " + n(c.bad_requests) + "\n";
  out += family("mneme_http_streams_dropped_total", "counter",
                "Streamed answers dropped for a client reading too slowly");
  out += "mneme_http_streams_dropped_total " + n(c.streams_dropped) + "\n";
  return out;
}

} // namespace

http_server::http_server(caf::actor_system& sys, const runtime& rt, http_api_options opt,
                         size_t io_threads, front_limits limits)
{
  auto* front_slot = &front_;
  opt.extra_metrics = [front_slot] {
    return *front_slot ? render_front_text(**front_slot) : std::string{};
  };
  api_ = std::make_unique<http_api>(sys, rt, opt);
  auto* api = api_.get();
  front_handler handler;
  handler.admit = [api](const http_request& head) { return api->admit(head); };
  handler.reshape = [api](const http_request& head, http_response& r) { api->reshape(head, r); };
  handler.reserved = [api](const http_request& head) { return api->reserved(head); };
  handler.handle = [api](http_request req, http_reply reply) {
    api->handle(std::move(req), std::move(reply));
  };
  front_ = std::make_unique<http_front>(with_body_limit(limits, opt), std::move(handler),
                                        io_threads);
}

http_server::~http_server() {
  begin_shutdown();
  fail_pending();
  join();
}

caf::expected<int> http_server::start(const std::string& host, int port) {
  auto bound = front_->start(host, port);
  if (bound)
    port_ = *bound;
  return bound;
}

void http_server::begin_shutdown() {
  api_->begin_shutdown();
  front_->stop_accepting();
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

size_t http_server::fail_pending() { return api_->fail_pending(); }

void http_server::join() { front_->stop(); }

} // namespace mneme::api
