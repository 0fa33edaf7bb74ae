// The LLM pool actor: bounded concurrency, bounded FIFO, per-request deadlines, HTTP on
// the pool's curl-multi loop; see llm_pool.hpp.
//
// Invariants (pool actor only):
//   1. running_.size() <= cfg.max_concurrency and queue_.size() <= cfg.max_queue.
//   2. Every accepted request is answered exactly once: by its llm_done message, by its
//      queue expiry, or by overload at arrival.
//   3. queue_ is ordered by deadline (all deadlines are arrival + the same total), so
//      only its front can be the next to expire.
#include "actors/llm/llm_pool.hpp"

#include <cassert>
#include <deque>
#include <unordered_map>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "actors/llm/curl_multi_loop.hpp"
#include "actors/llm/llm_call.hpp"
#include "actors/llm/llm_errors.hpp"
#include "actors/llm/messages_sse_answer.hpp"
#include "actors/llm/sse_answer.hpp"
#include "policies/client_text.hpp"

namespace mneme::llm {

namespace {

using clock = std::chrono::steady_clock;

using pool_impl_actor = llm_pool_actor::extend<
  caf::reacts_to<llm_done_atom, uint64_t, chat_answer>,
  caf::reacts_to<llm_done_atom, uint64_t, caf::error>, caf::reacts_to<llm_tick_atom>>;

struct waiting_call {
  uint64_t id = 0;
  chat_request req;
  clock::time_point deadline;
  caf::typed_response_promise<chat_answer> rp;
};

struct running_call {
  caf::typed_response_promise<chat_answer> rp;
  std::string session; // for log lines only
  llm_purpose purpose = llm_purpose::chat;
};

struct pool_state {
  static inline const char* name = "llm_pool";
  llm_pool_config cfg;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<curl_multi_loop> loop; // declared after cfg: stopped before it dies
  std::deque<waiting_call> queue_;
  std::unordered_map<uint64_t, running_call> running_;
  uint64_t next_id = 1;
  bool tick_armed = false;
  llm_pool_stats stats;

