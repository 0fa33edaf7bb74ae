// The soak run loop: drive_and_report, and soak_run's drive side (driving, draining,
// ticks, the continuous checks); see soak_loop.hpp and soak_run.hpp.
#include "apps/common/soak/soak_loop.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "apps/common/soak/soak_driver.hpp"
#include "apps/common/soak/soak_figures.hpp"
#include "apps/common/soak/soak_run.hpp"
#include "apps/common/soak/soak_tool_invariants.hpp"
#include "policies/percentile.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

namespace {

constexpr size_t sampled_users = 5;       // users drawn one by one in the live plot
constexpr double piped_progress_every_s = 10;
constexpr double poll_budget_s = 2;       // one pass of session-state polling at most
constexpr double latency_window_s = 10;   // the progress line's p99 is over this window

} // namespace

int drive_and_report(const soak_scenario& sc, soak_target& target, soak_result& result,
                     const soak_options& opt, std::ostream& out, std::ostream& err) {
  return soak_run{sc, target, result, opt, out, err}.run();
}

void violation_log::add(violation v, bool tty) {
  if (!seen_.insert(v.invariant + "\n" + v.session).second)
    return;
  out_ << (tty ? "\r\033[K" : "") << fmt::format("VIOLATION {} {} at {:.0f} s: {}\n",
                                                 v.invariant, v.session, v.t_s, v.detail);
  all_.push_back(std::move(v));
}

bool violation_log::any_of(const std::string& invariant) const {
  return std::any_of(all_.begin(), all_.end(),
                     [&](const violation& v) { return v.invariant == invariant; });
}

double answer_rate::update(double t_s, int64_t answered) {
  if (t_s - last_t_s_ >= 1 || last_t_s_ == 0) {
    rate_ = t_s > last_t_s_ ? static_cast<double>(answered - last_answered_) / (t_s - last_t_s_)
                            : 0;
    last_answered_ = answered;
    last_t_s_ = t_s;
  }
  return rate_;
}

soak_run::soak_run(const soak_scenario& sc, soak_target& target, soak_result& result,
                   const soak_options& opt, std::ostream& out, std::ostream& err)
  : sc_(sc), target_(target), result_(result), opt_(opt), out_(out), err_(err),
    tty_(opt.progress_tty), violations_(out), begin_(clock_type::now()),
    ledger_(std::make_shared<soak_ledger>(sc.users)), next_check_(sc.invariants.check_every_s) {}

int soak_run::run() {
  drive();
  drain();
  verify();
  judge();
  return report();
}

double soak_run::now_s() const {
  return seconds_since(t0_);
}

// Drives until the duration ran out; a target that stopped answering ends the drive
// early, since every turn after it would fail.
void soak_run::drive() {
  t0_ = clock_type::now();
  result_.started_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  drive_plan plan;
  plan.ledger = ledger_;
  plan.users = sc_.users;
  plan.seed = sc_.seed;
  plan.think_ms = sc_.think_ms;
  plan.mix = sc_.mix;
  plan.t0 = t0_;
  target_.start_driving(plan);
  while (now_s() < sc_.duration_s && !violations_.any_of("target_down")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(tty_ ? 250 : 500));
    tick(now_s(), false);
  }
}

void soak_run::drain() {
  ledger_->stopping.store(true);
  result_.drive_s = now_s();
  auto drain_until = result_.drive_s + sc_.invariants.drain_s;
  while (ledger_->in_flight.load() > 0 && now_s() < drain_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    tick(now_s(), true);
  }
  t_end_ = now_s();
  if (auto left = ledger_->in_flight.load(); left > 0)
    violations_.add({"drain", "",
                     fmt::format("{} turns still in flight {:.0f} s after the end", left,
                                 sc_.invariants.drain_s), t_end_},
                    tty_);
  target_.stop_driving();
  tick(t_end_, true);
  if (tty_)
    out_ << "\n";
  take_run_figures();
}

