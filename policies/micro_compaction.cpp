// Micro-compaction: exchange selection, the rolling summary text, its
// defragmentation, application and reconciliation; rules in micro_compaction.hpp.
#include "policies/micro_compaction.hpp"

#include <algorithm>
#include <cassert>
#include <unordered_set>

#include "policies/row_replacement.hpp"
#include "policies/split.hpp"
#include "policies/split_tool_groups.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"

namespace mneme {

namespace {

constexpr std::string_view bullet_rows = "- rows ";
constexpr std::string_view bullet_earlier = "- earlier rows ";

struct exchange_span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Tool rows fold even when they are replacements (pruned, evicted, unloaded
// skill: tool role with is_summary); assistant summaries (main or rolling) never.
bool foldable(const message& m) {
  return m.role == msg_role::tool || (m.role == msg_role::assistant && !m.is_summary);
}

std::optional<exchange_span> oldest_exchange(const std::vector<message>& live,
                                             std::size_t head_end, std::size_t tail_begin) {
  const tool_group_map groups{live};
  std::size_t i = head_end;
  while (i < tail_begin) {
    if (!foldable(live[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < tail_begin && foldable(live[j])) ++j;
    if (!groups.cut_splits_group(i) && !groups.cut_splits_group(j)) return exchange_span{i, j};
    i = j;
  }
  return std::nullopt;
}

std::string describe_row(const message& m) {
  if (m.role == msg_role::tool) {
    const std::string name = m.tool_name.empty() ? "tool" : one_line_excerpt(m.tool_name, 80);
    return "tool " + name + ": \"" + first_line_excerpt(m.content, k_micro_tool_line_chars)
           + "\" (" + with_thousands(static_cast<int64_t>(count_code_points(m.content)))
           + " chars)";
  }
  std::string s = "assistant: " + one_line_excerpt(m.content, k_micro_assistant_chars);
  if (m.has_tool_calls()) {
    s += " [calls: ";
    for (std::size_t k = 0; k < m.tool_calls.size(); ++k) {
      if (k > 0) s += "; ";
      s += one_line_excerpt(m.tool_calls[k].name, 80) + "("
           + one_line_excerpt(m.tool_calls[k].arguments, k_micro_arguments_chars) + ")";
    }
    s += "]";
  }
  return s;
}

std::string exchange_bullet(const std::vector<message>& live, exchange_span e) {
  int64_t lo = live[e.begin].id, hi = live[e.begin].id;
  std::string rows;
  for (std::size_t i = e.begin; i < e.end; ++i) {
    lo = std::min(lo, live[i].id);
    hi = std::max(hi, live[i].id);
    if (i > e.begin) rows += " | ";
    rows += describe_row(live[i]);
  }
  std::string head = std::string{bullet_rows} + std::to_string(lo) + "-" + std::to_string(hi)
                     + ": ";
  return one_line_excerpt(head + rows, k_micro_bullet_chars);
}

// The bullets of an existing rolling summary (its body without the title).
std::vector<std::string> bullets_of(const message& summary) {
  std::vector<std::string> out;
  const std::string body = unwrap_summary(summary.content);
  std::size_t pos = 0;
  while (pos <= body.size()) {
    std::size_t end = body.find('\n', pos);
    if (end == std::string::npos) end = body.size();
    const std::string line = body.substr(pos, end - pos);
    if (!line.empty() && line != k_rolling_summary_title) out.push_back(line);
    pos = end + 1;
  }
  return out;
}

std::string body_of(const std::vector<std::string>& bullets) {
  std::string body{k_rolling_summary_title};
  for (const auto& b : bullets) body += "\n" + b;
  return body;
}

// Leading "A-B" after the bullet prefix; exchanges: 1 for a plain bullet, N
// from "(N exchanges" for a consolidated one.
struct bullet_info {
  int64_t lo = 0, hi = 0, exchanges = 1;
};

int64_t parse_int(std::string_view s, std::size_t& pos) {
  int64_t v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') v = v * 10 + (s[pos++] - '0');
  return v;
}

bullet_info info_of(std::string_view b) {
  bullet_info info;
  std::size_t pos = 0;
  if (b.substr(0, bullet_earlier.size()) == bullet_earlier) pos = bullet_earlier.size();
  else if (b.substr(0, bullet_rows.size()) == bullet_rows) pos = bullet_rows.size();
  else return info;
  info.lo = parse_int(b, pos);
  if (pos < b.size() && b[pos] == '-') ++pos;
  info.hi = parse_int(b, pos);
  if (b.substr(pos, 2) == " (") {
    pos += 2;
    info.exchanges = std::max<int64_t>(1, parse_int(b, pos));
  }
  return info;
}

bool is_separator(char c) {
  return c == ' ' || c == '"' || c == '\'' || c == '(' || c == ')' || c == ',' || c == ';'
         || c == '[' || c == ']' || c == '{' || c == '}' || c == '<' || c == '>' || c == '|'
         || c == '`' || c == '\t';
}

bool looks_like_identifier(std::string_view t) {
  if (t.size() < 3 || t.size() > 120) return false;
  bool letter = false, digit = false, mark = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letter = true;
    else if (c >= '0' && c <= '9') digit = true;
    else if (c == '/' || c == '_' || c == '@' || c == '=' || c == ':'
             || (c == '.' && i > 0 && i + 1 < t.size()))
      mark = true;
  }
  return letter && (mark || digit);
}

// Identifiers in `text`, in order of appearance, appended to `out` once each.
void collect_identifiers(std::string_view text, std::vector<std::string>& out,
                         std::unordered_set<std::string>& seen) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_separator(text[i])) ++i;
    std::size_t j = i;
    while (j < text.size() && !is_separator(text[j])) ++j;
    std::string_view t = text.substr(i, j - i);
    constexpr std::string_view ellipsis = "…";
    for (bool trimmed = true; trimmed && !t.empty();) {
      trimmed = false;
      if (t.back() == '.' || t.back() == ':') {
        t.remove_suffix(1);
        trimmed = true;
      } else if (t.size() >= ellipsis.size()
                 && t.substr(t.size() - ellipsis.size()) == ellipsis) {
        t.remove_suffix(ellipsis.size());
        trimmed = true;
      }
    }
    if (looks_like_identifier(t) && seen.insert(std::string{t}).second) out.emplace_back(t);
    i = j;
  }
}

std::string consolidated_line(const std::vector<std::string>& older, int64_t budget_tokens) {
  bullet_info all;
  all.lo = 0;
  all.exchanges = 0;
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const auto& b : older) {
    const bullet_info in = info_of(b);
    if (in.lo != 0 && (all.lo == 0 || in.lo < all.lo)) all.lo = in.lo;
    all.hi = std::max(all.hi, in.hi);
    all.exchanges += in.exchanges;
    const std::size_t colon = b.find(": ");
    collect_identifiers(std::string_view{b}.substr(colon == std::string::npos ? 0 : colon + 2),
                        ids, seen);
  }
  const std::string head = std::string{bullet_earlier} + std::to_string(all.lo) + "-"
                           + std::to_string(all.hi) + " (" + std::to_string(all.exchanges)
                           + " exchanges, consolidated): identifiers:";
  std::size_t first = 0;  // drop the oldest identifiers until the line fits
  auto render = [&] {
    std::string line = head;
    for (std::size_t k = first; k < ids.size(); ++k) line += (k == first ? " " : ", ") + ids[k];
    return line;
  };
  std::string line = render();
  while (first < ids.size() && estimate_text_tokens(line) > budget_tokens) {
    ++first;
    line = render();
  }
  return line;
}

