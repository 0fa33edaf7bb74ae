// soak_run's end of the run: verify, judge and report; see soak_run.hpp.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "apps/common/soak/soak_driver.hpp"
#include "apps/common/soak/soak_loop.hpp"
#include "apps/common/soak/soak_model_recall.hpp"
#include "apps/common/soak/soak_run.hpp"
#include "apps/common/soak/soak_text.hpp"
#include "apps/common/soak/soak_tool_invariants.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

// Every acknowledged message stored exactly once, every marker found; the model's own
// recall; then the target is shut down and the ledger's totals taken.
void soak_run::verify() {
  out_ << "checking    every acknowledged message in the store, every marker in recall\n"
       << std::flush;
  read_back_store();
  double rows_s = now_s() - t_end_;
  auto markers = ledger_->markers();
  find_markers(markers);
  out_ << fmt::format("checked     the store in {:.1f} s, {} markers in {:.1f} s\n", rows_s,
                      markers.size(), now_s() - t_end_ - rows_s);
  ask_model_for_markers(markers);
  read_compaction_log();
  target_.shutdown();
  take_totals();
}

// Every stored row carrying a tag, by tag; the tool invariants and the ledger
// comparison over them.
void soak_run::read_back_store() {
  auto problems = target_.visit_stored_rows(
    [&](const std::string& session_id, const std::string& content) {
      if (auto tag = tag_of(content)) {
        auto& s = by_tag_[*tag];
        s.tag = *tag;
        s.copies.push_back({session_id, content_hash(content)});
      }
    });
  for (const auto& p : problems)
    violations_.add({"store_readback", "", p, t_end_}, false);
  check_ledger();
}

// Every logged compaction attempt, for the retention plot; a log that cannot be read is
// a note (the plot is a figure, not an invariant).
void soak_run::read_compaction_log() {
  auto problems = target_.visit_compaction_log([&](const compaction_log_entry& e) {
    result_.retention.push_back(
      {static_cast<double>(e.at_ms - result_.started_at_ms) / 1000.0, e.mode, e.outcome,
       e.identifiers_in, e.identifiers_kept});
  });
  std::sort(result_.retention.begin(), result_.retention.end(),
            [](const retention_point& a, const retention_point& b) { return a.t_s < b.t_s; });
  if (!problems.empty())
    result_.notes.push_back(fmt::format("the compaction log of {} sessions could not be read "
                                        "(the retention figures leave them out), e.g. {}",
                                        problems.size(), problems.front()));
}

void soak_run::check_ledger() {
  std::vector<stored_rows> stored;
  for (const auto& [tag, rows] : by_tag_)
    stored.push_back(rows);
  for (auto& v : check_tool_invariants(*ledger_, stored, faults_, target_.max_tool_rounds(),
                                       t_end_, result_.tools))
    violations_.add(std::move(v), false);
  auto& verdict = result_.ledger = compare_ledger(ledger_->sent_records(), stored);
  if (verdict.lost > 0)
    violations_.add({"lost_message", "",
                     fmt::format("{} acknowledged messages are not in the store, e.g. {}",
                                 verdict.lost, verdict.examples.front()), t_end_},
                    false);
  if (verdict.duplicated > 0 || verdict.altered > 0)
    violations_.add({"stored_not_once", "",
                     fmt::format("{} duplicated, {} altered, e.g. {}", verdict.duplicated,
                                 verdict.altered, verdict.examples.front()), t_end_},
                    false);
}

// Each marker searched for within its user's sessions; a hit counts when it comes from
// a session that holds the message (a reset during the turn may have answered from the
// new session while the row stayed in the old one).
void soak_run::find_markers(const std::vector<planted_marker>& markers) {
  result_.markers_planted = static_cast<int64_t>(markers.size());
  for (const auto& mk : markers) {
    auto found = target_.search(mk.user_id, mk.marker);
    std::set<std::string> homes{mk.session_id};
    if (auto it = by_tag_.find(mk.tag); it != by_tag_.end()) {
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
      ++result_.markers_unfindable;
      violations_.add({"unfindable_marker", mk.session_id,
                       fmt::format("'{}' of {} not found in its session{}", mk.marker,
                                   mk.user_id,
                                   found ? fmt::format(" ({} hits)", found->size())
                                         : ": " + render_error(found.error())), t_end_},
                      false);
    }
    result_.markers_found_archived += archived ? 1 : 0;
  }
}

