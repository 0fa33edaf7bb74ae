// The OpenAI door's chunk relay; see openai_stream.hpp.
#include "apps/common/api/doors/openai_chat/openai_stream.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace mneme::api {

using nlohmann::json;

openai_chunk_relay::openai_chunk_relay(http_reply reply, header_list headers,
                                       openai_answer head, bool include_usage,
                                       std::vector<std::string> builtin_names)
  : channel_(std::move(reply), std::move(headers)),
    head_(std::move(head)),
    include_usage_(include_usage),
    builtin_names_(std::move(builtin_names)) {}

void openai_chunk_relay::chunk_locked(json delta, const std::string& finish_reason) {
  if (!role_sent_) {
    role_sent_ = true;
    delta["role"] = "assistant";
  }
  channel_.push(sse_data(chat_chunk(head_, std::move(delta), finish_reason, include_usage_)));
}

void openai_chunk_relay::on_text(std::string_view delta) {
  std::lock_guard lock{mu_};
  chunk_locked({{"content", delta}}, "");
}

void openai_chunk_relay::on_tool_call(size_t index, std::string_view id, std::string_view name,
                                      std::string_view arguments_delta) {
  std::lock_guard lock{mu_};
  if (hidden_.size() <= index)
    hidden_.resize(index + 1, false);
  if (!id.empty()) // a call's first fragment: a built-in one stays hidden to its end
    hidden_[index] = std::find(builtin_names_.begin(), builtin_names_.end(), name)
                     != builtin_names_.end();
  if (hidden_[index])
    return;
  json call = {{"index", index}};
  json fn = {{"arguments", arguments_delta}};
  if (!id.empty()) {
    call["id"] = id;
    call["type"] = "function";
    fn["name"] = name;
  }
  call["function"] = std::move(fn);
  chunk_locked({{"tool_calls", json::array({std::move(call)})}}, "");
}

void openai_chunk_relay::add_header(std::string name, std::string value) {
  std::lock_guard lock{mu_};
  channel_.add_header(std::move(name), std::move(value));
}

void openai_chunk_relay::finish(const openai_answer& whole) {
  std::lock_guard lock{mu_};
  auto reason = whole.finish_reason.empty() ? std::string{"stop"} : whole.finish_reason;
  chunk_locked(json::object(), reason);
  if (include_usage_) {
    auto last = head_;
    last.usage = whole.usage;
    channel_.push(sse_data(usage_chunk(last)));
  }
  channel_.end();
}

bool openai_chunk_relay::fail(const json& error_body) {
  std::lock_guard lock{mu_};
  if (!channel_.opened())
    return false;
  channel_.push(sse_data(error_body));
  channel_.end();
  return true;
}

} // namespace mneme::api
