// Implementation of HTTP response framing (see http_response.hpp).
#include "apps/common/fakellm/http_response.hpp"

#include <cstdio>

namespace mneme::fakellm {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 529: return "Site Overloaded";  // Anthropic's overloaded_error
    default: return "Unknown";
  }
}

namespace {

std::string status_line(int status) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) + "\r\n";
}

} // namespace

std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool keep_alive, long content_length_override) {
  auto length = content_length_override >= 0 ? static_cast<size_t>(content_length_override)
                                              : body.size();
  std::string out = status_line(status);
  out += "Server: mneme-fakellm\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: " + std::to_string(length) + "\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  out += body;
  return out;
}

std::string http_chunked_head(int status, std::string_view content_type, bool keep_alive) {
  std::string out = status_line(status);
  out += "Server: mneme-fakellm\r\nContent-Type: ";
  out += content_type;
  out += "\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
  out += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return out;
}

std::string with_header(std::string response, std::string_view name, std::string_view value) {
  auto end_of_status = response.find("\r\n");
  if (end_of_status == std::string::npos) return response;
  std::string line{name};
  line += ": ";
  line += value;
  line += "\r\n";
  response.insert(end_of_status + 2, line);
  return response;
}

std::string http_chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out = size;
  out += data;
  out += "\r\n";
  return out;
}

} // namespace mneme::fakellm
