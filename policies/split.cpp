// Head / middle / tail cuts and the plan built around them; see split.hpp for
// the rules and their order.
#include "policies/split.hpp"

#include <algorithm>
#include <cassert>

#include "policies/split_tool_groups.hpp"

namespace mneme {

namespace {

struct cuts {
  std::size_t head_end = 0;
  std::size_t tail_begin = 0;
};

std::size_t non_negative(int v) { return v > 0 ? static_cast<std::size_t>(v) : 0; }

std::size_t protected_head_end(const std::vector<message>& live,
                               const compression_params& params, const tool_group_map& groups) {
  const std::size_t n = live.size();
  const std::size_t system = (n > 0 && live[0].role == msg_role::system) ? 1 : 0;
  std::size_t head_end = std::min(n, system + non_negative(params.protect_first_n));
  while (head_end < n && groups.cut_splits_group(head_end)) ++head_end;
  return head_end;
}

std::size_t token_tail_begin(const std::vector<message>& live, std::size_t head_end,
                             int64_t budget) {
  std::size_t begin = live.size();
  std::size_t taken = 0;
  int64_t tokens = 0;
  while (begin > head_end) {
    const int64_t t = std::max<int64_t>(0, live[begin - 1].token_estimate);
    const bool floor = taken < k_tail_floor_messages;
    const bool fits = taken < k_tail_max_messages && tokens + t <= budget;
    if (!floor && !fits) break;
    tokens += t;
    ++taken;
    --begin;
  }
  return begin;
}

std::size_t extend_tail_to_user_messages(const std::vector<message>& live, std::size_t head_end,
                                         std::size_t tail_begin, std::size_t wanted) {
  std::size_t users = 0;
  for (std::size_t i = tail_begin; i < live.size(); ++i)
    if (is_real_user_message(live[i])) ++users;
  std::size_t i = tail_begin;
  while (users < wanted && i > head_end) {
    --i;
    if (is_real_user_message(live[i])) {
      tail_begin = i;
      ++users;
    }
  }
  return tail_begin;
}

// A reply the user read: an assistant row (not a summary) with text content.
bool is_visible_reply(const message& m) {
  return m.role == msg_role::assistant && !m.is_summary
         && m.content.find_first_not_of(" \t\r\n") != std::string::npos;
}

// Step 3b: the last visible reply after the last real user message (anywhere in
// the transcript; the whole transcript when there is none) joins the tail if it
// lies after the head.
std::size_t extend_tail_to_last_reply(const std::vector<message>& live, std::size_t head_end,
                                      std::size_t tail_begin) {
  std::size_t reply = live.size();
  for (std::size_t i = live.size(); i > 0; --i) {
    const message& m = live[i - 1];
    if (is_real_user_message(m)) break;
    if (is_visible_reply(m)) {
      reply = i - 1;
      break;
    }
  }
  if (reply < live.size() && reply >= head_end && reply < tail_begin) return reply;
  return tail_begin;
}

// A final reply: the model answered text without asking for tools.
bool is_final_reply(const message& m) { return is_visible_reply(m) && !m.has_tool_calls(); }

// Step 3c: the last real user message joins the tail while its turn is in progress.
std::size_t extend_tail_to_open_turn(const std::vector<message>& live, std::size_t head_end,
                                     std::size_t tail_begin) {
  for (std::size_t i = live.size(); i > 0; --i) {
    const message& m = live[i - 1];
    if (is_final_reply(m)) return tail_begin;
    if (is_real_user_message(m)) {
      const std::size_t user = i - 1;
      return user >= head_end && user < tail_begin ? user : tail_begin;
    }
  }
  return tail_begin;
}

cuts protected_cuts(const std::vector<message>& live, const compression_params& params,
                    int64_t context_window, const tool_group_map& groups) {
  const std::size_t n = live.size();
  cuts c;
  c.head_end = protected_head_end(live, params, groups);
  if (params.tail_mode == tail_mode::tokens) {
    c.tail_begin = token_tail_begin(live, c.head_end, tail_token_budget(context_window));
  } else {
    const std::size_t keep = non_negative(params.protect_last_n);
    c.tail_begin = n > keep ? n - keep : 0;
  }
  c.tail_begin = std::max(c.tail_begin, c.head_end);
  c.tail_begin = extend_tail_to_user_messages(live, c.head_end, c.tail_begin,
                                              non_negative(params.min_tail_user_messages));
  c.tail_begin = extend_tail_to_last_reply(live, c.head_end, c.tail_begin);
  c.tail_begin = extend_tail_to_open_turn(live, c.head_end, c.tail_begin);
  // head_end itself never splits a group, so this stops there at the latest.
  while (c.tail_begin > c.head_end && groups.cut_splits_group(c.tail_begin)) --c.tail_begin;
  return c;
}

int64_t token_sum(const std::vector<message>& live, std::size_t from, std::size_t to) {
  int64_t sum = 0;
  for (std::size_t i = from; i < to; ++i) sum += std::max<int64_t>(0, live[i].token_estimate);
  return sum;
}

bool in_middle(const compaction_plan& p, std::size_t i) {
  return i >= p.head_end && i < p.tail_begin;
}

// Index just past the run of tool rows following `assistant`, not leaving its part.
std::size_t end_of_tool_run(const std::vector<message>& live, std::size_t assistant,
                            std::size_t part_end) {
  std::size_t j = assistant + 1;
  while (j < part_end && live[j].role == msg_role::tool) ++j;
  return j;
}

void plan_orphan_fixes(const std::vector<message>& live, const tool_group_map& groups,
                       compaction_plan& p) {
  const std::size_t n = live.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (in_middle(p, i)) continue;
    const message& m = live[i];
    if (m.role == msg_role::tool) {
      auto owner = groups.owner_of(i);
      assert(!owner || !in_middle(p, *owner));  // the cuts never split a group
      if (!owner || in_middle(p, *owner))
        p.orphan_fixes.push_back({orphan_fix::kind::drop_orphan_result, i, m.id,
                                  m.tool_call_id, m.tool_name, 0});
    } else if (m.role == msg_role::assistant && m.has_tool_calls()
               && groups.pending_assistant() != i) {
      const auto& answered = groups.answered(i);
      const std::size_t part_end = i < p.head_end ? p.head_end : n;
      for (std::size_t k = 0; k < m.tool_calls.size(); ++k) {
        if (answered[k]) continue;
        p.orphan_fixes.push_back({orphan_fix::kind::answer_unanswered_call, i, m.id,
                                  m.tool_calls[k].id, m.tool_calls[k].name,
                                  end_of_tool_run(live, i, part_end) - 1});
      }
    }
  }
}

bool is_dropped(const compaction_plan& p, std::size_t i) {
  for (const auto& f : p.orphan_fixes)
    if (f.what == orphan_fix::kind::drop_orphan_result && f.index == i) return true;
  return false;
}

void plan_summary_role(const std::vector<message>& live, compaction_plan& p) {
  std::optional<std::size_t> last_head;
  for (std::size_t i = p.head_end; i > 0; --i)
    if (!is_dropped(p, i - 1)) {
      last_head = i - 1;
      break;
    }
  bool user = true;
  if (last_head) {
    const msg_role r = live[*last_head].role;
    user = r == msg_role::assistant || r == msg_role::tool || r == msg_role::system;
  }
  p.summary_role = user ? msg_role::user : msg_role::assistant;
  for (std::size_t i = p.tail_begin; i < live.size(); ++i) {
    if (is_dropped(p, i)) continue;
    if (live[i].role == p.summary_role) {
      p.merge_into_first_tail = true;
      p.merge_target_index = i;
    }
    break;
  }
}

// Fills everything but the cuts. REQUIRES: head_end <= tail_begin <= n.
compaction_plan finish_plan(const std::vector<message>& live, const tool_group_map& groups,
                            std::size_t head_end, std::size_t tail_begin) {
  assert(head_end <= tail_begin && tail_begin <= live.size());
  compaction_plan p;
  p.transcript_size = live.size();
  p.head_end = head_end;
  p.tail_begin = tail_begin;
  p.head_tokens = token_sum(live, 0, head_end);
  p.middle_tokens = token_sum(live, head_end, tail_begin);
  p.tail_tokens = token_sum(live, tail_begin, live.size());
  if (head_end == tail_begin) {
    p.outcome = split_outcome::middle_empty;
    return p;
  }
  p.outcome = split_outcome::compact;
  for (std::size_t i = head_end; i < tail_begin; ++i) {
    p.middle_ids.push_back(live[i].id);
    if (is_compaction_summary(live[i])) p.previous_summary_index = i;
    if (live[i].id == 0) p.outcome = split_outcome::middle_not_stored;
  }
  plan_orphan_fixes(live, groups, p);
  for (const auto& f : p.orphan_fixes)
    if (f.what == orphan_fix::kind::drop_orphan_result && f.message_id == 0)
      p.outcome = split_outcome::middle_not_stored;
  plan_summary_role(live, p);
  if (p.merge_target_index && live[*p.merge_target_index].id == 0)
    p.outcome = split_outcome::middle_not_stored;
  return p;
}

compaction_plan refused_plan(const std::vector<message>& live, const cuts& c,
                             split_outcome why) {
  compaction_plan p;
  p.outcome = why;
  p.transcript_size = live.size();
  p.head_end = c.head_end;
  p.tail_begin = c.tail_begin;
  return p;
}

} // namespace

