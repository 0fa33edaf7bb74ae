// One HTTP request and its reply handle; see http_exchange.hpp.
#include "apps/common/api/front/http_exchange.hpp"

#include <cctype>

namespace mneme::api {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i]))
        != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

} // namespace

std::string http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      return v;
  return {};
}

size_t http_request::header_count(std::string_view name) const {
  size_t n = 0;
  for (const auto& header : headers)
    n += iequals(header.first, name) ? 1 : 0;
  return n;
}

bool http_reply::answer(http_response res) const {
  if (!sink_ || sink_->completed.exchange(true))
    return false;
  sink_->deliver(std::move(res));
  return true;
}

std::shared_ptr<event_stream> http_reply::stream(int status, std::string content_type,
                                                 header_list headers) const {
  if (!sink_ || sink_->completed.exchange(true))
    return nullptr;
  return sink_->open_stream(status, std::move(content_type), std::move(headers));
}

} // namespace mneme::api
