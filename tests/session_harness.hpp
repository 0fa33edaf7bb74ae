// One session actor under CAF's deterministic scheduler (test_coordinator) on the test
// doubles of tests/session_test_fakes.hpp: the in-memory store, the scripted chat and
// summary pools, the session record "s-1" and a clock the test sets (clock_ms). Every call
// on the session (ask, turn, state, live) runs the scheduler until nothing is left to do,
// so a reply is there or never comes. The fixtures of tests/session_actor_test.cpp,
// session_paths_test.cpp and metrics_paths_test.cpp derive from session_harness, set
// `params` and seed rows, then start(). Thread: the test's own.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "caf/all.hpp"

#include "actors/session/session_actor.hpp"
#include "policies/token_estimate.hpp"
#include "tests/session_test_fakes.hpp"

namespace mneme::test {

struct session_harness : session_backends {
  caf::scoped_actor supervisor{sys, true}; // the session's supervisor after start_supervised()
  session_params params;
  std::string sid = "s-1";
  session_actor session;

  session_harness() {
    params.clock = [this] { return clock_ms; }; // clock_ms starts at t0
    session_record rec;
    rec.id = sid;
    rec.user_id = "u";
    rec.session_key = "k";
    db->sessions[sid] = rec;
  }

  ~session_harness() {
    if (session)
      self->send_exit(session, caf::exit_reason::user_shutdown);
    sched.run();
  }

  session_harness(const session_harness&) = delete;
  session_harness& operator=(const session_harness&) = delete;

  // Stores a row of the session after those stored so far (stamped t0, estimated as the
  // session estimates); a tool row is a result of "read_file". Its id.
  int64_t add(msg_role role, std::string content, std::vector<tool_call> calls = {},
              std::string call_id = {}) {
    message m;
    m.id = db->next_id++;
    m.session_id = sid;
    m.role = role;
    m.content = std::move(content);
    m.tool_calls = std::move(calls);
    m.tool_call_id = std::move(call_id);
    if (role == msg_role::tool)
      m.tool_name = "read_file";
    m.timestamp_ms = t0;
    m.token_estimate = estimate_message_tokens(m);
    db->rows.push_back(m);
    return m.id;
  }

  // Stores: system, user, an assistant calling c1 and c2 (read_file), the two tool
  // outputs `first` and `second`, assistant, user. The ids of the two tool rows.
  std::pair<int64_t, int64_t> two_tool_outputs(const std::string& first,
                                               const std::string& second) {
    add(msg_role::system, "You are a helpful assistant.");
    add(msg_role::user, "read two files");
    add(msg_role::assistant, "",
        {tool_call{"c1", "read_file", R"({"path":"/srv/a.log"})"},
         tool_call{"c2", "read_file", R"({"path":"/srv/b.log"})"}});
    auto a = add(msg_role::tool, first, {}, "c1");
    auto b = add(msg_role::tool, second, {}, "c2");
    add(msg_role::assistant, "both files are read");
    add(msg_role::user, "next");
    return {a, b};
  }

  // Spawns the session with no supervisor and runs it until idle.
  void start() { spawn_session_under(session_supervisor_actor{}); }

  // Spawns the session with `supervisor` as its supervisor and runs it until idle.
  // The scoped actor stands in for the supervisor: it receives what a session reports.
  void start_supervised() {
    spawn_session_under(caf::actor_cast<session_supervisor_actor>(supervisor));
  }

  // Sends `xs` to the session and runs the scheduler: the reply (a value of type T or an
  // error). A missing reply fails the test.
  template <class T, class... Ts>
  caf::expected<T> ask(Ts... xs) {
    return ask_actor<T>(session, xs...);
  }

  caf::expected<turn_reply> turn(const std::string& text = "hello") {
    return ask<turn_reply>(ss_turn_atom_v, text);
  }
  std::vector<message> live() { return *ask<std::vector<message>>(ss_live_atom_v); }
  session_snapshot state() { return *ask<session_snapshot>(ss_state_atom_v); }

private:
  void spawn_session_under(session_supervisor_actor supervisor_of_session) {
    session = spawn_session(sys, params,
                            session_deps{store, chat_pool, summary_pool,
                                         std::move(supervisor_of_session)},
                            sid);
    sched.run();
  }
};

} // namespace mneme::test
