// The supervisor; see supervisor_actor.hpp.
#include "actors/supervisor/supervisor_actor.hpp"
#include "policies/client_text.hpp"

#include <map>
#include <unordered_map>

#include <spdlog/sinks/null_sink.h>

namespace mneme {

namespace {

struct supervisor_state {
  static inline const char* name = "supervisor";
  supervisor_params params;
  session_deps deps;
  supervisor_gateway_actor gateway;
  // live session actor -> session id; shared with the exit functor that stops them
  std::shared_ptr<std::map<caf::actor_addr, std::string>> watched =
    std::make_shared<std::map<caf::actor_addr, std::string>>();
  std::unordered_map<std::string, int> restarts;    // session id -> restarts so far
  supervisor_stats stats;

  spdlog::logger& log() {
    static auto null_log = std::make_shared<spdlog::logger>(
      "supervisor", std::make_shared<spdlog::sinks::null_sink_mt>());
    return params.log ? *params.log : *null_log;
  }
};

using supervisor_ptr = supervisor_actor::stateful_pointer<supervisor_state>;

bool ended_normally(const caf::error& reason) {
  return !reason || reason == caf::exit_reason::normal
         || reason == caf::exit_reason::user_shutdown || reason == caf::exit_reason::unreachable;
}

session_actor spawn_watched(supervisor_ptr self, const std::string& session_id) {
  auto& st = self->state;
  auto handle = spawn_session(self->system(), st.params.session, st.deps, session_id);
  self->monitor(handle);
  (*st.watched)[handle.address()] = session_id;
  ++st.stats.spawned;
  st.stats.hosted = static_cast<int64_t>(st.watched->size());
  return handle;
}

void on_down(supervisor_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto i = st.watched->find(dm.source);
  if (i == st.watched->end())
    return;
  auto session_id = i->second;
  st.watched->erase(i);
  st.stats.hosted = static_cast<int64_t>(st.watched->size());
  if (ended_normally(dm.reason))
    return;
  auto& used = st.restarts[session_id];
  if (used >= st.params.max_restarts) {
    st.log().error("session={} event=restart_refused restarts={} reason={}", session_id, used,
                   caf::to_string(dm.reason));
    return;
  }
  ++used;
  ++st.stats.restarts;
  st.log().warn("session={} event=restart restarts={} reason={}", session_id, used,
                caf::to_string(dm.reason));
  auto handle = spawn_watched(self, session_id);
  if (st.gateway)
    caf::anon_send(st.gateway, gw_rebind_atom_v, session_id, handle);
}

} // namespace

supervisor_actor spawn_supervisor(caf::actor_system& sys, supervisor_params params,
                                  session_deps deps) {
  return sys.spawn([params = std::move(params), deps = std::move(deps)](
                     supervisor_ptr self) mutable -> supervisor_actor::behavior_type {
    auto& st = self->state;
    st.params = std::move(params);
    st.deps = std::move(deps);
    st.deps.supervisor = caf::actor_cast<supervisor_actor>(self);
    self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
    // Sessions end with the supervisor (a session's pending request timeouts would
    // otherwise keep it alive after the gateway dropped it).
    self->attach_functor([watched = st.watched](const caf::error&) {
      for (const auto& [addr, id] : *watched)
        if (auto session = caf::actor_cast<session_actor>(addr))
          caf::anon_send_exit(session, caf::exit_reason::user_shutdown);
    });
    return {
      [self](sv_spawn_atom, const std::string& session_id) -> session_actor {
        return spawn_watched(self, session_id);
      },
      [self](sv_exhaust_atom, const std::string& session_id, const std::string& key) {
        auto& st = self->state;
        ++st.stats.exhausted;
        st.log().warn("session={} event=compaction_exhausted key={}", session_id,
                      log_quoted(key));
        if (st.gateway)
          caf::anon_send(st.gateway, gw_exhausted_atom_v, session_id, key);
      },
      [self](sv_child_atom, const std::string& parent_id, const std::string& child_id,
             const std::string& key) {
        auto& st = self->state;
        for (auto& [addr, id] : *st.watched)
          if (id == parent_id)
            id = child_id;
        st.log().info("session={} event=continued_in_child parent={} key={}", child_id,
                      parent_id, log_quoted(key));
        if (st.gateway)
          caf::anon_send(st.gateway, gw_child_atom_v, parent_id, child_id, key);
      },
      [self](sv_gateway_atom, supervisor_gateway_actor& gateway) {
        self->state.gateway = std::move(gateway);
      },
      [self](sv_stats_atom) { return self->state.stats; },
    };
  });
}

} // namespace mneme
