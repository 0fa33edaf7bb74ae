// Assembly of the compacted live transcript from a plan; see split_apply.hpp.
#include "policies/split_apply.hpp"

#include <algorithm>
#include <cassert>

namespace mneme {

namespace {

bool plan_matches(const std::vector<message>& live, const compaction_plan& p) {
  const std::size_t n = p.transcript_size;
  if (live.size() < n || p.head_end >= p.tail_begin || p.tail_begin > n) return false;
  if (p.middle_ids.size() != p.tail_begin - p.head_end) return false;
  for (std::size_t i = p.head_end; i < p.tail_begin; ++i)
    if (live[i].id != p.middle_ids[i - p.head_end]) return false;
  for (const auto& f : p.orphan_fixes) {
    if (f.index >= n || live[f.index].id != f.message_id) return false;
    if (f.index >= p.head_end && f.index < p.tail_begin) return false;
    if (f.what == orphan_fix::kind::answer_unanswered_call
        && (f.insert_after >= n || f.insert_after < f.index))
      return false;
  }
  if (p.merge_into_first_tail != p.merge_target_index.has_value()) return false;
  if (p.merge_target_index
      && (*p.merge_target_index < p.tail_begin || *p.merge_target_index >= n))
    return false;
  return true;
}

message summary_message(const std::vector<message>& live, const compaction_plan& p,
                        std::string_view text) {
  const message& last = live[p.tail_begin - 1];
  message s;
  s.session_id = last.session_id;
  s.role = p.summary_role;
  s.content = std::string{text};
  s.timestamp_ms = last.timestamp_ms;
  s.is_summary = true;
  s.replaced_first_id = *std::min_element(p.middle_ids.begin(), p.middle_ids.end());
  s.replaced_last_id = *std::max_element(p.middle_ids.begin(), p.middle_ids.end());
  return s;
}

message merged_message(const message& target, const message& summary) {
  message m = target;
  m.id = 0;
  m.content = summary.content + "\n\n" + target.content;
  m.is_summary = true;
  m.active = true;
  m.compacted = false;
  m.replaced_first_id = std::min(summary.replaced_first_id, target.id);
  m.replaced_last_id = std::max(summary.replaced_last_id, target.id);
  return m;
}

message synthetic_answer(const message& assistant, const orphan_fix& f) {
  message t;
  t.session_id = assistant.session_id;
  t.role = msg_role::tool;
  t.content = std::string{k_no_result_recorded};
  t.tool_call_id = f.call_id;
  t.tool_name = f.tool_name;
  t.timestamp_ms = assistant.timestamp_ms;
  return t;
}

} // namespace

std::string_view to_string(apply_status s) {
  switch (s) {
    case apply_status::applied: return "applied";
    case apply_status::nothing_to_compact: return "nothing_to_compact";
    case apply_status::stale_plan: return "stale_plan";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, apply_status s) { return os << to_string(s); }

compacted_transcript apply_plan(const std::vector<message>& live, const compaction_plan& plan,
                                std::string_view summary_text) {
  compacted_transcript out;
  if (plan.nothing_to_compact()) {
    out.live = live;
    return out;
  }
  if (!plan_matches(live, plan)) {
    out.status = apply_status::stale_plan;
    out.live = live;
    return out;
  }
  const std::size_t n = plan.transcript_size;
  std::vector<bool> dropped(n, false);
  std::vector<std::vector<const orphan_fix*>> answers_after(n);
  for (const auto& f : plan.orphan_fixes) {
    if (f.what == orphan_fix::kind::drop_orphan_result)
      dropped[f.index] = true;
    else
      answers_after[f.insert_after].push_back(&f);
  }
  const message summary = summary_message(live, plan, summary_text);
  out.status = apply_status::applied;
  out.archived_ids = plan.middle_ids;
  out.live.reserve(live.size() - (plan.tail_begin - plan.head_end) + 1
                   + plan.orphan_fixes.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i == plan.head_end && !plan.merge_into_first_tail) {
      out.summary_index = out.live.size();
      out.live.push_back(summary);
    }
    if (i >= plan.head_end && i < plan.tail_begin) continue;
    if (dropped[i]) {
      out.archived_ids.push_back(live[i].id);
    } else if (plan.merge_target_index == i) {
      out.summary_index = out.live.size();
      out.live.push_back(merged_message(live[i], summary));
    } else {
      out.live.push_back(live[i]);
    }
    for (const orphan_fix* f : answers_after[i])
      out.live.push_back(synthetic_answer(live[f->index], *f));
  }
  if (plan.merge_target_index) out.archived_ids.push_back(live[*plan.merge_target_index].id);
  out.live.insert(out.live.end(), live.begin() + static_cast<std::ptrdiff_t>(n), live.end());
  return out;
}

} // namespace mneme
