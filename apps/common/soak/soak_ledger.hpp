// What a soak run saw, shared between the driver actor (which records every message it
// sends and every reply) and the main thread (which reads it for the progress line, the
// continuous checks and the final report). Every member function locks one mutex; the
// driver's critical sections are a few map updates, so the lock is never held long.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "apps/common/soak/soak_text.hpp"
#include "messages/session_messages.hpp"
#include "policies/soak_checks.hpp"
#include "policies/soak_tool_checks.hpp"

namespace mneme::soak {

// One planted marker and where it was planted.
struct planted_marker {
  std::string marker;
  std::string user_id;
  std::string session_id;    // the session that answered the turn
  bool cjk = false;
  std::string tag;           // the message's tag: the end check finds its sessions by it
};

// One committed compaction (seen in the runtime's counters; session_key is empty when
// only the counters saw it).
struct compaction_event {
  double t_s = 0;
  std::string session_key;
  trigger by = trigger::none;
  bool used_fallback = false;
  int64_t tokens_before = 0;
  int64_t tokens_after = 0;
};

// One answered (or failed) turn.
struct turn_event {
  float t_s = 0;          // floats: a long run records millions of these
  float latency_ms = 0;
  bool ok = false;
};

// The first time a session exceeded the live bound (one per session).
struct live_peak {
  std::string session_key;
  std::string session_id;
  int64_t live_tokens = 0;
  double t_s = 0;
};

class soak_ledger {
 public:
  explicit soak_ledger(int64_t users)
    : sent_(static_cast<size_t>(users)), last_live_(static_cast<size_t>(users), 0) {}

  // Driver side.
  // REQUIRES: for each user, seq = 0, 1, 2, ... in order (planned_message::tag's).
  void sent(int64_t user, int64_t seq, const planned_message& m);
  void answered(int64_t user, int64_t seq, const std::string& key, const planned_message& m,
                const std::string& user_id, const turn_reply& r, double t_s,
                double latency_ms);
  // A live context seen by polling the session's state (turns that fail report none).
  void observe_live(int64_t user, const std::string& key, int64_t live_tokens);
  // Committed compactions seen from the runtime's counters (every path, failed turns
  // included), for the totals and the plot.
  void compacted(const compaction_event& e);
  // A tool result appended through the gateway (no model call) and acknowledged.
  void appended(int64_t user, int64_t seq, const planned_message& m, const std::string& user_id);
  // A turn or an append that came back with an error (or none in time).
  void failed(const std::string& error_name, double t_s, double latency_ms, bool timed_out,
              bool was_turn);

  // Model tool loops (soak_agent.hpp), driver side.
  // A reply to tool_results: an answered turn of the loop (session, live tokens, latency).
  void continued(int64_t user, const std::string& key, const turn_reply& r, double t_s,
                 double latency_ms);
  // The results the runner sends (one record each, not acknowledged yet); returns the
  // index of the first, for tool_results_acknowledged.
  size_t tool_results_sent(std::vector<sent_record> records);
  void tool_results_acknowledged(size_t first, size_t n);
  void loop_started();
  void loop_ended(const tool_loop_record& r);

  // Main-thread side (copies under the lock).
  struct progress {
    int64_t sent = 0, answered = 0, appended = 0, failed = 0, failed_appends = 0, timeouts = 0,
            resets = 0, compactions = 0, fallback_compactions = 0, sessions = 0;
    int64_t loops_started = 0, loops_ended = 0, tool_rounds = 0, tool_results = 0;
    int64_t max_live_tokens = 0;
    std::string max_live_key;
  };
  progress snapshot() const;
  std::vector<int64_t> last_live_tokens() const;
  std::vector<turn_event> turns_since(size_t& cursor) const;
  std::vector<compaction_event> compactions() const;
  std::vector<sent_record> sent_records() const;
  std::vector<planted_marker> markers() const;
  std::map<std::string, int64_t> errors() const;
  std::vector<turn_event> turns() const;
  std::map<std::string, int64_t> live_peaks() const;  // largest live tokens by key
  std::map<std::string, std::string> last_session_ids() const; // key -> session id
  std::vector<sent_record> tool_records() const;        // every tool result sent
  std::vector<tool_loop_record> loops() const;          // every loop that ended
  // The ledger's own heap use, estimated: the RSS check subtracts it, so the runner's
  // growing records do not read as a leak of the runtime.
  int64_t approx_bytes() const;

  std::atomic<bool> stopping{false};
  std::atomic<int64_t> in_flight{0};

 private:
  void observe_live_locked(int64_t user, const std::string& key, int64_t live_tokens);
  // The session that answered a turn of `key`: a new id under a known key is a reset.
  void note_session_locked(const std::string& key, const std::string& session_id);

  mutable std::mutex mu_;
  struct sent_entry {
    uint64_t content_hash = 0;
    bool acknowledged = false;
  };
  std::vector<std::vector<sent_entry>> sent_;   // [user][seq]
  std::vector<planted_marker> markers_;
  std::vector<compaction_event> compactions_;
  std::vector<turn_event> turns_;
  std::map<std::string, int64_t> errors_;
  std::map<std::string, int64_t> peaks_;
  std::map<std::string, std::string> session_ids_;
  std::vector<int64_t> last_live_;
  std::vector<sent_record> tool_sent_;
  std::vector<tool_loop_record> loops_;
  progress totals_;
};

} // namespace mneme::soak