// The last continuous checks and compaction counts, the supervisor's and the fake
// LLM's figures.
void soak_run::take_run_figures() {
  continuous_checks(t_end_);
  sample_compactions(t_end_);
  if (auto sv = target_.supervisor()) {
    result_.supervisor_restarts = sv->restarts;
    result_.supervisor_exhausted = sv->exhausted;
  }
  faults_ = target_.faults();
  result_.faults_set = faults_.injected_by_runner;
  result_.faults_injected = faults_.total;
  result_.faults_by_kind = faults_.by_kind;
  result_.llm_chat_requests = faults_.chat_requests;
  result_.llm_summary_requests = faults_.summary_requests;
}

void soak_run::tick(double t, bool draining) {
  if (t >= next_sample_) {
    next_sample_ = t + 1;
    sample(t);
  }
  keep_recent_latencies(t);
  if (t >= next_check_) {
    next_check_ = t + sc_.invariants.check_every_s;
    continuous_checks(t);
  }
  if (!tty_ && t < next_line_)
    return;
  next_line_ = t + piped_progress_every_s;
  print_progress(t, draining);
}

// The per-second samples: compactions, RSS (the process's, or each node's), live contexts.
void soak_run::sample(double t) {
  sample_compactions(t);
  if (auto r = target_.rss()) {
    result_.rss_raw.push_back({t, r->raw_bytes});
    result_.rss.push_back({t, r->adjusted_bytes});
  }
  for (const auto& [node, bytes] : target_.rss_by_node())
    result_.rss_by_node[node].push_back({t, bytes});
  sample_live(t);
}

// Committed compactions since the last call, from the target's counters, into the ledger.
void soak_run::sample_compactions(double t) {
  auto now = target_.compactions();
  if (!now)
    return;
  for (size_t tr = 0; tr < runtime_metrics::trigger_slots; ++tr) {
    for (; seen_counts_.committed[tr] < now->committed[tr]; ++seen_counts_.committed[tr])
      ledger_->compacted({t, "", static_cast<trigger>(tr), false, 0, 0});
    for (; seen_counts_.fallback[tr] < now->fallback[tr]; ++seen_counts_.fallback[tr])
      ledger_->compacted({t, "", static_cast<trigger>(tr), true, 0, 0});
  }
}

void soak_run::sample_live(double t) {
  auto live = ledger_->last_live_tokens();
  live_sample ls;
  ls.t_s = t;
  ls.max = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  ls.p50 = percentile(live, 0.50).value_or(0);
  ls.p90 = percentile(live, 0.90).value_or(0);
  for (size_t i = 0; i < std::min(sampled_users, live.size()); ++i)
    ls.sampled.push_back(live[i]);
  result_.live.push_back(std::move(ls));
}

void soak_run::keep_recent_latencies(double t) {
  for (const auto& e : ledger_->turns_since(turn_cursor_))
    if (e.ok)
      recent_.emplace_back(e.t_s, e.latency_ms);
  while (!recent_.empty() && recent_.front().first < t - latency_window_s)
    recent_.pop_front();
}

void soak_run::print_progress(double t, bool draining) {
  auto snap = ledger_->snapshot();
  double rate = rate_.update(t, snap.answered);
  std::vector<double> lat;
  for (const auto& r : recent_)
    lat.push_back(r.second);
  auto eta = draining ? std::string{"draining"}
                      : fmt::format("ETA {:.0f} s", std::max(0.0, sc_.duration_s - t));
  auto line = fmt::format(
    "t={:>5.0f}s sessions {} turns {} ({:.1f}/s) tool rows {} loops {} rounds {} failed {} "
    "compactions {} "
    "({} fallback) resets {} faults {} {} max-live {} {} violations {}",
    t, snap.sessions, snap.answered, rate, snap.appended, snap.loops_ended, snap.tool_rounds,
    snap.failed + snap.failed_appends,
    snap.compactions, snap.fallback_compactions, snap.resets, target_.faults().total,
    progress_p99(lat), snap.max_live_tokens, eta, violations_.all().size());
  if (tty_)
    out_ << "\r\033[K" << line << std::flush;
  else
    out_ << line << "\n" << std::flush;
}

