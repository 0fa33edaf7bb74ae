// The gateway's key table (gateway_state.hpp): a key's session opened, attached,
// created with the system prompt, reset after exhaustion, switched to a child, and
// evicted when idle.
#include "actors/gateway/gateway_state.hpp"

#include <algorithm>

#include "actors/gateway/skills_loader.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"
#include "policies/oversized_row.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::gateway_detail {

caf::error foreign_session_error(const std::string& key) {
  return caf::make_error(errc::foreign_session,
                         "the session under key '" + key + "' belongs to another user");
}

namespace {

void opened(gateway_ptr self, const std::string& key) {
  auto& e = self->state.keys[key];
  e.opening = false;
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  for (auto& next : waiting)
    next();
}

} // namespace

void failed_to_open(gateway_ptr self, const std::string& key, caf::error err, on_error fail) {
  auto& e = self->state.keys[key];
  // A key served by another node is the normal way to a forward, not a failure.
  if (err == errc::lease_elsewhere)
    self->state.log().debug("key={} event=served_elsewhere detail={}", log_quoted(key),
                            log_quoted(render_error(err)));
  else
    self->state.log().error("key={} session={} event=open_failed error={}", log_quoted(key),
                            e.session_id, log_quoted(render_error(err)));
  e.opening = false;
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  fail(std::move(err));
  for (auto& next : waiting) // they retry the open
    next();
}

