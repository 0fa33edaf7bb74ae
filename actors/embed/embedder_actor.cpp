// The embedder; see embedder_actor.hpp. Glue around policies/embed_plan.hpp (what to
// embed, batch sizes, back-off) and actors/llm/embedding_wire.hpp (the call).
//
// Background states (one step at a time, `busy` while a step's request is out):
//   start   -> read the watermarks (st_emstate)                 -> read
//   read    -> rows above the watermark of `source` (st_emrows)  -> call | store | next
//   call    -> the provider (loop thread, em_done)               -> store | read | wait
//   store   -> vectors + watermark, one transaction (st_emput)   -> index, read
//   next    -> messages exhausted: facts; facts exhausted: idle (idle_poll_ms), then read
//   wait    -> backing off until resume_at (em_tick of the armed generation), then read
// Invariants: 1. at most one background provider call in flight;
//             2. a tick of an older generation than the last armed one is ignored, so
//                timers never pile up (delayed_send cannot be cancelled);
//             3. the watermark moves only in the transaction that stores its vectors.
#include "actors/embed/embedder_actor.hpp"

#include <array>
#include <optional>
#include <unordered_map>

#include <spdlog/sinks/null_sink.h>

#include "messages/llm_errc.hpp"
#include "policies/client_text.hpp"
#include "policies/embed_plan.hpp"

namespace mneme {

namespace {

using clock = std::chrono::steady_clock;
using vectors = std::vector<std::vector<float>>;

using embedder_impl = embedder_actor::extend<caf::reacts_to<em_done_atom, int64_t, vectors>,
                                             caf::reacts_to<em_done_atom, int64_t, caf::error>>;

constexpr std::chrono::seconds storage_timeout{120};

struct batch_in_flight {
  int64_t call = 0;
  int32_t source = embed_source_message;
  std::vector<embed_candidate> rows; // the rows sent, in order
  int64_t through = 0;               // the read's scanned_through
  std::size_t read_rows = 0;
};

struct embedder_state {
  static inline const char* name = "embedder";
  embedder_config cfg;
  storage_actor storage;
  std::shared_ptr<vector_index> index;
  std::shared_ptr<embed_metrics> metrics;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<llm::curl_multi_loop> loop;
  std::unordered_map<int64_t, caf::typed_response_promise<std::vector<float>>> queries;
  std::optional<batch_in_flight> batch;
  bool busy = false;
  bool started = false;
  int32_t source = embed_source_message;
  std::array<int64_t, 2> through{{0, 0}};
  std::size_t batch_size = 1;
  int64_t failures = 0;
  clock::time_point resume_at{};
  int64_t tick_gen = 0;
  int64_t next_call = 1;

