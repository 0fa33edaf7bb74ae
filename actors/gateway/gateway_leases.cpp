// The gateway's side of node mode (issue 26 item 4, gateway_state.hpp): a key is
// opened only under its lease, the lease's token is registered with the storage actor
// (which fences the key's writes with it), renewed on a timer, given up when the
// session is evicted, and dropped with its session actor when lost.
//
// Invariants: keys[k].lease_token != 0 exactly while the storage actor holds the same
// token as k's fence (the st_fence messages go out in the order the token changes,
// from this actor, so the storage actor sees them in that order), and a session actor
// of k is spawned only under a lease (after the fence was sent, so the fence is
// queued ahead of its writes) and never beside a retiring one (the key is not opened
// again until the actor of its lost lease has stopped).
#include "actors/gateway/gateway_state.hpp"

#include "policies/client_text.hpp"
#include "policies/lease_policy.hpp"

namespace mneme::gateway_detail {

namespace {

void set_fence(gateway_ptr self, const std::string& key, int64_t token) {
  self->state.keys[key].lease_token = token;
  self->send(self->state.storage, st_fence_atom_v, key, token);
}

} // namespace

void acquire_then_open(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  then_forgetting(self, self->request(st.cfg.leases, st.cfg.storage_timeout, ls_acquire_atom_v, key),
      [self, key, fail](lease_outcome& out) {
        auto& st = self->state;
        if (!out.granted) {
          failed_to_open(self, key,
                         caf::make_error(errc::lease_elsewhere,
                                         "session key '" + key + "' is served by node '"
                                           + out.owner_node + "'",
                                         out.owner_url),
                         fail);
          return;
        }
        st.log().info("key={} event=lease_acquired token={}{}", log_quoted(key), out.token,
                      out.took_over_from.empty() ? "" : " from=" + out.took_over_from);
        set_fence(self, key, out.token);
        // What other nodes wrote under the key meanwhile (a reset, a child) is in the
        // store: the session is found again there.
        st.keys[key].session_id.clear();
        open_stored(self, key, fail);
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

void lose_lease(gateway_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.keys.find(key);
  if (i == st.keys.end() || i->second.lease_token == 0)
    return;
  auto& e = i->second;
  st.log().warn("key={} session={} event=lease_lost token={}", log_quoted(key), e.session_id,
                e.lease_token);
  set_fence(self, key, 0);
  // Stopping an actor drops the requests it holds unanswered (their askers wait for
  // their timeouts): one that holds some answers them first, refused by the store.
  if (e.handle && !e.retiring)
    e.retiring = e.handle;
  else if (e.handle)
    self->send_exit(e.handle, caf::exit_reason::user_shutdown);
  e.handle = nullptr;
  e.session_id.clear();
  retire_when_idle(self, key);
}

void retire_when_idle(gateway_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.keys.find(key);
  if (i == st.keys.end() || !i->second.retiring || i->second.in_flight > 0)
    return;
  auto& e = i->second;
  self->send_exit(e.retiring, caf::exit_reason::user_shutdown);
  e.retiring = nullptr;
  if (e.opening)
    return; // the open in progress runs them
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  for (auto& next : waiting)
    next();
}

void release_lease(gateway_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.keys.find(key);
  if (!st.cfg.leases || i == st.keys.end() || i->second.lease_token == 0)
    return;
  self->send(st.cfg.leases, ls_release_atom_v, key, i->second.lease_token);
  set_fence(self, key, 0);
  i->second.session_id.clear();
}

void renew_leases(gateway_ptr self, uint64_t generation) {
  auto& st = self->state;
  if (!st.cfg.leases || (generation != 0 && generation != st.lease_generation))
    return;
  then_forgetting(self, self->request(st.cfg.leases, st.cfg.storage_timeout, ls_renew_atom_v),
      [self, generation](std::vector<std::string>& lost) {
        for (const auto& key : lost)
          lose_lease(self, key);
        if (generation != 0)
          arm_lease_renewal(self);
      },
      [self, generation](caf::error& err) {
        // The database may be down: keep trying; a lease that expires meanwhile is
        // fenced off by the store if another node takes it.
        self->state.log().warn("session=- event=lease_renew_failed error={}",
                               log_quoted(render_error(err)));
        if (generation != 0)
          arm_lease_renewal(self);
      });
}

void arm_lease_renewal(gateway_ptr self) {
  auto& st = self->state;
  if (!st.cfg.leases)
    return;
  auto period = std::chrono::milliseconds(
    lease_renew_period_ms(std::max<int64_t>(1, st.cfg.gateway.lease_seconds) * 1000));
  self->delayed_send(self, period, gw_lease_atom_v, ++st.lease_generation);
}

} // namespace mneme::gateway_detail
