// The gateway, the real supervisor and real session actors under CAF's deterministic
// scheduler (test_coordinator), on the test doubles of tests/session_test_fakes.hpp
// (session_backends: the in-memory store the sessions use, the scripted chat and summary
// pools, the clock) plus two of its own: the part of the store the gateway talks to (gateway_storage_actor, over the same
// fake_db) and a scripted lease actor for node mode. One clock drives both kinds of time:
// advance() moves the clock the actors read (gateway_config::clock, session_params::clock)
// and the scheduler's timer clock (delayed_send) together, then runs every message due,
// so the gateway's timers (eviction sweeps, lease renewals) fire exactly when the clock
// passes them and nothing ever sleeps. Every call runs the scheduler until nothing is
// left to do, so a reply is there or never comes.
// A test sets `compression`, `model`, `gw` (the gateway's) and `sv` (the supervisor's
// and sessions') parameters, seeds the fake_db, then start().
// Thread: the test's own.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "caf/all.hpp"

#include "actors/gateway/gateway_actor.hpp"
#include "actors/supervisor/supervisor_actor.hpp"
#include "policies/token_estimate.hpp"
#include "tests/session_test_fakes.hpp"

namespace mneme::test {

// What the gateway asked of its store besides the rows (fake_db holds those).
struct gateway_store_log {
  std::vector<std::pair<std::string, int64_t>> fences; // (key, token) in order
  int resets = 0;
  int64_t next_session = 100; // new sessions are "s-100", "s-101", ...
};

// The gateway's part of the store over `db`: sessions listed, created and reset under
// their key (a reset copies the first head rows and the latest summary into a new
// session whose parent is the old one, which ends), read by id, rows appended, fences
// recorded.
// Checkpoints and rollbacks are not kept (errc::not_found).
inline gateway_storage_actor::behavior_type
fake_gateway_store(std::shared_ptr<fake_db> db, std::shared_ptr<gateway_store_log> log) {
  return {
    fake_append(db),
    // message_store::idempotent_rows over the rows kept.
    [db](st_idem_atom, const std::string& key, const std::string& idem, int64_t since,
         int64_t limit) -> std::vector<message> {
      const message* keyed = nullptr;
      for (const auto& m : db->rows) {
        auto s = db->sessions.find(m.session_id);
        if (!idem.empty() && m.idempotency_key == idem && m.timestamp_ms >= since
            && s != db->sessions.end() && s->second.session_key == key)
          keyed = &m;
      }
      std::vector<message> out;
      if (keyed == nullptr)
        return out;
      for (const auto& m : db->rows)
        if (m.session_id == keyed->session_id && m.id >= keyed->id
            && static_cast<int64_t>(out.size()) < limit)
          out.push_back(m);
      return out;
    },
    [db, log](st_new_session_atom, session_record& rec, int64_t now) -> session_record {
      rec.id = "s-" + std::to_string(log->next_session++);
      rec.started_at_ms = now;
      db->sessions[rec.id] = rec;
      return rec;
    },
    [db](st_list_atom, const session_filter& f) -> std::vector<session_record> {
      std::vector<session_record> out;
      for (const auto& [id, rec] : db->sessions)
        if ((f.session_key.empty() || rec.session_key == f.session_key)
            && (f.user_id.empty() || rec.user_id == f.user_id)
            && (!f.open_only || rec.ended_at_ms == 0))
          out.push_back(rec);
      std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.started_at_ms > b.started_at_ms;
      });
      if (static_cast<int64_t>(out.size()) > f.limit)
        out.resize(static_cast<size_t>(f.limit));
      return out;
    },
    [db](st_session_atom, const std::string& id) -> caf::result<session_record> {
      auto i = db->sessions.find(id);
      if (i == db->sessions.end())
        return caf::make_error(errc::not_found, "no session '" + id + "'");
      return i->second;
    },
    [db, log](st_reset_atom, const std::string& old_id, int32_t head, int64_t now,
              const std::string& reason, int64_t) -> caf::result<session_record> {
      auto i = db->sessions.find(old_id);
      if (i == db->sessions.end())
        return caf::make_error(errc::not_found, "unknown session " + old_id);
      auto fresh = i->second;
      fresh.id = "s-" + std::to_string(log->next_session++);
      fresh.parent_id = old_id;
      fresh.started_at_ms = now;
      fresh.triggers = {};
      i->second.ended_at_ms = now;
      i->second.end_reason = reason;
      db->sessions[fresh.id] = fresh;
      auto live = db->live(old_id);
      std::vector<message> copied;
      for (size_t r = 0; r < live.size() && r < static_cast<size_t>(head); ++r)
        copied.push_back(live[r]);
      for (auto r = live.rbegin(); r != live.rend(); ++r)
        if (r->is_summary) {
          copied.push_back(*r);
          break;
        }
      for (auto m : copied) {
        m.session_id = fresh.id;
        db->append(std::move(m));
      }
      ++log->resets;
      return fresh;
    },
    [](st_checkpoint_atom, const std::string&, const std::string&,
       int64_t) -> caf::result<checkpoint_record> {
      return caf::make_error(errc::not_found, "fake store: no checkpoints");
    },
    [](st_rollback_atom, const std::string&,
       const std::string&) -> caf::result<std::vector<message>> {
      return caf::make_error(errc::not_found, "fake store: no checkpoints");
    },
    [](st_rollback_atom, const std::string&, int64_t,
       const std::string&) -> caf::result<std::vector<message>> {
      return caf::make_error(errc::not_found, "fake store: no rollbacks");
    },
    [log](st_fence_atom, const std::string& key, int64_t token) {
      log->fences.emplace_back(key, token);
    },
  };
}

