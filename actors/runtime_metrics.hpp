// The runtime's counters (SPEC §8 metrics): what sessions, the gateway and the storage
// actor count while they work, as plain relaxed atomics. Actors write them from their
// own threads; the daemon's /metrics exporter (apps/common) and the soak runner read
// them from any thread. No dependency on a metrics library: the exporter renders them
// in the Prometheus text format.
//
// Owned by the runtime (actors/runtime.hpp creates one per runtime); every writer
// holds a shared_ptr and tolerates a null one (tests that spawn actors alone).
// Values are figures, not synchronization.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>

#include "actors/embed/embed_metrics.hpp"
#include "actors/latency_histogram.hpp"
#include "actors/retention_histogram.hpp"
#include "store/compaction_log.hpp"
#include "actors/storage/storage_metrics.hpp"
#include "messages/context_service.hpp"
#include "messages/errc.hpp"
#include "messages/trigger.hpp"
#include "policies/external_compaction.hpp"
#include "policies/summary_failure.hpp"

namespace mneme {

// How a compaction ended, as the metrics label it.
enum class compaction_outcome_label : uint8_t {
  committed = 0,   // the summarizer's summary was committed
  fallback,        // the local fallback summary was committed
  failed,          // aborted (abort_on_summary_failure) or the commit failed
  nothing,         // nothing to compact
  grew,            // not committed: the result would not have been smaller (size guard)
  count_
};

inline const char* to_label(compaction_outcome_label o) {
  switch (o) {
    case compaction_outcome_label::committed: return "committed";
    case compaction_outcome_label::fallback: return "fallback";
    case compaction_outcome_label::failed: return "failed";
    case compaction_outcome_label::nothing: return "nothing_to_compact";
    case compaction_outcome_label::grew: return "grew";
    case compaction_outcome_label::count_: break;
  }
  return "unknown";
}

// How an external compaction ended (SPEC §6 external modes), as the metrics label it:
// the server reported one in an answer, or the backend's compaction endpoint ran
// (its outcomes are those of a compaction).
enum class external_outcome_label : uint8_t {
  server_compacted = 0, // an answer reported a server-side compaction
  committed,            // the endpoint's compaction was committed
  fallback,             // the endpoint failed; the local fallback summary was committed
  failed,               // the endpoint's compaction did not commit
  nothing,              // nothing to compact
  count_
};

inline const char* to_label(external_outcome_label o) {
  switch (o) {
    case external_outcome_label::server_compacted: return "server_compacted";
    case external_outcome_label::committed: return "committed";
    case external_outcome_label::fallback: return "fallback";
    case external_outcome_label::failed: return "failed";
    case external_outcome_label::nothing: return "nothing_to_compact";
    case external_outcome_label::count_: break;
  }
  return "unknown";
}

inline external_outcome_label external_label_of(compaction_outcome_label o) {
  switch (o) {
    case compaction_outcome_label::committed: return external_outcome_label::committed;
    case compaction_outcome_label::fallback: return external_outcome_label::fallback;
    case compaction_outcome_label::nothing: return external_outcome_label::nothing;
    case compaction_outcome_label::failed:
    case compaction_outcome_label::grew:
    case compaction_outcome_label::count_: break;
  }
  return external_outcome_label::failed;
}

// What the window guard (SPEC §5.6) did when a request did not fit the window; a request
// that fits is not counted (docs/compaction-guards.md).
enum class window_guard_label : uint8_t {
  compacted_summarizer = 0, // compacted with the summarizer's summary (the call then fit)
  compacted_fallback,       // compacted with the local fallback summary
  unfittable,               // the turn failed with context_unfittable; nothing was sent
  count_
};

inline const char* to_label(window_guard_label o) {
  switch (o) {
    case window_guard_label::compacted_summarizer: return "compacted_summarizer";
    case window_guard_label::compacted_fallback: return "compacted_fallback";
    case window_guard_label::unfittable: return "unfittable";
    case window_guard_label::count_: break;
  }
  return "unknown";
}

// How a proactive pruning attempt ended.
enum class prune_outcome_label : uint8_t {
  committed = 0, // the replacements were committed
  skipped,       // due, but the plan was not worth it (or found nothing)
  refused,       // the store refused the commit; retried once the live context changes
  count_
};

inline const char* to_label(prune_outcome_label o) {
  switch (o) {
    case prune_outcome_label::committed: return "committed";
    case prune_outcome_label::skipped: return "skipped";
    case prune_outcome_label::refused: return "refused";
    case prune_outcome_label::count_: break;
  }
  return "unknown";
}

// Every table below is indexed by an enum's value and has a slot for each value, so no
// value is ever dropped: the enums numbered 0..count_-1 size their tables by count_ (a new
// value goes above count_ and grows the table), and errc, whose stable numbers are
// sparse, by every value of its one-byte underlying type (a wider errc fails the
// static_assert below instead of overflowing the table).
struct runtime_metrics {
  static constexpr size_t trigger_slots = trigger_count;
  static constexpr size_t outcome_slots = static_cast<size_t>(compaction_outcome_label::count_);
  static constexpr size_t errc_slots =
    size_t{std::numeric_limits<std::underlying_type_t<errc>>::max()} + 1;
  static_assert(errc_slots == 256, "summary_failures holds every value of a one-byte errc");

