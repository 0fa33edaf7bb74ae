// The doors' history matching; see history_match.hpp.
#include "policies/history_match.hpp"

#include <algorithm>
#include <cassert>
#include <unordered_map>
#include <utility>

namespace mneme {

namespace {

constexpr uint64_t fp_prime = 1099511628211ull;

std::string_view history_trimmed(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos)
    return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

void fp_feed(uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= fp_prime;
  }
}

void fp_number(uint64_t& h, uint64_t n) {
  for (int i = 0; i < 8; ++i) {
    h ^= (n >> (8 * i)) & 0xff;
    h *= fp_prime;
  }
}

void fp_field(uint64_t& h, std::string_view s) {
  fp_number(h, s.size());
  fp_feed(h, s);
}

// A call's arguments as matched: the JSON text without the whitespace between its tokens
// (outside strings), "" read as "{}". A door that receives the arguments as a JSON value (Anthropic's
// tool_use `input`) writes them back compactly, the upstream may have spaced them.
std::string history_arguments(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  bool in_string = false;
  bool escaped = false;
  for (char c : json_text) {
    if (in_string) {
      out += c;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      continue;
    if (c == '"')
      in_string = true;
    out += c;
  }
  if (out.empty())
    out = "{}"; // no arguments: what a door writes back for an empty `input`
  return out;
}

bool same_calls(const std::vector<tool_call>& a, const std::vector<tool_call>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].name != b[i].name
        || history_arguments(a[i].arguments) != history_arguments(b[i].arguments))
      return false;
  return true;
}

bool history_builtin_only(const message& m, const std::vector<std::string>& names) {
  if (m.role != msg_role::assistant || m.tool_calls.empty() || names.empty())
    return false;
  return std::all_of(m.tool_calls.begin(), m.tool_calls.end(), [&](const tool_call& c) {
    return std::find(names.begin(), names.end(), c.name) != names.end();
  });
}

// Whether `m`, the next row of a fold, is visible; updates the fold's hidden state.
bool history_visible_next(const message& m, bool& first_row_seen, std::vector<std::string>& builtin_ids,
                  const visibility_rules& r) {
  bool first = !first_row_seen;
  first_row_seen = true;
  if (m.state() == row_state::rolled_back || m.is_summary)
    return false;
  if (first && m.role == msg_role::system && r.daemon_system_prompt)
    return false;
  if (history_builtin_only(m, r.builtin_names)) {
    for (const auto& c : m.tool_calls)
      builtin_ids.push_back(c.id);
    return false;
  }
  if (m.role == msg_role::tool) {
    auto i = std::find(builtin_ids.begin(), builtin_ids.end(), m.tool_call_id);
    if (i != builtin_ids.end()) {
      builtin_ids.erase(i);
      return false;
    }
  }
  return true;
}

// Where the visible rows a summary item stands for end, when it comes after
// visible[0, from): its range begins after visible[from - 1] and no later than
// visible[from]; the rows it covers are skipped. nullopt when the range does not fit
// there (a summary of other rows, or of rows the client's transcript has not reached).
std::optional<size_t> summary_item_end(const message& summary,
                                       const std::vector<message>& visible, size_t from) {
  auto first = summary.replaced_first_id;
  auto last = summary.replaced_last_id;
  if (first <= 0 || last < first)
    return std::nullopt;
  if (from > 0 && visible[from - 1].id >= first)
    return std::nullopt;
  if (from < visible.size() && visible[from].id < first)
    return std::nullopt;
  while (from < visible.size() && visible[from].id <= last)
    ++from;
  return from;
}

size_t history_after_answer(const std::vector<message>& msgs, size_t end) {
  for (size_t i = end; i > 0; --i)
    if (msgs[i - 1].role == msg_role::assistant)
      return i;
  return 0;
}

// The id to keep when the first `k` visible rows stay.
int64_t history_kept_id(const std::vector<message>& visible, size_t k, int64_t leading_hidden_id) {
  return k == 0 ? leading_hidden_id : visible[k - 1].id;
}

} // namespace

