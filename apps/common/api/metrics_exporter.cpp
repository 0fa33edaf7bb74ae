// The runtime's Prometheus text exposition; see metrics_exporter.hpp.
//
// Decisions where the SPEC is silent:
//   - Histograms keep the runtime's millisecond bounds, rendered in seconds; the
//     storage batch histogram uses the storage actor's row limits (1, 4, ..., 512).
//   - Counters that never moved are still rendered (every trigger x outcome pair is
//     not: only pairs with a count, so the exposition stays short); summary failure
//     kinds likewise only when non-zero.
//   - A supervisor or pool that does not answer within metrics_ask_timeout leaves its
//     samples out; a database that cannot be read leaves the SQL gauges out.
//   - cooldowns_active / anti_thrash_locks_active count open sessions only, against the
//     runtime's clock.
#include "apps/common/api/metrics_exporter.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include "policies/external_compaction.hpp"
#include "store/sqlite/store_reader.hpp"
#include "store/sqlite/store_stats.hpp"

namespace mneme::api {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

using labels = std::vector<std::pair<std::string, std::string>>;

std::string lowercase(std::string_view s) {
  std::string out{s};
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

ClientMetric with_labels(const labels& ls) {
  ClientMetric m;
  for (auto& [k, v] : ls)
    m.label.push_back({k, v});
  return m;
}

class families {
 public:
  MetricFamily& family(const std::string& name, const std::string& help, MetricType type) {
    for (auto& f : out_)
      if (f.name == name)
        return f;
    out_.push_back(MetricFamily{name, help, type, {}});
    return out_.back();
  }

  void counter(const std::string& name, const std::string& help, double v,
               const labels& ls = {}) {
    auto m = with_labels(ls);
    m.counter.value = v;
    family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }

  void gauge(const std::string& name, const std::string& help, double v,
             const labels& ls = {}) {
    auto m = with_labels(ls);
    m.gauge.value = v;
    family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }

  void latency(const std::string& name, const std::string& help, const latency_histogram& h) {
    ClientMetric m;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < latency_histogram::bounds_ms.size(); ++i) {
      cumulative += h.buckets[i].load(std::memory_order_relaxed);
      m.histogram.bucket.push_back({cumulative, latency_histogram::bounds_ms[i] / 1000.0});
    }
    cumulative += h.buckets.back().load(std::memory_order_relaxed);
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    // The count is the buckets' total so that +Inf == count even while a writer is
    // between its bucket and its count increment.
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum =
      static_cast<double>(h.sum_us.load(std::memory_order_relaxed)) / 1e6;
    family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }

  void batch_rows(const std::string& name, const std::string& help, const storage_metrics& s) {
    ClientMetric m;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < storage_metrics::bucket_limits.size(); ++i) {
      cumulative += static_cast<uint64_t>(s.batch_buckets[i].load(std::memory_order_relaxed));
      m.histogram.bucket.push_back(
        {cumulative, static_cast<double>(storage_metrics::bucket_limits[i])});
    }
    cumulative += static_cast<uint64_t>(s.batch_buckets.back().load(std::memory_order_relaxed));
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = static_cast<double>(s.appended_rows.load(std::memory_order_relaxed));
    family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }

  void retention(const std::string& name, const std::string& help,
                 const retention_histogram& h) {
    ClientMetric m;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < retention_histogram::bounds.size(); ++i) {
      cumulative += h.buckets[i].load(std::memory_order_relaxed);
      m.histogram.bucket.push_back({cumulative, retention_histogram::bounds[i]});
    }
    m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum =
      static_cast<double>(h.sum_millionths.load(std::memory_order_relaxed)) / 1e6;
    family(name, help, MetricType::Histogram).metric.push_back(std::move(m));
  }

  const std::vector<MetricFamily>& all() const { return out_; }

 private:
  std::vector<MetricFamily> out_;
};

