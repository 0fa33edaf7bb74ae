// Test fixtures of the runtime-level tests (gateway_ops_test, http_api_test,
// rollback_e2e_test, session_skills_test, runtime_integration_test,
// external_modes_test, metrics_exporter_test): a runtime on a SQLite file in a fresh
// temporary directory against the in-process fake LLM server, with helpers to ask an
// actor and wait for the answer, to seed a stored session, to read a session back and
// to inject the fake's faults. A derived fixture adjusts `rc` (or calls
// use_manual_clock()) in its constructor, then calls start(). The runtime can be
// stopped and started again on the same file (a daemon restart).
// keyed_session_fixture adds the helpers of tests that drive one session key through
// the gateway. Used from the test thread only.
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "messages/mneme_types.hpp"
#include "policies/key_namespace.hpp"
#include "policies/token_estimate.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

namespace mneme {
inline std::ostream& operator<<(std::ostream& os, msg_role r) { return os << to_string(r); }
} // namespace mneme

namespace mneme::test {

inline llm::llm_pool_config fake_llm_pool_config(const std::string& base_url,
                                                 llm_purpose purpose) {
  using namespace std::chrono_literals;
  llm::llm_pool_config c;
  c.name = purpose == llm_purpose::chat ? "chat" : "summary";
  c.endpoint.url = llm::chat_completions_url(base_url);
  c.endpoint.model = purpose == llm_purpose::chat ? "fake-chat" : "fake-summary";
  c.endpoint.purpose = purpose;
  c.endpoint.idle_timeout = 5s;
  c.endpoint.total_timeout = 10s;
  c.max_concurrency = 8;
  c.max_queue = 1024;
  return c;
}

// How many compactions `s` committed by trigger `t`.
inline int64_t compactions_of(const session_snapshot& s, trigger t) {
  return s.compactions_by_trigger[static_cast<size_t>(t)];
}

struct serve_runtime_fixture {
  static constexpr auto call_timeout = std::chrono::seconds(60);

  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fakellm::fake_llm_server llm;
  testing::temp_dir dir{"mneme-serve"};
  runtime_config rc;
  std::unique_ptr<runtime> rt;
  // The runtime's clock once use_manual_clock() ran; tests move it by hand.
  std::shared_ptr<std::atomic<time_ms>> clock;

  serve_runtime_fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    BOOST_REQUIRE(llm.start());
    rc.database.path = dir.file("t.db");
    rc.database.synchronous_full = false;
    rc.chat = fake_llm_pool_config(llm.base_url(), llm_purpose::chat);
    rc.summarizer = fake_llm_pool_config(llm.base_url(), llm_purpose::summary);
    rc.model.name = "fake-chat";
    rc.gateway.idle_evict_seconds = 0; // no eviction timer
  }

  ~serve_runtime_fixture() {
    if (rt)
      rt->stop();
    llm.stop();
  }

  // The runtime reads `*clock` (starting at the wall clock) instead of the wall clock.
  // REQUIRES: before start().
  void use_manual_clock() {
    assert(!rt);
    clock = std::make_shared<std::atomic<time_ms>>(system_clock_ms());
    rc.clock = [c = clock] { return c->load(); };
  }

  void start() {
    auto r = runtime::start(*sys, rc);
    BOOST_REQUIRE_MESSAGE(r, testing::err_of(r));
    rt = std::move(*r);
  }

  // Stops the runtime and starts a new one on the same database (a daemon restart:
  // the new gateway knows no key).
  void restart() {
    rt->stop();
    rt.reset();
    rc.metrics = nullptr;
    start();
  }

