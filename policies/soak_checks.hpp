// The soak runner's decisions, as pure functions over figures it collected: the
// live-context bound, the compaction-loop check (most compactions of one session inside
// any sliding window), the RSS plateau check, and the comparison of what was
// acknowledged with what the store holds (its percentiles: policies/percentile.hpp). Standard library only, no clock, no
// I/O; values in, verdicts out. Any thread.
//
// Who calls: apps/common/soak (continuously while the run goes, and once at the end).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mneme::soak {

// The live-context bound of the soak's checks (SPEC §5.6, issue 25): the window guard
// keeps every session's live context within its model window, outage or not, so the
// bound is the window itself; a scenario's explicit max_live_tokens (> 0) wins.
// REQUIRES: context_window > 0 or scenario_max_live_tokens > 0.
int64_t window_live_bound(int64_t context_window, int64_t scenario_max_live_tokens);

// The most events inside any half-open window [t, t + window_s) over `times_s` (seconds,
// any order). 0 for no events. REQUIRES: window_s > 0.
int64_t max_in_window(std::vector<double> times_s, double window_s);

// One resident-set-size sample.
struct rss_sample {
  double t_s = 0;        // seconds since the run started
  int64_t rss_bytes = 0;
};

struct rss_verdict {
  bool conclusive = false;   // enough samples in both halves to judge
  bool plateaued = true;     // growth over the second half within the bound
  int64_t mid_bytes = 0;     // the first sample at or after half time
  int64_t max_late_bytes = 0;// the largest sample of the second half
  double growth = 0;         // (max_late - mid) / mid; 0 when inconclusive
};

// RSS plateaus when, over the second half of the run (samples at or after
// (first + last) / 2), the largest sample exceeds the first one of that half by at
// most max_growth (a fraction: 0.1 = 10 %). Warm-up in the first half is ignored.
// Fewer than min_samples samples in the second half -> inconclusive, plateaued.
rss_verdict check_rss_plateau(const std::vector<rss_sample>& samples, double max_growth,
                              int min_samples = 4);

// What the runner sent, one record per message it planted a tag in.
struct sent_record {
  std::string tag;        // unique per message, appears once in its content
  uint64_t content_hash = 0;
  bool acknowledged = false; // the runtime confirmed it (turn answered / append acked)
};

// One stored row that carries a tag: its session and the hash of its content.
struct stored_copy {
  std::string session_id;
  uint64_t content_hash = 0;
};

// What the store holds for one tag. A reset starts the new session from the old one's
// head, so a message of the head is legitimately held once by each session of a chain.
struct stored_rows {
  std::string tag;
  std::vector<stored_copy> copies;
};

struct ledger_verdict {
  int64_t sent = 0;
  int64_t acknowledged = 0;
  int64_t stored = 0;             // tags stored at least once
  int64_t lost = 0;               // acknowledged, stored nowhere
  int64_t duplicated = 0;         // held more than once by one session
  int64_t altered = 0;            // some copy has another content hash
  std::vector<std::string> examples; // up to 5 offending tags with what was wrong
};

// Every acknowledged message stored exactly once per session that holds it (at least
// one), with its content; an unacknowledged one (its turn failed) at most once per
// session. Tags of `stored` not in `sent` are ignored.
ledger_verdict compare_ledger(const std::vector<sent_record>& sent,
                              const std::vector<stored_rows>& stored);

// FNV-1a 64 of the bytes: the content hash both sides use.
uint64_t content_hash(const std::string& text);

} // namespace mneme::soak