  // Sessions (written by session actors).
  std::array<std::array<std::atomic<uint64_t>, outcome_slots>, trigger_slots> compactions{};
  std::atomic<int64_t> tokens_before_total{0};  // live estimate before committed compactions
  std::atomic<int64_t> tokens_after_total{0};   // ... and after
  latency_histogram summarizer_latency;         // every summarizer round trip, failed too
  std::array<std::atomic<uint64_t>, errc_slots> summary_failures{}; // by errc value
  std::atomic<uint64_t> server_compactions{0};  // answers reporting a server-side compaction
  // Summarizer answers of 401/403/quota (policies/summary_failure.hpp) and the
  // summarizer's health for GET /v1/health.
  std::atomic<uint64_t> summarizer_auth_failures{0};
  std::atomic<uint8_t> summarizer_state{static_cast<uint8_t>(summarizer_health::ok)};
  static constexpr size_t window_guard_slots = static_cast<size_t>(window_guard_label::count_);
  std::array<std::atomic<uint64_t>, window_guard_slots> window_guard{}; // by window_guard_label

  void record_window_guard(window_guard_label o) {
    auto i = static_cast<size_t>(o);
    if (i < window_guard_slots)
      window_guard[i].fetch_add(1, std::memory_order_relaxed);
  }

  // The special paths (docs/special-paths.md), written by session actors.
  static constexpr size_t prune_slots = static_cast<size_t>(prune_outcome_label::count_);
  static constexpr size_t compactor_slots = static_cast<size_t>(compactor::count_);
  static constexpr size_t external_slots = static_cast<size_t>(external_outcome_label::count_);
  std::atomic<uint64_t> evicted_outputs{0};     // tool outputs replaced by the marker
  std::atomic<int64_t> eviction_chars_reclaimed{0}; // their characters minus the markers'
  std::atomic<uint64_t> oversized_rows{0};      // rows over max_row_share replaced by a marker
  std::array<std::atomic<uint64_t>, prune_slots> prune_runs{}; // by prune_outcome_label
  std::atomic<int64_t> prune_tokens_reclaimed{0}; // planned reclaim of committed runs
  std::atomic<uint64_t> micro_folds{0};         // rolling-summary folds applied
  std::atomic<uint64_t> micro_reconciles{0};    // store brought in line after failed syncs
  std::atomic<uint64_t> micro_sync_failures{0}; // fold syncs and reconciles the store refused
  // External compactions by compactor (mode) x outcome.
  std::array<std::array<std::atomic<uint64_t>, external_slots>, compactor_slots>
    external_compactions{};
  std::atomic<uint64_t> skill_loads{0};         // skills appended to a session
  std::atomic<uint64_t> skill_unloads{0};       // skills replaced by their unload marker

  void record_prune(prune_outcome_label o, int64_t tokens_reclaimed = 0) {
    auto i = static_cast<size_t>(o);
    if (i < prune_slots)
      prune_runs[i].fetch_add(1, std::memory_order_relaxed);
    if (o == prune_outcome_label::committed)
      prune_tokens_reclaimed.fetch_add(tokens_reclaimed, std::memory_order_relaxed);
  }

  void record_external(compactor mode, external_outcome_label o) {
    auto m = static_cast<size_t>(mode);
    auto i = static_cast<size_t>(o);
    if (m < compactor_slots && i < external_slots)
      external_compactions[m][i].fetch_add(1, std::memory_order_relaxed);
  }

  // Gateway.
  std::atomic<uint64_t> exhaustion_resets{0};
  std::atomic<uint64_t> turns{0};
  std::atomic<uint64_t> turn_errors{0};
  latency_histogram turn_latency;               // an inbound message, gateway in to reply out
  // The context service (issue 27 item 2) by context_op: requests answered, and those
  // answered with an error.
  static constexpr size_t context_op_slots = static_cast<size_t>(context_op::count_);
  std::array<std::atomic<uint64_t>, context_op_slots> context_requests{};
  std::array<std::atomic<uint64_t>, context_op_slots> context_errors{};

