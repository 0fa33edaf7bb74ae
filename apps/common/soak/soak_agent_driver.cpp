// The in-process play of a model tool loop; see soak_agent_driver.hpp.
#include "apps/common/soak/soak_agent_driver.hpp"

#include "apps/common/soak/soak_driver.hpp"

namespace mneme::soak {

void play_agent_loop(caf::event_based_actor* self, const gateway_actor& gateway,
                     std::chrono::milliseconds turn_timeout, std::shared_ptr<agent_loop> loop,
                     turn_input in, std::function<void(bool left_pending)> done) {
  const auto& ctx = loop->context();
  self->request(gateway, turn_timeout, gw_turn_atom_v, ctx.key, ctx.user_id, std::move(in))
    .then(
      [self, gateway, turn_timeout, loop, done](turn_reply& r) {
        auto next = loop->on_reply(r);
        if (!next)
          return done(false);
        play_agent_loop(self, gateway, turn_timeout, loop, std::move(*next), done);
      },
      [loop, done](caf::error& err) {
        done(loop->on_error(error_name(err), err == caf::sec::request_timeout));
      });
}

} // namespace mneme::soak
