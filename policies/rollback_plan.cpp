// Rollback to a checkpoint; rules in rollback_plan.hpp.
#include "policies/rollback_plan.hpp"

#include <unordered_map>
#include <unordered_set>

namespace mneme {

namespace {

std::string validate(const rollback_checkpoint& cp) {
  if (cp.last_message_id < 0) return "checkpoint mark is negative";
  std::unordered_set<int64_t> seen;
  for (int64_t id : cp.live_ids) {
    if (id <= 0) return "checkpoint lists a row without id";
    if (id > cp.last_message_id)
      return "checkpoint lists row " + std::to_string(id) + " above its mark "
             + std::to_string(cp.last_message_id);
    if (!seen.insert(id).second) return "checkpoint lists row " + std::to_string(id) + " twice";
  }
  return {};
}

} // namespace

std::string_view to_string(rollback_outcome o) {
  switch (o) {
    case rollback_outcome::rollback: return "rollback";
    case rollback_outcome::nothing_to_roll_back: return "nothing_to_roll_back";
    case rollback_outcome::invalid_checkpoint: return "invalid_checkpoint";
    case rollback_outcome::pending_appends: return "pending_appends";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, rollback_outcome o) { return os << to_string(o); }

std::ostream& operator<<(std::ostream& os, const rollback_plan& p) {
  return os << "{outcome=" << p.outcome << " after=" << p.roll_back_after_id
            << " rolled_back_live=" << p.rolled_back_live_ids.size()
            << " revived=" << p.revived_ids.size() << " re_archived=" << p.re_archived_ids.size()
            << " restored=" << p.restored_live_ids.size() << "}";
}

rollback_plan plan_rollback(const std::vector<message>& live, const rollback_checkpoint& cp) {
  rollback_plan plan;
  plan.detail = validate(cp);
  if (!plan.detail.empty()) {
    plan.outcome = rollback_outcome::invalid_checkpoint;
    return plan;
  }
  for (const message& m : live)
    if (m.id == 0) {
      plan.outcome = rollback_outcome::pending_appends;
      plan.detail = "a live row is not stored yet";
      return plan;
    }
  plan.roll_back_after_id = cp.last_message_id;
  plan.restored_live_ids = cp.live_ids;
  bool same = live.size() == cp.live_ids.size();
  for (std::size_t i = 0; same && i < live.size(); ++i) same = live[i].id == cp.live_ids[i];
  if (same) return plan;

  const std::unordered_set<int64_t> was_live(cp.live_ids.begin(), cp.live_ids.end());
  std::unordered_set<int64_t> is_live;
  for (const message& m : live) {
    is_live.insert(m.id);
    if (m.id > cp.last_message_id)
      plan.rolled_back_live_ids.push_back(m.id);
    else if (!was_live.count(m.id))
      plan.re_archived_ids.push_back(m.id);
  }
  for (int64_t id : cp.live_ids)
    if (!is_live.count(id)) plan.revived_ids.push_back(id);
  plan.outcome = rollback_outcome::rollback;
  return plan;
}

std::optional<std::vector<message>> restore_live_context(const rollback_plan& plan,
                                                         const std::vector<message>& live,
                                                         const std::vector<message>& revived_rows) {
  std::unordered_map<int64_t, const message*> by_id;
  for (const message& m : revived_rows) by_id.emplace(m.id, &m);
  for (const message& m : live) by_id[m.id] = &m;
  std::vector<message> out;
  out.reserve(plan.restored_live_ids.size());
  for (int64_t id : plan.restored_live_ids) {
    const auto it = by_id.find(id);
    if (it == by_id.end()) return std::nullopt;
    out.push_back(*it->second);
    out.back().active = true;
    out.back().compacted = false;
  }
  return out;
}

} // namespace mneme
