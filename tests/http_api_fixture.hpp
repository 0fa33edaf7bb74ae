// The fixture of the in-process HTTP API tests (http_api_test, http_facts_test,
// http_strict_test, http_concurrency_test, the doors' tests): serve_runtime_fixture's
// runtime behind the daemon's HTTP server on an ephemeral loopback port, and an httplib
// client with the bearer token of the options, if any. Answers are read into {status,
// body (JSON when the answer is JSON), text, content_type}. Used from the test thread
// only, but send_apart() and wait_until() (any thread, no assertion in them).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "apps/common/api/http_server.hpp"
#include "tests/serve_runtime_fixture.hpp"

namespace mneme::test {

struct http_api_fixture : serve_runtime_fixture {
  using json = nlohmann::json;

  std::unique_ptr<api::http_server> server;
  std::unique_ptr<httplib::Client> client;
  int port = 0;
  std::string token;

  // Starts the runtime and the server with `io_threads` I/O threads.
  void serve(api::http_api_options opt = {}, size_t io_threads = 4) {
    start();
    token = opt.auth_token;
    server = std::make_unique<api::http_server>(*sys, *rt, opt, io_threads);
    auto bound = server->start("127.0.0.1", 0);
    BOOST_REQUIRE_MESSAGE(bound, testing::err_of(bound));
    port = *bound;
    client = std::make_unique<httplib::Client>("127.0.0.1", port);
    client->set_read_timeout(60, 0);
    if (!token.empty())
      client->set_bearer_token_auth(token.c_str());
  }
  ~http_api_fixture() {
    if (server) {
      server->begin_shutdown();
      server->join();
    }
  }

  struct answer {
    int status = 0;
    json body;
    std::string text;
    std::string content_type;
  };
  static answer read(const httplib::Result& r) {
    BOOST_REQUIRE_MESSAGE(r, "no HTTP answer: " + httplib::to_string(r.error()));
    answer a;
    a.status = r->status;
    a.text = r->body;
    a.content_type = r->get_header_value("Content-Type");
    if (a.content_type == "application/json")
      a.body = json::parse(r->body);
    return a;
  }
  answer send(const std::string& method, const std::string& path, const std::string& body) {
    if (method == "GET")
      return read(client->Get(path.c_str()));
    if (method == "PUT")
      return read(client->Put(path.c_str(), body, "application/json"));
    if (method == "DELETE")
      return read(client->Delete(path.c_str()));
    return read(client->Post(path.c_str(), body, "application/json"));
  }
  answer get(const std::string& path) { return read(client->Get(path.c_str())); }
  answer post(const std::string& path, const std::string& body) {
    return read(client->Post(path.c_str(), body, "application/json"));
  }
  answer post(const std::string& path, const json& body) { return post(path, body.dump()); }

  // The value of the sample `line_prefix` (name and labels) in GET /metrics.
  int64_t metric(const std::string& line_prefix) {
    auto text = get("/metrics").text;
    auto at = text.find("\n" + line_prefix + " ");
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, "no metric " + line_prefix);
    return std::stoll(text.substr(at + line_prefix.size() + 2));
  }

  // Polls `held` every 10 ms for at most 60 s (a bound, never the test's verdict).
  template <class Pred>
  static bool wait_until(Pred held) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!held()) {
      if (std::chrono::steady_clock::now() > end)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // An answer read on a connection of its own: for requests on other threads (no
  // assertion in it; status 0: no answer; body null unless the answer is JSON).
  struct apart_answer {
    int status = 0;
    json body;
    std::string text;
    httplib::Headers headers;
  };
  apart_answer send_apart(const std::string& method, const std::string& path,
                          const json& body = nullptr, const httplib::Headers& headers = {}) {
    httplib::Client own("127.0.0.1", port);
    own.set_read_timeout(600, 0);
    if (!token.empty())
      own.set_bearer_token_auth(token.c_str());
    auto r = method == "DELETE" ? own.Delete(path.c_str(), headers)
                                : own.Post(path.c_str(), headers, body.dump(), "application/json");
    apart_answer a;
    if (!r)
      return a;
    a.status = r->status;
    a.text = r->body;
    a.headers = r->headers;
    if (r->get_header_value("Content-Type") == "application/json")
      a.body = json::parse(r->body, nullptr, false);
    return a;
  }
};

} // namespace mneme::test