uint64_t chain_fingerprint(uint64_t previous, const message& m) {
  uint64_t h = previous;
  fp_number(h, static_cast<uint64_t>(m.role));
  fp_field(h, history_trimmed(m.content));
  fp_field(h, m.role == msg_role::tool ? std::string_view{m.tool_call_id} : std::string_view{});
  fp_number(h, m.tool_calls.size());
  for (const auto& c : m.tool_calls) {
    fp_field(h, c.id);
    fp_field(h, c.name);
    fp_field(h, history_arguments(c.arguments));
  }
  return h;
}

uint64_t chain_of(uint64_t previous, const std::vector<message>& msgs, size_t first,
                  size_t last) {
  assert(first <= last && last <= msgs.size());
  for (size_t i = first; i < last; ++i)
    previous = chain_fingerprint(previous, msgs[i]);
  return previous;
}

bool same_message(const message& a, const message& b) {
  return a.role == b.role && history_trimmed(a.content) == history_trimmed(b.content)
         && (a.role != msg_role::tool || a.tool_call_id == b.tool_call_id)
         && same_calls(a.tool_calls, b.tool_calls);
}

void fold_rows(history_print& p, const std::vector<message>& rows, const visibility_rules& r) {
  for (const auto& m : rows) {
    assert(m.id > p.last_row_id);
    p.last_row_id = m.id;
    if (!history_visible_next(m, p.first_row_seen, p.builtin_call_ids, r))
      continue;
    ++p.rows;
    p.chain = chain_fingerprint(p.chain, m);
    if (m.role == msg_role::assistant) {
      p.answered_rows = p.rows;
      p.answered_chain = p.chain;
    }
  }
}

std::vector<message> visible_rows(const std::vector<message>& rows, const visibility_rules& r,
                                  int64_t* leading_hidden_id) {
  std::vector<message> out;
  bool seen = false;
  std::vector<std::string> builtin_ids;
  int64_t hidden = 0;
  for (const auto& m : rows) {
    bool first = !seen;
    if (history_visible_next(m, seen, builtin_ids, r))
      out.push_back(m);
    else if (first && m.role == msg_role::system && m.state() != row_state::rolled_back)
      hidden = m.id;
  }
  if (leading_hidden_id)
    *leading_hidden_id = hidden;
  return out;
}

std::vector<message> client_window(const std::vector<message>& live, const visibility_rules& r) {
  std::vector<message> out;
  bool seen = false;
  std::vector<std::string> builtin_ids;
  for (const auto& m : live) {
    if (m.is_summary && m.state() != row_state::rolled_back) {
      seen = true;
      out.push_back(m);
    } else if (history_visible_next(m, seen, builtin_ids, r)) {
      out.push_back(m);
    }
  }
  return out;
}

bool is_continuation_end(std::string_view parent_end_reason) {
  return parent_end_reason == "continued_in_child" || parent_end_reason == "compaction_exhausted";
}

size_t creation_row_count(const std::vector<message>& parent_rows,
                          const std::vector<message>& own) {
  std::unordered_multimap<time_ms, const message*> by_time;
  by_time.reserve(parent_rows.size());
  for (const auto& p : parent_rows)
    by_time.emplace(p.timestamp_ms, &p);
  size_t n = 0;
  for (; n < own.size(); ++n) {
    const auto& m = own[n];
    if (m.is_summary)
      continue;
    auto [first, last] = by_time.equal_range(m.timestamp_ms);
    if (std::none_of(first, last, [&](const auto& p) { return same_message(*p.second, m); }))
      break;
  }
  return n;
}

void continue_conversation(std::vector<message>& conversation, const std::vector<message>& own,
                           size_t creation) {
  assert(creation <= own.size());
  // The parent's unanswered tail: its trailing live user and tool rows (rolled-back rows
  // are skipped over and kept: they are hidden anyway).
  std::vector<size_t> tail;
  for (size_t i = conversation.size(); i > 0; --i) {
    const auto& m = conversation[i - 1];
    if (m.state() == row_state::rolled_back || m.is_summary)
      continue;
    if (m.role != msg_role::user && m.role != msg_role::tool)
      break;
    tail.push_back(i - 1);
  }
  std::reverse(tail.begin(), tail.end());
  bool rerun = !tail.empty() && own.size() - creation >= tail.size();
  for (size_t j = 0; rerun && j < tail.size(); ++j)
    rerun = same_message(conversation[tail[j]], own[creation + j]);
  if (rerun) {
    for (auto i = tail.rbegin(); i != tail.rend(); ++i)
      conversation.erase(conversation.begin() + static_cast<std::ptrdiff_t>(*i));
  }
  conversation.insert(conversation.end(), own.begin() + static_cast<std::ptrdiff_t>(creation),
                      own.end());
}

