// The lease actor; see lease_actor.hpp.
#include "actors/lease/lease_actor.hpp"

#include <unordered_map>

#include "caf/all.hpp"

#include "policies/client_text.hpp"

namespace mneme {

namespace {

struct lease_state {
  static inline const char* name = "lease";
  std::unique_ptr<pg_leases> leases;
  std::unordered_map<std::string, int64_t> held; // key -> token
  std::shared_ptr<spdlog::logger> log;
  std::shared_ptr<runtime_metrics> metrics;

  void publish_held() {
    if (metrics)
      metrics->leases_held.store(static_cast<int64_t>(held.size()), std::memory_order_relaxed);
  }
  void count(std::atomic<uint64_t> runtime_metrics::*counter, uint64_t n = 1) {
    if (metrics)
      ((*metrics).*counter).fetch_add(n, std::memory_order_relaxed);
  }
};

using lease_pointer = lease_actor::stateful_pointer<lease_state>;

lease_actor::behavior_type lease_impl(lease_pointer self, std::unique_ptr<pg_leases>* leases,
                                      std::shared_ptr<spdlog::logger> log,
                                      std::shared_ptr<runtime_metrics> metrics) {
  auto& st = self->state;
  st.leases = std::move(*leases);
  st.log = std::move(log);
  st.metrics = std::move(metrics);
  // A clean stop (the runtime stops this actor after the storage actor) gives every
  // lease up at once, so other nodes take the keys without waiting for the expiry.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& st = self->state;
    for (const auto& [key, token] : st.held)
      if (auto err = st.leases->release(held_lease{key, token}); err && st.log)
        st.log->warn("key={} event=lease_release_failed error={}", log_quoted(key),
                     log_quoted(render_error(err)));
    if (st.log && !st.held.empty())
      st.log->info("session=- event=leases_released count={}", st.held.size());
    st.held.clear();
    st.publish_held();
    self->quit(msg.reason);
  });
  return {
    [self](ls_acquire_atom, const std::string& key) -> caf::result<lease_outcome> {
      auto& st = self->state;
      auto out = st.leases->acquire(key);
      if (!out) {
        if (st.log)
          st.log->warn("key={} event=lease_acquire_failed error={}", log_quoted(key),
                       log_quoted(render_error(out.error())));
        return std::move(out.error());
      }
      if (out->granted) {
        st.held[key] = out->token;
        st.count(&runtime_metrics::leases_acquired);
        if (!out->took_over_from.empty()) {
          st.count(&runtime_metrics::leases_taken_over);
          if (st.log)
            st.log->info("key={} event=lease_taken_over token={} from={}", log_quoted(key),
                         out->token, out->took_over_from);
        }
        st.publish_held();
      }
      return std::move(*out);
    },
    [self](ls_renew_atom) -> caf::result<std::vector<std::string>> {
      auto& st = self->state;
      std::vector<held_lease> held;
      held.reserve(st.held.size());
      for (const auto& [key, token] : st.held)
        held.push_back(held_lease{key, token});
      auto lost = st.leases->renew(held);
      if (!lost) {
        if (st.log)
          st.log->warn("session=- event=lease_renew_failed leases={} error={}", held.size(),
                       log_quoted(render_error(lost.error())));
        return std::move(lost.error());
      }
      for (const auto& key : *lost) {
        st.held.erase(key);
        if (st.log)
          st.log->warn("key={} event=lease_lost", log_quoted(key));
      }
      st.count(&runtime_metrics::leases_lost, lost->size());
      st.publish_held();
      return std::move(*lost);
    },
    [self](ls_release_atom, const std::string& key, int64_t token) {
      auto& st = self->state;
      auto i = st.held.find(key);
      if (i == st.held.end() || i->second != token)
        return;
      st.held.erase(i);
      st.publish_held();
      if (auto err = st.leases->release(held_lease{key, token}); err && st.log)
        st.log->warn("key={} event=lease_release_failed error={}", log_quoted(key),
                     log_quoted(render_error(err)));
    },
  };
}

} // namespace

caf::expected<lease_actor> spawn_lease_actor(caf::actor_system& sys, const store_params& params,
                                             lease_identity self,
                                             std::shared_ptr<spdlog::logger> log,
                                             std::shared_ptr<runtime_metrics> metrics) {
  auto leases = pg_leases::open(params, std::move(self));
  if (!leases)
    return std::move(leases.error());
  // Shared with the actor's init function, which moves it into the state.
  auto owned = std::make_shared<std::unique_ptr<pg_leases>>(std::move(*leases));
  return sys.spawn<caf::detached>(
    [owned, log = std::move(log), metrics = std::move(metrics)](lease_pointer self) mutable {
      return lease_impl(self, owned.get(), std::move(log), std::move(metrics));
    });
}

} // namespace mneme
