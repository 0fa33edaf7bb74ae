// The soak runner's tool-loop verdicts; see soak_tool_checks.hpp.
#include "policies/soak_tool_checks.hpp"

#include <algorithm>
#include <set>

#include "policies/percentile.hpp"
#include "policies/soak_checks.hpp"

namespace mneme::soak {

pairing_audit audit_tool_pairing(const std::vector<message>& messages) {
  pairing_audit a;
  std::set<std::string> open;   // calls of the current assistant row not answered yet
  bool in_run = false;          // directly after an assistant row with calls
  auto close_run = [&] {
    a.orphan_calls += static_cast<int64_t>(open.size());
    open.clear();
    in_run = false;
  };
  for (const auto& m : messages) {
    if (m.role == msg_role::tool) {
      if (in_run && open.erase(m.tool_call_id) == 1)
        continue;
      ++a.orphan_results;      // no run, another row's call, or answered twice
      continue;
    }
    close_run();
    if (m.role == msg_role::assistant && m.has_tool_calls()) {
      in_run = true;
      for (const auto& c : m.tool_calls)
        if (!open.insert(c.id).second)
          ++a.orphan_calls;    // the same id twice in one row: one of them is unanswerable
    }
  }
  close_run();
  return a;
}

std::string_view to_string(loop_end e) {
  switch (e) {
    case loop_end::text: return "text";
    case loop_end::round_cap: return "round_cap";
    case loop_end::error: return "error";
  }
  return "unknown";
}

tool_loop_verdict check_tool_loops(const std::vector<tool_loop_record>& ended, int64_t started,
                                   int64_t max_rounds) {
  tool_loop_verdict v;
  v.loops = static_cast<int64_t>(ended.size());
  v.unended = std::max<int64_t>(0, started - v.loops);
  auto note = [&](std::string what) {
    if (v.examples.size() < 5)
      v.examples.push_back(std::move(what));
  };
  if (v.unended > 0)
    note(std::to_string(v.unended) + " loops never ended");
  v.cap_rounds = max_rounds;
  if (v.cap_rounds <= 0)
    for (const auto& r : ended)
      if (r.end == loop_end::round_cap) {
        v.cap_rounds = r.rounds;
        break;
      }
  for (const auto& r : ended) {
    ++v.by_end[std::string{to_string(r.end)}];
    if (v.cap_rounds <= 0)
      continue;
    if (r.rounds > v.cap_rounds || (r.end == loop_end::text && r.rounds >= v.cap_rounds)) {
      ++v.over_cap;
      note("a loop ended by " + std::string{to_string(r.end)} + " after " +
           std::to_string(r.rounds) + " rounds, cap " + std::to_string(v.cap_rounds));
    } else if (r.end == loop_end::round_cap && r.rounds != v.cap_rounds) {
      ++v.cap_mismatch;
      note("a round cap after " + std::to_string(r.rounds) + " rounds, cap " +
           std::to_string(v.cap_rounds));
    }
  }
  return v;
}

tool_round_figures tool_round_stats(const std::vector<tool_loop_record>& ended) {
  tool_round_figures f;
  std::vector<double> rounds, loop_ms;
  for (const auto& r : ended) {
    ++f.loops_by_rounds[r.rounds];
    rounds.push_back(static_cast<double>(r.rounds));
    if (r.rounds > 0) {
      ++f.loops_with_calls;
      loop_ms.push_back(r.loop_ms);
    }
  }
  if (!rounds.empty()) {
    double sum = 0;
    for (auto x : rounds)
      sum += x;
    f.mean_rounds = sum / static_cast<double>(rounds.size());
    f.p99_rounds = static_cast<int64_t>(percentile_or_zero(rounds, 0.99));
  }
  f.loop_ms_p50 = percentile(loop_ms, 0.50);
  f.loop_ms_p99 = percentile(std::move(loop_ms), 0.99);
  return f;
}

} // namespace mneme::soak