template <class T, class Handle, class Atom>
std::optional<T> ask(caf::actor_system& sys, const Handle& h, Atom atom,
                     std::chrono::milliseconds timeout) {
  if (!h)
    return std::nullopt;
  std::optional<T> out;
  caf::scoped_actor self{sys};
  self->request(h, timeout, atom)
    .receive([&](T& x) { out = std::move(x); }, [&](caf::error&) {});
  return out;
}

void add_runtime_counters(families& f, const runtime_metrics& rm) {
  for (size_t t = 0; t < runtime_metrics::trigger_slots; ++t)
    for (size_t o = 0; o < runtime_metrics::outcome_slots; ++o) {
      auto n = rm.compactions[t][o].load(std::memory_order_relaxed);
      if (n == 0)
        continue;
      f.counter("mneme_compactions_total", "Compactions by trigger and outcome.",
                static_cast<double>(n),
                {{"trigger", lowercase(to_string(static_cast<trigger>(t)))},
                 {"outcome", to_label(static_cast<compaction_outcome_label>(o))}});
    }
  f.family("mneme_compactions_total", "Compactions by trigger and outcome.",
           MetricType::Counter);
  f.counter("mneme_compaction_tokens_before_total",
            "Live context tokens (local estimate) before committed compactions.",
            static_cast<double>(rm.tokens_before_total.load(std::memory_order_relaxed)));
  f.counter("mneme_compaction_tokens_after_total",
            "Live context tokens (local estimate) after committed compactions.",
            static_cast<double>(rm.tokens_after_total.load(std::memory_order_relaxed)));
  f.latency("mneme_summarizer_latency_seconds",
            "Summarizer round trips, failed ones included.", rm.summarizer_latency);
  f.family("mneme_summary_failures_total", "Failed summarizer calls by error kind.",
           MetricType::Counter);
  for (size_t i = 0; i < runtime_metrics::errc_slots; ++i) {
    auto n = rm.summary_failures[i].load(std::memory_order_relaxed);
    if (n != 0)
      f.counter("mneme_summary_failures_total", "Failed summarizer calls by error kind.",
                static_cast<double>(n), {{"kind", to_string(static_cast<errc>(i))}});
  }
  f.counter("mneme_summarizer_auth_failures_total",
            "Summarizer answers refusing the credentials or quota (401, 403, quota): "
            "compactions aborted without a fallback summary.",
            static_cast<double>(rm.summarizer_auth_failures.load(std::memory_order_relaxed)));
  f.counter("mneme_exhaustion_resets_total",
            "Sessions restarted from their latest summary after compaction exhaustion.",
            static_cast<double>(rm.exhaustion_resets.load(std::memory_order_relaxed)));
  // Node mode (docs/scale-out.md): zero with one daemon per database.
  f.gauge("mneme_leases_held", "Session-key leases this node holds.",
          static_cast<double>(rm.leases_held.load(std::memory_order_relaxed)));
  f.counter("mneme_leases_acquired_total", "Session-key leases granted to this node.",
            static_cast<double>(rm.leases_acquired.load(std::memory_order_relaxed)));
  f.counter("mneme_leases_taken_over_total",
            "Leases granted by taking over another node's expired lease.",
            static_cast<double>(rm.leases_taken_over.load(std::memory_order_relaxed)));
  f.counter("mneme_leases_lost_total",
            "Leases this node lost to another node (its writes to those keys stop).",
            static_cast<double>(rm.leases_lost.load(std::memory_order_relaxed)));
  f.counter("mneme_requests_forwarded_total",
            "Requests sent to the node serving their session key.",
            static_cast<double>(rm.requests_forwarded.load(std::memory_order_relaxed)));
  f.counter("mneme_forward_failures_total",
            "Forwarded requests whose owner node did not answer (503 to the client).",
            static_cast<double>(rm.forward_failures.load(std::memory_order_relaxed)));
  f.counter("mneme_turns_total", "Inbound messages answered or failed by the gateway.",
            static_cast<double>(rm.turns.load(std::memory_order_relaxed)));
  f.counter("mneme_turn_errors_total", "Inbound messages answered with an error.",
            static_cast<double>(rm.turn_errors.load(std::memory_order_relaxed)));
  f.latency("mneme_turn_latency_seconds", "One inbound message, gateway in to reply out.",
            rm.turn_latency);
  const char* ctx_help = "Context service requests answered (/context, /usage, /model_error).";
  const char* ctx_err_help = "Context service requests answered with an error.";
  f.family("mneme_context_requests_total", ctx_help, MetricType::Counter);
  f.family("mneme_context_errors_total", ctx_err_help, MetricType::Counter);
  for (size_t i = 0; i < runtime_metrics::context_op_slots; ++i) {
    labels op{{"op", std::string{to_string(static_cast<context_op>(i))}}};
    f.counter("mneme_context_requests_total", ctx_help,
              static_cast<double>(rm.context_requests[i].load(std::memory_order_relaxed)), op);
    f.counter("mneme_context_errors_total", ctx_err_help,
              static_cast<double>(rm.context_errors[i].load(std::memory_order_relaxed)), op);
  }
  f.latency("mneme_search_latency_seconds", "Recall searches.", rm.search_latency);
  if (!rm.storage)
    return;
  auto& s = *rm.storage;
  f.counter("mneme_storage_group_commits_total", "Group commits of the storage actor.",
            static_cast<double>(s.group_commits.load(std::memory_order_relaxed)));
  f.counter("mneme_messages_appended_total", "Message rows appended durably.",
            static_cast<double>(s.appended_rows.load(std::memory_order_relaxed)));
  f.counter("mneme_append_failures_total",
            "Append requests answered with an error (their insert or their group's COMMIT "
            "failed).",
            static_cast<double>(s.failed_appends.load(std::memory_order_relaxed)));
  // Every {op, errc} pair from the start, at 0: a rate over the first failure is defined.
  const char* failures_help = "Failed storage operations by where they failed and the error.";
  for (size_t op = 0; op < storage_op_slots; ++op)
    for (size_t e = 0; e < counted_storage_errcs.size(); ++e)
      f.counter("mneme_storage_failures_total", failures_help,
                static_cast<double>(s.failures.at(static_cast<storage_op>(op), e)),
                {{"op", to_label(static_cast<storage_op>(op))},
                 {"errc", to_string(counted_storage_errcs[e])}});
  f.batch_rows("mneme_storage_batch_rows", "Rows per group commit.", s);
  f.latency("mneme_storage_commit_latency_seconds",
            "One group commit, BEGIN to durable COMMIT.", s.commit_latency);
  f.gauge("mneme_index_backlog_rows", "Committed rows not yet in the full-text indexes.",
          static_cast<double>(s.unindexed_rows.load(std::memory_order_relaxed)));
  f.gauge("mneme_index_tick_cap_bytes",
          "Text bytes the next full-text index transaction may take (less after a full disk).",
          static_cast<double>(s.index_cap_bytes.load(std::memory_order_relaxed)));
  f.gauge("mneme_index_tick_cap_rows",
          "Rows the next full-text index transaction may take (less after a full disk).",
          static_cast<double>(s.index_cap_rows.load(std::memory_order_relaxed)));
  f.counter("mneme_index_ticks_skipped_for_space_total",
            "Index ticks not run: free space below database.index_free_space_reserve_bytes.",
            static_cast<double>(s.index_ticks_skipped_for_space.load(std::memory_order_relaxed)));
  f.gauge("mneme_wal_pages", "Write-ahead log length after the writer's last commit, in pages.",
          static_cast<double>(s.wal_pages.load(std::memory_order_relaxed)));
  f.counter("mneme_wal_checkpoints_total", "Write-ahead log checkpoints by who ran them.",
            static_cast<double>(s.wal_checkpoints_background.load(std::memory_order_relaxed)),
            {{"by", "checkpointer"}});
  f.counter("mneme_wal_checkpoints_total", "Write-ahead log checkpoints by who ran them.",
            static_cast<double>(s.wal_checkpoints_inline.load(std::memory_order_relaxed)),
            {{"by", "writer"}});
}