  ~embedder_state() {
    for (auto& [id, rp] : queries)
      rp.deliver(caf::make_error(errc::shutting_down, "embedder stopped"));
  }
};

using embedder_pointer = embedder_impl::stateful_pointer<embedder_state>;

void step(embedder_pointer self);

// Arms the tick of a new generation after `delay` (invariant 2).
void arm(embedder_pointer self, clock::duration delay) {
  auto& st = self->state;
  ++st.tick_gen;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(delay);
  if (ms.count() <= 0)
    self->send(self, em_tick_atom_v, st.tick_gen);
  else
    self->delayed_send(self, ms, em_tick_atom_v, st.tick_gen);
}

void back_off(embedder_pointer self, const caf::error& err, std::optional<int64_t> retry_after) {
  auto& st = self->state;
  ++st.failures;
  const auto& p = st.cfg.params;
  auto wait = backoff_ms(st.failures, p.backoff_initial_ms, p.backoff_max_ms, retry_after);
  st.resume_at = clock::now() + std::chrono::milliseconds{wait};
  if (st.metrics)
    st.metrics->backing_off.store(1, std::memory_order_relaxed);
  st.log->warn("session=- event=embed_backoff failures={} wait_ms={} code={}", st.failures, wait,
               to_string(static_cast<errc>(err.code())));
  st.log->debug("session=- event=embed_failure detail={}", log_quoted(render_error(err)));
  st.busy = false;
  arm(self, std::chrono::milliseconds{wait});
}

void recovered(embedder_pointer self) {
  auto& st = self->state;
  if (st.failures > 0)
    st.log->info("session=- event=embed_resumed after_failures={}", st.failures);
  st.failures = 0;
  if (st.metrics)
    st.metrics->backing_off.store(0, std::memory_order_relaxed);
}

void update_index_gauges(embedder_state& st) {
  if (!st.metrics)
    return;
  st.metrics->index_vectors.store(static_cast<int64_t>(st.index->size()),
                                  std::memory_order_relaxed);
  st.metrics->index_bytes.store(static_cast<int64_t>(st.index->memory_bytes()),
                                std::memory_order_relaxed);
}

// Submits texts to the provider; the outcome comes back as em_done(call, ...).
void submit(embedder_pointer self, int64_t call, const std::vector<std::string>& texts,
            std::chrono::milliseconds total) {
  auto& st = self->state;
  auto http = llm::build_embedding_call(st.cfg.endpoint, texts, total);
  auto addr = self->address();
  st.loop->submit(std::move(http), [addr, call, n = texts.size(),
                                    dims = st.cfg.endpoint.dimensions,
                                    key = st.cfg.endpoint.api_key](llm::http_outcome out) {
    caf::expected<vectors> result{caf::error{}};
    try {
      result = llm::read_embedding_outcome(out, n, dims, key);
    } catch (const std::exception& e) { // never let it kill the loop thread
      result = caf::make_error(errc::internal, std::string{"reading the answer: "} + e.what());
    }
    auto me = caf::actor_cast<embedder_impl>(addr);
    if (!me)
      return;
    if (result)
      caf::anon_send(me, em_done_atom_v, call, std::move(*result));
    else
      caf::anon_send(me, em_done_atom_v, call, std::move(result.error()));
  });
}

void set_backlog(embedder_state& st, const embed_progress& p) {
  if (st.metrics)
    st.metrics->backlog.store(p.messages_backlog + p.facts_backlog, std::memory_order_relaxed);
}

// Stores a batch's vectors (or none: skipped rows) and moves the watermark.
void store(embedder_pointer self, embed_write w) {
  auto& st = self->state;
  auto added = std::make_shared<embed_write>(w);
  self->request(st.storage, storage_timeout, st_emput_atom_v, std::move(w))
    .then(
      [=](int64_t through) {
        auto& st = self->state;
        auto src = added->source == embed_source_fact ? vector_source::fact
                                                      : vector_source::message;
        for (const auto& r : added->rows)
          st.index->add(r.user_id, src, r.id, r.vec);
        update_index_gauges(st);
        if (st.metrics && !added->rows.empty())
          st.metrics->embedded_rows[static_cast<std::size_t>(added->source)].fetch_add(
            added->rows.size(), std::memory_order_relaxed);
        st.through[static_cast<std::size_t>(added->source)] = through;
        st.busy = false;
        arm(self, clock::duration::zero());
      },
      [=](caf::error& err) {
        if (self->state.metrics)
          self->state.metrics->store_failures.fetch_add(1, std::memory_order_relaxed);
        back_off(self, err, std::nullopt);
      });
}

// Nothing above the watermark of the current source.
void source_done(embedder_pointer self) {
  auto& st = self->state;
  if (st.source == embed_source_message) {
    st.source = embed_source_fact;
    st.busy = false;
    arm(self, clock::duration::zero());
    return;
  }
  st.source = embed_source_message;
  self->request(st.storage, storage_timeout, st_emstate_atom_v, st.cfg.endpoint.model,
                static_cast<int32_t>(st.cfg.endpoint.dimensions))
    .then(
      [=](embed_progress& p) {
        set_backlog(self->state, p);
        self->state.busy = false;
        arm(self, std::chrono::milliseconds{self->state.cfg.params.idle_poll_ms});
      },
      [=](caf::error& err) { back_off(self, err, std::nullopt); });
}

void on_rows(embedder_pointer self, embed_candidates& c) {
  auto& st = self->state;
  if (c.rows.empty()) {
    source_done(self);
    return;
  }
  batch_in_flight b;
  b.source = st.source;
  b.through = c.scanned_through;
  b.read_rows = c.rows.size();
  std::vector<std::string> texts;
  for (auto& row : c.rows) {
    if (!worth_embedding(row.role, row.is_summary, row.active, row.text))
      continue;
    texts.push_back(embed_input(row.text, static_cast<std::size_t>(st.cfg.params.max_input_chars)));
    row.text.clear();
    b.rows.push_back(std::move(row));
  }
  if (texts.empty()) { // only rows not worth a vector: move past them
    store(self, embed_write{st.cfg.endpoint.model, static_cast<int32_t>(st.cfg.endpoint.dimensions),
                            b.source, b.through, {}});
    return;
  }
  b.call = st.next_call++;
  if (st.metrics)
    st.metrics->provider_calls.fetch_add(1, std::memory_order_relaxed);
  auto total = std::chrono::seconds{st.cfg.params.total_ceiling_seconds};
  st.batch = std::move(b);
  submit(self, st.batch->call, texts, total);
}

void step(embedder_pointer self) {
  auto& st = self->state;
  if (st.busy)
    return;
  if (clock::now() < st.resume_at) {
    arm(self, st.resume_at - clock::now());
    return;
  }
  st.busy = true;
  if (!st.started) {
    self->request(st.storage, storage_timeout, st_emstate_atom_v, st.cfg.endpoint.model,
                  static_cast<int32_t>(st.cfg.endpoint.dimensions))
      .then(
        [=](embed_progress& p) {
          auto& st = self->state;
          st.through = {{p.messages_through, p.facts_through}};
          st.started = true;
          set_backlog(st, p);
          st.log->info("session=- event=embedder_started model={} dims={} messages_through={} "
                       "facts_through={} backlog={} stored={}",
                       st.cfg.endpoint.model, st.cfg.endpoint.dimensions, p.messages_through,
                       p.facts_through, p.messages_backlog + p.facts_backlog, p.stored_vectors);
          st.busy = false;
          arm(self, clock::duration::zero());
        },
        [=](caf::error& err) { back_off(self, err, std::nullopt); });
    return;
  }
  self->request(st.storage, storage_timeout, st_emrows_atom_v, st.source,
                st.through[static_cast<std::size_t>(st.source)],
                static_cast<int64_t>(st.batch_size))
    .then([=](embed_candidates& c) { on_rows(self, c); },
          [=](caf::error& err) { back_off(self, err, std::nullopt); });
}

void on_batch_vectors(embedder_pointer self, vectors& vs) {
  auto& st = self->state;
  auto b = std::move(*st.batch);
  st.batch.reset();
  recovered(self);
  st.batch_size = after_success(st.batch_size, static_cast<std::size_t>(st.cfg.params.batch_size));
  embed_write w{st.cfg.endpoint.model, static_cast<int32_t>(st.cfg.endpoint.dimensions), b.source,
                b.through, {}};
  w.rows.reserve(b.rows.size());
  for (std::size_t i = 0; i < b.rows.size() && i < vs.size(); ++i)
    w.rows.push_back(stored_vector{b.rows[i].id, std::move(b.rows[i].user_id), std::move(vs[i])});
  store(self, std::move(w));
}

void on_batch_error(embedder_pointer self, caf::error& err) {
  auto& st = self->state;
  auto b = std::move(*st.batch);
  st.batch.reset();
  auto kind = llm_kind_of(static_cast<errc>(err.code())).value_or(llm_error_kind::network);
  if (st.metrics)
    st.metrics->record_failure(kind);
  switch (on_failure(kind, b.rows.size())) {
    case embed_action::split:
      st.batch_size = after_split(b.read_rows);
      st.log->info("session=- event=embed_split kind={} rows={} next_batch={}", to_string(kind),
                   b.rows.size(), st.batch_size);
      st.busy = false;
      arm(self, clock::duration::zero());
      return;
    case embed_action::skip:
      if (st.metrics)
        st.metrics->skipped_rows.fetch_add(b.rows.size(), std::memory_order_relaxed);
      st.log->warn("session=- event=embed_skipped row={} kind={}",
                   b.rows.empty() ? 0 : b.rows.front().id, to_string(kind));
      store(self, embed_write{st.cfg.endpoint.model,
                              static_cast<int32_t>(st.cfg.endpoint.dimensions), b.source,
                              b.through, {}});
      return;
    case embed_action::back_off:
      back_off(self, err, upstream_retry_after_of(err));
      return;
  }
}

embedder_impl::behavior_type embedder_behavior(embedder_pointer self, embedder_config cfg,
                                               storage_actor storage,
                                               std::shared_ptr<vector_index> index,
                                               std::shared_ptr<embed_metrics> metrics,
                                               std::shared_ptr<spdlog::logger> log) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.storage = std::move(storage);
  st.index = std::move(index);
  st.metrics = std::move(metrics);
  st.log = log ? std::move(log)
               : std::make_shared<spdlog::logger>(
                   "embed", std::make_shared<spdlog::sinks::null_sink_mt>());
  st.loop = std::make_unique<llm::curl_multi_loop>("llm-embed");
  st.batch_size = static_cast<std::size_t>(std::max<int64_t>(1, st.cfg.params.batch_size));
  if (st.metrics)
    st.metrics->enabled.store(true, std::memory_order_relaxed);
  update_index_gauges(st);
  arm(self, clock::duration::zero());
  return {
    [=](em_query_atom, std::string& text) -> caf::result<std::vector<float>> {
      auto& st = self->state;
      auto count_failure = [&] {
        if (st.metrics)
          st.metrics->query_failures.fetch_add(1, std::memory_order_relaxed);
      };
      if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        count_failure();
        return caf::make_error(errc::bad_request, "embedder: the query is empty");
      }
      if (clock::now() < st.resume_at) {
        count_failure();
        return caf::make_error(errc::overloaded,
                               "embedder: backing off from a failing provider");
      }
      if (st.queries.size() >= max_query_calls) {
        count_failure();
        return caf::make_error(errc::overloaded, "embedder: " + std::to_string(max_query_calls)
                                                   + " query embeddings in flight");
      }
      auto rp = self->make_response_promise<std::vector<float>>();
      auto call = st.next_call++;
      st.queries.emplace(call, rp);
      submit(self, call,
             {embed_input(text, static_cast<std::size_t>(st.cfg.params.max_input_chars))},
             std::chrono::milliseconds{st.cfg.params.query_timeout_ms});
      return rp;
    },
    [=](em_tick_atom, int64_t gen) {
      if (gen == self->state.tick_gen)
        step(self);
    },
    [=](em_done_atom, int64_t call, vectors& vs) {
      auto& st = self->state;
      if (st.batch && st.batch->call == call) {
        on_batch_vectors(self, vs);
        return;
      }
      auto q = st.queries.find(call);
      if (q == st.queries.end())
        return;
      if (st.metrics)
        st.metrics->query_embeds.fetch_add(1, std::memory_order_relaxed);
      if (vs.size() == 1)
        q->second.deliver(std::move(vs.front()));
      else
        q->second.deliver(caf::make_error(errc::llm_malformed, "embedder: no query vector"));
      st.queries.erase(q);
    },
    [=](em_done_atom, int64_t call, caf::error& err) {
      auto& st = self->state;
      if (st.batch && st.batch->call == call) {
        on_batch_error(self, err);
        return;
      }
      auto q = st.queries.find(call);
      if (q == st.queries.end())
        return;
      if (st.metrics)
        st.metrics->query_failures.fetch_add(1, std::memory_order_relaxed);
      st.log->debug("session=- event=query_embed_failed code={}",
                    to_string(static_cast<errc>(err.code())));
      q->second.deliver(std::move(err));
      st.queries.erase(q);
    },
  };
}

} // namespace

