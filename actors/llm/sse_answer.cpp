// Reading a streamed chat-completions answer; see sse_answer.hpp.
#include "actors/llm/sse_answer.hpp"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "policies/error_classifier.hpp"

namespace mneme::llm {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<std::string_view, std::string_view>, 3> reasoning_tags{{
  {"<think>", "</think>"},
  {"<thinking>", "</thinking>"},
  {"<reasoning>", "</reasoning>"},
}};

// True when `tail` (starting with '<') may still grow into an opening tag.
bool may_become_tag(std::string_view tail) {
  for (const auto& [open, close] : reasoning_tags)
    if (tail.size() < open.size() && open.substr(0, tail.size()) == tail)
      return true;
  return false;
}

std::string_view closing_tag_at(std::string_view text) {
  for (const auto& [open, close] : reasoning_tags)
    if (text.substr(0, open.size()) == open)
      return close;
  return {};
}

const json* member(const json& obj, const char* key) {
  if (!obj.is_object())
    return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string string_member(const json& obj, const char* key) {
  auto* v = member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string{};
}

} // namespace

std::string reasoning_filter::feed(std::string_view piece) {
  held_.append(piece);
  std::string shown;
  size_t at = 0;
  while (at < held_.size()) {
    std::string_view rest{held_.data() + at, held_.size() - at};
    if (!closing_.empty()) { // inside a block: drop up to its closing tag
      auto end = rest.find(closing_);
      if (end == std::string_view::npos) {
        // Keep what could be the start of the closing tag, drop the rest.
        auto keep = std::min(rest.size(), closing_.size() - 1);
        at = held_.size() - keep;
        break;
      }
      at += end + closing_.size();
      closing_ = {};
      continue;
    }
    auto lt = rest.find('<');
    shown.append(rest.substr(0, lt));
    if (lt == std::string_view::npos) {
      at = held_.size();
      break;
    }
    at += lt;
    rest.remove_prefix(lt);
    if (auto close = closing_tag_at(rest); !close.empty()) {
      closing_ = close;
      at += rest.find('>') + 1;
      continue;
    }
    if (may_become_tag(rest))
      break; // held until the next piece decides
    shown.push_back('<');
    ++at;
  }
  held_.erase(0, at);
  if (!started_) {
    auto first = shown.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
      return {};
    shown.erase(0, first);
    started_ = true;
  }
  return shown;
}

std::string reasoning_filter::flush() {
  std::string out;
  if (closing_.empty() && (started_ || held_.find_first_not_of(" \t\r\n") != std::string::npos))
    out = held_;
  held_.clear();
  if (!started_ && !out.empty()) {
    out.erase(0, out.find_first_not_of(" \t\r\n"));
    started_ = true;
  }
  return out;
}

sse_answer::sse_answer(answer_stream_ptr sink)
  : sink_(std::move(sink)), reader_([this](const sse_event_view& e) { event(e); }) {}

void sse_answer::feed(std::string_view bytes) { reader_.feed(bytes); }

void sse_answer::event(const sse_event_view& e) {
  ++events_;
  if (e.data == "[DONE]")
    done_ = true;
  else if (failure_ == llm_error_kind::none)
    chunk(e.data, e.name == "error");
}

void sse_answer::chunk(std::string_view payload, bool error_event) {
  auto doc = json::parse(payload, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    failure_ = llm_error_kind::malformed;
    failure_detail_ = "a stream event is not a JSON object";
    return;
  }
  if (error_event || member(doc, "error")) {
    auto status = error_status_in_body(payload);
    failure_ = status ? classify_http_answer(status, payload) : llm_error_kind::none;
    if (failure_ == llm_error_kind::none)
      failure_ = llm_error_kind::server_error;
    failure_detail_ = "the upstream sent an error event mid-stream";
    return;
  }
  if (auto* usage = member(doc, "usage"); usage && usage->is_object()) {
    if (auto* p = member(*usage, "prompt_tokens"); p && p->is_number_integer())
      answer_.prompt_tokens = p->get<int64_t>();
    if (auto* c = member(*usage, "completion_tokens"); c && c->is_number_integer())
      answer_.completion_tokens = c->get<int64_t>();
  }
  if (auto* marker = member(doc, "compaction"))
    answer_.server_compacted |= string_member(*marker, "type") == "compaction";
  auto* choices = member(doc, "choices");
  if (!choices || !choices->is_array() || choices->empty())
    return; // e.g. the usage chunk
  const auto& choice = (*choices)[0];
  if (auto reason = string_member(choice, "finish_reason"); !reason.empty()) {
    answer_.finish_reason = reason;
    has_finish_ = true;
    // vLLM's stop string in the chunk of the finish_reason (see parse_chat_answer).
    answer_.stop_sequence = reason == "stop" ? string_member(choice, "stop_reason") : "";
  }
  auto* delta = member(choice, "delta");
  if (!delta || !delta->is_object())
    return;
  if (auto* content = member(*delta, "content")) {
    auto text = content_text(*content);
    content_.append(text);
    if (sink_)
      sink_->text(filter_.feed(text));
  }
  had_reasoning_ |= !string_member(*delta, "reasoning_content").empty()
                    || !string_member(*delta, "reasoning").empty();
  auto* calls = member(*delta, "tool_calls");
  if (!calls || !calls->is_array())
    return;
  for (size_t pos = 0; pos < calls->size(); ++pos) {
    const auto& c = (*calls)[pos];
    auto* idx = member(c, "index");
    auto index = idx && idx->is_number_unsigned() ? idx->get<size_t>() : pos;
    if (index > 4096) { // a sane answer never has that many parallel calls
      failure_ = llm_error_kind::malformed;
      failure_detail_ = "a stream tool call has index " + std::to_string(index);
      return;
    }
    if (calls_.size() <= index)
      calls_.resize(index + 1);
    auto& parts = calls_[index];
    auto id = string_member(c, "id");
    std::string name, args;
    if (auto* fn = member(c, "function")) {
      name = string_member(*fn, "name");
      args = string_member(*fn, "arguments");
    }
    parts.id += id; // sent once; appended so a split id still assembles
    parts.name += name;
    parts.arguments += args;
    if (sink_)
      sink_->tool_call(index, id, name, args);
  }
}

parsed_answer sse_answer::finish(llm_purpose purpose) {
  reader_.finish(); // a last event without its blank line
  parsed_answer out;
  if (failure_ != llm_error_kind::none) {
    out.kind = failure_;
    out.detail = failure_detail_;
    return out;
  }
  if (!done_ && !has_finish_) {
    out.kind = llm_error_kind::network;
    out.detail = "the stream ended before its last event (no finish_reason, no [DONE])";
    return out;
  }
  if (sink_)
    sink_->text(filter_.flush());
  out.answer = std::move(answer_);
  out.answer.content = strip_reasoning_blocks(content_);
  for (auto& c : calls_)
    if (!c.id.empty() || !c.name.empty() || !c.arguments.empty())
      out.answer.tool_calls.push_back({std::move(c.id), std::move(c.name), std::move(c.arguments)});
  check_answer_content(out, purpose, had_reasoning_);
  return out;
}

void sse_answer::relay_whole(const chat_answer& answer) {
  if (!sink_)
    return;
  sink_->text(answer.content);
  for (size_t i = 0; i < answer.tool_calls.size(); ++i) {
    const auto& c = answer.tool_calls[i];
    sink_->tool_call(i, c.id, c.name, c.arguments);
  }
}

} // namespace mneme::llm