void soak_run::continuous_checks(double t) {
  if (auto why = target_.liveness_problem(); !why.empty())
    violations_.add({"target_down", "", why, t}, tty_);
  check_live_bound(t);
  poll_sessions(t);
  check_compaction_loop(t);
  check_turns_and_actors(t);
}

void soak_run::check_live_bound(double t) {
  if (result_.live_bound <= 0)
    return;
  for (const auto& [key, peak] : ledger_->live_peaks())
    if (peak > result_.live_bound)
      violations_.add({"live_bound", key,
                       fmt::format("live context {} tokens > bound {} (threshold {})", peak,
                                   result_.live_bound, result_.threshold_tokens), t},
                      tty_);
}

// Every session's state, also while its turns fail: the live context and the
// compactions it committed since the last poll. A pass stops after its budget and the
// next one continues where it stopped.
void soak_run::poll_sessions(double t) {
  auto pass_start = clock_type::now();
  for (int64_t n = 0; n < sc_.users && seconds_since(pass_start) < poll_budget_s; ++n) {
    auto user = poll_cursor_;
    poll_cursor_ = (poll_cursor_ + 1) % sc_.users;
    auto key = user_key(user);
    auto snap = target_.poll_session(key, user_id(user));
    if (!snap)
      continue;
    learn_live_bound(snap->threshold_tokens, snap->context_window);
    ledger_->observe_live(user, key, snap->live_tokens);
    auto& seen = compactions_seen_[key];
    // A new session actor (reset, rehydration) starts its counts anew.
    auto fresh = snap->compactions < seen.second || snap->session_id != seen.first;
    for (int64_t i = fresh ? 0 : seen.second; i < snap->compactions; ++i)
      compaction_times_[key].push_back(t);
    seen = {snap->session_id, snap->compactions};
  }
}

// The live bound of a target whose threshold shows only in a session's state: the
// session's window (SPEC §5.6 window guard), unless the scenario names one.
void soak_run::learn_live_bound(int64_t threshold, int64_t context_window) {
  if (result_.live_bound > 0 || context_window <= 0)
    return;
  result_.threshold_tokens = threshold;
  result_.live_bound = window_live_bound(context_window, sc_.invariants.max_live_tokens);
  out_ << (tty_ ? "\r\033[K" : "")
       << fmt::format("live bound  {} tokens (the target's window; threshold {})\n",
                      result_.live_bound, threshold);
}

void soak_run::check_compaction_loop(double t) {
  for (auto& [key, ts] : compaction_times_) {
    auto n = max_in_window(ts, 3600);
    result_.max_compactions_per_hour = std::max(result_.max_compactions_per_hour, n);
    if (n > sc_.invariants.max_compactions_per_hour)
      violations_.add({"compaction_loop", key,
                       fmt::format("{} compactions within one hour > bound {}", n,
                                   sc_.invariants.max_compactions_per_hour), t},
                      tty_);
  }
}

// Unanswered turns, orphaned tool rows in what the model was sent, crashed actors.
void soak_run::check_turns_and_actors(double t) {
  auto snap = ledger_->snapshot();
  if (snap.timeouts > 0)
    violations_.add({"turn_unanswered", "",
                     fmt::format("{} turns got no answer within {} ms", snap.timeouts,
                                 target_.turn_timeout().count()), t},
                    tty_);
  if (auto orphans = orphan_violation(target_.faults(), t))
    violations_.add(*orphans, tty_);
  if (auto sv = target_.supervisor(); sv && sv->restarts > 0)
    violations_.add({"actor_failure", "",
                     fmt::format("{} session actors crashed and were restarted", sv->restarts),
                     t},
                    tty_);
}

} // namespace mneme::soak
