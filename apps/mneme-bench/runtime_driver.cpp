// The runtime benchmark's turns; see runtime_driver.hpp.
#include "apps/mneme-bench/runtime_driver.hpp"

#include <algorithm>
#include <functional>
#include <thread>

#include "apps/mneme-bench/runtime_turns.hpp"

namespace mneme::bench {

namespace {

using clock_type = std::chrono::steady_clock;

int64_t us_since(clock_type::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - t0).count();
}

// A short, stable name for the kind of a failed turn (the errc or CAF sec name).
std::string error_kind(const caf::error& e) {
  if (e.category() == caf::atom("mneme"))
    return to_string(static_cast<errc>(e.code()));
  if (e.category() == caf::atom("system"))
    return caf::to_string(static_cast<caf::sec>(e.code()));
  return caf::to_string(e.category()) + ":" + std::to_string(e.code());
}

} // namespace

turn_driver::turn_driver(caf::actor_system& sys, runtime& rt, const runtime_options& o,
                         const runtime_shape& shape, std::atomic<int64_t>& clock_offset,
                         runtime_tally& t)
  : sys_(sys), rt_(rt), self_(sys), o_(o), shape_(shape), clock_offset_(clock_offset),
    tally_(t), filler_(static_cast<size_t>(o.user_chars), 'x'), wait_(rt.turn_timeout()) {
  pending_.reserve(static_cast<size_t>(o.active));
}


void turn_driver::send_waves() {
  for (int t = 0; t < shape_.wave_turns; ++t)
    for (int first = 0; first < o_.sessions; first += o_.active)
      send_group(first, std::min(o_.sessions, first + o_.active), t);
}

// A turn that failed after every retry counts as failed; never as lost.
void turn_driver::send_group(int first, int last, int turn) {
  todo_.clear();
  for (int s = first; s < last; ++s)
    todo_.push_back(s);
  for (int attempt = 0; attempt <= o_.retries && !todo_.empty(); ++attempt) {
    if (attempt > 0)
      tally_.retried += static_cast<int64_t>(todo_.size());
    send_attempt(turn);
  }
  tally_.failed += static_cast<int64_t>(todo_.size());
  if (auto st = supervisor())
    tally_.max_resident = std::max(tally_.max_resident, st->hosted);
  if (o_.evict)
    evict_all();
}

// Sends `turn` to every session of todo_ at once, then reads the replies; the sessions
// whose turn failed are todo_ afterwards.
void turn_driver::send_attempt(int turn) {
  pending_.clear();
  auto sent_at = clock_type::now();
  for (int s : todo_)
    pending_.push_back(request_turn(s, turn));
  again_.clear();
  for (size_t i = 0; i < todo_.size(); ++i) {
    int s = todo_[i];
    pending_[i].receive(
      [&](turn_reply& r) {
        tally_.turn_us.push_back(us_since(sent_at));
        acknowledge(s, turn, r);
      },
      [&](caf::error& e) {
        count_error(e);
        again_.push_back(s);
      });
    // The bench's own request timeouts leave the clock too (actors/request_timeouts.hpp).
    sys_.clock().cancel_request_timeout(self_.ptr(), pending_[i].id());
  }
  std::swap(todo_, again_);
}

void turn_driver::send_probes() {
  for (int p = 0; p < shape_.probes; ++p) {
    int s = static_cast<int>(static_cast<int64_t>(p) * o_.sessions / shape_.probes);
    send_probe(s, shape_.wave_turns, tally_.rehydrate_us);
    send_probe(s, shape_.wave_turns + 1, tally_.resident_us);
  }
}

// One lone turn, not retried: a failure counts as failed at once.
void turn_driver::send_probe(int session, int turn, std::vector<int64_t>& latencies_us) {
  auto sent_at = clock_type::now();
  auto h = request_turn(session, turn);
  h.receive(
    [&](turn_reply& r) {
      latencies_us.push_back(us_since(sent_at));
      acknowledge(session, turn, r);
    },
    [&](caf::error& e) {
      count_error(e);
      ++tally_.failed;
    });
  sys_.clock().cancel_request_timeout(self_.ptr(), h.id());
}

turn_driver::pending_turn turn_driver::request_turn(int session, int turn) {
  return self_->request(rt_.gateway(), wait_, gw_message_atom_v, runtime_session_key(session),
                        std::string{"u"}, runtime_turn_text(session, turn, filler_));
}

// Records an acknowledged turn from its reply: the session that answered (a new session
// id is one more hosted session) and the compactions it committed.
void turn_driver::acknowledge(int session, int turn, const turn_reply& r) {
  ++tally_.acknowledged_turns;
  auto s = static_cast<size_t>(session);
  tally_.turns_state[s * static_cast<size_t>(shape_.turns) + static_cast<size_t>(turn)] |=
    acknowledged;
  auto h = std::hash<std::string>{}(r.session_id);
  if (tally_.session_hash[s] != h) {
    tally_.session_hash[s] = h;
    ++tally_.hosted_sessions;
  }
  for (const auto& c : r.compactions)
    if (c.committed)
      tally_.overhead_us.push_back(c.overhead_us);
}

void turn_driver::count_error(const caf::error& e) {
  auto kind = error_kind(e);
  if (tally_.error_counts[kind]++ == 0)
    tally_.error_examples[kind] = render_error(e);
}

void turn_driver::evict_all() {
  auto sweep_begin = clock_type::now();
  clock_offset_ += 61'000;
  caf::anon_send(rt_.gateway(), gw_evict_atom_v, uint64_t{0});
  bool emptied = false;
  for (int i = 0; i < 6000 && !emptied; ++i) {
    auto st = supervisor();
    emptied = st && st->hosted == 0;
    if (!emptied)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  tally_.incomplete_sweeps += emptied ? 0 : 1;
  tally_.sweep_s += std::chrono::duration<double>(clock_type::now() - sweep_begin).count();
}

std::optional<supervisor_stats> turn_driver::supervisor() {
  std::optional<supervisor_stats> out;
  self_->request(rt_.supervisor(), std::chrono::seconds(30), sv_stats_atom_v)
    .receive([&](supervisor_stats& s) { out = s; }, [](caf::error&) {});
  return out;
}

} // namespace mneme::bench
