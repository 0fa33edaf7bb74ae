// The parts of a node's advertise URL (gateway.advertise_url, "http://host:port[/base]")
// as the HTTP API's forwarder connects to it (issue 26 item 4). Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mneme {

struct http_url {
  std::string host;  // a name, IPv4, or IPv6 without its brackets
  std::string port;  // "80" when the URL names none
  std::string base;  // the path before every forwarded target, "" or "/x" (no trailing /)
};

// nullopt unless `url` is http:// followed by a non-empty host, an optional :port of
// 1-5 digits, and an optional path without query or fragment.
std::optional<http_url> parse_http_url(std::string_view url);

} // namespace mneme
