// Implementation of the pure HTTP/1.1 request parser (see http_parser.hpp).
#include "apps/common/fakellm/http_parser.hpp"

#include <cassert>
#include <cctype>
#include <charconv>

namespace mneme::fakellm {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

parse_result fail(parse_status s, std::string why) {
  parse_result r;
  r.status = s;
  r.error = std::move(why);
  return r;
}

// Parses "METHOD SP target SP HTTP/1.x"; returns an error text or empty.
std::string parse_request_line(std::string_view line, http_request& req) {
  auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return "request line has no method";
  auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return "request line has no target";
  auto method = line.substr(0, sp1);
  for (char c : method)
    if (!is_token_char(c)) return "request line has an invalid method";
  req.method = std::string(method);
  req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  req.version = std::string(line.substr(sp2 + 1));
  if (req.version != "HTTP/1.1" && req.version != "HTTP/1.0")
    return "unsupported protocol version '" + req.version.substr(0, 16) + "'";
  if (req.target.empty() || req.target.front() != '/') return "request target must start with '/'";
  return {};
}

} // namespace

const std::string* http_request::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return &v;
  return nullptr;
}

std::string_view http_request::path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

std::string_view to_string(parse_status s) {
  switch (s) {
    case parse_status::incomplete: return "incomplete";
    case parse_status::complete: return "complete";
    case parse_status::bad_request: return "bad_request";
    case parse_status::too_large: return "too_large";
    case parse_status::unsupported: return "unsupported";
  }
  return "unknown";
}

parse_result parse_request(std::string_view buffer, const http_limits& limits,
                           http_request* out) {
  assert(out != nullptr);
  // Tolerate empty lines before a request (RFC 9112 §2.2).
  size_t start = 0;
  while (start + 1 < buffer.size() && buffer[start] == '\r' && buffer[start + 1] == '\n') start += 2;
  auto head_end = buffer.find("\r\n\r\n", start);
  if (head_end == std::string_view::npos) {
    if (buffer.size() - start > limits.max_header_bytes)
      return fail(parse_status::too_large, "request head exceeds " +
                                               std::to_string(limits.max_header_bytes) + " bytes");
    return {};
  }
  if (head_end - start > limits.max_header_bytes)
    return fail(parse_status::too_large,
                "request head exceeds " + std::to_string(limits.max_header_bytes) + " bytes");

  http_request req;
  std::string_view head = buffer.substr(start, head_end - start);
  auto eol = head.find("\r\n");
  auto line_err = parse_request_line(head.substr(0, eol), req);
  if (!line_err.empty()) return fail(parse_status::bad_request, line_err);

  bool has_length = false;
  size_t content_length = 0;
  bool chunked = false;
  bool expect_continue = false;
  std::string connection;
  while (eol != std::string_view::npos) {
    auto next = head.find("\r\n", eol + 2);
    auto line = head.substr(eol + 2, next == std::string_view::npos ? std::string_view::npos
                                                                    : next - eol - 2);
    eol = next;
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return fail(parse_status::bad_request, "header line without a name and ':'");
    auto name = line.substr(0, colon);
    for (char c : name)
      if (!is_token_char(c)) return fail(parse_status::bad_request, "invalid header name");
    auto key = lower(name);
    auto value = std::string(trim_spaces(line.substr(colon + 1)));
    if (key == "content-length") {
      size_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || p != value.data() + value.size())
        return fail(parse_status::bad_request, "Content-Length is not a number");
      if (has_length && n != content_length)
        return fail(parse_status::bad_request, "conflicting Content-Length headers");
      has_length = true;
      content_length = n;
    } else if (key == "transfer-encoding") {
      chunked = lower(value) != "identity";
    } else if (key == "expect") {
      expect_continue = lower(value) == "100-continue";
    } else if (key == "connection") {
      connection = lower(value);
    }
    req.headers.emplace_back(std::move(key), std::move(value));
  }
  if (chunked)
    return fail(parse_status::unsupported, "chunked request bodies are not supported; send Content-Length");
  if (content_length > limits.max_body_bytes)
    return fail(parse_status::too_large, "request body of " + std::to_string(content_length) +
                                             " bytes exceeds " +
                                             std::to_string(limits.max_body_bytes) + " bytes");
  req.keep_alive = req.version == "HTTP/1.1" ? connection.find("close") == std::string::npos
                                             : connection.find("keep-alive") != std::string::npos;

  parse_result r;
  r.headers_complete = true;
  r.expects_continue = expect_continue;
  size_t body_start = head_end + 4;
  if (buffer.size() - body_start < content_length) return r;
  req.body = std::string(buffer.substr(body_start, content_length));
  r.status = parse_status::complete;
  r.consumed = body_start + content_length;
  *out = std::move(req);
  return r;
}

} // namespace mneme::fakellm