  void record_context(context_op op, bool failed) {
    auto i = static_cast<size_t>(op);
    if (i >= context_op_slots)
      return;
    context_requests[i].fetch_add(1, std::memory_order_relaxed);
    if (failed)
      context_errors[i].fetch_add(1, std::memory_order_relaxed);
  }

  // Recall (written by whoever awaits the recall pool: gateway, daemon).
  latency_histogram search_latency;

  // Node mode (issue 26 item 4): leases held now, granted (taken_over: from another
  // node's expired lease), lost (renewal found another token, or a write was fenced
  // off), and requests forwarded to a key's owner (by the HTTP API) and those whose
  // owner did not answer.
  std::atomic<int64_t> leases_held{0};
  std::atomic<uint64_t> leases_acquired{0};
  std::atomic<uint64_t> leases_taken_over{0};
  std::atomic<uint64_t> leases_lost{0};
  std::atomic<uint64_t> requests_forwarded{0};
  std::atomic<uint64_t> forward_failures{0};

  // The compaction log (issue 45), written by session actors: every logged attempt by
  // outcome x mode (the orders of store/compaction_log.hpp), and what committed
  // summaries kept of their middle's identifiers.
  static constexpr size_t attempt_outcome_slots = std::size(compaction_outcomes);
  static constexpr size_t attempt_mode_slots = std::size(compaction_modes);
  std::array<std::array<std::atomic<uint64_t>, attempt_mode_slots>, attempt_outcome_slots>
    compaction_attempts{};
  retention_histogram retention;

  void record_attempt(const compaction_log_entry& e) {
    size_t o = 0, m = 0;
    while (o < attempt_outcome_slots && e.outcome != compaction_outcomes[o])
      ++o;
    while (m < attempt_mode_slots && e.mode != compaction_modes[m])
      ++m;
    if (o < attempt_outcome_slots && m < attempt_mode_slots)
      compaction_attempts[o][m].fetch_add(1, std::memory_order_relaxed);
    if (e.outcome == std::string_view{"committed"} && e.identifiers_in > 0)
      retention.observe(e.identifiers_in, e.identifiers_kept);
  }

  // Storage: group commits, batch sizes, indexing backlog (written by the storage actor).
  std::shared_ptr<storage_metrics> storage = std::make_shared<storage_metrics>();
  // Semantic recall (issue 48): the embedder's counters (actors/embed).
  std::shared_ptr<embed_metrics> embeddings = std::make_shared<embed_metrics>();

  void record_compaction(trigger by, compaction_outcome_label outcome, int64_t before,
                         int64_t after) {
    auto t = static_cast<size_t>(by);
    auto o = static_cast<size_t>(outcome);
    if (t < trigger_slots && o < outcome_slots)
      compactions[t][o].fetch_add(1, std::memory_order_relaxed);
    if (outcome == compaction_outcome_label::committed
        || outcome == compaction_outcome_label::fallback) {
      tokens_before_total.fetch_add(before, std::memory_order_relaxed);
      tokens_after_total.fetch_add(after, std::memory_order_relaxed);
    }
  }

  // A summarizer call ended: `e` moves the health (policies/summary_failure.hpp).
  void record_summarizer(summarizer_event e) {
    if (e == summarizer_event::auth_failed)
      summarizer_auth_failures.fetch_add(1, std::memory_order_relaxed);
    auto now = static_cast<summarizer_health>(summarizer_state.load(std::memory_order_relaxed));
    summarizer_state.store(static_cast<uint8_t>(next_summarizer_health(now, e)),
                           std::memory_order_relaxed);
  }

  summarizer_health summarizer() const {
    return static_cast<summarizer_health>(summarizer_state.load(std::memory_order_relaxed));
  }

  // One auth error line per endpoint per minute across all sessions: true when
  // this one may be logged, with `suppressed` the lines held back before it.
  // The lock is held for one map lookup.
  bool allow_auth_failure_log(const std::string& endpoint, int64_t now_ms,
                              int64_t& suppressed) {
    std::lock_guard<std::mutex> lock{auth_log_mutex_};
    return auth_log_gate_.allow(endpoint, now_ms, suppressed);
  }

  void record_summary_failure(errc code) {
    summary_failures[static_cast<size_t>(code)].fetch_add(1, std::memory_order_relaxed);
  }

private:
  std::mutex auth_log_mutex_;
  keyed_interval_gate auth_log_gate_;
};

} // namespace mneme
