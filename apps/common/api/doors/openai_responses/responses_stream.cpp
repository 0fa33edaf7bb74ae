// The Responses door's event relay; see responses_stream.hpp.
#include "apps/common/api/doors/openai_responses/responses_stream.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace mneme::api {

using nlohmann::json;

namespace {

json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}

// The item of `type` in the answer's output (the k-th of that type).
json output_item_of(const responses_answer& a, const char* type, size_t k) {
  for (const auto& item : response_output(a))
    if (item["type"] == type && k-- == 0)
      return item;
  return json::object();
}

} // namespace

responses_event_relay::responses_event_relay(http_reply reply, responses_answer head,
                                             std::vector<std::string> builtin_names)
  : channel_(std::move(reply)), head_(std::move(head)), builtin_names_(std::move(builtin_names)) {}

void responses_event_relay::add_header(std::string name, std::string value) {
  std::lock_guard lock{mu_};
  channel_.add_header(std::move(name), std::move(value));
}

void responses_event_relay::emit_locked(json event) {
  event["sequence_number"] = sequence_++;
  channel_.push(response_event_bytes(event));
  check_client_locked();
}

void responses_event_relay::check_client_locked() {
  if (!cancelled() && channel_.client_gone())
    cancel();
}

void responses_event_relay::open_locked() {
  if (opened_)
    return;
  opened_ = true;
  auto r = head_;
  r.status = "in_progress";
  auto obj = to_response_object(r);
  emit_locked({{"type", "response.created"}, {"response", obj}});
  emit_locked({{"type", "response.in_progress"}, {"response", std::move(obj)}});
}

void responses_event_relay::open_message_locked() {
  if (message_index_ >= 0)
    return;
  open_locked();
  message_index_ = next_output_++;
  auto id = response_message_id(head_.id);
  emit_locked({{"type", "response.output_item.added"},
               {"output_index", message_index_},
               {"item",
                {{"id", id},
                 {"type", "message"},
                 {"status", "in_progress"},
                 {"role", "assistant"},
                 {"content", json::array()}}}});
  emit_locked({{"type", "response.content_part.added"},
               {"item_id", id},
               {"output_index", message_index_},
               {"content_index", 0},
               {"part", text_part("")}});
}

void responses_event_relay::close_message_locked(const std::string& text) {
  auto id = response_message_id(head_.id);
  emit_locked({{"type", "response.output_text.done"},
               {"item_id", id},
               {"output_index", message_index_},
               {"content_index", 0},
               {"text", text},
               {"logprobs", json::array()}});
  emit_locked({{"type", "response.content_part.done"},
               {"item_id", id},
               {"output_index", message_index_},
               {"content_index", 0},
               {"part", text_part(text)}});
}

void responses_event_relay::on_text(std::string_view delta) {
  std::lock_guard lock{mu_};
  if (cancelled()) // stopped: nothing more is relayed
    return;
  open_message_locked();
  text_.append(delta);
  emit_locked({{"type", "response.output_text.delta"},
               {"item_id", response_message_id(head_.id)},
               {"output_index", message_index_},
               {"content_index", 0},
               {"delta", delta},
               {"logprobs", json::array()}});
}

void responses_event_relay::on_tool_call(size_t index, std::string_view id, std::string_view name,
                                         std::string_view arguments_delta) {
  std::lock_guard lock{mu_};
  if (cancelled())
    return;
  if (slots_.size() <= index)
    slots_.resize(index + 1);
  auto& slot = slots_[index];
  if (!id.empty()) { // a call's first fragment (an index of a later answer starts anew)
    slot = call_slot{};
    slot.hidden = std::find(builtin_names_.begin(), builtin_names_.end(), name)
                  != builtin_names_.end();
    if (slot.hidden)
      return;
    open_locked();
    slot.output_index = next_output_++;
    slot.item_id = response_call_id(head_.id, static_cast<size_t>(visible_calls_++));
    slot.call_id = std::string{id};
    slot.name = std::string{name};
    call_outputs_.push_back(slot.output_index);
    emit_locked({{"type", "response.output_item.added"},
                 {"output_index", slot.output_index},
                 {"item",
                  {{"id", slot.item_id},
                   {"type", "function_call"},
                   {"status", "in_progress"},
                   {"call_id", id},
                   {"name", name},
                   {"arguments", ""}}}});
  }
  if (slot.hidden || slot.output_index < 0 || arguments_delta.empty())
    return;
  slot.arguments.append(arguments_delta);
  emit_locked({{"type", "response.function_call_arguments.delta"},
               {"item_id", slot.item_id},
               {"output_index", slot.output_index},
               {"delta", arguments_delta}});
}