conversation_rows conversation_of(std::vector<message> own) {
  conversation_rows conv;
  conv.rows = own;
  conv.own = std::move(own);
  return conv;
}

conversation_rows continued_conversation(conversation_rows parent, std::vector<message> own) {
  auto creation = creation_row_count(parent.own, own);
  conversation_rows conv;
  conv.rows = std::move(parent.rows);
  conv.boundary_id = creation > 0        ? own[creation - 1].id
                     : parent.own.empty() ? parent.boundary_id
                                          : parent.own.back().id;
  continue_conversation(conv.rows, own, creation);
  conv.own = std::move(own);
  return conv;
}

history_print print_of_conversation(const conversation_rows& conv, const visibility_rules& r,
                                    std::string session_id) {
  history_print p;
  p.session_id = std::move(session_id);
  fold_rows(p, conv.rows, r);
  p.last_row_id = std::max(p.last_row_id, conv.boundary_id);
  return p;
}

history_plan plan_from_conversation(const std::vector<message>& sent, history_style style,
                                    const conversation_rows& conv, const visibility_rules& r) {
  int64_t leading = 0;
  auto visible = visible_rows(conv.rows, r, &leading);
  auto plan = plan_from_rows(sent, style, visible, leading);
  if (conv.boundary_id == 0)
    return plan;
  if (auto fitted = fit_to_continuation(plan, visible, conv.boundary_id))
    return *fitted;
  // The client's branch starts before the continuation: this session's rows alone.
  auto own_visible = visible_rows(conv.own, r, &leading);
  return plan_from_rows(sent, style, own_visible, leading);
}

std::string_view to_string(history_style s) {
  return s == history_style::stateful ? "stateful" : "full_history";
}

history_style style_of(const std::vector<message>& sent) {
  if (!sent.empty() && sent.front().role == msg_role::system)
    return history_style::full_history;
  for (const auto& m : sent)
    if (m.role == msg_role::assistant || m.is_summary)
      return history_style::full_history;
  return history_style::stateful;
}

history_plan plan_from_print(const std::vector<message>& sent, history_style style,
                             const history_print& p) {
  history_plan plan;
  if (std::any_of(sent.begin(), sent.end(), [](const message& m) { return m.is_summary; })) {
    plan.need_rows = true; // a summary stands for rows the print holds only as a hash
    return plan;
  }
  auto stored = static_cast<size_t>(p.rows);
  if (style == history_style::stateful) {
    // A retry: the sent messages are exactly the unanswered tail.
    auto tail = static_cast<size_t>(p.rows - p.answered_rows);
    if (tail == sent.size() && tail > 0 && chain_of(p.answered_chain, sent, 0, tail) == p.chain)
      plan.need_rows = true;
    return plan;
  }
  if (sent.size() > stored && chain_of(empty_chain, sent, 0, stored) == p.chain) {
    plan.known = stored;
    return plan;
  }
  plan.need_rows = true;
  return plan;
}

