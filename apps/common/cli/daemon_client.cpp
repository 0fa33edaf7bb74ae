// The daemon client of CLI commands; see daemon_client.hpp.
#include "apps/common/cli/daemon_client.hpp"

#include <httplib.h>

#include <fmt/format.h>

namespace mneme::cli {

namespace {

bool unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

} // namespace

std::string describe_error_body(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    auto& e = j["error"];
    auto code = e.value("code", std::string{});
    auto message = e.value("message", std::string{});
    return message.empty() ? code : code + ": " + message;
  }
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

std::string user_query(const std::string& user) {
  return user.empty() ? std::string{} : "?user=" + url_encode(user);
}

std::string url_encode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (unreserved(c))
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (auto& [name, value] : params) {
    out += out.empty() ? '?' : '&';
    out += url_encode(name) + "=" + url_encode(value);
  }
  return out;
}

daemon_client::daemon_client(std::string base_url, std::string token,
                             std::chrono::seconds timeout)
  : base_url_(std::move(base_url)) {
  while (!base_url_.empty() && base_url_.back() == '/')
    base_url_.pop_back();
  http_ = std::make_unique<httplib::Client>(base_url_);
  http_->set_connection_timeout(std::chrono::seconds{5});
  http_->set_read_timeout(timeout);
  http_->set_write_timeout(std::chrono::seconds{30});
  if (!token.empty())
    http_->set_bearer_token_auth(token);
}

daemon_client::~daemon_client() = default;

maybe_failure daemon_client::check(const httplib::Result& res, const std::string& what) {
  if (!res)
    return failure::failed(fmt::format("cannot reach the mneme daemon at {} ({}): {}",
                                       base_url_, what, httplib::to_string(res.error())));
  auto status = res->status;
  if (status >= 200 && status < 300)
    return std::nullopt;
  auto detail = describe_error_body(res->body);
  if (status == 401)
    return failure::input(fmt::format("the daemon at {} refused the request (401 "
                                      "unauthorized): give the right --token ({})",
                                      base_url_, detail));
  auto message = fmt::format("the daemon at {} answered {} to {}: {}", base_url_, status,
                             what, detail);
  // The caller's fault: unknown session/checkpoint, bad request, a token's scope that
  // does not reach the data, body too large.
  if (status == 400 || status == 403 || status == 404 || status == 413)
    return failure::input(message);
  return failure::failed(message);
}

maybe_failure daemon_client::get_text(const std::string& path, std::string& out) {
  if (!http_->is_valid())
    return failure::input("--server " + base_url_ + " is not a URL like http://127.0.0.1:8077");
  auto res = http_->Get(path.c_str());
  if (auto f = check(res, "GET " + path))
    return f;
  out = res->body;
  return std::nullopt;
}

maybe_failure daemon_client::get_json(const std::string& path, nlohmann::json& out) {
  std::string body;
  if (auto f = get_text(path, body))
    return f;
  out = nlohmann::json::parse(body, nullptr, false);
  if (out.is_discarded())
    return failure::failed("the daemon at " + base_url_ + " answered GET " + path
                           + " with a body that is not JSON");
  return std::nullopt;
}

maybe_failure daemon_client::post_json(const std::string& path, const nlohmann::json& body,
                                       nlohmann::json& out) {
  if (!http_->is_valid())
    return failure::input("--server " + base_url_ + " is not a URL like http://127.0.0.1:8077");
  auto res = http_->Post(path.c_str(), body.dump(), "application/json");
  if (auto f = check(res, "POST " + path))
    return f;
  out = nlohmann::json::parse(res->body, nullptr, false);
  if (out.is_discarded())
    return failure::failed("the daemon at " + base_url_ + " answered POST " + path
                           + " with a body that is not JSON");
  return std::nullopt;
}

maybe_failure daemon_client::post_events(
  const std::string& path, const nlohmann::json& body,
  const std::function<void(const sse_event_view&)>& on_event,
  const std::function<bool()>& keep_going) {
  if (!http_->is_valid())
    return failure::input("--server " + base_url_ + " is not a URL like http://127.0.0.1:8077");
  bool events = false;
  std::string plain; // the body of an answer that is not a stream (an error)
  sse_reader reader{on_event};
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "text/event-stream");
  req.response_handler = [&](const httplib::Response& r) {
    events = r.status == 200
             && r.get_header_value("Content-Type").rfind("text/event-stream", 0) == 0;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (events)
      reader.feed(std::string_view{data, n});
    else
      plain.append(data, n);
    return keep_going();
  };
  auto res = http_->send(req);
  if (!res && res.error() == httplib::Error::Canceled)
    return failure::failed("POST " + path + " cancelled");
  if (res)
    res->body = std::move(plain);
  if (auto f = check(res, "POST " + path))
    return f;
  if (events)
    reader.finish();
  return std::nullopt;
}

maybe_failure daemon_client::json_answer(const httplib::Result& res, const std::string& what,
                                         nlohmann::json& out) {
  if (auto f = check(res, what))
    return f;
  out = nlohmann::json::parse(res->body, nullptr, false);
  if (out.is_discarded())
    return failure::failed("the daemon at " + base_url_ + " answered " + what
                           + " with a body that is not JSON");
  return std::nullopt;
}

maybe_failure daemon_client::put_json(const std::string& path, const nlohmann::json& body,
                                      nlohmann::json& out) {
  if (!http_->is_valid())
    return failure::input("--server " + base_url_ + " is not a URL like http://127.0.0.1:8077");
  return json_answer(http_->Put(path.c_str(), body.dump(), "application/json"), "PUT " + path,
                     out);
}

maybe_failure daemon_client::delete_json(const std::string& path, nlohmann::json& out) {
  if (!http_->is_valid())
    return failure::input("--server " + base_url_ + " is not a URL like http://127.0.0.1:8077");
  return json_answer(http_->Delete(path.c_str()), "DELETE " + path, out);
}

daemon_client::raw_answer daemon_client::post_raw(
  const std::string& path, const std::string& body,
  const std::vector<std::pair<std::string, std::string>>& headers) {
  raw_answer out;
  if (!http_->is_valid()) {
    out.error = "--server " + base_url_ + " is not a URL like http://127.0.0.1:8077";
    return out;
  }
  httplib::Headers sent;
  for (const auto& [name, value] : headers)
    sent.emplace(name, value);
  auto res = http_->Post(path.c_str(), sent, body, "application/json");
  if (!res) {
    out.error = fmt::format("cannot reach the mneme daemon at {}: {}", base_url_,
                            httplib::to_string(res.error()));
    return out;
  }
  out.reached = true;
  out.status = res->status;
  out.body = std::move(res->body);
  return out;
}

} // namespace mneme::cli