double value(const std::atomic<int64_t>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}
double value(const std::atomic<uint64_t>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}

// The special paths of docs/special-paths.md and the memory tiers of docs/memory.md.
void add_path_counters(families& f, const runtime_metrics& rm) {
  f.counter("mneme_tool_output_evictions_total",
            "Answered tool outputs replaced by the eviction marker.", value(rm.evicted_outputs));
  f.counter("mneme_tool_output_eviction_chars_reclaimed_total",
            "Characters of evicted tool outputs minus those of their markers.",
            value(rm.eviction_chars_reclaimed));
  f.counter("mneme_oversized_rows_total",
            "Rows larger than compression.max_row_share of the window replaced by a marker.",
            value(rm.oversized_rows));
  for (size_t i = 0; i < runtime_metrics::prune_slots; ++i)
    f.counter("mneme_proactive_prunes_total", "Proactive pruning attempts by outcome.",
              value(rm.prune_runs[i]),
              {{"outcome", to_label(static_cast<prune_outcome_label>(i))}});
  f.counter("mneme_proactive_prune_tokens_reclaimed_total",
            "Tokens (local estimate) reclaimed by committed proactive pruning.",
            value(rm.prune_tokens_reclaimed));
  f.counter("mneme_micro_compaction_folds_total",
            "Exchanges folded into a session's rolling summary.", value(rm.micro_folds));
  f.counter("mneme_micro_compaction_reconciles_total",
            "Stores brought in line with folds whose sync had failed.",
            value(rm.micro_reconciles));
  f.counter("mneme_micro_compaction_sync_failures_total",
            "Fold syncs and reconciles the store refused (the folds stand in memory).",
            value(rm.micro_sync_failures));
  const char* ext_help = "External compactions by mode (who compacts) and outcome.";
  f.family("mneme_external_compactions_total", ext_help, MetricType::Counter);
  for (size_t m = 0; m < runtime_metrics::compactor_slots; ++m)
    for (size_t o = 0; o < runtime_metrics::external_slots; ++o) {
      auto n = rm.external_compactions[m][o].load(std::memory_order_relaxed);
      if (n != 0)
        f.counter("mneme_external_compactions_total", ext_help, static_cast<double>(n),
                  {{"mode", std::string{to_string(static_cast<compactor>(m))}},
                   {"outcome", to_label(static_cast<external_outcome_label>(o))}});
    }
  const char* guard_help = "Window guard activations (SPEC 5.6): a request over the window "
                           "compacted first, or the turn failed as unfittable.";
  f.family("mneme_window_guard_total", guard_help, MetricType::Counter);
  for (size_t i = 0; i < runtime_metrics::window_guard_slots; ++i)
    f.counter("mneme_window_guard_total", guard_help,
              static_cast<double>(rm.window_guard[i].load(std::memory_order_relaxed)),
              {{"outcome", to_label(static_cast<window_guard_label>(i))}});
  const char* attempt_help = "Compaction attempts written to the compaction log, by outcome "
                             "and mode (who wrote the summary).";
  f.family("mneme_compaction_attempts_total", attempt_help, MetricType::Counter);
  for (size_t o = 0; o < runtime_metrics::attempt_outcome_slots; ++o)
    for (size_t m = 0; m < runtime_metrics::attempt_mode_slots; ++m) {
      auto n = rm.compaction_attempts[o][m].load(std::memory_order_relaxed);
      if (n != 0)
        f.counter("mneme_compaction_attempts_total", attempt_help, static_cast<double>(n),
                  {{"outcome", compaction_outcomes[o]}, {"mode", compaction_modes[m]}});
    }
  f.retention("mneme_compaction_retention_ratio",
              "Share of the replaced rows' identifiers a committed summary kept "
              "(compactions whose middle had identifiers).",
              rm.retention);
  f.counter("mneme_skill_loads_total", "Skills appended to a session.", value(rm.skill_loads));
  f.counter("mneme_skill_unloads_total", "Skills replaced by their unload marker.",
            value(rm.skill_unloads));
  if (!rm.storage)
    return;
  const auto& s = *rm.storage;
  f.counter("mneme_cold_storage_files_written_total",
            "Ended sessions written to cold storage as JSONL.", value(s.cold_files_written));
  f.counter("mneme_cold_storage_failures_total",
            "Cold storage writes that failed (retried by the next sweep).",
            value(s.cold_write_failures));
  f.counter("mneme_cold_storage_retries_total",
            "Cold storage writes tried again after a failed one.", value(s.cold_retries));
  f.counter("mneme_fact_puts_total", "Facts added or replaced.", value(s.fact_puts));
  f.counter("mneme_fact_removes_total", "Facts removed (kept as tombstones).",
            value(s.fact_removes));
}