void responses_event_relay::finish(const responses_answer& whole) {
  std::lock_guard lock{mu_};
  open_locked();
  if (whole.status == "cancelled")
    return end_stopped_locked(whole);
  if (!whole.content.empty() || whole.tool_calls.empty()) {
    open_message_locked();
    close_message_locked(whole.content);
    emit_locked({{"type", "response.output_item.done"},
                 {"output_index", message_index_},
                 {"item", output_item_of(whole, "message", 0)}});
  }
  for (size_t k = 0; k < whole.tool_calls.size(); ++k) {
    auto item = output_item_of(whole, "function_call", k);
    if (k >= call_outputs_.size()) { // not streamed (a stored answer sent again)
      call_outputs_.push_back(next_output_++);
      auto added = item;
      added["status"] = "in_progress";
      added["arguments"] = "";
      emit_locked({{"type", "response.output_item.added"},
                   {"output_index", call_outputs_[k]},
                   {"item", std::move(added)}});
    }
    emit_locked({{"type", "response.function_call_arguments.done"},
                 {"item_id", item["id"]},
                 {"output_index", call_outputs_[k]},
                 {"arguments", whole.tool_calls[k].arguments}});
    emit_locked({{"type", "response.output_item.done"},
                 {"output_index", call_outputs_[k]},
                 {"item", std::move(item)}});
  }
  auto type = whole.status == "incomplete" ? "response.incomplete" : "response.completed";
  emit_locked({{"type", type}, {"response", to_response_object(whole)}});
  channel_.end();
}

std::vector<std::pair<int64_t, json>> responses_event_relay::partial_items_locked() const {
  std::vector<std::pair<int64_t, json>> items;
  if (message_index_ >= 0)
    items.emplace_back(message_index_,
                       json{{"type", "message"},
                            {"id", response_message_id(head_.id)},
                            {"status", "incomplete"},
                            {"role", "assistant"},
                            {"content", json::array({text_part(text_)})}});
  for (const auto& slot : slots_)
    if (!slot.hidden && slot.output_index >= 0)
      items.emplace_back(slot.output_index, json{{"type", "function_call"},
                                                 {"id", slot.item_id},
                                                 {"call_id", slot.call_id},
                                                 {"name", slot.name},
                                                 {"arguments", slot.arguments},
                                                 {"status", "incomplete"}});
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return items;
}

namespace {

json items_only(std::vector<std::pair<int64_t, json>> items) {
  auto out = json::array();
  for (auto& entry : items)
    out.push_back(std::move(entry.second));
  return out;
}

} // namespace

json responses_event_relay::stopped_output() {
  cancel(); // before the lock: a piece waiting for it finds the stream stopped
  std::lock_guard lock{mu_};
  return items_only(partial_items_locked());
}

void responses_event_relay::end_stopped_locked(const responses_answer& whole) {
  auto items = partial_items_locked();
  for (const auto& [index, item] : items) {
    if (index == message_index_) {
      close_message_locked(text_);
    } else {
      emit_locked({{"type", "response.function_call_arguments.done"},
                   {"item_id", item["id"]},
                   {"output_index", index},
                   {"arguments", item["arguments"]}});
    }
    emit_locked({{"type", "response.output_item.done"}, {"output_index", index}, {"item", item}});
  }
  auto stopped = whole;
  stopped.partial_output = items_only(std::move(items));
  emit_locked({{"type", "response.incomplete"}, {"response", to_response_object(stopped)}});
  channel_.end();
}

bool responses_event_relay::fail(const std::string& code, const std::string& message) {
  std::lock_guard lock{mu_};
  if (!channel_.opened())
    return false;
  auto r = head_;
  r.status = "failed";
  r.error = {{"code", code}, {"message", message}};
  emit_locked({{"type", "response.failed"}, {"response", to_response_object(r)}});
  emit_locked({{"type", "error"}, {"code", code}, {"message", message}, {"param", nullptr}});
  channel_.end();
  return true;
}

} // namespace mneme::api
