// What the console's routes answer for one request path (docs/console.md): the embedded
// file it names with its content type and the security headers every console answer
// carries (a Content-Security-Policy that allows scripts, styles and fetches from the
// daemon's own origin only, no inline script, no framing). Pure: no I/O; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apps/common/api/console/embedded_file.hpp"
#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

// The Content-Security-Policy of every console answer.
inline constexpr std::string_view console_csp =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
  "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The content type of a file by its extension; application/octet-stream when unknown.
std::string console_content_type(std::string_view name);

// The answer to GET /console/<rest> among `files`: "" (and "index.html") is the page;
// another name is that file, 200 with its type; a name not among them is a 404 page.
// Every answer carries the headers above.
http_response console_answer(const std::vector<embedded_file>& files, std::string_view rest);

} // namespace mneme::api
