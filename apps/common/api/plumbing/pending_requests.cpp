// The requests not yet completed; see pending_requests.hpp.
#include "apps/common/api/plumbing/pending_requests.hpp"

#include "apps/common/api/plumbing/route_registry.hpp"

#include "caf/actor.hpp"
#include "caf/actor_cast.hpp"
#include "caf/exit_reason.hpp"
#include "caf/send.hpp"

namespace mneme::api {

uint64_t pending_requests::track(http_reply reply, const route_row* shape) {
  std::lock_guard lock{mu_};
  auto id = ++next_id_;
  requests_.emplace(id, pending{std::move(reply), {}, shape});
  return id;
}

void pending_requests::served_by(uint64_t id, caf::actor_addr actor) {
  std::lock_guard lock{mu_};
  if (auto i = requests_.find(id); i != requests_.end())
    i->second.actor = std::move(actor);
}

void pending_requests::complete(uint64_t id, const http_reply& reply, http_response res) {
  reply.answer(std::move(res));
  forget(id);
}

void pending_requests::forget(uint64_t id) {
  std::lock_guard lock{mu_};
  requests_.erase(id);
}

int64_t pending_requests::count() const {
  std::lock_guard lock{mu_};
  return static_cast<int64_t>(requests_.size());
}

size_t pending_requests::fail_all(const http_response& answer) {
  std::unordered_map<uint64_t, pending> waiting;
  {
    std::lock_guard lock{mu_};
    waiting.swap(requests_);
  }
  size_t answered = 0;
  for (auto& [_, p] : waiting) {
    auto shaped = answer;
    reshape_refusal(shaped, p.shape);
    if (p.reply.answer(std::move(shaped)))
      ++answered;
    else
      p.reply.cut_stream(); // a stream under way ends with its error event, not silence
    // The actor may wait for an answer that never comes (its receiver stopped): end it,
    // so the actor system can shut down without waiting for the request's timeout.
    if (auto a = caf::actor_cast<caf::actor>(p.actor))
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  return answered;
}

} // namespace mneme::api
