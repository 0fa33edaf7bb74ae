// Building and reading one chat-completions call; see llm_call.hpp.
#include "actors/llm/llm_call.hpp"

#include <cassert>

#include <fmt/format.h>

#include "actors/llm/compaction_wire.hpp"
#include "actors/llm/llm_errors.hpp"
#include "actors/llm/llm_wire.hpp"
#include "actors/llm/messages_api_wire.hpp"
#include "actors/llm/sse_answer.hpp"
#include "policies/error_classifier.hpp"
#include "policies/messages_api_errors.hpp"
#include "policies/retry_after.hpp"

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
  bool anthropic = endpoint.api == llm_api::anthropic;
  if (anthropic) {
    if (!endpoint.api_key.empty())
      call.headers.emplace_back("x-api-key: " + endpoint.api_key);
    // The client's anthropic-version (and anthropic-beta) when the Anthropic door passed
    // them on, else mneme's own version.
    auto client = messages_client_headers(req);
    bool versioned = !client.empty() && client.front().rfind("anthropic-version:", 0) == 0;
    if (!versioned)
      call.headers.emplace_back("anthropic-version: " + std::string{anthropic_version});
    for (auto& h : client)
      call.headers.push_back(std::move(h));
  } else if (!endpoint.api_key.empty()) {
    call.headers.emplace_back("Authorization: Bearer " + endpoint.api_key);
  }
  call.headers.emplace_back("X-Mneme-Purpose: " + std::string{to_string(req.purpose)});
  std::string (*encode)(const chat_request&) = to_wire_json;
  if (req.purpose == llm_purpose::compaction)
    encode = to_compaction_wire_json; // never with api anthropic (config_checks refuses it)
  else if (anthropic)
    encode = [](const chat_request& r) { return to_messages_wire_json(r); };
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

namespace {

// The upstream's Retry-After of an error answer that may carry one (429, 503, 529).
std::optional<int64_t> retry_after_of(const http_outcome& out) {
  if (!carries_retry_after(static_cast<int>(out.status)) || out.retry_after.empty())
    return std::nullopt;
  return retry_after_seconds(out.retry_after, out.completed_unix_s);
}

// read_http_outcome for an upstream speaking Anthropic's Messages API.
caf::expected<chat_answer> read_messages_outcome(const http_outcome& out, llm_purpose purpose,
                                                 const std::string& api_key,
                                                 streamed_answer* stream,
                                                 const std::string& elapsed) {
  auto status = static_cast<int>(out.status);
  auto error = read_messages_api_error(out.body);
  if (status < 200 || status > 299) {
    auto kind = classify_messages_api_error(status, error.type, error.message);
    return make_llm_error(kind, "HTTP error answer " + elapsed, out.status, out.body, api_key,
                          retry_after_of(out));
  }
  bool streamed = stream && stream->saw_events();
  if (!streamed && error.found) // a 2xx whose body is an error object
    return make_llm_error(classify_messages_api_error(0, error.type, error.message),
                          "error object of type " + error.type + " in a 2xx answer " + elapsed,
                          out.status, out.body, api_key);
  auto parsed = streamed ? stream->finish(purpose) : parse_messages_answer(out.body, purpose);
  if (stream && !streamed && parsed.kind == llm_error_kind::none)
    stream->relay_whole(parsed.answer);
  if (parsed.kind != llm_error_kind::none)
    return make_llm_error(parsed.kind, parsed.detail + " " + elapsed, out.status, out.body,
                          api_key);
  return std::move(parsed.answer);
}

} // namespace

caf::expected<chat_answer> read_http_outcome(const http_outcome& out, llm_purpose purpose,
                                             const std::string& api_key, streamed_answer* stream,
                                             llm_api api) {
  auto elapsed = fmt::format("after {:.3f} s", out.elapsed.count() / 1e6);
  if (out.transport != llm_error_kind::none)
    return make_llm_error(out.transport, out.transport_detail + " " + elapsed, out.status,
                          out.body, api_key);
  if (api == llm_api::anthropic && purpose != llm_purpose::compaction)
    return read_messages_outcome(out, purpose, api_key, stream, elapsed);
  if (out.status < 200 || out.status > 299) {
    auto kind = classify_http_answer(static_cast<int>(out.status), out.body);
    if (kind == llm_error_kind::none) // a 1xx/3xx the classifier accepts is still no answer
      kind = llm_error_kind::bad_request;
    return make_llm_error(kind, "HTTP error answer " + elapsed, out.status, out.body, api_key,
                          retry_after_of(out));
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