  // Whatever ends the pool (exit message, last handle dropped), no requester is left
  // waiting: pending requests are answered before the loop stops (invariant 2).
  ~pool_state() {
    for (auto& job : queue_)
      job.rp.deliver(caf::make_error(errc::shutting_down, "LLM pool " + cfg.name + " stopped"));
    for (auto& [id, call] : running_)
      call.rp.deliver(caf::make_error(errc::shutting_down, "LLM pool " + cfg.name + " stopped"));
  }
};

using pool_pointer = pool_impl_actor::stateful_pointer<pool_state>;

// min_call_budget, but never more than a quarter of a (test-sized) total timeout.
clock::duration call_budget(const pool_state& st) {
  return std::min<clock::duration>(min_call_budget, st.cfg.endpoint.total_timeout / 4);
}

std::string session_of(const chat_request& req) {
  return req.messages.empty() ? std::string{"-"} : req.messages.back().session_id;
}

void start_call(pool_pointer self, waiting_call job, clock::duration left) {
  auto& st = self->state;
  auto total = std::chrono::duration_cast<std::chrono::milliseconds>(left);
  if (total.count() <= 0)
    total = std::chrono::milliseconds{1};
  auto call = build_http_call(st.cfg.endpoint, job.req, total);
  // A streamed answer is read while it arrives, on the loop thread (sse_answer.hpp,
  // messages_sse_answer.hpp).
  std::shared_ptr<streamed_answer> stream;
  auto api = st.cfg.endpoint.api;
  if (job.req.stream && job.req.purpose == llm_purpose::chat) {
    if (api == llm_api::anthropic)
      stream = std::make_shared<messages_sse_answer>(job.req.sink);
    else
      stream = std::make_shared<sse_answer>(job.req.sink);
    call.on_body_piece = [stream](std::string_view piece) { stream->feed(piece); };
  }
  if (job.req.sink)
    call.cancelled = [sink = job.req.sink] { return sink->cancelled(); };
  running_call rc{std::move(job.rp), session_of(job.req), job.req.purpose};
  st.running_.emplace(job.id, std::move(rc));
  st.stats.in_flight = st.running_.size();
  st.stats.max_in_flight = std::max(st.stats.max_in_flight, st.stats.in_flight);
  // The completion runs on the loop thread: read the outcome there, then hand the result
  // to the pool through its mailbox. A weak address: the loop must not keep the pool alive.
  auto addr = self->address();
  st.loop->submit(std::move(call), [addr, id = job.id, purpose = job.req.purpose,
                                    key = st.cfg.endpoint.api_key, stream, api](http_outcome out) {
    caf::expected<chat_answer> result{caf::error{}};
    try {
      result = read_http_outcome(out, purpose, key, stream.get(), api);
    } catch (const std::exception& e) { // e.g. bad_alloc: never let it kill the loop thread
      result = caf::make_error(errc::internal, std::string{"reading the answer: "} + e.what());
    }
    auto pool = caf::actor_cast<pool_impl_actor>(addr);
    if (!pool)
      return;
    if (result)
      caf::anon_send(pool, llm_done_atom_v, id, std::move(*result));
    else
      caf::anon_send(pool, llm_done_atom_v, id, std::move(result.error()));
  });
}

void arm_tick(pool_pointer self) {
  auto& st = self->state;
  if (st.tick_armed || st.queue_.empty())
    return;
  st.tick_armed = true;
  auto wait = st.queue_.front().deadline - call_budget(st) - clock::now();
  self->delayed_send(self, std::max<clock::duration>(wait, std::chrono::milliseconds{1}),
                     llm_tick_atom_v);
}

// Answers every queued request with less than min_call_budget left before its deadline
// (invariant 3: from the front). Starting such a call could not end in an answer.
void expire_queue(pool_pointer self, clock::time_point now) {
  auto& st = self->state;
  while (!st.queue_.empty() && st.queue_.front().deadline - call_budget(st) <= now) {
    auto job = std::move(st.queue_.front());
    st.queue_.pop_front();
    ++st.stats.failed;
    ++st.stats.expired_in_queue;
    st.log->warn("session={} pool={} event=expired_in_queue queued={}", session_of(job.req),
                 st.cfg.name, st.queue_.size());
    job.rp.deliver(make_llm_error(
      llm_error_kind::total_timeout,
      "deadline of " + std::to_string(st.cfg.endpoint.total_timeout.count())
        + " ms (less a minimal call budget) passed while queued behind " + std::to_string(st.running_.size())
        + " calls"));
  }
  st.stats.queued = st.queue_.size();
}

// Starts queued requests while slots are free (invariant 1).
void pump(pool_pointer self) {
  auto& st = self->state;
  auto now = clock::now();
  expire_queue(self, now);
  while (st.running_.size() < st.cfg.max_concurrency && !st.queue_.empty()) {
    auto job = std::move(st.queue_.front());
    st.queue_.pop_front();
    auto left = job.deadline - now;
    start_call(self, std::move(job), left);
  }
  st.stats.queued = st.queue_.size();
  arm_tick(self);
}

template <class Result>
void finish(pool_pointer self, uint64_t id, Result&& result) {
  auto& st = self->state;
  auto i = st.running_.find(id);
  if (i == st.running_.end())
    return; // cannot happen: each call completes once (invariant 2)
  auto call = std::move(i->second);
  st.running_.erase(i);
  st.stats.in_flight = st.running_.size();
  call.rp.deliver(std::forward<Result>(result));
  pump(self);
}

pool_impl_actor::behavior_type pool_impl(pool_pointer self, llm_pool_config cfg,
                                         std::shared_ptr<spdlog::logger> log) {
  // REQUIRES: a usable configuration (checked by the make_*_pool_config factories).
  assert(cfg.max_concurrency > 0);
  assert(cfg.endpoint.total_timeout.count() > 0 && cfg.endpoint.idle_timeout.count() > 0);
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = log ? std::move(log)
               : std::make_shared<spdlog::logger>("llm", std::make_shared<spdlog::sinks::null_sink_mt>());
  st.loop = std::make_unique<curl_multi_loop>("llm-" + st.cfg.name);
  st.log->info("pool={} event=start url={} model={} concurrency={} queue={} idle_ms={} total_ms={}",
               st.cfg.name, st.cfg.endpoint.url, st.cfg.endpoint.model, st.cfg.max_concurrency,
               st.cfg.max_queue, st.cfg.endpoint.idle_timeout.count(),
               st.cfg.endpoint.total_timeout.count());
  return {
    [=](llm_call_atom, chat_request& req) -> caf::result<chat_answer> {
      auto& st = self->state;
      if (st.running_.size() >= st.cfg.max_concurrency && st.queue_.size() >= st.cfg.max_queue) {
        ++st.stats.overloaded;
        ++st.stats.failed;
        st.log->warn("session={} pool={} event=overloaded in_flight={} queued={}",
                     session_of(req), st.cfg.name, st.running_.size(), st.queue_.size());
        return caf::make_error(errc::overloaded,
                               "LLM pool " + st.cfg.name + " full: "
                                 + std::to_string(st.running_.size()) + " in flight, "
                                 + std::to_string(st.queue_.size()) + " queued");
      }
      auto rp = self->make_response_promise<chat_answer>();
      waiting_call job{st.next_id++, std::move(req),
                       clock::now() + st.cfg.endpoint.total_timeout, rp};
      st.queue_.push_back(std::move(job));
      pump(self);
      return rp;
    },
    [=](llm_stats_atom) { return self->state.stats; },
    [=](llm_done_atom, uint64_t id, chat_answer& answer) {
      auto& st = self->state;
      ++st.stats.succeeded;
      if (auto i = st.running_.find(id); i != st.running_.end())
        st.log->debug("session={} pool={} event=answer call={} prompt_tokens={} "
                      "completion_tokens={} finish={}",
                      i->second.session, st.cfg.name, id, answer.prompt_tokens,
                      answer.completion_tokens, answer.finish_reason);
      finish(self, id, std::move(answer));
    },
    [=](llm_done_atom, uint64_t id, caf::error& err) {
      auto& st = self->state;
      ++st.stats.failed;
      if (auto i = st.running_.find(id); i != st.running_.end()) {
        st.log->warn("session={} pool={} event=failed call={} code={}", i->second.session,
                     st.cfg.name, id, to_string(static_cast<errc>(err.code())));
        st.log->debug("session={} pool={} call={} detail={}", i->second.session, st.cfg.name,
                      id, log_quoted(render_error(err)));
      }
      finish(self, id, std::move(err));
    },
    [=](llm_tick_atom) {
      self->state.tick_armed = false;
      pump(self);
    },
  };
}

} // namespace

llm_pool_actor spawn_llm_pool(caf::actor_system& sys, llm_pool_config cfg,
                              std::shared_ptr<spdlog::logger> log) {
  auto impl = sys.spawn(pool_impl, std::move(cfg), std::move(log));
  return caf::actor_cast<llm_pool_actor>(impl);
}

} // namespace mneme::llm
