// Building and reading one chat-completions call; see llm_call.hpp.
#include "actors/llm/llm_call.hpp"

#include <cassert>

#include <fmt/format.h>

#include "actors/llm/compaction_wire.hpp"
#include "actors/llm/llm_errors.hpp"
#include "actors/llm/llm_wire.hpp"
#include "actors/llm/sse_answer.hpp"
#include "policies/error_classifier.hpp"

namespace mneme::llm {

http_call build_http_call(const llm_endpoint& endpoint, const chat_request& req,
                          std::chrono::milliseconds total_timeout) {
  // REQUIRES: the deadline has not passed.
  assert(total_timeout.count() > 0);
  http_call call;
  call.url = endpoint.url;
  call.headers.emplace_back("Content-Type: application/json");
  bool stream = req.stream && req.purpose == llm_purpose::chat;
  call.headers.emplace_back(stream ? "Accept: text/event-stream" : "Accept: application/json");
  if (!endpoint.api_key.empty())
    call.headers.emplace_back("Authorization: Bearer " + endpoint.api_key);
  call.headers.emplace_back("X-Mneme-Purpose: " + std::string{to_string(req.purpose)});
  auto encode = req.purpose == llm_purpose::compaction ? to_compaction_wire_json : to_wire_json;
  if (req.purpose == llm_purpose::compaction)
    call.url = compaction_url(endpoint.url);
  if (req.model.empty()) {
    auto copy = req;
    copy.model = endpoint.model;
    call.body = encode(copy);
  } else {
    call.body = encode(req);
  }
  call.total_timeout = total_timeout;
  call.idle_timeout = std::min(endpoint.idle_timeout, total_timeout);
  return call;
}

caf::expected<chat_answer> read_http_outcome(const http_outcome& out, llm_purpose purpose,
                                             const std::string& api_key, sse_answer* stream) {
  auto elapsed = fmt::format("after {:.3f} s", out.elapsed.count() / 1e6);
  if (out.transport != llm_error_kind::none)
    return make_llm_error(out.transport, out.transport_detail + " " + elapsed, out.status,
                          out.body, api_key);
  if (out.status < 200 || out.status > 299) {
    auto kind = classify_http_answer(static_cast<int>(out.status), out.body);
    if (kind == llm_error_kind::none) // a 1xx/3xx the classifier accepts is still no answer
      kind = llm_error_kind::bad_request;
    return make_llm_error(kind, "HTTP error answer " + elapsed, out.status, out.body, api_key);
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
  auto parsed = purpose == llm_purpose::compaction ? parse_compaction_answer(out.body)
                : stream && stream->saw_events()   ? stream->finish(purpose)
                                                   : parse_chat_answer(out.body, purpose);
  if (stream && !stream->saw_events() && parsed.kind == llm_error_kind::none)
    stream->relay_whole(parsed.answer);
  if (parsed.kind != llm_error_kind::none)
    return make_llm_error(parsed.kind, parsed.detail + " " + elapsed, out.status, out.body,
                          api_key);
  return std::move(parsed.answer);
}

} // namespace mneme::llm
