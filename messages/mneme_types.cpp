// Registration of the mneme vocabulary with an actor system; see mneme_types.hpp.
#include "messages/mneme_types.hpp"

namespace mneme {

void register_mneme_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::mneme>();
  cfg.add_error_category(caf::atom("mneme"),
                         [](uint8_t code, caf::atom_value, const caf::message& ctx) {
                           auto str = "mneme::" + to_string(static_cast<errc>(code));
                           if (ctx.empty())
                             return str;
                           if (ctx.match_element<std::string>(0)) // the text; what
                             return str + ": " + ctx.get_as<std::string>(0); // follows is data
                           return str + ": " + caf::to_string(ctx);
                         });
}

std::optional<turn_reply> turn_reply_of(const caf::error& err) {
  const auto& ctx = err.context();
  if (ctx.size() < 2 || !ctx.match_element<turn_reply>(1))
    return std::nullopt;
  return ctx.get_as<turn_reply>(1);
}

} // namespace mneme