// Semantic recall (issue 48): only while the embeddings block is on.
void add_embedding_counters(families& f, const embed_metrics& e) {
  if (!e.enabled.load(std::memory_order_relaxed))
    return;
  const char* rows_help = "Rows embedded and stored, by source (message, fact).";
  f.counter("mneme_embedded_rows_total", rows_help, value(e.embedded_rows[0]),
            {{"source", "message"}});
  f.counter("mneme_embedded_rows_total", rows_help, value(e.embedded_rows[1]),
            {{"source", "fact"}});
  f.counter("mneme_embedding_skipped_rows_total",
            "Rows the provider refused even alone; found by full text only.",
            value(e.skipped_rows));
  f.counter("mneme_embedding_calls_total", "Provider calls of the background embedder.",
            value(e.provider_calls));
  const char* fail_help = "Failed provider calls of the background embedder, by kind.";
  f.family("mneme_embedding_failures_total", fail_help, MetricType::Counter);
  for (size_t k = 0; k < embed_metrics::kind_slots; ++k) {
    auto n = e.provider_failures[k].load(std::memory_order_relaxed);
    if (n != 0)
      f.counter("mneme_embedding_failures_total", fail_help, static_cast<double>(n),
                {{"kind", std::string{to_string(static_cast<llm_error_kind>(k))}}});
  }
  f.counter("mneme_embedding_store_failures_total",
            "Batches of vectors the storage actor refused (retried).", value(e.store_failures));
  f.gauge("mneme_embedding_backlog_rows", "Rows above the embedder's watermarks.",
          value(e.backlog));
  f.gauge("mneme_embedding_backing_off", "1 while the embedder waits out a failing provider.",
          value(e.backing_off));
  f.gauge("mneme_vector_index_vectors", "Vectors in the in-process index.",
          value(e.index_vectors));
  f.gauge("mneme_vector_index_bytes", "Memory of the in-process vector index.",
          value(e.index_bytes));
  f.counter("mneme_query_embeds_total", "Search queries embedded.", value(e.query_embeds));
  f.counter("mneme_query_embed_failures_total",
            "Search queries whose embedding failed (searched by full text only).",
            value(e.query_failures));
  const char* skipped_help = "Searches that wanted a vector leg and ran on full text only, by"
                             " reason (provider_failed, timed_out).";
  f.counter("mneme_search_vector_skipped_total", skipped_help, value(e.vector_legs_skipped[0]),
            {{"reason", "provider_failed"}});
  f.counter("mneme_search_vector_skipped_total", skipped_help, value(e.vector_legs_skipped[1]),
            {{"reason", "timed_out"}});
}

