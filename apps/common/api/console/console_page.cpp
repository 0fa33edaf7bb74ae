// The console's answers; see console_page.hpp.
#include "apps/common/api/console/console_page.hpp"

namespace mneme::api {

namespace {

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

void add_console_headers(http_response& r) {
  r.headers.emplace_back("Content-Security-Policy", std::string{console_csp});
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Cache-Control", "no-cache");
}

} // namespace

std::string console_content_type(std::string_view name) {
  if (ends_with(name, ".html"))
    return "text/html; charset=utf-8";
  if (ends_with(name, ".js"))
    return "text/javascript; charset=utf-8";
  if (ends_with(name, ".css"))
    return "text/css; charset=utf-8";
  if (ends_with(name, ".svg"))
    return "image/svg+xml";
  if (ends_with(name, ".png"))
    return "image/png";
  return "application/octet-stream";
}

http_response console_answer(const std::vector<embedded_file>& files, std::string_view rest) {
  auto wanted = rest.empty() ? std::string_view{"index.html"} : rest;
  http_response r;
  r.status = 404;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "no console file " + std::string{wanted} + "\n";
  for (const auto& f : files)
    if (f.name == wanted) {
      r.status = 200;
      r.content_type = console_content_type(f.name);
      r.body = std::string{f.bytes};
      break;
    }
  add_console_headers(r);
  return r;
}

} // namespace mneme::api
