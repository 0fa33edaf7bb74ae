// Proactive pruning plan; rules and invariants in prune_plan.hpp.
#include "policies/prune_plan.hpp"

#include <string>
#include <unordered_map>

#include "policies/split.hpp"
#include "policies/split_tool_groups.hpp"
#include "policies/utf8.hpp"

namespace mneme {

namespace {

bool is_candidate(const message& m) {
  return m.role == msg_role::tool && m.id != 0 && !m.is_summary;
}

// The call a tool row answers, if its assistant is known.
const tool_call* answered_call(const std::vector<message>& live, const tool_group_map& groups,
                               std::size_t i) {
  const auto owner = groups.owner_of(i);
  if (!owner) return nullptr;
  for (const auto& c : live[*owner].tool_calls)
    if (c.id == live[i].tool_call_id) return &c;
  return nullptr;
}

} // namespace

std::string_view to_string(prune_outcome o) {
  switch (o) {
    case prune_outcome::prune: return "prune";
    case prune_outcome::not_due: return "not_due";
    case prune_outcome::nothing_to_prune: return "nothing_to_prune";
    case prune_outcome::below_min_reclaim: return "below_min_reclaim";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, prune_outcome o) { return os << to_string(o); }

std::ostream& operator<<(std::ostream& os, const prune_plan& p) {
  return os << "{outcome=" << p.outcome << " replacements=" << p.replacements.size()
            << " deduplicated=" << p.deduplicated << " summarized=" << p.summarized
            << " reclaimable=" << p.tokens_reclaimable << " reclaimed=" << p.tokens_reclaimed
            << " head_end=" << p.head_end << " tail_begin=" << p.tail_begin << "}";
}

bool proactive_prune_due(const compression_params& params, bool main_compaction_locked,
                         int64_t tokens_now, int64_t threshold) {
  if (main_compaction_locked && tokens_now >= threshold) return true;
  return params.proactive_prune_tokens > 0 && tokens_now > params.proactive_prune_tokens;
}

std::string duplicate_marker(std::size_t original_chars, std::string_view later_call_id,
                             int64_t later_row_id) {
  std::string s = "[DUPLICATE OUTPUT - " + with_thousands(static_cast<int64_t>(original_chars))
                  + " chars; identical to the later result of call "
                  + one_line_excerpt(later_call_id, 80);
  if (later_row_id != 0) s += " (row " + std::to_string(later_row_id) + ")";
  return s + "]";
}

std::string pruned_output_line(std::string_view tool_name, std::string_view arguments,
                               std::size_t original_chars, std::string_view content) {
  std::string name = one_line_excerpt(tool_name, 80);
  if (name.empty()) name = "tool";
  return "[PRUNED TOOL OUTPUT - " + name + "("
         + one_line_excerpt(arguments, k_prune_arguments_excerpt_chars) + ") returned "
         + with_thousands(static_cast<int64_t>(original_chars)) + " chars; first line: \""
         + first_line_excerpt(content, k_prune_first_line_chars) + "\"; recall with search]";
}

prune_plan plan_proactive_prune(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window,
                                bool main_compaction_locked, int64_t tokens_now,
                                int64_t threshold) {
  prune_plan plan;
  const compaction_plan cuts = plan_compaction(live, params, context_window);
  plan.head_end = cuts.head_end;
  plan.tail_begin = cuts.tail_begin;
  if (!proactive_prune_due(params, main_compaction_locked, tokens_now, threshold)) return plan;

  const tool_group_map groups{live};
  std::unordered_map<std::string_view, std::size_t> latest_copy;
  for (std::size_t i = 0; i < live.size(); ++i)
    if (live[i].role == msg_role::tool) latest_copy[live[i].content] = i;

  const auto min_chars = static_cast<std::size_t>(
      std::max<int64_t>(0, params.proactive_prune_min_result_chars));
  std::vector<row_replacement> found;
  for (std::size_t i = plan.head_end; i < plan.tail_begin; ++i) {
    const message& m = live[i];
    if (!is_candidate(m)) continue;
    const std::size_t later = latest_copy[m.content];
    // Bytes bound characters from above: most rows are dismissed without decoding.
    if (later <= i && m.content.size() <= min_chars) continue;
    const std::size_t chars = count_code_points(m.content);
    std::string text;
    bool dedupe = false;
    if (later > i) {
      text = duplicate_marker(chars, live[later].tool_call_id, live[later].id);
      dedupe = true;
    } else if (chars > min_chars) {
      const tool_call* call = answered_call(live, groups, i);
      const std::string_view name =
          !m.tool_name.empty() ? std::string_view{m.tool_name}
                               : (call ? std::string_view{call->name} : std::string_view{});
      text = pruned_output_line(name, call ? std::string_view{call->arguments} : "", chars,
                                m.content);
    } else {
      continue;
    }
    const int64_t reclaim = reclaim_of(m, text);
    if (reclaim <= 0) continue;
    found.push_back({i, m.id, std::move(text), reclaim});
    plan.tokens_reclaimable += reclaim;
    if (dedupe) ++plan.deduplicated; else ++plan.summarized;
  }

  if (found.empty()) {
    plan.outcome = prune_outcome::nothing_to_prune;
  } else if (plan.tokens_reclaimable < params.proactive_prune_min_reclaim_tokens) {
    plan.outcome = prune_outcome::below_min_reclaim;
  } else {
    plan.outcome = prune_outcome::prune;
    plan.replacements = std::move(found);
    plan.tokens_reclaimed = plan.tokens_reclaimable;
  }
  return plan;
}

} // namespace mneme