int64_t tail_token_budget(int64_t context_window) {
  if (context_window <= 0) return 0;
  const int64_t share = context_window * k_tail_budget_per_mille_of_window / 1000;
  const int64_t clamped = std::clamp(share, k_tail_budget_min_tokens, k_tail_budget_max_tokens);
  return std::min(clamped, context_window * k_tail_budget_max_percent_of_window / 100);
}

compaction_plan plan_compaction(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window) {
  const tool_group_map groups{live};
  const cuts c = protected_cuts(live, params, context_window, groups);
  return finish_plan(live, groups, c.head_end, c.tail_begin);
}

compaction_plan plan_local_compaction(const std::vector<message>& live,
                                      std::size_t center_index, std::size_t radius,
                                      const compression_params& params,
                                      int64_t context_window) {
  const tool_group_map groups{live};
  const cuts c = protected_cuts(live, params, context_window, groups);
  if (center_index >= live.size())
    return refused_plan(live, c, split_outcome::center_out_of_range);
  if (center_index < c.head_end)
    return refused_plan(live, c, split_outcome::center_in_protected_head);
  if (center_index >= c.tail_begin)
    return refused_plan(live, c, split_outcome::center_in_protected_tail);
  std::size_t lo = center_index - std::min(radius, center_index - c.head_end);
  std::size_t hi = center_index + 1 + std::min(radius, c.tail_begin - center_index - 1);
  // head_end and tail_begin split no group, so the widening stops there at the latest.
  while (lo > c.head_end && groups.cut_splits_group(lo)) --lo;
  while (hi < c.tail_begin && groups.cut_splits_group(hi)) ++hi;
  return finish_plan(live, groups, lo, hi);
}

} // namespace mneme
