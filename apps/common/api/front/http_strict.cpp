// The front's own HTTP rules; see http_strict.hpp.
#include "apps/common/api/front/http_strict.hpp"

#include <boost/beast/core.hpp>

#include "apps/common/api/json_codec.hpp"

namespace mneme::api {

namespace beast = boost::beast;
namespace http = beast::http;

http_response closing_error_response(int status, const char* code, const std::string& message) {
  http_response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = dump_json(error_json(code, message));
  r.close = true;
  return r;
}

std::string strict_head_problem(const http::request_parser<http::empty_body>& p) {
  const auto& h = p.get();
  auto lengths = h.count(http::field::content_length);
  auto encodings = h.count(http::field::transfer_encoding);
  if (lengths > 1)
    return "more than one Content-Length header";
  if (lengths == 1) { // one decimal number: a list ("57, 57") is refused, equal or not
    auto value = h[http::field::content_length];
    if (value.empty() || value.find_first_not_of("0123456789") != beast::string_view::npos)
      return "Content-Length is not one decimal number";
  }
  if (lengths > 0 && encodings > 0)
    return "Content-Length together with Transfer-Encoding";
  if (encodings > 1)
    return "more than one Transfer-Encoding header";
  auto te = h[http::field::transfer_encoding];
  if (encodings == 1 && !beast::iequals(te, "chunked"))
    return "Transfer-Encoding other than 'chunked'";
  return {};
}

std::string chunk_size_hex(size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), digits[n % 16]);
    n /= 16;
  } while (n > 0);
  return out;
}

} // namespace mneme::api
