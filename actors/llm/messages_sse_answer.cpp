// Reading a streamed Anthropic Messages answer; see messages_sse_answer.hpp.
#include "actors/llm/messages_sse_answer.hpp"

#include <nlohmann/json.hpp>

#include "actors/llm/messages_api_wire.hpp"
#include "policies/messages_api_errors.hpp"

namespace mneme::llm {

namespace {

using nlohmann::json;

// A content block index beyond this is not a sane answer.
constexpr size_t max_event_block_index = 4096;

const json* event_member(const json& obj, const char* key) {
  if (!obj.is_object())
    return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string event_string(const json& obj, const char* key) {
  auto* v = event_member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string{};
}

int64_t event_int(const json& obj, const char* key) {
  auto* v = event_member(obj, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : 0;
}

} // namespace

messages_sse_answer::messages_sse_answer(answer_stream_ptr sink)
  : sink_(std::move(sink)), reader_([this](const sse_event_view& e) { event(e); }) {}

void messages_sse_answer::feed(std::string_view bytes) { reader_.feed(bytes); }

void messages_sse_answer::fail(llm_error_kind kind, std::string detail) {
  failure_ = kind;
  failure_detail_ = std::move(detail);
}

void messages_sse_answer::event(const sse_event_view& e) {
  ++events_;
  if (failure_ != llm_error_kind::none)
    return;
  auto doc = json::parse(e.data, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    fail(llm_error_kind::malformed, "a stream event is not a JSON object");
    return;
  }
  auto type = event_string(doc, "type");
  if (type.empty())
    type = std::string{e.name};
  if (type == "error") {
    const json empty = json::object();
    const auto* err = event_member(doc, "error");
    const auto& obj = err ? *err : empty;
    fail(classify_messages_api_error(0, event_string(obj, "type"), event_string(obj, "message")),
         "the upstream sent an error event mid-stream (" + event_string(obj, "type") + ")");
    return;
  }
  if (type == "message_start") {
    if (auto* msg = event_member(doc, "message"))
      if (auto* usage = event_member(*msg, "usage")) {
        answer_.prompt_tokens = event_int(*usage, "input_tokens")
                                + event_int(*usage, "cache_creation_input_tokens")
                                + event_int(*usage, "cache_read_input_tokens");
        answer_.completion_tokens = event_int(*usage, "output_tokens");
      }
    return;
  }
  if (type == "content_block_start") {
    auto* idx = event_member(doc, "index");
    auto* block = event_member(doc, "content_block");
    if (!idx || !idx->is_number_unsigned() || idx->get<size_t>() > max_event_block_index || !block) {
      fail(llm_error_kind::malformed, "a content_block_start without a sane index and block");
      return;
    }
    auto index = idx->get<size_t>();
    if (call_of_block_.size() <= index)
      call_of_block_.resize(index + 1, -1);
    auto block_type = event_string(*block, "type");
    if (block_type == "tool_use") {
      call_of_block_[index] = static_cast<long>(calls_.size());
      calls_.push_back({event_string(*block, "id"), event_string(*block, "name"), {}});
      if (sink_)
        sink_->tool_call(calls_.size() - 1, calls_.back().id, calls_.back().name, "");
    } else if (block_type == "text") {
      auto text = event_string(*block, "text"); // usually "", the text comes in deltas
      content_ += text;
      if (sink_ && !text.empty())
        sink_->text(filter_.feed(text));
    } else if (block_type == "thinking" || block_type == "redacted_thinking") {
      had_reasoning_ = true;
    }
    return;
  }
  if (type == "content_block_delta") {
    auto* idx = event_member(doc, "index");
    auto* delta = event_member(doc, "delta");
    if (!idx || !idx->is_number_unsigned() || !delta)
      return;
    auto delta_type = event_string(*delta, "type");
    if (delta_type == "text_delta") {
      auto text = event_string(*delta, "text");
      content_ += text;
      if (sink_)
        sink_->text(filter_.feed(text));
    } else if (delta_type == "input_json_delta") {
      auto index = idx->get<size_t>();
      if (index >= call_of_block_.size() || call_of_block_[index] < 0) {
        fail(llm_error_kind::malformed, "an input_json_delta for a block that is not a tool_use");
        return;
      }
      auto call = static_cast<size_t>(call_of_block_[index]);
      auto piece = event_string(*delta, "partial_json");
      calls_[call].arguments += piece;
      if (sink_ && !piece.empty())
        sink_->tool_call(call, "", "", piece);
    } else if (delta_type == "thinking_delta" || delta_type == "signature_delta") {
      had_reasoning_ = true;
    }
    return;
  }
  if (type == "message_delta") {
    if (auto* delta = event_member(doc, "delta")) {
      auto reason = event_string(*delta, "stop_reason");
      if (!reason.empty()) {
        answer_.finish_reason = finish_reason_of_stop(reason);
        answer_.stop_sequence =
          reason == "stop_sequence" ? event_string(*delta, "stop_sequence") : "";
        has_stop_reason_ = true;
      }
    }
    if (auto* usage = event_member(doc, "usage"))
      if (auto* out = event_member(*usage, "output_tokens"); out && out->is_number_integer())
        answer_.completion_tokens = out->get<int64_t>(); // cumulative
    return;
  }
  if (type == "message_stop")
    stopped_ = true;
  // ping, content_block_stop and event types added later: nothing to do.
}

parsed_answer messages_sse_answer::finish(llm_purpose purpose) {
  reader_.finish(); // a last event without its blank line
  parsed_answer out;
  if (failure_ != llm_error_kind::none) {
    out.kind = failure_;
    out.detail = failure_detail_;
    return out;
  }
  if (!stopped_ && !has_stop_reason_) {
    out.kind = llm_error_kind::network;
    out.detail = "the stream ended before its last event (no stop_reason, no message_stop)";
    return out;
  }
  if (sink_)
    sink_->text(filter_.flush());
  out.answer = std::move(answer_);
  out.answer.content = strip_reasoning_blocks(content_);
  for (size_t i = 0; i < calls_.size(); ++i)
    if (sink_ && calls_[i].arguments.empty()) // the stored answer says {}: so does the relay
      sink_->tool_call(i, "", "", "{}");
  for (auto& c : calls_)
    out.answer.tool_calls.push_back(
      {std::move(c.id), std::move(c.name), c.arguments.empty() ? "{}" : std::move(c.arguments)});
  check_answer_content(out, purpose, had_reasoning_);
  return out;
}

void messages_sse_answer::relay_whole(const chat_answer& answer) {
  if (!sink_)
    return;
  sink_->text(answer.content);
  for (size_t i = 0; i < answer.tool_calls.size(); ++i) {
    const auto& c = answer.tool_calls[i];
    sink_->tool_call(i, c.id, c.name, c.arguments);
  }
}

} // namespace mneme::llm
