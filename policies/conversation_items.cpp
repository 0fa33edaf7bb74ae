// The items of the Conversations API; see conversation_items.hpp.
#include "policies/conversation_items.hpp"

#include <algorithm>

namespace mneme {

namespace {

// A row id written by conversation_item_id: 1..18 decimal digits, no leading zero.
std::optional<int64_t> parse_row_id(std::string_view text) {
  if (text.empty() || text.size() > 18 || text.front() == '0')
    return std::nullopt;
  int64_t v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9')
      return std::nullopt;
    v = v * 10 + (ch - '0');
  }
  return v;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

} // namespace

std::string conversation_item_id(const conversation_item_ref& ref) {
  auto row = std::to_string(ref.row_id);
  switch (ref.kind) {
    case conversation_item_kind::message: return "msg_" + row;
    case conversation_item_kind::function_call:
      return "fc_" + row + "_" + std::to_string(ref.call_index);
    case conversation_item_kind::function_call_output: return "fco_" + row;
  }
  return {};
}

std::optional<conversation_item_ref> parse_conversation_item_id(std::string_view id) {
  conversation_item_ref ref;
  std::optional<int64_t> row;
  if (starts_with(id, "msg_")) {
    row = parse_row_id(id.substr(4));
  } else if (starts_with(id, "fco_")) {
    ref.kind = conversation_item_kind::function_call_output;
    row = parse_row_id(id.substr(4));
  } else if (starts_with(id, "fc_")) {
    ref.kind = conversation_item_kind::function_call;
    auto rest = id.substr(3);
    auto sep = rest.find('_');
    if (sep == std::string_view::npos)
      return std::nullopt;
    row = parse_row_id(rest.substr(0, sep));
    auto index = rest.substr(sep + 1);
    if (index == "0") {
      ref.call_index = 0;
    } else {
      auto k = parse_row_id(index);
      if (!k || *k > 100000)
        return std::nullopt;
      ref.call_index = static_cast<size_t>(*k);
    }
  }
  if (!row)
    return std::nullopt;
  ref.row_id = *row;
  return ref;
}

std::vector<conversation_item_ref> conversation_items_of(const message& row) {
  std::vector<conversation_item_ref> out;
  if (row.role == msg_role::tool) {
    out.push_back({row.id, conversation_item_kind::function_call_output, 0});
    return out;
  }
  if (!row.content.empty() || row.tool_calls.empty())
    out.push_back({row.id, conversation_item_kind::message, 0});
  if (row.role == msg_role::assistant)
    for (size_t k = 0; k < row.tool_calls.size(); ++k)
      out.push_back({row.id, conversation_item_kind::function_call, k});
  return out;
}

item_page page_of_items(const std::vector<std::string>& ids, const item_page_request& rq) {
  item_page page;
  std::vector<size_t> order(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    order[i] = rq.ascending ? i : ids.size() - 1 - i;
  size_t start = 0;
  if (!rq.after.empty()) {
    auto at = std::find_if(order.begin(), order.end(),
                           [&](size_t i) { return ids[i] == rq.after; });
    if (at == order.end()) {
      page.after_found = false;
      return page;
    }
    start = static_cast<size_t>(at - order.begin()) + 1;
  }
  auto limit = static_cast<size_t>(std::max<int64_t>(0, rq.limit));
  for (size_t k = start; k < order.size() && page.indexes.size() < limit; ++k)
    page.indexes.push_back(order[k]);
  page.has_more = start + page.indexes.size() < order.size();
  return page;
}

std::vector<message> response_input_rows(const std::vector<message>& visible_before_answer,
                                         int64_t previous_answer_id,
                                         bool continued_conversation) {
  const auto& rows = visible_before_answer;
  size_t from = 0;
  if (previous_answer_id > 0) {
    while (from < rows.size() && rows[from].id <= previous_answer_id)
      ++from;
  } else if (continued_conversation) {
    for (size_t i = rows.size(); i > 0; --i)
      if (rows[i - 1].role == msg_role::assistant) {
        from = i;
        break;
      }
  }
  return {rows.begin() + static_cast<std::ptrdiff_t>(from), rows.end()};
}

item_deletion plan_item_deletion(const std::vector<message>& rows) {
  item_deletion plan;
  if (rows.empty() || rows.front().state() == row_state::rolled_back
      || rows.front().is_summary) {
    plan.refusal = "the item is not in the conversation";
    return plan;
  }
  const auto& item = rows.front();
  if (item.state() != row_state::live) {
    plan.refusal = "the item was compacted (its row is archived behind a summary): only the "
                   "items after the session's latest compaction can be deleted";
    return plan;
  }
  plan.rollback_mark = item.id - 1;
  bool later_non_tool = false;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& m = rows[i];
    if (m.state() == row_state::rolled_back)
      continue;
    if (m.is_summary || m.state() != row_state::live) {
      plan.refusal = "a compaction after the item replaced rows: only the items after the "
                     "session's latest compaction can be deleted";
      return plan;
    }
    if (m.role == msg_role::tool)
      for (const auto& call : item.tool_calls)
        if (call.id == m.tool_call_id) {
          plan.refusal = "its function call '" + call.id
                         + "' has an output after it: delete the output (and what follows "
                           "it) first";
          return plan;
        }
    later_non_tool = later_non_tool || m.role != msg_role::tool;
    message copy = m;
    copy.id = 0;
    copy.session_id.clear();
    copy.replaced_first_id = copy.replaced_last_id = 0;
    plan.reappend.push_back(std::move(copy));
  }
  if (item.role == msg_role::tool && later_non_tool) {
    plan.refusal = "a function call output can be deleted only while nothing but other "
                   "outputs follows it (its call would be left unanswered)";
    plan.reappend.clear();
  }
  return plan;
}

} // namespace mneme
