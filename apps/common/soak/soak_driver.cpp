// The soak driver actor; see soak_driver.hpp.
#include "apps/common/soak/soak_driver.hpp"

#include <random>
#include <vector>

#include <fmt/format.h>

#include "apps/common/soak/soak_agent_driver.hpp"
#include "messages/mneme_types.hpp"

namespace mneme::soak {

namespace {

struct user_state {
  std::mt19937_64 rng;
  int64_t next_seq = 0;
  bool left_pending = false;   // the last tool loop ended with an error
};

struct driver_state {
  std::vector<user_state> users;
  std::mt19937_64 think_rng;
};

void driver_impl(caf::stateful_actor<driver_state>* self, driver_params p) {
  auto& st = self->state;
  st.think_rng.seed(p.seed ^ 0x5eed);
  for (int64_t u = 0; u < p.users; ++u)
    st.users.push_back({user_rng(p.seed, u), 0, false});
  auto think = [self, p] {
    std::uniform_int_distribution<int64_t> d(p.think_ms.min, p.think_ms.max);
    return std::chrono::milliseconds(d(self->state.think_rng));
  };
  // The first messages spread over one think time so the users do not start in step.
  for (int64_t u = 0; u < p.users; ++u)
    self->delayed_send(self, think(), u);
  self->become([self, p, think](int64_t user) {
    auto& ledger = *p.ledger;
    if (ledger.stopping.load())
      return;
    auto& us = self->state.users[static_cast<size_t>(user)];
    auto seq = us.next_seq++;
    auto msg = std::make_shared<planned_message>(plan_message(p.mix, user, seq, us.rng));
    ledger.sent(user, seq, *msg);
    ledger.in_flight.fetch_add(1);
    auto started = std::chrono::steady_clock::now();
    auto key = user_key(user);
    auto uid = user_id(user);
    auto latency = [started] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now()
                                                       - started).count();
    };
    auto next = [self, p, user, think] { self->delayed_send(self, think(), user); };
    auto fail = [p, latency, next](bool was_turn) {
      return [p, latency, next, was_turn](caf::error& err) {
        p.ledger->failed(error_name(err), seconds_since(p.t0), latency(),
                         err == caf::sec::request_timeout, was_turn);
        p.ledger->in_flight.fetch_sub(1);
        next();
      };
    };
    if (msg->kind == turn_kind::tool_small || msg->kind == turn_kind::tool_large) {
      // The model's call and its result, appended without a model call; the user's next
      // message is the turn that answers after them.
      auto call_id = fmt::format("call-{}-{}", user, seq);
      message call;
      call.role = msg_role::assistant;
      call.tool_calls.push_back({call_id, "run_query", R"({"query":"latest service rows"})"});
      message result;
      result.role = msg_role::tool;
      result.tool_call_id = call_id;
      result.tool_name = "run_query";
      result.content = msg->content;
      self->request(p.gateway, p.turn_timeout, gw_append_atom_v, key, uid, std::move(call))
        .then(
          [self, p, user, seq, key, uid, msg, result, next, fail](int64_t) {
            self->request(p.gateway, p.turn_timeout, gw_append_atom_v, key, uid, result)
              .then(
                [p, user, seq, uid, msg, next](int64_t) {
                  p.ledger->appended(user, seq, *msg, uid);
                  p.ledger->in_flight.fetch_sub(1);
                  next();
                },
                fail(false));
          },
          fail(false));
      return;
    }
    if (offers_tools(p.mix, p.seed, user, seq)) {
      auto loop = std::make_shared<agent_loop>(
        agent_context{p.ledger, p.mix, p.seed, user, seq, key, uid, *msg, p.t0});
      auto in = loop->first_input(us.left_pending);
      play_agent_loop(self, p.gateway, p.turn_timeout, std::move(loop), std::move(in),
                      [self, p, user, next](bool left_pending) {
                        self->state.users[static_cast<size_t>(user)].left_pending = left_pending;
                        p.ledger->in_flight.fetch_sub(1);
                        next();
                      });
      return;
    }
    self->request(p.gateway, p.turn_timeout, gw_message_atom_v, key, uid, msg->content)
      .then(
        [self, p, user, seq, key, uid, msg, latency, next](turn_reply& r) {
          // The key keeps the tools of its agent turns: calls this user does not run
          // stay pending until its next agent turn abandons them.
          if (!r.tool_calls.empty())
            self->state.users[static_cast<size_t>(user)].left_pending = true;
          p.ledger->answered(user, seq, key, *msg, uid, r, seconds_since(p.t0), latency());
          p.ledger->in_flight.fetch_sub(1);
          next();
        },
        fail(true));
  });
}

} // namespace

std::string error_name(const caf::error& err) {
  auto text = render_error(err);
  if (text.rfind("mneme::", 0) == 0)
    text = text.substr(7);
  auto cut = text.find_first_of(":(");
  return cut == std::string::npos ? text : text.substr(0, cut);
}

std::string user_key(int64_t user) { return fmt::format("soak-{}", user); }
std::string user_id(int64_t user) { return fmt::format("u{}", user); }

caf::actor spawn_driver(caf::actor_system& sys, driver_params params) {
  return sys.spawn(driver_impl, std::move(params));
}

} // namespace mneme::soak