std::vector<std::string> defragment(const std::vector<std::string>& bullets,
                                    int64_t threshold_tokens) {
  const int64_t quarter = std::max<int64_t>(1, threshold_tokens / 4);
  std::size_t keep_from = bullets.size();
  int64_t kept = 0;
  while (keep_from > 0) {
    const int64_t t = estimate_text_tokens(bullets[keep_from - 1]);
    if (kept + t > quarter) break;
    kept += t;
    --keep_from;
  }
  std::vector<std::string> out;
  if (keep_from > 0)
    out.push_back(consolidated_line({bullets.begin(), bullets.begin() + keep_from}, quarter));
  out.insert(out.end(), bullets.begin() + keep_from, bullets.end());
  return out;
}

std::optional<std::size_t> latest_rolling_summary(const std::vector<message>& live) {
  for (std::size_t k = live.size(); k > 0; --k)
    if (is_rolling_summary(live[k - 1])) return k - 1;
  return std::nullopt;
}

} // namespace

std::string_view to_string(micro_outcome o) {
  switch (o) {
    case micro_outcome::fold: return "fold";
    case micro_outcome::disabled: return "disabled";
    case micro_outcome::not_due: return "not_due";
    case micro_outcome::nothing_to_fold: return "nothing_to_fold";
    case micro_outcome::not_stored: return "not_stored";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, micro_outcome o) { return os << to_string(o); }

std::ostream& operator<<(std::ostream& os, const micro_fold_plan& p) {
  os << "{outcome=" << p.outcome << " exchange=[" << p.exchange_begin << "," << p.exchange_end
     << ") folded=" << p.folded_ids.size() << " defragmented=" << p.defragmented;
  if (p.previous_summary_index) os << " previous_summary=" << *p.previous_summary_index;
  return os << "}";
}

std::string_view to_string(micro_apply_status s) {
  switch (s) {
    case micro_apply_status::applied: return "applied";
    case micro_apply_status::nothing_to_fold: return "nothing_to_fold";
    case micro_apply_status::stale_plan: return "stale_plan";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, micro_apply_status s) { return os << to_string(s); }

bool micro_fold_due(const compression_params& params, int turns_since_last_fold) {
  return params.micro_compact
         && turns_since_last_fold >= std::max(1, params.micro_compact_every_n_turns);
}

bool is_rolling_summary(const message& m) {
  if (!m.is_summary || m.role != msg_role::assistant) return false;
  const std::string body = unwrap_summary(m.content);
  return body.compare(0, k_rolling_summary_title.size(), k_rolling_summary_title) == 0;
}

int64_t rolling_summary_framing_tokens() {
  return estimate_text_tokens(wrap_summary(k_rolling_summary_title));
}

micro_fold_plan plan_micro_fold(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window,
                                int turns_since_last_fold) {
  micro_fold_plan plan;
  plan.transcript_size = live.size();
  if (!params.micro_compact) return plan;
  if (!micro_fold_due(params, turns_since_last_fold)) {
    plan.outcome = micro_outcome::not_due;
    return plan;
  }
  const compaction_plan cuts = plan_compaction(live, params, context_window);
  const auto e = oldest_exchange(live, cuts.head_end, cuts.tail_begin);
  if (!e) {
    plan.outcome = micro_outcome::nothing_to_fold;
    return plan;
  }
  plan.exchange_begin = e->begin;
  plan.exchange_end = e->end;
  for (std::size_t i = e->begin; i < e->end; ++i) {
    if (live[i].id == 0) {
      plan.outcome = micro_outcome::not_stored;
      plan.folded_ids.clear();
      return plan;
    }
    plan.folded_ids.push_back(live[i].id);
  }
  std::vector<std::string> bullets;
  plan.previous_summary_index = latest_rolling_summary(live);
  if (plan.previous_summary_index) bullets = bullets_of(live[*plan.previous_summary_index]);
  bullets.push_back(exchange_bullet(live, *e));
  plan.summary_text = wrap_summary(body_of(bullets));
  if (estimate_text_tokens(plan.summary_text) > params.micro_compact_defrag_threshold_tokens) {
    plan.summary_text =
        wrap_summary(body_of(defragment(bullets, params.micro_compact_defrag_threshold_tokens)));
    plan.defragmented = true;
  }
  plan.outcome = micro_outcome::fold;
  return plan;
}

micro_folded_transcript apply_micro_fold(const std::vector<message>& live,
                                         const micro_fold_plan& plan) {
  micro_folded_transcript out;
  out.live = live;
  if (plan.outcome != micro_outcome::fold) return out;
  const std::size_t n = plan.exchange_end - plan.exchange_begin;
  bool fresh = plan.transcript_size <= live.size() && plan.exchange_end <= live.size()
               && plan.exchange_begin < plan.exchange_end && plan.folded_ids.size() == n;
  for (std::size_t k = 0; fresh && k < n; ++k)
    fresh = live[plan.exchange_begin + k].id == plan.folded_ids[k];
  const auto prev = plan.previous_summary_index;
  if (fresh && prev)
    fresh = *prev < live.size() && is_rolling_summary(live[*prev])
            && (*prev < plan.exchange_begin || *prev >= plan.exchange_end);
  if (!fresh) {
    out.status = micro_apply_status::stale_plan;
    return out;
  }

  message summary;
  const message& last = live[plan.exchange_end - 1];
  summary.session_id = last.session_id;
  summary.role = msg_role::assistant;
  summary.content = plan.summary_text;
  summary.timestamp_ms = last.timestamp_ms;
  summary.is_summary = true;
  int64_t lo = plan.folded_ids.front(), hi = plan.folded_ids.front();
  for (int64_t id : plan.folded_ids) lo = std::min(lo, id), hi = std::max(hi, id);
  out.archived_ids = plan.folded_ids;
  if (prev) {
    const message& old = live[*prev];
    for (int64_t id : {old.id, old.replaced_first_id, old.replaced_last_id})
      if (id != 0) lo = std::min(lo, id), hi = std::max(hi, id);
    if (old.id != 0) out.archived_ids.push_back(old.id);
  }
  summary.replaced_first_id = lo;
  summary.replaced_last_id = hi;
  summary.token_estimate = estimate_message_tokens(summary);

  std::vector<message> next;
  next.reserve(live.size() - n + 1);
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (prev && i == *prev) continue;
    if (i == plan.exchange_begin) {
      out.summary_index = next.size();
      next.push_back(summary);
    }
    if (i >= plan.exchange_begin && i < plan.exchange_end) continue;
    next.push_back(live[i]);
  }
  out.live = std::move(next);
  out.status = micro_apply_status::applied;
  return out;
}

micro_reconciliation reconcile(const std::vector<message>& memory_live,
                               const std::vector<int64_t>& db_live_ids) {
  micro_reconciliation r;
  std::unordered_set<int64_t> in_memory;
  for (std::size_t i = 0; i < memory_live.size(); ++i) {
    const message& m = memory_live[i];
    if (m.id != 0) in_memory.insert(m.id);
    else if (is_rolling_summary(m)) r.insert_indices.push_back(i);
  }
  const std::unordered_set<int64_t> in_db(db_live_ids.begin(), db_live_ids.end());
  for (int64_t id : db_live_ids)
    if (!in_memory.count(id)) r.archive_ids.push_back(id);
  std::sort(r.archive_ids.begin(), r.archive_ids.end());
  r.archive_ids.erase(std::unique(r.archive_ids.begin(), r.archive_ids.end()),
                      r.archive_ids.end());
  for (const message& m : memory_live)
    if (m.id != 0 && !in_db.count(m.id)) r.unknown_ids.push_back(m.id);
  return r;
}

} // namespace mneme