llm::embedding_endpoint embedding_endpoint_of(const embedding_params& p,
                                              const std::string& base_url,
                                              const std::string& api_key) {
  llm::embedding_endpoint e;
  e.url = llm::embeddings_url(base_url);
  e.api_key = api_key;
  e.model = p.model;
  e.dimensions = static_cast<std::size_t>(p.dimensions);
  e.send_dimensions = p.send_dimensions;
  e.idle_timeout = std::chrono::seconds{p.timeout_seconds};
  e.total_timeout = std::chrono::seconds{p.total_ceiling_seconds};
  return e;
}

embedder_actor spawn_embedder(caf::actor_system& sys, embedder_config cfg, storage_actor storage,
                              std::shared_ptr<vector_index> index,
                              std::shared_ptr<embed_metrics> metrics,
                              std::shared_ptr<spdlog::logger> log) {
  auto impl = sys.spawn(embedder_behavior, std::move(cfg), std::move(storage), std::move(index),
                        std::move(metrics), std::move(log));
  return caf::actor_cast<embedder_actor>(impl);
}

caf::expected<int64_t> rebuild_vector_index(caf::actor_system& sys, const storage_actor& storage,
                                            const std::string& model, int32_t dims,
                                            vector_index& index,
                                            std::chrono::milliseconds page_timeout) {
  index.clear();
  caf::scoped_actor self{sys};
  int64_t loaded = 0;
  for (int32_t source : {embed_source_message, embed_source_fact}) {
    auto src = source == embed_source_fact ? vector_source::fact : vector_source::message;
    int64_t after = 0;
    for (;;) {
      caf::error failed;
      std::vector<stored_vector> page;
      self->request(storage, page_timeout, st_emload_atom_v, model, dims, source, after,
                    rebuild_page_rows)
        .receive([&](std::vector<stored_vector>& rows) { page = std::move(rows); },
                 [&](caf::error& err) { failed = std::move(err); });
      if (failed)
        return failed;
      for (const auto& v : page)
        index.add(v.user_id, src, v.id, v.vec);
      loaded += static_cast<int64_t>(page.size());
      if (static_cast<int64_t>(page.size()) < rebuild_page_rows)
        break;
      after = page.back().id;
    }
  }
  return loaded;
}

} // namespace mneme