namespace {

// Spawns the actor of the key's stored session and reads its numbers.
void attach(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  auto id = st.keys[key].session_id;
  then_forgetting(self, self->request(st.supervisor, st.cfg.storage_timeout, sv_spawn_atom_v, id),
      [self, key, fail](session_actor& handle) {
        auto& st = self->state;
        st.keys[key].handle = handle;
        then_forgetting(self, self->request(handle, st.cfg.storage_timeout, ss_state_atom_v),
            [self, key](session_snapshot& s) {
              auto& e = self->state.keys[key];
              e.live_messages = s.live_messages;
              e.live_tokens = s.live_tokens;
              opened(self, key);
            },
            [self, key, fail](caf::error& err) {
              self->state.keys[key].handle = nullptr;
              failed_to_open(self, key, std::move(err), fail);
            });
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// A new session under `key`, with the system prompt as its first row.
void create(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  session_record rec;
  rec.user_id = st.keys[key].user_id;
  rec.session_key = key;
  rec.model = st.cfg.model.name;
  then_forgetting(self,
      self->request(st.storage, st.cfg.storage_timeout, st_new_session_atom_v, rec, st.cfg.clock()),
      [self, key, fail](session_record& created) {
        auto& st = self->state;
        st.keys[key].session_id = created.id;
        auto prompt = system_prompt_with_skills(st.cfg.gateway.system_prompt,
                                                st.cfg.gateway.skills_dir);
        if (prompt.empty()) {
          attach(self, key, fail);
          return;
        }
        message sys;
        sys.session_id = created.id;
        sys.role = msg_role::system;
        sys.content = std::move(prompt);
        sys.timestamp_ms = st.cfg.clock();
        sys.token_estimate = estimate_message_tokens(sys);
        then_forgetting(
          self, self->request(st.storage, st.cfg.storage_timeout, st_append_atom_v, sys),
          [self, key, fail](int64_t) { attach(self, key, fail); },
          [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// A new session under `key`, unless the key a client names (its visible part,
// policies/key_namespace.hpp) is the id of a stored session of another user than the one
// opening it (keys[key].user_id): opening it would shadow that session's id for reads by
// id (a take-over through a session header). The refusal clears the key's user, so the
// next requester's own user decides its open.
void create_unless_foreign_id(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  then_forgetting(self, self->request(st.storage, st.cfg.storage_timeout, st_session_atom_v,
                                      visible_key(key)),
      [self, key, fail](session_record& named) {
        auto& e = self->state.keys[key];
        if (named.user_id != e.user_id) {
          self->state.log().info("key={} event=foreign_session_id", log_quoted(key));
          e.user_id.clear();
          failed_to_open(self, key, foreign_session_error(key), fail);
          return;
        }
        create(self, key, fail);
      },
      [self, key, fail](caf::error& err) {
        if (err == errc::not_found)
          return create(self, key, fail);
        failed_to_open(self, key, std::move(err), fail);
      });
}

// The newest open session stored under `key` (any user).
session_filter open_session_of(const std::string& key) {
  session_filter filter;
  filter.session_key = key;
  filter.open_only = true;
  filter.limit = 1;
  return filter;
}

} // namespace

// Runs `fn` once the key's session actor is up: spawned, rehydrated or found open in
// the store.
void with_session(gateway_ptr self, const std::string& key, const std::string& user,
                  std::function<void()> fn, on_error fail) {
  auto& st = self->state;
  auto& e = st.keys[key];
  const std::string requester = user.empty() ? st.cfg.gateway.default_user : user;
  if (e.user_id.empty())
    e.user_id = requester;
  // Tenant scope: a key's session is written only by its own user; an empty user
  // means the key's owner (a new key: gateway.default_user), as on the facts route.
  // The refusal does not name the owner.
  fn = [self, key, user, requester, fn = std::move(fn), fail] {
    if (!user.empty() && self->state.keys[key].user_id != requester) {
      fail(foreign_session_error(key));
      return;
    }
    fn();
  };
  if (e.opening || e.retiring) { // retiring: node mode, the actor of a lost lease
    e.waiting.push_back([self, key, user, fn, fail] { with_session(self, key, user, fn, fail); });
    return;
  }
  if (e.handle) {
    fn();
    return;
  }
  e.opening = true;
  e.waiting.push_back(std::move(fn));
  if (st.cfg.leases && e.lease_token == 0) { // node mode: the key's lease first
    acquire_then_open(self, key, fail);
    return;
  }
  open_stored(self, key, fail);
}

void open_stored(gateway_ptr self, const std::string& key, on_error fail) {
  auto& st = self->state;
  auto& e = st.keys[key];
  if (!e.session_id.empty()) {
    attach(self, key, fail);
    return;
  }
  then_forgetting(self,
      self->request(st.storage, st.cfg.storage_timeout, st_list_atom_v, open_session_of(key)),
      [self, key, fail](std::vector<session_record>& found) {
        if (found.empty()) {
          create_unless_foreign_id(self, key, fail);
          return;
        }
        auto& e = self->state.keys[key];
        e.session_id = found.front().id;
        e.user_id = found.front().user_id;
        attach(self, key, fail);
      },
      [self, key, fail](caf::error& err) { failed_to_open(self, key, std::move(err), fail); });
}

// Like with_session, for operations on a session that must exist: known to this
// process or stored open under the key; errc::not_found otherwise (nothing is created).
void with_existing(gateway_ptr self, const std::string& key, const std::string& owner,
                   std::function<void()> fn, on_error fail) {
  auto& st = self->state;
  // Decided on the session the key holds when `fn` runs (nothing runs in between).
  fn = [self, key, owner, fn = std::move(fn), fail] {
    if (!owner.empty() && self->state.keys[key].user_id != owner) {
      fail(foreign_session_error(key));
      return;
    }
    fn();
  };
  if (auto i = st.keys.find(key);
      i != st.keys.end() && (!i->second.session_id.empty() || i->second.opening)) {
    with_session(self, key, i->second.user_id, std::move(fn), std::move(fail));
    return;
  }
  then_forgetting(self,
      self->request(st.storage, st.cfg.storage_timeout, st_list_atom_v, open_session_of(key)),
      [self, key, fn, fail](std::vector<session_record>& found) {
        auto& st = self->state;
        auto i = st.keys.find(key);
        bool known = i != st.keys.end() && (!i->second.session_id.empty() || i->second.opening);
        if (!known && found.empty()) {
          fail(caf::make_error(errc::not_found, "no session under key '" + key + "'"));
          return;
        }
        auto& e = st.keys[key];
        if (!known) { // the newest open session, as with_session would find it
          e.session_id = found.front().id;
          e.user_id = found.front().user_id;
        }
        with_session(self, key, e.user_id, fn, fail);
      },
      [fail](caf::error& err) { fail(std::move(err)); });
}

// The reset after exhaustion (SPEC §5.3); `then` runs once the key has its new session.
void reset(gateway_ptr self, const std::string& key, const std::string& old_id,
           std::function<void()> then) {
  auto& st = self->state;
  auto& e = st.keys[key];
  if (e.session_id != old_id) { // already reset
    then();
    return;
  }
  if (e.opening) {
    e.waiting.push_back([self, key, old_id, then] { reset(self, key, old_id, then); });
    return;
  }
  e.opening = true;
  e.waiting.push_back(then);
  st.log().warn("key={} session={} event=reset reason=compaction_exhausted", log_quoted(key),
                old_id);
  then_forgetting(
    self,
    self->request(st.storage, st.cfg.storage_timeout, st_reset_atom_v, old_id,
                  static_cast<int32_t>(st.cfg.compression.protect_first_n), st.cfg.clock(),
                  std::string{"compaction_exhausted"},
                  max_row_tokens(st.cfg.model.context_length, st.cfg.compression.max_row_share)),
      [self, key](session_record& fresh) {
        if (auto& m = self->state.cfg.metrics)
          m->exhaustion_resets.fetch_add(1, std::memory_order_relaxed);
        auto& e = self->state.keys[key];
        if (e.handle)
          self->send_exit(e.handle, caf::exit_reason::user_shutdown);
        e.handle = nullptr;
        e.session_id = fresh.id;
        attach(self, key, [](caf::error) {});
      },
      [self, key](caf::error& err) {
        failed_to_open(self, key, std::move(err), [](caf::error) {});
      });
}

// The key's session continued in a child: route the key there (no-op when the key
// already moved on, e.g. a second notice of the same switch or a reset).
void follow_child(gateway_ptr self, const std::string& key, const std::string& parent_id,
                  const std::string& child_id) {
  auto i = self->state.keys.find(key);
  if (i == self->state.keys.end() || i->second.session_id != parent_id || parent_id == child_id)
    return;
  i->second.session_id = child_id;
  self->state.log().info("key={} session={} event=continued_in_child parent={}",
                         log_quoted(key), child_id, parent_id);
}

// Calls `fn` with the id of the session `handle` holds now: with in_place: false a
// compaction may have switched it to a child whose notice (through the supervisor)
// has not arrived yet, so the actor is asked, and the key follows it. `known` is the
// answer when the actor cannot say (in place, gone, no handle). `handle` must be the
// actor that did the work, not the key's current one (a reset may have replaced it).
void with_current_id(gateway_ptr self, const std::string& key, session_actor handle,
                     std::string known, std::function<void(std::string)> fn) {
  auto& st = self->state;
  if (st.cfg.compression.in_place || !handle) {
    fn(std::move(known));
    return;
  }
  then_forgetting(self, self->request(handle, st.cfg.storage_timeout, ss_state_atom_v),
      [self, key, known, fn](session_snapshot& s) {
        follow_child(self, key, known, s.record.id);
        fn(s.record.id);
      },
      [known, fn](caf::error&) { fn(known); });
}

namespace {

// An evicted key whose entry holds nothing the store cannot answer: no request or
// open in progress, no hygiene cooldown running and no re-run after a reset whose
// exhaustion signal may still come. Its entry is dropped, so an
// evicted session costs the gateway nothing; the next message for the key finds its
// open session (and its owner, for the tenant check) in the store by the key's index,
// as after a restart.
bool forgettable(const key_entry& e, time_ms now) {
  return !e.handle && !e.opening && e.in_flight == 0 && e.waiting.empty()
         && e.hygiene_cooldown_until_ms <= now && e.replaying_in.empty() && e.lease_token == 0
         && !e.retiring;
}

// The answers a sweep waits for: `done` runs when the last one arrived.
struct sweep_tally {
  int64_t asked = 0;
  int64_t evicted = 0;
  std::function<void(int64_t)> done;

  void answered() {
    if (--asked == 0 && done)
      done(evicted);
  }
};

} // namespace

void sweep(gateway_ptr self, std::function<void(int64_t)> done) {
  auto& st = self->state;
  auto idle_ms = st.cfg.gateway.idle_evict_seconds * 1000;
  auto now = st.cfg.clock();
  auto tally = std::make_shared<sweep_tally>();
  tally->asked = 1; // released below, after every request went out
  tally->done = std::move(done);
  for (auto& [key, e] : st.keys) {
    if (!e.handle || e.opening || e.in_flight > 0 || now - e.last_activity_ms < idle_ms)
      continue;
    auto handle = e.handle;
    ++tally->asked;
    then_forgetting(self, self->request(handle, st.cfg.storage_timeout, ss_evict_atom_v),
        [self, key = key, handle, tally](bool evicted) {
          auto& st = self->state;
          auto i = st.keys.find(key);
          if (evicted && i != st.keys.end() && i->second.handle == handle) {
            ++tally->evicted;
            i->second.handle = nullptr;
            release_lease(self, key);
            if (forgettable(i->second, st.cfg.clock()))
              st.keys.erase(i);
          }
          tally->answered();
        },
        [tally](caf::error&) { tally->answered(); });
  }
  tally->answered();
}

void arm_eviction(gateway_ptr self) {
  auto& st = self->state;
  auto secs = st.cfg.gateway.idle_evict_seconds;
  if (secs <= 0)
    return;
  auto period = std::chrono::seconds(std::max<int64_t>(1, secs / 4));
  self->delayed_send(self, period, gw_evict_atom_v, ++st.evict_generation);
}

} // namespace mneme::gateway_detail
