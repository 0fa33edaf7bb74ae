// The tool-loop invariants of a soak run; see soak_tool_invariants.hpp.
#include "apps/common/soak/soak_tool_invariants.hpp"

#include <cmath>

#include <fmt/format.h>

#include "apps/common/soak/soak_report.hpp"

namespace mneme::soak {

namespace {

nlohmann::json rounded_or_null(const std::optional<double>& v) {
  if (!v)
    return nullptr;
  return std::round(*v * 10) / 10;
}

std::string figure_or_dash(const std::optional<double>& v) {
  return v ? fmt::format("{:.0f}", *v) : std::string{"-"};
}

} // namespace

std::optional<violation> orphan_violation(const fault_figures& faults, double t_s) {
  if (faults.orphan_tool_calls == 0 && faults.orphan_tool_results == 0)
    return std::nullopt;
  return violation{"orphan_tool_row", "",
                   fmt::format("the fake LLM received {} requests with orphan tool rows ({} "
                               "calls without their results, {} results without their call)",
                               faults.requests_with_orphans, faults.orphan_tool_calls,
                               faults.orphan_tool_results),
                   t_s};
}

std::vector<violation> check_tool_invariants(const soak_ledger& ledger,
                                             const std::vector<stored_rows>& stored,
                                             const fault_figures& faults,
                                             int64_t max_tool_rounds, double t_s,
                                             tool_loop_figures& out) {
  std::vector<violation> found;
  auto totals = ledger.snapshot();
  auto loops = ledger.loops();
  out.loops_started = totals.loops_started;
  out.loops = check_tool_loops(loops, totals.loops_started, max_tool_rounds);
  out.rounds = tool_round_stats(loops);
  auto records = ledger.tool_records();
  out.results = compare_ledger(records, stored);
  out.pairing_audited = faults.pairing_audited;
  out.orphan_tool_calls = faults.orphan_tool_calls;
  out.orphan_tool_results = faults.orphan_tool_results;
  out.requests_with_orphans = faults.requests_with_orphans;
  if (auto v = orphan_violation(faults, t_s))
    found.push_back(*v);
  if (!out.loops.ok())
    found.push_back({"tool_loop_end", "",
                     fmt::format("{} unended, {} past the round cap, {} capped at another "
                                 "round (cap {}), e.g. {}",
                                 out.loops.unended, out.loops.over_cap, out.loops.cap_mismatch,
                                 out.loops.cap_rounds, out.loops.examples.front()),
                     t_s});
  if (out.results.lost > 0)
    found.push_back({"lost_message", "tool_results",
                     fmt::format("{} acknowledged tool results are not in the store, e.g. {}",
                                 out.results.lost, out.results.examples.front()),
                     t_s});
  if (out.results.duplicated > 0 || out.results.altered > 0)
    found.push_back({"stored_not_once", "tool_results",
                     fmt::format("tool results: {} duplicated, {} altered, e.g. {}",
                                 out.results.duplicated, out.results.altered,
                                 out.results.examples.front()),
                     t_s});
  return found;
}

nlohmann::json tool_loops_json(const tool_loop_figures& f) {
  nlohmann::json by_rounds = nlohmann::json::object();
  for (const auto& [rounds, n] : f.rounds.loops_by_rounds)
    by_rounds[std::to_string(rounds)] = n;
  return {{"started", f.loops_started},
          {"ended", f.loops.loops},
          {"by_end", f.loops.by_end},
          {"round_cap", f.loops.cap_rounds},
          {"rounds_per_turn", {{"loops_by_rounds", by_rounds},
                               {"mean", std::round(f.rounds.mean_rounds * 100) / 100},
                               {"p99", f.rounds.p99_rounds}}},
          {"loop_ms", {{"loops", f.rounds.loops_with_calls},
                       {"p50", rounded_or_null(f.rounds.loop_ms_p50)},
                       {"p99", rounded_or_null(f.rounds.loop_ms_p99)}}},
          {"results", {{"sent", f.results.sent}, {"acknowledged", f.results.acknowledged},
                       {"stored", f.results.stored}, {"lost", f.results.lost},
                       {"duplicated", f.results.duplicated}, {"altered", f.results.altered}}},
          {"pairing", {{"audited", f.pairing_audited},
                       {"orphan_calls", f.orphan_tool_calls},
                       {"orphan_results", f.orphan_tool_results},
                       {"requests_with_orphans", f.requests_with_orphans}}}};
}

std::vector<std::pair<std::string, std::string>> tool_loop_rows(const tool_loop_figures& f) {
  auto end_count = [&](const char* k) {
    auto it = f.loops.by_end.find(k);
    return it == f.loops.by_end.end() ? int64_t{0} : it->second;
  };
  std::string by_rounds;
  for (const auto& [rounds, n] : f.rounds.loops_by_rounds)
    by_rounds += fmt::format(" {}:{}", rounds, n);
  return {
    {"tool loops ended: text / round cap / error (of started)",
     fmt::format("{} / {} / {} ({}), cap {} rounds", end_count("text"), end_count("round_cap"),
                 end_count("error"), f.loops_started, f.loops.cap_rounds)},
    {"tool rounds per turn: mean / p99 (loops by rounds)",
     fmt::format("{:.2f} / {} ({})", f.rounds.mean_rounds, f.rounds.p99_rounds,
                 by_rounds.empty() ? by_rounds : by_rounds.substr(1))},
    {"tool loop time p50 / p99 (ms, loops with calls)",
     fmt::format("{} / {} ({} loops)", figure_or_dash(f.rounds.loop_ms_p50),
                 figure_or_dash(f.rounds.loop_ms_p99), f.rounds.loops_with_calls)},
    {"tool results sent / acknowledged / stored / lost / duplicated",
     fmt::format("{} / {} / {} / {} / {}", f.results.sent, f.results.acknowledged,
                 f.results.stored, f.results.lost, f.results.duplicated)},
    {"orphan tool calls / results at the fake LLM",
     f.pairing_audited ? fmt::format("{} / {} ({} requests)", f.orphan_tool_calls,
                                     f.orphan_tool_results, f.requests_with_orphans)
                       : std::string{"not audited"}},
  };
}

} // namespace mneme::soak
