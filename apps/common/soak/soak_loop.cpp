// The soak run loop; see soak_loop.hpp.
#include "apps/common/soak/soak_loop.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "apps/common/soak/soak_driver.hpp"
#include "apps/common/soak/soak_figures.hpp"
#include "apps/common/soak/soak_model_recall.hpp"
#include "apps/common/soak/soak_text.hpp"
#include "apps/common/soak/soak_tool_invariants.hpp"
#include "policies/percentile.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

namespace {

using clock_type = std::chrono::steady_clock;
constexpr size_t sampled_users = 5;       // users drawn one by one in the live plot
constexpr double piped_progress_every_s = 10;
constexpr double poll_budget_s = 2;       // one pass of session-state polling at most

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

class violation_log {
 public:
  explicit violation_log(std::ostream& out) : out_(out) {}
  // Records a violation once per (invariant, session); prints it when new.
  void add(violation v, bool tty) {
    if (!seen_.insert(v.invariant + "\n" + v.session).second)
      return;
    out_ << (tty ? "\r\033[K" : "") << fmt::format("VIOLATION {} {} at {:.0f} s: {}\n",
                                                   v.invariant, v.session, v.t_s, v.detail);
    all_.push_back(std::move(v));
  }
  const std::vector<violation>& all() const { return all_; }

 private:
  std::ostream& out_;
  std::set<std::string> seen_;
  std::vector<violation> all_;
};

} // namespace

