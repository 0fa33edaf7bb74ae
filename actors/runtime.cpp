// The runtime facade; see runtime.hpp.
#include "actors/runtime.hpp"

#include <algorithm>

#include "store/pg/pg_store.hpp"

namespace mneme {

session_params session_params_of(const runtime_config& cfg) {
  session_params p;
  p.compression = cfg.compression;
  p.model = cfg.model;
  p.summary_model = cfg.summarizer.endpoint.model;
  p.summary_endpoint = cfg.summarizer.endpoint.url;
  if (cfg.hygiene)
    p.hygiene_endpoint = cfg.hygiene->endpoint.url;
  p.chat_timeout = llm::caller_timeout(cfg.chat);
  p.summary_timeout = llm::caller_timeout(cfg.summarizer);
  p.hygiene_timeout = llm::caller_timeout(cfg.hygiene ? *cfg.hygiene : cfg.summarizer);
  p.max_tool_rounds = cfg.gateway.max_tool_rounds;
  p.max_tool_calls_per_message = cfg.gateway.max_tool_calls_per_message;
  builtin_availability available;
  available.recall =
    cfg.database.backend == store_backend::postgres || cfg.database.path != ":memory:";
  available.skills = !cfg.gateway.skills_dir.empty();
  p.builtin_tools =
    resolve_builtin_tools(parse_builtin_tools(cfg.gateway.builtin_tools).set, available);
  p.builtin_result_max_bytes = cfg.gateway.builtin_result_max_bytes;
  if (cfg.embeddings)
    p.query_embed_timeout = std::chrono::milliseconds{cfg.embeddings->params.query_timeout_ms};
  p.clock = cfg.clock;
  p.log = cfg.log;
  p.metrics = cfg.metrics;
  return p;
}

namespace {

// The longest a summary may take: the summarizer's or the hygiene pool's deadline.
std::chrono::milliseconds summary_caller_timeout(const runtime_config& cfg) {
  auto t = llm::caller_timeout(cfg.summarizer);
  return cfg.hygiene ? std::max(t, llm::caller_timeout(*cfg.hygiene)) : t;
}

} // namespace

std::chrono::milliseconds runtime::turn_timeout() const {
  // A turn may wait for a storage write, a summary and two chat calls.
  return std::chrono::milliseconds{cfg_.gateway.request_timeout_seconds * 1000}
         + summary_caller_timeout(cfg_) + llm::caller_timeout(cfg_.chat);
}

caf::expected<std::unique_ptr<runtime>> runtime::start(caf::actor_system& sys,
                                                       runtime_config cfg) {
  if (!cfg.metrics)
    cfg.metrics = std::make_shared<runtime_metrics>();
  if (auto b = parse_builtin_tools(cfg.gateway.builtin_tools); !b.error.empty())
    return caf::make_error(errc::bad_request, b.error);
  if (!cfg.gateway.node_id.empty() && cfg.database.backend != store_backend::postgres)
    return caf::make_error(errc::config_invalid,
                           "gateway.node_id (several nodes) needs database.backend: postgres");
  cfg.database.node_id = cfg.gateway.node_id;
  cfg.database.node_lease_ms = cfg.gateway.lease_seconds * 1000;
  std::unique_ptr<runtime> rt{new runtime(sys, std::move(cfg))};
  if (!rt->cfg_.gateway.node_id.empty()) {
    lease_identity me{rt->cfg_.gateway.node_id, rt->cfg_.gateway.advertise_url,
                      rt->cfg_.gateway.lease_seconds * 1000};
    auto leases = spawn_lease_actor(sys, rt->cfg_.database, std::move(me), rt->cfg_.log,
                                    rt->cfg_.metrics);
    if (!leases)
      return std::move(leases.error());
    rt->leases_ = *leases;
  }
  if (rt->cfg_.embeddings) { // the storage actor's fact search reads it too
    rt->vectors_ = std::make_shared<vector_index>(rt->cfg_.embeddings->endpoint.dimensions);
    rt->cfg_.database.vectors = rt->vectors_;
  }
  auto storage = spawn_storage(sys, rt->cfg_.database, rt->cfg_.log, rt->cfg_.metrics->storage);
  if (!storage)
    return std::move(storage.error());
  rt->storage_ = *storage;
  rt->chat_ = llm::spawn_llm_pool(sys, rt->cfg_.chat, rt->cfg_.log);
  rt->summarizer_ = llm::spawn_llm_pool(sys, rt->cfg_.summarizer, rt->cfg_.log);
  if (rt->cfg_.hygiene)
    rt->hygiene_ = llm::spawn_llm_pool(sys, *rt->cfg_.hygiene, rt->cfg_.log);
  recall_vectors vectors;
  if (rt->cfg_.embeddings) {
    if (auto err = rt->start_embeddings(sys))
      return err;
    vectors.index = rt->vectors_;
    vectors.embedder = caf::actor_cast<query_embedder>(rt->embedder_);
    vectors.query_timeout = std::chrono::milliseconds{rt->cfg_.embeddings->params.query_timeout_ms};
    vectors.metrics = rt->cfg_.metrics->embeddings;
  }
  if (rt->cfg_.database.backend == store_backend::postgres
      || rt->cfg_.database.path != ":memory:") {
    auto recall = spawn_recall(sys, rt->cfg_.database, rt->cfg_.log, recall_pool_params{},
                               std::move(vectors));
    if (!recall)
      return std::move(recall.error());
    rt->recall_ = *recall;
  }
  supervisor_params sp;
  sp.session = session_params_of(rt->cfg_);
  sp.log = rt->cfg_.log;
  rt->supervisor_ = spawn_supervisor(sys, sp,
                                     session_deps{rt->storage_, rt->chat_, rt->summarizer_, {},
                                                  rt->hygiene_, rt->recall_,
                                                  caf::actor_cast<query_embedder>(
                                                    rt->embedder_)});
  gateway_config gc;
  gc.compression = rt->cfg_.compression;
  gc.model = rt->cfg_.model;
  gc.gateway = rt->cfg_.gateway;
  gc.turn_timeout = std::chrono::milliseconds{rt->cfg_.gateway.request_timeout_seconds * 1000}
                    + summary_caller_timeout(rt->cfg_);
  gc.clock = rt->cfg_.clock;
  gc.log = rt->cfg_.log;
  gc.metrics = rt->cfg_.metrics;
  gc.recall = rt->recall_;
  gc.leases = rt->leases_;
  rt->gateway_ = spawn_gateway(sys, gc, rt->storage_, rt->supervisor_);
  return rt;
}

caf::error runtime::start_embeddings(caf::actor_system& sys) {
  const auto& ec = *cfg_.embeddings;
  auto dims = static_cast<int32_t>(ec.endpoint.dimensions);
  auto loaded = rebuild_vector_index(sys, storage_, ec.endpoint.model, dims, *vectors_,
                                     std::chrono::minutes{5});
  if (!loaded)
    return std::move(loaded.error());
  auto log = cfg_.log ? cfg_.log->clone("embed") : nullptr;
  if (log)
    log->info("session=- event=vector_index_rebuilt model={} dims={} vectors={} bytes={}",
              ec.endpoint.model, dims, *loaded, vectors_->memory_bytes());
  embedder_ = spawn_embedder(sys, ec, storage_, vectors_, cfg_.metrics->embeddings,
                             std::move(log));
  return {};
}

void runtime::stop() {
  if (stopped_)
    return;
  stopped_ = true;
  caf::scoped_actor self{sys_};
  for (auto a : {caf::actor_cast<caf::actor>(gateway_), caf::actor_cast<caf::actor>(recall_),
                 caf::actor_cast<caf::actor>(embedder_),
                 caf::actor_cast<caf::actor>(supervisor_),
                 caf::actor_cast<caf::actor>(chat_), caf::actor_cast<caf::actor>(summarizer_),
                 caf::actor_cast<caf::actor>(hygiene_)}) {
    if (!a)
      continue;
    self->monitor(a);
    self->send_exit(a, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {});
  }
  if (storage_) { // sessions may still have writes queued ahead of the exit
    self->monitor(storage_);
    self->send_exit(storage_, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {});
  }
  if (leases_) { // last: gives every lease up once nothing of this node writes any more
    self->monitor(leases_);
    self->send_exit(leases_, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {});
  }
  gateway_ = nullptr;
  recall_ = nullptr;
  embedder_ = nullptr;
  supervisor_ = nullptr;
  chat_ = nullptr;
  summarizer_ = nullptr;
  hygiene_ = nullptr;
  leases_ = nullptr;
  storage_ = nullptr;
}

runtime::~runtime() { stop(); }

} // namespace mneme