void add_supervisor(families& f, const supervisor_stats& s) {
  f.gauge("mneme_sessions_hosted", "Session actors resident now.",
          static_cast<double>(s.hosted));
  f.counter("mneme_sessions_spawned_total", "Session actors spawned or rehydrated.",
            static_cast<double>(s.spawned));
  f.counter("mneme_session_restarts_total", "Crashed session actors restarted.",
            static_cast<double>(s.restarts));
  f.counter("mneme_compaction_exhausted_total",
            "Turns that spent every compaction attempt without the context fitting, as "
            "reported to the supervisor.",
            static_cast<double>(s.exhausted));
}

void add_pool(families& f, const std::string& pool, const llm_pool_stats& s) {
  labels ls{{"pool", pool}};
  f.gauge("mneme_llm_in_flight", "LLM calls running now.", static_cast<double>(s.in_flight),
          ls);
  f.gauge("mneme_llm_queued", "LLM calls waiting for a slot.", static_cast<double>(s.queued),
          ls);
  f.counter("mneme_llm_failed_total", "LLM calls answered with an error.",
            static_cast<double>(s.failed), ls);
  f.counter("mneme_llm_overloaded_total", "LLM calls refused because the queue was full.",
            static_cast<double>(s.overloaded), ls);
}

void add_store(families& f, const runtime& rt) {
  const auto& params = rt.config().database;
  // Figures read from the SQLite file only (PostgreSQL: not yet, docs/scale-out.md).
  if (params.backend != store_backend::sqlite || params.path.empty() || params.path == ":memory:")
    return;
  auto reader = store_reader::open(params);
  if (!reader)
    return;
  auto counts = count_sessions((*reader)->connection(), rt.config().clock());
  if (!counts)
    return;
  f.gauge("mneme_sessions_stored", "Sessions in the database, ended ones included.",
          static_cast<double>(counts->stored));
  f.gauge("mneme_sessions_open", "Sessions in the database not ended.",
          static_cast<double>(counts->open));
  f.gauge("mneme_cooldowns_active",
          "Open sessions in a summary failure cooldown (persisted trigger state).",
          static_cast<double>(counts->cooldowns_active));
  f.gauge("mneme_anti_thrash_locks_active",
          "Open sessions under an anti-thrash lock (persisted trigger state).",
          static_cast<double>(counts->locks_active));
}

} // namespace