int drive_and_report(const soak_scenario& sc, soak_target& target, soak_result& result,
                     int64_t answer_tokens, const soak_options& opt, std::ostream& out,
                     std::ostream& err) {
  violation_log violations{out};
  const bool tty = opt.progress_tty;
  auto begin = clock_type::now();
  auto ledger = std::make_shared<soak_ledger>(sc.users);
  auto t0 = clock_type::now();
  drive_plan plan;
  plan.ledger = ledger;
  plan.users = sc.users;
  plan.seed = sc.seed;
  plan.think_ms = sc.think_ms;
  plan.mix = sc.mix;
  plan.t0 = t0;
  target.start_driving(plan);

  // The live bound of a target whose threshold shows only in a session's state.
  // The bound is the session's window (SPEC §5.6 window guard); answer_tokens no
  // longer enters it.
  (void) answer_tokens;
  auto learn_threshold = [&](int64_t threshold, int64_t context_window) {
    if (result.live_bound > 0 || context_window <= 0)
      return;
    result.threshold_tokens = threshold;
    result.live_bound = window_live_bound(context_window, sc.invariants.max_live_tokens);
    out << (tty ? "\r\033[K" : "")
        << fmt::format("live bound  {} tokens (the target's window; threshold {})\n",
                       result.live_bound, threshold);
  };
  int64_t poll_cursor = 0;
  std::map<std::string, std::pair<std::string, int64_t>> compactions_seen;
  std::map<std::string, std::vector<double>> compaction_times;
  compaction_counts seen_counts;
  // Committed compactions since the last call, from the target's counters.
  auto sample_compactions = [&](double t) {
    auto now = target.compactions();
    if (!now)
      return;
    for (size_t tr = 0; tr < runtime_metrics::trigger_slots; ++tr) {
      for (; seen_counts.committed[tr] < now->committed[tr]; ++seen_counts.committed[tr])
        ledger->compacted({t, "", static_cast<trigger>(tr), false, 0, 0});
      for (; seen_counts.fallback[tr] < now->fallback[tr]; ++seen_counts.fallback[tr])
        ledger->compacted({t, "", static_cast<trigger>(tr), true, 0, 0});
    }
  };
  auto continuous_checks = [&](double t) {
    if (auto why = target.liveness_problem(); !why.empty())
      violations.add({"target_down", "", why, t}, tty);
    if (result.live_bound > 0)
      for (const auto& [key, peak] : ledger->live_peaks())
        if (peak > result.live_bound)
          violations.add({"live_bound", key,
                          fmt::format("live context {} tokens > bound {} (threshold {})", peak,
                                      result.live_bound, result.threshold_tokens), t},
                         tty);
    // Every session's state, also while its turns fail: the live context and the
    // compactions it committed since the last poll. A pass stops after its budget and
    // the next one continues where it stopped.
    auto pass_start = clock_type::now();
    for (int64_t n = 0; n < sc.users && since(pass_start) < poll_budget_s; ++n) {
      auto user = poll_cursor;
      poll_cursor = (poll_cursor + 1) % sc.users;
      auto key = user_key(user);
      auto snap = target.poll_session(key);
      if (!snap)
        continue;
      learn_threshold(snap->threshold_tokens, snap->context_window);
      ledger->observe_live(user, key, snap->live_tokens);
      auto& seen = compactions_seen[key];
      // A new session actor (reset, rehydration) starts its counts anew.
      auto fresh = snap->compactions < seen.second || snap->session_id != seen.first;
      for (int64_t i = fresh ? 0 : seen.second; i < snap->compactions; ++i)
        compaction_times[key].push_back(t);
      seen = {snap->session_id, snap->compactions};
    }
    for (auto& [key, ts] : compaction_times) {
      auto n = max_in_window(ts, 3600);
      result.max_compactions_per_hour = std::max(result.max_compactions_per_hour, n);
      if (n > sc.invariants.max_compactions_per_hour)
        violations.add({"compaction_loop", key,
                        fmt::format("{} compactions within one hour > bound {}", n,
                                    sc.invariants.max_compactions_per_hour), t},
                       tty);
    }
    auto snap = ledger->snapshot();
    if (snap.timeouts > 0)
      violations.add({"turn_unanswered", "",
                      fmt::format("{} turns got no answer within {} ms", snap.timeouts,
                                  target.turn_timeout().count()), t},
                     tty);
    if (auto orphans = orphan_violation(target.faults(), t))
      violations.add(*orphans, tty);
    if (auto sv = target.supervisor(); sv && sv->restarts > 0)
      violations.add({"actor_failure", "",
                      fmt::format("{} session actors crashed and were restarted",
                                  sv->restarts), t},
                     tty);
  };

  std::deque<std::pair<double, double>> recent;   // (t, latency ms) of the last 10 s
  size_t turn_cursor = 0;
  double next_sample = 0, next_check = sc.invariants.check_every_s, next_line = 0;
  int64_t last_answered = 0;
  double last_rate_t = 0;
  double rate = 0;
  auto tick = [&](double t, bool draining) {
    if (t >= next_sample) {
      next_sample = t + 1;
      sample_compactions(t);
      if (auto r = target.rss()) {
        result.rss_raw.push_back({t, r->raw_bytes});
        result.rss.push_back({t, r->adjusted_bytes});
      }
      for (const auto& [node, bytes] : target.rss_by_node())
        result.rss_by_node[node].push_back({t, bytes});
      auto live = ledger->last_live_tokens();
      live_sample ls;
      ls.t_s = t;
      std::vector<double> v(live.begin(), live.end());
      ls.max = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
      ls.p50 = static_cast<int64_t>(percentile(v, 0.50).value_or(0));
      ls.p90 = static_cast<int64_t>(percentile(v, 0.90).value_or(0));
      for (size_t i = 0; i < std::min(sampled_users, live.size()); ++i)
        ls.sampled.push_back(live[i]);
      result.live.push_back(std::move(ls));
    }
    for (const auto& e : ledger->turns_since(turn_cursor))
      if (e.ok)
        recent.emplace_back(e.t_s, e.latency_ms);
    while (!recent.empty() && recent.front().first < t - 10)
      recent.pop_front();
    if (t >= next_check) {
      next_check = t + sc.invariants.check_every_s;
      continuous_checks(t);
    }
    bool line_due = tty || t >= next_line;
    if (!line_due)
      return;
    next_line = t + piped_progress_every_s;
    auto snap = ledger->snapshot();
    if (t - last_rate_t >= 1 || last_rate_t == 0) {
      rate = t > last_rate_t ? static_cast<double>(snap.answered - last_answered)
                                 / (t - last_rate_t) : 0;
      last_answered = snap.answered;
      last_rate_t = t;
    }
    std::vector<double> lat;
    for (const auto& r : recent)
      lat.push_back(r.second);
    auto eta = draining ? std::string{"draining"}
                        : fmt::format("ETA {:.0f} s", std::max(0.0, sc.duration_s - t));
    auto line = fmt::format(
      "t={:>5.0f}s sessions {} turns {} ({:.1f}/s) tool rows {} loops {} rounds {} failed {} "
      "compactions {} "
      "({} fallback) resets {} faults {} {} max-live {} {} violations {}",
      t, snap.sessions, snap.answered, rate, snap.appended, snap.loops_ended, snap.tool_rounds,
      snap.failed + snap.failed_appends,
      snap.compactions, snap.fallback_compactions, snap.resets, target.faults().total,
      progress_p99(lat), snap.max_live_tokens, eta, violations.all().size());
    if (tty)
      out << "\r\033[K" << line << std::flush;
    else
      out << line << "\n" << std::flush;
  };

  // A target that stopped answering ends the drive: every turn after it would fail.
  auto target_down = [&] {
    for (const auto& v : violations.all())
      if (v.invariant == "target_down")
        return true;
    return false;
  };
  while (since(t0) < sc.duration_s && !target_down()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(tty ? 250 : 500));
    tick(since(t0), false);
  }
  ledger->stopping.store(true);
  result.drive_s = since(t0);
  auto drain_until = result.drive_s + sc.invariants.drain_s;
  while (ledger->in_flight.load() > 0 && since(t0) < drain_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    tick(since(t0), true);
  }
  double t_end = since(t0);
  if (auto left = ledger->in_flight.load(); left > 0)
    violations.add({"drain", "",
                    fmt::format("{} turns still in flight {:.0f} s after the end", left,
                                sc.invariants.drain_s), t_end},
                   tty);
  target.stop_driving();
  tick(t_end, true);
  if (tty)
    out << "\n";
  continuous_checks(t_end);
  sample_compactions(t_end);
  if (auto sv = target.supervisor()) {
    result.supervisor_restarts = sv->restarts;
    result.supervisor_exhausted = sv->exhausted;
  }
  auto faults = target.faults();
  result.faults_set = faults.injected_by_runner;
  result.faults_injected = faults.total;
  result.faults_by_kind = faults.by_kind;
  result.llm_chat_requests = faults.chat_requests;
  result.llm_summary_requests = faults.summary_requests;

  // End of run: every acknowledged message stored exactly once, every marker found.
  out << "checking    every acknowledged message in the store, every marker in recall\n"
      << std::flush;
  std::map<std::string, stored_rows> by_tag;
  auto problems = target.visit_stored_rows(
    [&](const std::string& session_id, const std::string& content) {
      if (auto tag = tag_of(content)) {
        auto& s = by_tag[*tag];
        s.tag = *tag;
        s.copies.push_back({session_id, content_hash(content)});
      }
    });
  for (const auto& p : problems)
    violations.add({"store_readback", "", p, t_end}, false);
  std::vector<stored_rows> stored;
  for (const auto& [tag, rows] : by_tag)
    stored.push_back(rows);
  for (auto& v : check_tool_invariants(*ledger, stored, faults, target.max_tool_rounds(), t_end,
                                       result.tools))
    violations.add(std::move(v), false);
  result.ledger = compare_ledger(ledger->sent_records(), stored);
  if (result.ledger.lost > 0)
    violations.add({"lost_message", "",
                    fmt::format("{} acknowledged messages are not in the store, e.g. {}",
                                result.ledger.lost, result.ledger.examples.front()), t_end},
                   false);
  if (result.ledger.duplicated > 0 || result.ledger.altered > 0)
    violations.add({"stored_not_once", "",
                    fmt::format("{} duplicated, {} altered, e.g. {}", result.ledger.duplicated,
                                result.ledger.altered, result.ledger.examples.front()), t_end},
                   false);

  double rows_s = since(t0) - t_end;
  auto markers = ledger->markers();
  result.markers_planted = static_cast<int64_t>(markers.size());
  for (const auto& mk : markers) {
    auto found = target.search(mk.user_id, mk.marker);
    // Its sessions: those that hold the message (a reset during the turn may have
    // answered from the new session while the row stayed in the old one).
    std::set<std::string> homes{mk.session_id};
    if (auto it = by_tag.find(mk.tag); it != by_tag.end()) {
      homes.clear();
      for (const auto& c : it->second.copies)
        homes.insert(c.session_id);
    }
    bool hit = false, archived = false;
    if (found)
      for (const auto& h : *found)
        if (homes.count(h.session_id) > 0) {
          hit = true;
          archived = h.archived;
        }
    if (!hit) {
      ++result.markers_unfindable;
      violations.add({"unfindable_marker", mk.session_id,
                      fmt::format("'{}' of {} not found in its session{}", mk.marker,
                                  mk.user_id,
                                  found ? fmt::format(" ({} hits)", found->size())
                                        : ": " + render_error(found.error())), t_end},
                     false);
    }
    result.markers_found_archived += archived ? 1 : 0;
  }
  out << fmt::format("checked     the store in {:.1f} s, {} markers in {:.1f} s\n", rows_s,
                     markers.size(), since(t0) - t_end - rows_s);
  // The model's own recall (issue 29 item 7): markers found through its session_search.
  auto model_recall = check_model_recall(target, markers, t_end);
  for (auto& v : model_recall.violations)
    violations.add(std::move(v), false);
  out << fmt::format("model recall {} of {} markers found through the model's session_search"
                     " ({} unanswered)\n", model_recall.found, model_recall.asked,
                     model_recall.unanswered);
  target.shutdown();
  result.totals = ledger->snapshot();
  result.errors = ledger->errors();
  result.turns = ledger->turns();
  result.compactions = ledger->compactions();
  result.total_s = since(begin);

  for (const auto& c : result.compactions) {
    ++result.compactions_by_trigger[std::string{to_string(c.by)}];
    if (!c.used_fallback)
      continue;
    for (const auto& w : outage_windows(sc))
      if (w.purpose != "chat" && c.t_s >= w.from_s && c.t_s <= w.to_s + 5) {
        ++result.fallback_in_outage;
        break;
      }
  }
  if (sc.invariants.require_fallback_in_outage && result.faults_set
      && result.fallback_in_outage == 0)
    violations.add({"fallback_in_outage", "",
                    fmt::format("no compaction with the local fallback inside a summarizer "
                                "outage ({} fallback compactions in all)",
                                result.totals.fallback_compactions), result.drive_s},
                   false);
  result.rss_check = check_rss_plateau(result.rss, sc.invariants.rss_max_growth);
  if (result.rss_check.conclusive && !result.rss_check.plateaued)
    violations.add({"rss_plateau", "",
                    fmt::format("RSS grew {:.1f} % over the second half ({} -> {} bytes), "
                                "bound {:.0f} %", result.rss_check.growth * 100,
                                result.rss_check.mid_bytes, result.rss_check.max_late_bytes,
                                sc.invariants.rss_max_growth * 100), result.drive_s},
                   false);
  for (const auto& [node, samples] : result.rss_by_node) {
    auto v = check_rss_plateau(samples, sc.invariants.rss_max_growth);
    result.rss_check_by_node[node] = v;
    if (v.conclusive && !v.plateaued)
      violations.add({"rss_plateau", "",
                      fmt::format("RSS of the node at {} grew {:.1f} % over the second half "
                                  "({} -> {} bytes), bound {:.0f} %", node, v.growth * 100,
                                  v.mid_bytes, v.max_late_bytes,
                                  sc.invariants.rss_max_growth * 100), result.drive_s},
                     false);
  }
  result.violations = violations.all();

  std::string why;
  auto md = write_report(result, opt.report_dir, why);
  out << fmt::format("result      {}: {} sent, {} stored, {} lost, {} unfindable markers of {}, "
                     "{} compactions ({} fallback), max live {} / bound {}, {} faults injected"
                     "{}\n",
                     result.violations.empty() ? "PASSED" : "FAILED", result.ledger.sent,
                     result.ledger.stored, result.ledger.lost, result.markers_unfindable,
                     result.markers_planted, result.totals.compactions,
                     result.totals.fallback_compactions, result.totals.max_live_tokens,
                     result.live_bound, result.faults_injected,
                     result.faults_set ? "" : " (faults not set: --no-faults)");
  for (const auto& v : result.violations)
    out << fmt::format("violation   {} {}: {}\n", v.invariant, v.session, v.detail);
  if (md.empty()) {
    err << "report: " << why << "\n";
    return exit_failure;
  }
  out << fmt::format("report      {} (report.json and the plots beside it)\n", md);
  return result.violations.empty() ? exit_ok : exit_failure;
}

} // namespace mneme::soak
