// The in-process chat channel; see local_chat.hpp.
#include "apps/common/host/local_chat.hpp"

#include "apps/common/api/json_codec.hpp"

namespace mneme {

namespace {

// Hands text pieces to the chat's printer; tool calls are not part of a terminal chat.
struct printing_stream final : answer_stream {
  explicit printing_stream(std::function<void(std::string_view)> f) : print(std::move(f)) {}
  std::function<void(std::string_view)> print;

 protected:
  void on_text(std::string_view delta) override { print(delta); }
  void on_tool_call(size_t, std::string_view, std::string_view, std::string_view) override {}
};

} // namespace

local_chat_channel::local_chat_channel(caf::actor_system& sys, runtime& rt, std::string key,
                                       std::string user)
  : sys_(sys), rt_(rt), key_(std::move(key)), user_(std::move(user)) {}

cli::maybe_failure local_chat_channel::turn(const std::string& content,
                                            const std::function<void(std::string_view)>& on_text,
                                            nlohmann::json& reply) {
  turn_input in; // a turn as the API's: pending calls are refused, not stubbed
  in.content = content;
  in.stream = std::make_shared<printing_stream>(on_text);
  cli::maybe_failure failed;
  caf::scoped_actor self{sys_};
  self->request(rt_.gateway(), rt_.turn_timeout(), gw_turn_atom_v, key_, user_, std::move(in))
    .receive([&](turn_reply& r) { reply = api::to_json(r); },
             [&](caf::error& err) { failed = cli::failure_of(err, "turn of " + key_); });
  return failed;
}

} // namespace mneme
