// Tests of what an evicted session leaves behind (one million sessions in one process):
// after 10,000 sessions were hosted and evicted, the heap outside SQLite has grown by
// no more than the target per evicted session (docs/benchmarks.md, runtime), measured
// with the allocator's own counters (glibc's mallinfo2 minus SQLite's
// sqlite3_memory_used, whose page cache is bounded by its configuration); and a key
// whose entry the gateway dropped at eviction still rehydrates its own session and
// still belongs to its owner, who is then read from the store.
#include <boost/test/unit_test.hpp>

#include <malloc.h>
#include <sqlite3.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(evicted_footprint_test)

using namespace mneme;
using mneme::testing::err_of;
using namespace std::chrono_literals;

namespace {

// The target of issue "one million sessions": heap after eviction per evicted session.
constexpr int64_t footprint_target_bytes = 300;

// Heap handed out by malloc (mmapped chunks included), less what SQLite holds.
int64_t heap_outside_sqlite() {
  auto m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd) - sqlite3_memory_used();
}

struct footprint_fixture : test::serve_runtime_fixture {
  footprint_fixture() {
    use_manual_clock();
    rc.gateway.idle_evict_seconds = 60;
    start();
  }

  // One turn for each of sessions [first, first + n), all in flight at once.
  void turns(int first, int n) {
    caf::scoped_actor self{*sys};
    using handle = decltype(self->request(rt->gateway(), call_timeout, gw_message_atom_v,
                                          std::string{}, std::string{}, std::string{}));
    std::vector<handle> pending;
    for (int s = first; s < first + n; ++s)
      pending.push_back(self->request(rt->gateway(), call_timeout, gw_message_atom_v,
                                      "footprint-" + std::to_string(s), std::string{"u"},
                                      "hello from " + std::to_string(s)));
    for (auto& p : pending) {
      p.receive([](turn_reply&) {},
                [](caf::error& e) { BOOST_FAIL("turn failed: " << render_error(e)); });
      sys->clock().cancel_request_timeout(self.ptr(), p.id());
    }
  }

  int64_t hosted() { return call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->hosted; }

  // Every session idle past idle_evict_seconds is asked to leave; waits until none is
  // hosted (a bounded wait for the asynchronous sweep, not a measured time).
  void evict_all() {
    *clock += 61'000;
    caf::anon_send(rt->gateway(), gw_evict_atom_v, uint64_t{0});
    for (int i = 0; i < 2000 && hosted() != 0; ++i)
      std::this_thread::sleep_for(5ms);
    BOOST_REQUIRE_EQUAL(hosted(), 0);
  }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(ten_thousand_evicted_sessions_stay_under_the_footprint_target,
                        footprint_fixture) {
  constexpr int group = 250;
  // Warm-up: statement caches, pools, arenas and tables reach their working size.
  for (int first = 0; first < 1000; first += group) {
    turns(first, group);
    evict_all();
  }
  const int64_t before = heap_outside_sqlite();
  constexpr int sessions = 10000;
  for (int first = 1000; first < 1000 + sessions; first += group) {
    turns(first, group);
    evict_all();
  }
  const int64_t per_session = (heap_outside_sqlite() - before) / sessions;
  BOOST_TEST_MESSAGE("heap outside SQLite per evicted session: " << per_session << " bytes");
  BOOST_TEST(per_session <= footprint_target_bytes);
}

BOOST_FIXTURE_TEST_CASE(a_dropped_key_rehydrates_its_session_and_keeps_its_owner,
                        footprint_fixture) {
  auto first = say_to("owned", "the number is 42", "alice");
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  evict_all();
  // The gateway kept nothing of the key: owner and session come from the store.
  auto intruder = say_to("owned", "what was the number?", "mallory");
  BOOST_REQUIRE(!intruder);
  BOOST_TEST(intruder.error() == errc::foreign_session);
  evict_all();
  auto back = say_to("owned", "what was the number?", "alice");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(back->session_id == first->session_id);
  BOOST_TEST(back->live_messages == 5); // the system prompt and two turns
}

BOOST_AUTO_TEST_SUITE_END() // evicted_footprint_test
