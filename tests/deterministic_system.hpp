// An actor system on CAF's deterministic scheduler (test_coordinator: scheduler.policy
// "testing"), with mneme's types registered, CAF's own log quiet, and a hidden scoped
// actor that tests send from and receive replies on (ask_actor, reply). Nothing runs until the test calls
// sched.run() (or advance_time / trigger_timeouts for timers), so after sched.run() every
// message due has been handled. The base of tests/session_harness.hpp and
// tests/gateway_harness.hpp. Thread: the test's own.
#pragma once

#include <chrono>

#include <boost/test/unit_test.hpp>

#include "caf/all.hpp"

#include "messages/mneme_types.hpp"

namespace mneme::test {

struct deterministic_system {
  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scoped_actor self;
  caf::scheduler::test_coordinator& sched;

  static caf::actor_system_config& init(caf::actor_system_config& c) {
    register_mneme_types(c);
    c.set("scheduler.policy", caf::atom("testing"));
    c.set("logger.verbosity", caf::atom("quiet"));
    return c;
  }

  deterministic_system()
    : sys(init(cfg)), self(sys, true), // hidden: not counted by await_all_actors_done
      sched(dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  // Sends `xs` to `to` from `self` and runs the scheduler: the reply (a value of type T
  // or an error). A missing reply fails the test.
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask_actor(const Handle& to, Ts... xs) {
    self->send(to, xs...);
    sched.run();
    return reply<T>();
  }

  // The reply that arrived at `self` for an earlier send; a missing one fails the test.
  template <class T>
  caf::expected<T> reply() {
    caf::expected<T> out{caf::error{}};
    bool got = false;
    self->receive([&](T& x) { out = std::move(x); got = true; },
                  [&](caf::error& e) { out = std::move(e); got = true; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    BOOST_REQUIRE_MESSAGE(got, "no reply");
    return out;
  }

  deterministic_system(const deterministic_system&) = delete;
  deterministic_system& operator=(const deterministic_system&) = delete;
};

} // namespace mneme::test