std::string render_counters_text(const runtime_metrics& rm) {
  families f;
  add_runtime_counters(f, rm);
  add_path_counters(f, rm);
  if (rm.embeddings)
    add_embedding_counters(f, *rm.embeddings);
  std::ostringstream out;
  prometheus::TextSerializer{}.Serialize(out, f.all());
  return out.str();
}

std::string render_metrics_text(caf::actor_system& sys, const mneme::runtime& rt,
                                std::chrono::milliseconds ask_timeout) {
  families f;
  if (auto sv = ask<supervisor_stats>(sys, rt.supervisor(), sv_stats_atom_v, ask_timeout))
    add_supervisor(f, *sv);
  add_store(f, rt);
  if (rt.metrics()) {
    add_runtime_counters(f, *rt.metrics());
    add_path_counters(f, *rt.metrics());
    if (rt.metrics()->embeddings)
      add_embedding_counters(f, *rt.metrics()->embeddings);
  }
  if (auto chat = ask<llm_pool_stats>(sys, rt.chat_pool(), llm_stats_atom_v, ask_timeout))
    add_pool(f, "chat", *chat);
  if (auto sum = ask<llm_pool_stats>(sys, rt.summary_pool(), llm_stats_atom_v, ask_timeout))
    add_pool(f, "summarizer", *sum);
  if (rt.hygiene_pool()) // only when configured (T3/T4 summaries, own timeouts)
    if (auto hy = ask<llm_pool_stats>(sys, rt.hygiene_pool(), llm_stats_atom_v, ask_timeout))
      add_pool(f, "hygiene", *hy);
  std::ostringstream out;
  prometheus::TextSerializer{}.Serialize(out, f.all());
  return out.str();
}

} // namespace mneme::api
