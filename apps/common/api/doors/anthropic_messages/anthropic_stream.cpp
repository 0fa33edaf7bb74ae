// The Anthropic door's event relay; see anthropic_stream.hpp.
#include "apps/common/api/doors/anthropic_messages/anthropic_stream.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace mneme::api {

using nlohmann::json;

anthropic_event_relay::anthropic_event_relay(http_reply reply, anthropic_answer head,
                                             std::vector<std::string> builtin_names)
  : channel_(std::move(reply), {},
             anthropic_sse({{"type", "error"},
                            {"error", {{"type", "overloaded_error"},
                                       {"message", "the daemon is shutting down"}}}})),
    head_(std::move(head)), builtin_names_(std::move(builtin_names)) {}

void anthropic_event_relay::start_locked() {
  if (started_)
    return;
  started_ = true;
  channel_.push(anthropic_sse(message_start_event(head_)));
  channel_.push(anthropic_sse({{"type", "ping"}}));
}

void anthropic_event_relay::close_block_locked() {
  if (open_ == block_kind::none)
    return;
  channel_.push(anthropic_sse({{"type", "content_block_stop"}, {"index", blocks_ - 1}}));
  open_ = block_kind::none;
}

void anthropic_event_relay::open_text_locked() {
  start_locked();
  if (open_ == block_kind::text)
    return;
  close_block_locked();
  channel_.push(anthropic_sse({{"type", "content_block_start"},
                               {"index", blocks_},
                               {"content_block", {{"type", "text"}, {"text", ""}}}}));
  ++blocks_;
  open_ = block_kind::text;
}

void anthropic_event_relay::open_tool_locked(std::string_view id, std::string_view name) {
  start_locked();
  close_block_locked();
  channel_.push(anthropic_sse(
    {{"type", "content_block_start"},
     {"index", blocks_},
     {"content_block",
      {{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", json::object()}}}}));
  ++blocks_;
  open_ = block_kind::tool_use;
}

void anthropic_event_relay::text_delta_locked(std::string_view delta) {
  channel_.push(anthropic_sse({{"type", "content_block_delta"},
                               {"index", blocks_ - 1},
                               {"delta", {{"type", "text_delta"}, {"text", delta}}}}));
}

void anthropic_event_relay::json_delta_locked(std::string_view partial) {
  channel_.push(anthropic_sse({{"type", "content_block_delta"},
                               {"index", blocks_ - 1},
                               {"delta", {{"type", "input_json_delta"},
                                          {"partial_json", partial}}}}));
}

void anthropic_event_relay::on_text(std::string_view delta) {
  std::lock_guard lock{mu_};
  any_piece_ = true;
  open_text_locked();
  text_delta_locked(delta);
}

void anthropic_event_relay::on_tool_call(size_t index, std::string_view id,
                                         std::string_view name,
                                         std::string_view arguments_delta) {
  std::lock_guard lock{mu_};
  if (hidden_.size() <= index) {
    hidden_.resize(index + 1, false);
    call_block_.resize(index + 1, -1);
  }
  if (!id.empty()) { // a call's first fragment: a built-in one stays hidden to its end
    hidden_[index] = std::find(builtin_names_.begin(), builtin_names_.end(), name)
                     != builtin_names_.end();
    if (!hidden_[index]) {
      open_tool_locked(id, name);
      call_block_[index] = blocks_ - 1;
    }
  }
  if (hidden_[index] || call_block_[index] < 0)
    return;
  any_piece_ = true;
  if (arguments_delta.empty())
    return;
  // Fragments of an earlier call after another block opened keep their own index.
  channel_.push(anthropic_sse({{"type", "content_block_delta"},
                               {"index", call_block_[index]},
                               {"delta", {{"type", "input_json_delta"},
                                          {"partial_json", arguments_delta}}}}));
}

void anthropic_event_relay::add_header(std::string name, std::string value) {
  std::lock_guard lock{mu_};
  channel_.add_header(std::move(name), std::move(value));
}

void anthropic_event_relay::finish(const anthropic_answer& whole) {
  std::lock_guard lock{mu_};
  start_locked();
  if (!any_piece_) { // nothing streamed (a replayed answer): the whole answer's blocks
    if (!whole.text.empty()) {
      open_text_locked();
      text_delta_locked(whole.text);
    }
    for (const auto& call : whole.tool_calls) {
      open_tool_locked(call.id, call.name);
      json_delta_locked(tool_input_of(call.arguments).dump());
    }
  }
  close_block_locked();
  channel_.push(anthropic_sse(message_delta_event(whole.stop_reason.empty() ? "end_turn"
                                                                             : whole.stop_reason,
                                                  whole.stop_sequence, whole.usage.output_tokens)));
  channel_.end_with(anthropic_sse({{"type", "message_stop"}}));
}

bool anthropic_event_relay::fail(const json& error_body) {
  std::lock_guard lock{mu_};
  if (!channel_.opened())
    return false;
  channel_.end_with(anthropic_sse(error_body));
  return true;
}

} // namespace mneme::api
