// Pure verdicts of the soak runner; see soak_checks.hpp.
#include "policies/soak_checks.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <unordered_map>

namespace mneme::soak {

int64_t window_live_bound(int64_t context_window, int64_t scenario_max_live_tokens) {
  assert(context_window > 0 || scenario_max_live_tokens > 0);
  return scenario_max_live_tokens > 0 ? scenario_max_live_tokens : context_window;
}

int64_t max_in_window(std::vector<double> times_s, double window_s) {
  assert(window_s > 0);
  std::sort(times_s.begin(), times_s.end());
  int64_t best = 0;
  size_t lo = 0;
  for (size_t hi = 0; hi < times_s.size(); ++hi) {
    while (times_s[hi] - times_s[lo] >= window_s)
      ++lo;
    best = std::max<int64_t>(best, static_cast<int64_t>(hi - lo + 1));
  }
  return best;
}

rss_verdict check_rss_plateau(const std::vector<rss_sample>& samples, double max_growth,
                              int min_samples) {
  rss_verdict v;
  if (samples.empty())
    return v;
  auto [lo_it, hi_it] = std::minmax_element(
    samples.begin(), samples.end(),
    [](const rss_sample& a, const rss_sample& b) { return a.t_s < b.t_s; });
  double half = (lo_it->t_s + hi_it->t_s) / 2;
  std::vector<rss_sample> late;
  for (const auto& s : samples)
    if (s.t_s >= half)
      late.push_back(s);
  std::sort(late.begin(), late.end(),
            [](const rss_sample& a, const rss_sample& b) { return a.t_s < b.t_s; });
  if (static_cast<int>(late.size()) < min_samples || late.front().rss_bytes <= 0)
    return v;
  v.conclusive = true;
  v.mid_bytes = late.front().rss_bytes;
  for (const auto& s : late)
    v.max_late_bytes = std::max(v.max_late_bytes, s.rss_bytes);
  v.growth = static_cast<double>(v.max_late_bytes - v.mid_bytes)
             / static_cast<double>(v.mid_bytes);
  v.plateaued = v.growth <= max_growth;
  return v;
}

ledger_verdict compare_ledger(const std::vector<sent_record>& sent,
                              const std::vector<stored_rows>& stored) {
  std::unordered_map<std::string, const stored_rows*> by_tag;
  for (const auto& s : stored)
    by_tag[s.tag] = &s;
  ledger_verdict v;
  auto note = [&](const std::string& what) {
    if (v.examples.size() < 5)
      v.examples.push_back(what);
  };
  for (const auto& rec : sent) {
    ++v.sent;
    v.acknowledged += rec.acknowledged ? 1 : 0;
    auto it = by_tag.find(rec.tag);
    if (it == by_tag.end() || it->second->copies.empty()) {
      if (rec.acknowledged) {
        ++v.lost;
        note(rec.tag + ": acknowledged, not stored");
      }
      continue;
    }
    ++v.stored;
    std::unordered_map<std::string, int64_t> per_session;
    bool altered = false;
    for (const auto& c : it->second->copies) {
      ++per_session[c.session_id];
      altered = altered || c.content_hash != rec.content_hash;
    }
    for (const auto& [session, n] : per_session)
      if (n > 1) {
        ++v.duplicated;
        note(rec.tag + ": stored " + std::to_string(n) + " times in " + session);
        break;
      }
    if (altered) {
      ++v.altered;
      note(rec.tag + ": stored with other content");
    }
  }
  return v;
}

uint64_t content_hash(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace mneme::soak