// A scripted lease actor: grants every key (tokens 1, 2, ...) unless `grant` is false,
// answers a renewal with `lose_next` (then empties it), or with an error while
// `renew_fails`; counts what it was asked.
struct lease_script {
  bool grant = true;
  bool renew_fails = false;
  std::vector<std::string> lose_next;
  int64_t next_token = 1;
  int acquires = 0;
  int renewals = 0;
  std::vector<std::pair<std::string, int64_t>> releases;
};

inline lease_actor::behavior_type fake_leases(std::shared_ptr<lease_script> s) {
  return {
    [s](ls_acquire_atom, const std::string&) {
      ++s->acquires;
      lease_outcome out;
      if (s->grant) {
        out.granted = true;
        out.token = s->next_token++;
      } else {
        out.owner_node = "other";
        out.owner_url = "http://other:8077";
      }
      return out;
    },
    [s](ls_renew_atom) -> caf::result<std::vector<std::string>> {
      ++s->renewals;
      if (s->renew_fails)
        return caf::make_error(errc::storage_failed, "fake leases: database down");
      return std::exchange(s->lose_next, {});
    },
    [s](ls_release_atom, const std::string& key, int64_t token) {
      s->releases.emplace_back(key, token);
    },
  };
}

struct gateway_harness : session_backends {
  std::shared_ptr<gateway_store_log> store_log = std::make_shared<gateway_store_log>();
  std::shared_ptr<lease_script> lease = std::make_shared<lease_script>();
  gateway_storage_actor gateway_store; // over the sessions' `db`
  lease_actor leases; // spawned by start() in node mode only
  bool node_mode = false; // start() gives the gateway the scripted lease actor
  // The gateway's and every session's compression and model parameters.
  compression_params compression;
  model_params model;
  gateway_config gw;
  supervisor_params sv;
  supervisor_actor supervisor;
  gateway_actor gateway;

  gateway_harness() {
    gateway_store = sys.spawn(fake_gateway_store, db, store_log);
    gw.clock = [this] { return clock_ms; };
    gw.gateway.system_prompt = "You are a helpful assistant.";
    gw.gateway.idle_evict_seconds = 0; // a test that sweeps turns it on
    sv.session.clock = [this] { return clock_ms; };
  }

  ~gateway_harness() {
    for (auto a : {caf::actor_cast<caf::actor>(gateway), caf::actor_cast<caf::actor>(supervisor),
                   caf::actor_cast<caf::actor>(leases),
                   caf::actor_cast<caf::actor>(gateway_store)})
      if (a)
        self->send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }

  // A stored open session `sid` under `key` (user "u"): a system row and `n` alternating
  // user/assistant rows of about `tokens` tokens each.
  void seed(const std::string& sid, const std::string& key, int n, int64_t tokens) {
    session_record rec;
    rec.id = sid;
    rec.user_id = "u";
    rec.session_key = key;
    rec.model = model.name;
    rec.started_at_ms = clock_ms;
    db->sessions[sid] = rec;
    add(sid, msg_role::system, "You are a helpful assistant.");
    for (int i = 0; i < n; ++i)
      add(sid, i % 2 == 0 ? msg_role::user : msg_role::assistant,
          std::to_string(i) + " " + std::string(static_cast<size_t>(tokens * 4), 'a'));
  }

  void add(const std::string& sid, msg_role role, std::string content) {
    message m;
    m.session_id = sid;
    m.role = role;
    m.content = std::move(content);
    m.timestamp_ms = clock_ms;
    m.token_estimate = estimate_message_tokens(m);
    BOOST_REQUIRE(db->append(std::move(m)));
  }

  // Spawns the supervisor and the gateway (with the lease actor in node mode) and runs
  // them until idle.
  void start() {
    if (node_mode)
      leases = sys.spawn(fake_leases, lease);
    gw.leases = leases;
    gw.compression = sv.session.compression = compression;
    gw.model = sv.session.model = model;
    supervisor = spawn_supervisor(sys, sv,
                                  session_deps{store, chat_pool, summary_pool,
                                               session_supervisor_actor{}});
    gateway = spawn_gateway(sys, gw, gateway_store, supervisor);
    sched.run();
  }

  // Moves both clocks by `d` and runs everything that became due.
  void advance(std::chrono::milliseconds d) {
    clock_ms += d.count();
    sched.advance_time(d);
    sched.run();
  }

  // Sends `xs` to the gateway and runs the scheduler: the reply (a value of type T or an
  // error). A missing reply fails the test.
  template <class T, class... Ts>
  caf::expected<T> ask(Ts... xs) {
    return ask_actor<T>(gateway, xs...);
  }

  // True when a reply is waiting (it is left in the mailbox).
  bool reply_waiting() { return !self->mailbox().empty(); }

  caf::expected<turn_reply> say(const std::string& key, const std::string& text) {
    return ask<turn_reply>(gw_message_atom_v, key, std::string{"u"}, text);
  }

  caf::expected<int64_t> append(const std::string& key, const std::string& text) {
    message m;
    m.role = msg_role::user;
    m.content = text;
    return ask<int64_t>(gw_append_atom_v, key, std::string{"u"}, m);
  }

  supervisor_stats stats() {
    auto s = ask_actor<supervisor_stats>(supervisor, sv_stats_atom_v);
    BOOST_REQUIRE(s);
    return *s;
  }
};

} // namespace mneme::test