// The model's own recall (issue 29 item 7): markers found through its session_search.
void soak_run::ask_model_for_markers(const std::vector<planted_marker>& markers) {
  auto model_recall = check_model_recall(target_, markers, t_end_);
  for (auto& v : model_recall.violations)
    violations_.add(std::move(v), false);
  out_ << fmt::format("model recall {} of {} markers found through the model's session_search"
                      " ({} unanswered)\n", model_recall.found, model_recall.asked,
                      model_recall.unanswered);
}

void soak_run::take_totals() {
  result_.totals = ledger_->snapshot();
  result_.errors = ledger_->errors();
  result_.turns = ledger_->turns();
  result_.compactions = ledger_->compactions();
  result_.total_s = seconds_since(begin_);
}

void soak_run::judge() {
  count_compactions();
  check_rss();
  result_.violations = violations_.all();
}

// Compactions by trigger, and those with the local fallback inside a summarizer outage.
void soak_run::count_compactions() {
  for (const auto& c : result_.compactions) {
    ++result_.compactions_by_trigger[std::string{to_string(c.by)}];
    if (!c.used_fallback)
      continue;
    for (const auto& w : outage_windows(sc_))
      if (w.purpose != "chat" && c.t_s >= w.from_s && c.t_s <= w.to_s + 5) {
        ++result_.fallback_in_outage;
        break;
      }
  }
  if (sc_.invariants.require_fallback_in_outage && result_.faults_set
      && result_.fallback_in_outage == 0)
    violations_.add({"fallback_in_outage", "",
                     fmt::format("no compaction with the local fallback inside a summarizer "
                                 "outage ({} fallback compactions in all)",
                                 result_.totals.fallback_compactions), result_.drive_s},
                    false);
}

// The RSS plateau of the process, or of each node.
void soak_run::check_rss() {
  auto max_growth = sc_.invariants.rss_max_growth;
  result_.rss_check = check_rss_plateau(result_.rss, max_growth);
  const auto& own = result_.rss_check;
  if (own.conclusive && !own.plateaued)
    violations_.add({"rss_plateau", "",
                     fmt::format("RSS grew {:.1f} % over the second half ({} -> {} bytes), "
                                 "bound {:.0f} %", own.growth * 100, own.mid_bytes,
                                 own.max_late_bytes, max_growth * 100), result_.drive_s},
                    false);
  for (const auto& [node, samples] : result_.rss_by_node) {
    auto v = check_rss_plateau(samples, max_growth);
    result_.rss_check_by_node[node] = v;
    if (v.conclusive && !v.plateaued)
      violations_.add({"rss_plateau", "",
                       fmt::format("RSS of the node at {} grew {:.1f} % over the second half "
                                   "({} -> {} bytes), bound {:.0f} %", node, v.growth * 100,
                                   v.mid_bytes, v.max_late_bytes, max_growth * 100),
                       result_.drive_s},
                      false);
  }
}

int soak_run::report() {
  std::string why;
  auto md = write_report(result_, opt_.report_dir, why);
  const auto& r = result_;
  out_ << fmt::format("result      {}: {} sent, {} stored, {} lost, {} unfindable markers of {}, "
                      "{} compactions ({} fallback), max live {} / bound {}, {} faults injected"
                      "{}\n",
                      r.violations.empty() ? "PASSED" : "FAILED", r.ledger.sent, r.ledger.stored,
                      r.ledger.lost, r.markers_unfindable, r.markers_planted,
                      r.totals.compactions, r.totals.fallback_compactions,
                      r.totals.max_live_tokens, r.live_bound, r.faults_injected,
                      r.faults_set ? "" : " (faults not set: --no-faults)");
  for (const auto& v : r.violations)
    out_ << fmt::format("violation   {} {}: {}\n", v.invariant, v.session, v.detail);
  if (md.empty()) {
    err_ << "report: " << why << "\n";
    return exit_failure;
  }
  out_ << fmt::format("report      {} (report.json and the plots beside it)\n", md);
  return r.violations.empty() ? exit_ok : exit_failure;
}

} // namespace mneme::soak
