// The system a soak run drives and checks, behind one interface so the run loop (the
// continuous checks, the progress line, the end-of-run checks and the report in
// soak_loop.hpp) is the same for an in-process runtime (soak_inprocess_target.hpp) and
// for a running daemon over HTTP (soak_http_target.hpp).
//
// Thread: every member function is called from the run loop's thread (main) only; the
// driver a target starts plays the users on its own threads (or actors) and shares
// nothing with the loop but the ledger.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "actors/runtime_metrics.hpp"
#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "caf/expected.hpp"
#include "messages/session_messages.hpp"
#include "messages/storage_types.hpp"

namespace mneme::soak {

// What the driver needs to play every simulated user.
struct drive_plan {
  std::shared_ptr<soak_ledger> ledger;
  int64_t users = 1;
  uint64_t seed = 1;
  int_range think_ms;
  message_mix mix;
  std::chrono::steady_clock::time_point t0;  // the run's time origin
};

// One session's state as polled by the continuous checks.
struct session_poll {
  std::string session_id;
  int64_t live_tokens = 0;
  int64_t compactions = 0;        // committed by this session actor, every trigger
  int64_t threshold_tokens = 0;   // the session's compaction threshold
  int64_t context_window = 0;     // the session's window: the live-context bound (SPEC §5.6)
};

// Committed compactions since the target started, by trigger (the runtime's counters).
struct compaction_counts {
  std::array<uint64_t, runtime_metrics::trigger_slots> committed{};
  std::array<uint64_t, runtime_metrics::trigger_slots> fallback{};
};

// What the fake LLM injected during the run.
struct fault_figures {
  bool injected_by_runner = true;      // false: --no-faults, the scenario's faults not set
  int64_t total = 0;
  std::map<std::string, int64_t> by_kind;
  int64_t chat_requests = 0;
  int64_t summary_requests = 0;
  // The fake LLM's tool-pairing audit of every request it received during the run
  // (policies/soak_tool_checks.hpp); audited = false when it could not be read.
  bool pairing_audited = false;
  int64_t orphan_tool_calls = 0;
  int64_t orphan_tool_results = 0;
  int64_t requests_with_orphans = 0;
};

// One recall hit of a marker search: the session it came from and whether the row it
// found is archived (compacted away from the live context).
struct marker_hit {
  std::string session_id;
  bool archived = false;
};

// The process's resident memory: as sampled, and with the runner's own records
// subtracted when the runner shares the process (in-process).
struct rss_figures {
  int64_t raw_bytes = 0;
  int64_t adjusted_bytes = 0;
};

class soak_target {
 public:
  virtual ~soak_target() = default;

  // Starts the users; the first message of every user leaves within one think time.
  virtual void start_driving(const drive_plan& plan) = 0;
  // Ends the driver once ledger.in_flight is 0 (or the drain gave up).
  virtual void stop_driving() = 0;
  // How long one turn may take before it counts as unanswered.
  virtual std::chrono::milliseconds turn_timeout() const = 0;
  // The target's gateway.max_tool_rounds; 0 when not known (a daemon's own setting).
  virtual int64_t max_tool_rounds() const { return 0; }

  // A session's state by key of `user` (its namespace: docs/api.md "Authentication");
  // nullopt when it could not be read now.
  virtual std::optional<session_poll> poll_session(const std::string& key,
                                                   const std::string& user) = 0;
  virtual std::optional<compaction_counts> compactions() = 0;
  virtual std::optional<supervisor_stats> supervisor() = 0;
  virtual std::optional<rss_figures> rss() = 0;
  // Several processes (`mneme soak --server URL1,URL2`): each one's RSS by its name, the
  // plateau checked per process; empty when the target is one process (rss() then).
  virtual std::vector<std::pair<std::string, int64_t>> rss_by_node() { return {}; }
  virtual fault_figures faults() = 0;
  // An error text when the target stopped answering (the daemon is down), else "".
  virtual std::string liveness_problem() = 0;

  // Every stored non-summary row of every session, for the ledger comparison; returns
  // the problems met (one text each), the rows that could be read are still visited.
  virtual std::vector<std::string> visit_stored_rows(
    const std::function<void(const std::string& session_id, const std::string& content)>&
      visit) = 0;
  // Every compaction log row (committed and not) of every session the run played, for
  // the retention plot; returns the problems met, the rows read are still visited.
  virtual std::vector<std::string> visit_compaction_log(
    const std::function<void(const compaction_log_entry& entry)>& visit) = 0;
  // Recall search of `query` within `user_id`'s sessions.
  virtual caf::expected<std::vector<marker_hit>> search(const std::string& user_id,
                                                         const std::string& query) = 0;

  // One turn of `user` under `key` (a channel message): the model's answer text.
  virtual caf::expected<std::string> ask(const std::string& key, const std::string& user,
                                         const std::string& text) = 0;

  // Stops what the target started (the runtime, the fake LLM); idempotent.
  virtual void shutdown() = 0;
};

} // namespace mneme::soak
