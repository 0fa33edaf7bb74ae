// The SSE relay of a streamed turn; see turn_stream.hpp.
#include "apps/common/api/routes/turn_stream.hpp"

#include <nlohmann/json.hpp>

namespace mneme::api {

using nlohmann::json;

std::string sse_event(std::string_view name, const json& data) {
  std::string out = "event: ";
  out.append(name);
  out += "\ndata: ";
  out += data.dump(-1, ' ', false, json::error_handler_t::replace);
  out += "\n\n";
  return out;
}

void turn_event_relay::on_text(std::string_view delta) {
  std::lock_guard lock{mu_};
  channel_.push(sse_event("delta", {{"content", delta}}));
}

void turn_event_relay::on_tool_call(size_t index, std::string_view id, std::string_view name,
                                    std::string_view arguments_delta) {
  json call = {{"index", index}};
  if (!id.empty())
    call["id"] = id;
  if (!name.empty())
    call["name"] = name;
  call["arguments"] = arguments_delta;
  std::lock_guard lock{mu_};
  channel_.push(sse_event("delta", {{"tool_call", std::move(call)}}));
}

void turn_event_relay::finish(const json& reply) {
  std::lock_guard lock{mu_};
  channel_.push(sse_event("reply", reply));
  channel_.end();
}

bool turn_event_relay::fail(const json& error_body) {
  std::lock_guard lock{mu_};
  if (!channel_.opened())
    return false;
  channel_.push(sse_event("error", error_body));
  channel_.end();
  return true;
}

} // namespace mneme::api
