// The shared record of a soak run; see soak_ledger.hpp.
#include "apps/common/soak/soak_ledger.hpp"

#include <algorithm>
#include <cassert>

namespace mneme::soak {

void soak_ledger::sent(int64_t user, int64_t seq, const planned_message& m) {
  std::lock_guard<std::mutex> lock{mu_};
  auto& mine = sent_[static_cast<size_t>(user)];
  assert(static_cast<int64_t>(mine.size()) == seq);
  (void)seq;
  mine.push_back({content_hash(m.content), false});
  ++totals_.sent;
}

void soak_ledger::answered(int64_t user, int64_t seq, const std::string& key,
                           const planned_message& m, const std::string& user_id,
                           const turn_reply& r, double t_s, double latency_ms) {
  std::lock_guard<std::mutex> lock{mu_};
  sent_[static_cast<size_t>(user)][static_cast<size_t>(seq)].acknowledged = true;
  ++totals_.answered;
  turns_.push_back({static_cast<float>(t_s), static_cast<float>(latency_ms), true});
  note_session_locked(key, r.session_id);
  if (!m.latin_marker.empty())
    markers_.push_back({m.latin_marker, user_id, r.session_id, false, m.tag});
  if (!m.cjk_marker.empty())
    markers_.push_back({m.cjk_marker, user_id, r.session_id, true, m.tag});
  (void)t_s;
  observe_live_locked(user, key, r.live_tokens);
}

void soak_ledger::note_session_locked(const std::string& key, const std::string& session_id) {
  if (session_ids_.count(key) == 0)
    ++totals_.sessions;
  auto& known = session_ids_[key];
  if (!known.empty() && known != session_id)
    ++totals_.resets;
  known = session_id;
}

void soak_ledger::continued(int64_t user, const std::string& key, const turn_reply& r,
                            double t_s, double latency_ms) {
  std::lock_guard<std::mutex> lock{mu_};
  ++totals_.answered;
  turns_.push_back({static_cast<float>(t_s), static_cast<float>(latency_ms), true});
  note_session_locked(key, r.session_id);
  observe_live_locked(user, key, r.live_tokens);
}

size_t soak_ledger::tool_results_sent(std::vector<sent_record> records) {
  std::lock_guard<std::mutex> lock{mu_};
  auto first = tool_sent_.size();
  ++totals_.tool_rounds;
  totals_.tool_results += static_cast<int64_t>(records.size());
  for (auto& r : records)
    tool_sent_.push_back(std::move(r));
  return first;
}

void soak_ledger::tool_results_acknowledged(size_t first, size_t n) {
  std::lock_guard<std::mutex> lock{mu_};
  for (size_t i = first; i < first + n && i < tool_sent_.size(); ++i)
    tool_sent_[i].acknowledged = true;
}

void soak_ledger::loop_started() {
  std::lock_guard<std::mutex> lock{mu_};
  ++totals_.loops_started;
}

void soak_ledger::loop_ended(const tool_loop_record& r) {
  std::lock_guard<std::mutex> lock{mu_};
  ++totals_.loops_ended;
  loops_.push_back(r);
}

std::vector<sent_record> soak_ledger::tool_records() const {
  std::lock_guard<std::mutex> lock{mu_};
  return tool_sent_;
}

std::vector<tool_loop_record> soak_ledger::loops() const {
  std::lock_guard<std::mutex> lock{mu_};
  return loops_;
}

void soak_ledger::observe_live(int64_t user, const std::string& key, int64_t live_tokens) {
  std::lock_guard<std::mutex> lock{mu_};
  observe_live_locked(user, key, live_tokens);
}

void soak_ledger::observe_live_locked(int64_t user, const std::string& key,
                                      int64_t live_tokens) {
  last_live_[static_cast<size_t>(user)] = live_tokens;
  auto& peak = peaks_[key];
  peak = std::max(peak, live_tokens);
  if (live_tokens > totals_.max_live_tokens) {
    totals_.max_live_tokens = live_tokens;
    totals_.max_live_key = key;
  }
}

void soak_ledger::compacted(const compaction_event& e) {
  std::lock_guard<std::mutex> lock{mu_};
  compactions_.push_back(e);
  ++totals_.compactions;
  totals_.fallback_compactions += e.used_fallback ? 1 : 0;
}

void soak_ledger::appended(int64_t user, int64_t seq, const planned_message& m,
                           const std::string& user_id) {
  std::lock_guard<std::mutex> lock{mu_};
  sent_[static_cast<size_t>(user)][static_cast<size_t>(seq)].acknowledged = true;
  ++totals_.appended;
  // The append's answer carries no session id: the end check finds the row's session.
  if (!m.latin_marker.empty())
    markers_.push_back({m.latin_marker, user_id, "", false, m.tag});
}

void soak_ledger::failed(const std::string& error_name, double t_s, double latency_ms,
                         bool timed_out, bool was_turn) {
  std::lock_guard<std::mutex> lock{mu_};
  totals_.timeouts += timed_out ? 1 : 0;
  ++errors_[error_name];
  if (!was_turn) {
    ++totals_.failed_appends;
    return;
  }
  ++totals_.failed;
  turns_.push_back({static_cast<float>(t_s), static_cast<float>(latency_ms), false});
}

soak_ledger::progress soak_ledger::snapshot() const {
  std::lock_guard<std::mutex> lock{mu_};
  return totals_;
}

std::vector<int64_t> soak_ledger::last_live_tokens() const {
  std::lock_guard<std::mutex> lock{mu_};
  return last_live_;
}

std::vector<turn_event> soak_ledger::turns_since(size_t& cursor) const {
  std::lock_guard<std::mutex> lock{mu_};
  std::vector<turn_event> out(turns_.begin() + static_cast<std::ptrdiff_t>(
                                                 std::min(cursor, turns_.size())),
                              turns_.end());
  cursor = turns_.size();
  return out;
}

std::vector<compaction_event> soak_ledger::compactions() const {
  std::lock_guard<std::mutex> lock{mu_};
  return compactions_;
}

std::vector<sent_record> soak_ledger::sent_records() const {
  std::lock_guard<std::mutex> lock{mu_};
  std::vector<sent_record> out;
  for (size_t user = 0; user < sent_.size(); ++user)
    for (size_t seq = 0; seq < sent_[user].size(); ++seq)
      out.push_back({message_tag(static_cast<int64_t>(user), static_cast<int64_t>(seq)),
                     sent_[user][seq].content_hash, sent_[user][seq].acknowledged});
  return out;
}

int64_t soak_ledger::approx_bytes() const {
  std::lock_guard<std::mutex> lock{mu_};
  size_t n = turns_.capacity() * sizeof(turn_event)
             + compactions_.capacity() * sizeof(compaction_event)
             + markers_.capacity() * sizeof(planted_marker)
             + tool_sent_.capacity() * sizeof(sent_record)
             + loops_.capacity() * sizeof(tool_loop_record);
  for (const auto& r : tool_sent_)
    n += r.tag.capacity();
  for (const auto& v : sent_)
    n += v.capacity() * sizeof(sent_entry);
  for (const auto& m : markers_)
    n += m.marker.capacity() + m.session_id.capacity() + m.user_id.capacity()
         + m.tag.capacity();
  for (const auto& c : compactions_)
    n += c.session_key.capacity();
  return static_cast<int64_t>(n);
}

std::vector<planted_marker> soak_ledger::markers() const {
  std::lock_guard<std::mutex> lock{mu_};
  return markers_;
}

std::map<std::string, int64_t> soak_ledger::errors() const {
  std::lock_guard<std::mutex> lock{mu_};
  return errors_;
}

std::vector<turn_event> soak_ledger::turns() const {
  std::lock_guard<std::mutex> lock{mu_};
  return turns_;
}

std::map<std::string, int64_t> soak_ledger::live_peaks() const {
  std::lock_guard<std::mutex> lock{mu_};
  return peaks_;
}

std::map<std::string, std::string> soak_ledger::last_session_ids() const {
  std::lock_guard<std::mutex> lock{mu_};
  return session_ids_;
}

} // namespace mneme::soak