history_plan plan_from_rows(const std::vector<message>& sent, history_style style,
                            const std::vector<message>& visible, int64_t leading_hidden_id) {
  history_plan plan;
  if (style == history_style::stateful) {
    auto answered = history_after_answer(visible, visible.size());
    auto tail = visible.size() - answered;
    bool retry = tail == sent.size() && tail > 0
                 && std::equal(sent.begin(), sent.end(), visible.begin() + answered,
                               same_message);
    if (retry) {
      plan.roll_back = true;
      plan.last_kept_id = history_kept_id(visible, answered, leading_hidden_id);
      plan.rebased_rows = static_cast<int64_t>(tail);
    }
    return plan;
  }
  size_t k = 0; // sent[0, k) are stored
  size_t v = 0; // ... and stand for visible[0, v) (a summary for every row it replaced)
  while (k < sent.size()) {
    if (sent[k].is_summary) {
      auto after = summary_item_end(sent[k], visible, v);
      if (!after)
        break;
      v = *after;
    } else if (v < visible.size() && same_message(sent[k], visible[v])) {
      ++v;
    } else {
      break;
    }
    ++k;
  }
  if (k == sent.size() && k > 0) { // nothing new
    if (sent.back().role == msg_role::assistant) {
      plan.replay = true;
      plan.replayed = visible[v - 1];
    } else { // the unanswered tail (trailing user and tool messages) runs again
      while (k > 0 && !sent[k - 1].is_summary
             && (sent[k - 1].role == msg_role::user || sent[k - 1].role == msg_role::tool)) {
        --k;
        --v;
      }
    }
  }
  plan.known = k;
  if (v < visible.size()) {
    plan.roll_back = true;
    plan.last_kept_id = history_kept_id(visible, v, leading_hidden_id);
    plan.rebased_rows = static_cast<int64_t>(visible.size() - v);
  }
  return plan;
}

std::optional<history_plan> fit_to_continuation(history_plan plan,
                                                const std::vector<message>& visible,
                                                int64_t boundary_id) {
  if (!plan.roll_back)
    return plan;
  for (const auto& m : visible)
    if (m.id > plan.last_kept_id && m.id <= boundary_id)
      return std::nullopt;
  plan.last_kept_id = std::max(plan.last_kept_id, boundary_id);
  return plan;
}

namespace {

// The first of sent[from..] that is an assistant message with a call no tool message
// directly after it answers: its index and the unanswered ids ("" when none).
std::pair<size_t, std::string> first_unanswered_call(const std::vector<message>& sent,
                                                     size_t from) {
  for (size_t i = from; i < sent.size(); ++i) {
    if (sent[i].role != msg_role::assistant || sent[i].tool_calls.empty())
      continue;
    std::string missing;
    for (const auto& call : sent[i].tool_calls) {
      bool answered = false;
      for (size_t j = i + 1; j < sent.size() && sent[j].role == msg_role::tool && !answered; ++j)
        answered = sent[j].tool_call_id == call.id;
      if (!answered)
        missing += (missing.empty() ? "" : ", ") + call.id;
    }
    if (!missing.empty())
      return {i, missing};
  }
  return {sent.size(), {}};
}

} // namespace

std::optional<std::string> unmatched_summary(const std::vector<message>& sent, size_t known) {
  for (size_t i = known; i < sent.size(); ++i)
    if (sent[i].is_summary)
      return "message " + std::to_string(i) + " is a summary of rows "
             + std::to_string(sent[i].replaced_first_id) + "-"
             + std::to_string(sent[i].replaced_last_id)
             + " that do not follow the messages before it in this session's history";
  return std::nullopt;
}

std::optional<new_messages> split_new_messages(const std::vector<message>& sent, size_t known,
                                               std::string& why, bool allow_unanswered) {
  assert(known <= sent.size());
  new_messages out;
  if (known == sent.size()) {
    why = "no new message to answer";
    return std::nullopt;
  }
  if (!allow_unanswered) {
    auto [at, ids] = first_unanswered_call(sent, known);
    // A call of the last message (an assistant's, refused below) is not yet due.
    if (!ids.empty() && at + 1 < sent.size()) {
      why = "message " + std::to_string(at) + " has tool call(s) without a result directly "
            "after it (" + ids + ")";
      return std::nullopt;
    }
  }
  if (auto refused = unmatched_summary(sent, known)) {
    why = *refused;
    return std::nullopt;
  }
  size_t end = sent.size();
  const auto& last = sent.back();
  if (last.role == msg_role::user) {
    out.user_content = last.content;
    --end;
  } else if (last.role == msg_role::tool) {
    while (end > known && sent[end - 1].role == msg_role::tool)
      --end;
    out.tool_results.assign(sent.begin() + static_cast<std::ptrdiff_t>(end), sent.end());
  } else {
    why = "the last message must be a user or tool message, not " + std::string{to_string(last.role)};
    return std::nullopt;
  }
  out.appended.assign(sent.begin() + static_cast<std::ptrdiff_t>(known),
                      sent.begin() + static_cast<std::ptrdiff_t>(end));
  return out;
}

} // namespace mneme
