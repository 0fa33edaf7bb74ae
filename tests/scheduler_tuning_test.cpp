// Tests of actors/scheduler_tuning: the daemon's actor system polls an idle queue for
// fewer rounds than CAF's default (the key is the one CAF's work-stealing scheduler
// reads), and a system built from the tuned configuration runs actors.
#include <boost/test/unit_test.hpp>

#include <cstddef>

#include "caf/all.hpp"

#include "actors/scheduler_tuning.hpp"
#include "messages/mneme_types.hpp"

BOOST_AUTO_TEST_SUITE(scheduler_tuning_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(the_scheduler_reads_the_tuned_poll_attempts) {
  caf::actor_system_config cfg;
  constexpr size_t caf_default = 500;
  BOOST_TEST(caf::get_or(cfg, "work-stealing.moderate-poll-attempts", caf_default) == caf_default);
  tune_scheduler(cfg);
  BOOST_TEST(caf::get_or(cfg, "work-stealing.moderate-poll-attempts", caf_default)
             == moderate_poll_attempts);
  BOOST_TEST(moderate_poll_attempts < caf_default);
}

BOOST_AUTO_TEST_CASE(a_tuned_system_runs_actors) {
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  tune_scheduler(cfg);
  cfg.set("logger.verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto doubler = sys.spawn([]() -> caf::behavior { return {[](int x) { return 2 * x; }}; });
  caf::scoped_actor self{sys};
  int answer = 0;
  self->request(doubler, caf::infinite, 21).receive([&](int x) { answer = x; },
                                                    [&](caf::error&) { answer = -1; });
  BOOST_TEST(answer == 42);
  self->send_exit(doubler, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
