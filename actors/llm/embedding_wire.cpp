// One embeddings call as data; see embedding_wire.hpp.
#include "actors/llm/embedding_wire.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/llm/llm_errors.hpp"
#include "actors/llm/llm_wire.hpp"
#include "policies/error_classifier.hpp"
#include "policies/retry_after.hpp"

namespace mneme::llm {

namespace {

caf::error malformed(const std::string& what) {
  return make_llm_error(llm_error_kind::malformed, "embeddings answer: " + what);
}

} // namespace

std::string embeddings_url(std::string_view base_url) {
  std::string base{base_url};
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  constexpr std::string_view v1 = "/v1";
  bool ends_v1 = base.size() >= v1.size() && base.compare(base.size() - v1.size(), v1.size(), v1) == 0;
  return base + (ends_v1 ? "/embeddings" : "/v1/embeddings");
}

std::string embedding_request_json(const embedding_endpoint& endpoint,
                                   const std::vector<std::string>& texts) {
  nlohmann::json doc = {{"model", endpoint.model}, {"input", texts}};
  if (endpoint.send_dimensions)
    doc["dimensions"] = endpoint.dimensions;
  doc["encoding_format"] = "float";
  // Invalid UTF-8 in a stored text must not throw: it is replaced, not sent raw.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

http_call build_embedding_call(const embedding_endpoint& endpoint,
                               const std::vector<std::string>& texts,
                               std::chrono::milliseconds total_timeout) {
  assert(total_timeout.count() > 0);
  http_call call;
  call.url = endpoint.url;
  call.headers.emplace_back("Content-Type: application/json");
  call.headers.emplace_back("Accept: application/json");
  if (!endpoint.api_key.empty())
    call.headers.emplace_back("Authorization: Bearer " + endpoint.api_key);
  call.headers.emplace_back("X-Mneme-Purpose: embedding");
  call.body = embedding_request_json(endpoint, texts);
  call.total_timeout = total_timeout;
  call.idle_timeout = std::min(endpoint.idle_timeout, total_timeout);
  return call;
}

namespace {

// "" and `out` filled, or what is wrong with the body.
std::string parse_into(std::string_view body, std::size_t count, std::size_t dims,
                       std::vector<std::vector<float>>& out) {
  auto doc = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return std::string("not a JSON object");
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_array())
    return std::string("no \"data\" array");
  if (data->size() != count)
    return (fmt::format("{} vectors for {} inputs", data->size(), count));
  out.assign(count, {});
  std::vector<bool> seen(count, false);
  for (std::size_t i = 0; i < data->size(); ++i) {
    const auto& item = (*data)[i];
    auto where = fmt::format("data[{}]", i);
    if (!item.is_object())
      return (where + " is not an object");
    auto index = item.find("index");
    if (index == item.end() || !index->is_number_integer())
      return (where + " has no integer \"index\"");
    auto at = index->get<int64_t>();
    if (at < 0 || static_cast<std::size_t>(at) >= count)
      return (fmt::format("{}.index {} is outside 0..{}", where, at, count - 1));
    if (seen[static_cast<std::size_t>(at)])
      return (fmt::format("{}.index {} comes twice", where, at));
    seen[static_cast<std::size_t>(at)] = true;
    auto emb = item.find("embedding");
    if (emb == item.end() || !emb->is_array())
      return (where + " has no \"embedding\" array (encoding_format float)");
    if (emb->size() != dims)
      return (fmt::format("{}.embedding has {} numbers, not the {} dimensions", where,
                                   emb->size(), dims));
    auto& v = out[static_cast<std::size_t>(at)];
    v.reserve(dims);
    double sum = 0;
    for (const auto& x : *emb) {
      if (!x.is_number())
        return (where + ".embedding holds something other than a number");
      double d = x.get<double>();
      if (!std::isfinite(d) || std::abs(d) > 3.0e38)
        return (where + ".embedding holds a non-finite number");
      v.push_back(static_cast<float>(d));
      sum += d * d;
    }
    if (!(sum > 0))
      return (where + ".embedding is all zero");
    const double inv = 1.0 / std::sqrt(sum);
    for (float& x : v)
      x = static_cast<float>(x * inv);
  }
  return {};
}

} // namespace

caf::expected<std::vector<std::vector<float>>> parse_embedding_answer(std::string_view body,
                                                                      std::size_t count,
                                                                      std::size_t dims) {
  std::vector<std::vector<float>> out;
  if (auto why = parse_into(body, count, dims, out); !why.empty())
    return malformed(why);
  return out;
}

caf::expected<std::vector<std::vector<float>>> read_embedding_outcome(const http_outcome& out,
                                                                      std::size_t count,
                                                                      std::size_t dims,
                                                                      const std::string& api_key) {
  auto elapsed = fmt::format("after {:.3f} s", out.elapsed.count() / 1e6);
  if (out.transport != llm_error_kind::none)
    return make_llm_error(out.transport, out.transport_detail + " " + elapsed, out.status,
                          out.body, api_key);
  if (out.status < 200 || out.status > 299) {
    auto kind = classify_http_answer(static_cast<int>(out.status), out.body);
    if (kind == llm_error_kind::none)
      kind = llm_error_kind::bad_request;
    std::optional<int64_t> retry;
    if (carries_retry_after(static_cast<int>(out.status)) && !out.retry_after.empty())
      retry = retry_after_seconds(out.retry_after, out.completed_unix_s);
    return make_llm_error(kind, "HTTP error answer " + elapsed, out.status, out.body, api_key,
                          retry);
  }
  if (auto embedded = error_status_in_body(out.body); embedded != 0) {
    auto kind = classify_http_answer(embedded, out.body);
    if (kind == llm_error_kind::none)
      kind = llm_error_kind::server_error;
    return make_llm_error(kind,
                          "error object with code " + std::to_string(embedded)
                            + " in a 2xx answer " + elapsed,
                          out.status, out.body, api_key);
  }
  std::vector<std::vector<float>> vectors;
  if (auto why = parse_into(out.body, count, dims, vectors); !why.empty())
    return make_llm_error(llm_error_kind::malformed, "embeddings answer: " + why + " " + elapsed,
                          out.status, out.body, api_key);
  return vectors;
}

} // namespace mneme::llm