  template <class T, class Handle, class... Ts>
  caf::expected<T> call(const Handle& h, Ts... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out{caf::error{}};
    self->request(h, call_timeout, xs...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  // A turn of `user` under session key `key` through the gateway.
  caf::expected<turn_reply> say_to(const std::string& key, const std::string& text,
                                   const std::string& user = "u") {
    return call<turn_reply>(rt->gateway(), gw_message_atom_v, key, user, text);
  }
  // A turn under `key` that must end in compaction exhaustion: the error's code is
  // compaction_exhausted and it carries the turn reply (the notice, the new session, the
  // compactions tried), which is returned.
  turn_reply exhausted_turn(const std::string& key, const std::string& text,
                            const std::string& user = "u") {
    auto r = say_to(key, text, user);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error() == errc::compaction_exhausted);
    auto carried = turn_reply_of(r.error());
    BOOST_REQUIRE(carried);
    return *carried;
  }
  // The state of the session under `key`: the key as the gateway was given it (say_to), else
  // the stored key of an open session whose client key it is (a door or a route stored it
  // in its user's namespace: policies/key_namespace.hpp).
  session_snapshot snapshot(const std::string& key) {
    auto s = call<session_snapshot>(rt->gateway(), gw_state_atom_v, key);
    if (!s && s.error() == errc::not_found) {
      session_filter open;
      open.open_only = true;
      open.limit = 100000;
      auto all = call<std::vector<session_record>>(rt->storage(), st_list_atom_v, open);
      BOOST_REQUIRE_MESSAGE(all, testing::err_of(all));
      for (const auto& rec : *all)
        if (rec.session_key != key && visible_key(rec.session_key) == key) {
          s = call<session_snapshot>(rt->gateway(), gw_state_atom_v, rec.session_key);
          break;
        }
    }
    BOOST_REQUIRE_MESSAGE(s, testing::err_of(s));
    return *s;
  }
  session_stats stored_stats(const std::string& sid) {
    auto s = call<session_stats>(rt->storage(), st_stats_atom_v, sid);
    BOOST_REQUIRE_MESSAGE(s, testing::err_of(s));
    return *s;
  }
  std::vector<message> stored_live(const std::string& sid) {
    auto s = call<std::vector<message>>(rt->storage(), st_live_atom_v, sid);
    BOOST_REQUIRE_MESSAGE(s, testing::err_of(s));
    return *s;
  }
  std::vector<message> all_rows(const std::string& sid) {
    auto s = call<std::vector<message>>(rt->storage(), st_range_atom_v, sid, int64_t{1},
                                        std::numeric_limits<int64_t>::max());
    BOOST_REQUIRE_MESSAGE(s, testing::err_of(s));
    return *s;
  }

  // A stored session of user "u" under `key` holding a system prompt and `n` rows,
  // user and assistant alternating (user first), row i (0-based) saying text_of(i).
  // The gateway finds it by its key. Returns its id.
  std::string seed(const std::string& key, int n, const std::function<std::string(int)>& text_of) {
    session_record rec;
    rec.user_id = "u";
    rec.session_key = key;
    rec.model = rc.model.name;
    auto created = call<session_record>(rt->storage(), st_new_session_atom_v, rec,
                                        int64_t{system_clock_ms()});
    BOOST_REQUIRE_MESSAGE(created, testing::err_of(created));
    std::vector<message> rows(static_cast<size_t>(n) + 1);
    rows[0].role = msg_role::system;
    rows[0].content = "You are a helpful assistant.";
    for (int i = 0; i < n; ++i) {
      auto& m = rows[static_cast<size_t>(i) + 1];
      m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
      m.content = text_of(i);
    }
    for (auto& m : rows) {
      m.session_id = created->id;
      m.timestamp_ms = system_clock_ms();
      m.token_estimate = estimate_message_tokens(m);
    }
    auto ids = call<message_ids>(rt->storage(), st_append_atom_v, rows);
    BOOST_REQUIRE_MESSAGE(ids, testing::err_of(ids));
    return created->id;
  }

  // The fake LLM answers by `s` from now on (faults, window, native compaction).
  void set_scenario(fakellm::scenario s) {
    auto err = llm.set_scenario(std::move(s));
    BOOST_REQUIRE_MESSAGE(!err, render_error(err));
  }
  void faults(std::vector<fakellm::fault_rule> rules) {
    fakellm::scenario s;
    s.plan.rules = std::move(rules);
    set_scenario(std::move(s));
  }
  // A fault of `kind` on `purpose` calls, the first `max_count` of them (0 = every one).
  // A payload_too_large rule refuses every body.
  static fakellm::fault_rule rule(fakellm::fault_kind kind, fakellm::purpose_filter purpose,
                                  int64_t max_count = 0) {
    fakellm::fault_rule r;
    r.kind = kind;
    r.purpose = purpose;
    r.max_count = max_count;
    if (kind == fakellm::fault_kind::payload_too_large)
      r.max_body_bytes = 1;
    return r;
  }
};

// One session key ("chat-7", user "u") driven through the gateway. Derived fixtures
// adjust `rc` in their constructor, then call start().
struct keyed_session_fixture : serve_runtime_fixture {
  const std::string key = "chat-7";

  caf::expected<turn_reply> say(const std::string& text) { return say_to(key, text); }
  void turn(const std::string& text) {
    auto r = say(text);
    BOOST_REQUIRE_MESSAGE(r, text << ": " << testing::err_of(r));
  }
  std::string session_id() { return snapshot(key).record.id; }
  checkpoint_record checkpoint(const std::string& sid, const std::string& name) {
    auto c = call<checkpoint_record>(rt->storage(), st_checkpoint_atom_v, sid, name,
                                     int64_t{system_clock_ms()});
    BOOST_REQUIRE_MESSAGE(c, testing::err_of(c));
    return *c;
  }
  std::vector<message> session_live() {
    auto s = call<std::vector<message>>(rt->gateway(), gw_live_atom_v, key);
    BOOST_REQUIRE_MESSAGE(s, testing::err_of(s));
    return *s;
  }
  recall_result search(const std::string& q, bool include_inactive) {
    BOOST_REQUIRE(rt->recall());
    recall_request req;
    req.user_id = "u";
    req.query = q;
    req.include_inactive = include_inactive;
    auto r = call<recall_result>(rt->recall(), rc_search_atom_v, req);
    BOOST_REQUIRE_MESSAGE(r, testing::err_of(r));
    return *r;
  }
};

} // namespace mneme::test
