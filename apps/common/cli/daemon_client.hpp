// The `mneme` commands' client of a running daemon (`--server URL [--token T]`): the
// HTTP API of `mneme serve` (docs/cli.md, the API contract) over cpp-httplib. Answers
// come back as JSON documents; an error answer becomes a failure naming the daemon's
// error code and message (401 -> check the token, 404 -> unknown session). An
// unreachable daemon is a failure of the command (exit 1).
// Thread: one owner (the program's main thread); blocking calls.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/cli/cli_failure.hpp"
#include "policies/sse_reader.hpp"

namespace httplib {
class Client;
class Result;
}

namespace mneme::cli {

// Percent-encodes everything but unreserved characters (RFC 3986), for path segments
// and query values.
std::string url_encode(std::string_view s);
// "?user=USER" (encoded), or "" for an empty user: a {key} route's namespace.
std::string user_query(const std::string& user);

// "?a=1&b=x%20y" from name/value pairs (values encoded); "" when empty.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& params);

// "code: message" from the API's {"error":{"code","message"}}, else the body's first 200
// bytes.
std::string describe_error_body(const std::string& body);

class daemon_client {
 public:
  // REQUIRES: nothing; an unusable URL is reported by the first call.
  daemon_client(std::string base_url, std::string token,
                std::chrono::seconds timeout = std::chrono::seconds{330});
  ~daemon_client();
  daemon_client(const daemon_client&) = delete;
  daemon_client& operator=(const daemon_client&) = delete;

  // GET path (with its query) -> the JSON body of a 2xx answer.
  maybe_failure get_json(const std::string& path, nlohmann::json& out);
  // GET path -> the raw body of a 2xx answer (NDJSON export, metrics).
  maybe_failure get_text(const std::string& path, std::string& out);
  // POST path with a JSON body -> the JSON body of a 2xx answer.
  maybe_failure post_json(const std::string& path, const nlohmann::json& body,
                          nlohmann::json& out);

  // POST path with a JSON body asking for a text/event-stream answer: each event goes to
  // `on_event` as it arrives. A plain (JSON) answer is checked like post_json's: a
  // non-2xx one is the failure. `keep_going` is asked between pieces: false cancels
  // the request (the failure says so).
  maybe_failure post_events(const std::string& path, const nlohmann::json& body,
                            const std::function<void(const sse_event_view&)>& on_event,
                            const std::function<bool()>& keep_going);

  // PUT path with a JSON body -> the JSON body of a 2xx answer.
  maybe_failure put_json(const std::string& path, const nlohmann::json& body,
                         nlohmann::json& out);
  // DELETE path -> the JSON body of a 2xx answer.
  maybe_failure delete_json(const std::string& path, nlohmann::json& out);

  // POST path with `body` and `headers` as they are, whatever the status answered: the
  // status and body, or reached == false and why (the daemon could not be reached).
  struct raw_answer {
    bool reached = false;
    int status = 0;
    std::string body;
    std::string error;
  };
  raw_answer post_raw(const std::string& path, const std::string& body,
                      const std::vector<std::pair<std::string, std::string>>& headers);

  const std::string& base_url() const { return base_url_; }

 private:
  maybe_failure check(const httplib::Result& res, const std::string& what);
  // The JSON body of a 2xx answer to `res` (what = "METHOD path").
  maybe_failure json_answer(const httplib::Result& res, const std::string& what,
                            nlohmann::json& out);

  std::string base_url_;
  std::unique_ptr<httplib::Client> http_;
};

} // namespace mneme::cli
