// The recall pool and its reader actors; see recall_actor.hpp.
#include "actors/recall/recall_actor.hpp"

#include <deque>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "caf/all.hpp"

#include "actors/request_timeouts.hpp"
#include "store/recall_sources.hpp"
#include "policies/client_text.hpp"

namespace mneme {

namespace {

constexpr std::size_t max_readers = 16;

struct reader_state {
  static inline const char* name = "recall_reader";
  std::shared_ptr<recall_source> reader;
  std::shared_ptr<spdlog::logger> log;
};

// A reader: blocks on its database (store/message_store.hpp recall_source), so it
// runs detached. An exception becomes
// errc::internal instead of killing it.
recall_actor::behavior_type reader_impl(recall_actor::stateful_pointer<reader_state> self,
                                        std::shared_ptr<recall_source> reader,
                                        std::shared_ptr<spdlog::logger> log) {
  self->state.reader = std::move(reader);
  self->state.log = std::move(log);
  return {
    [=](rc_search_atom, const recall_request& req) -> caf::result<recall_result> {
      auto& st = self->state;
      auto started = std::chrono::steady_clock::now();
      try {
        auto r = st.reader->search(req);
        auto ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - started).count();
        if (!r) {
          if (st.log)
            st.log->warn("session=- user={} event=search_failed error={}", log_quoted(req.user_id),
                         log_quoted(render_error(r.error())));
          return std::move(r.error());
        }
        if (st.log)
          st.log->debug("session=- user={} event=search hits={} routes={} ms={:.2f}",
                        log_quoted(req.user_id), r->hits.size(), r->routes_tried.size(), ms);
        return std::move(*r);
      } catch (const std::exception& e) {
        if (st.log)
          st.log->error("session=- user={} event=search_threw what={}", log_quoted(req.user_id),
                        log_quoted(e.what()));
        return caf::make_error(errc::internal, std::string{"recall: "} + e.what());
      }
    },
  };
}

struct pool_state {
  static inline const char* name = "recall_pool";
  struct job {
    recall_request req;
    caf::typed_response_promise<recall_result> rp;
    vector_skip skipped = vector_skip::none; // the embedder's failure, reported in the result
  };
  std::vector<recall_actor> idle;
  std::deque<job> queue;
  std::size_t embedding = 0; // searches waiting for their query vector
  recall_pool_params params;
  recall_vectors vectors;
  std::shared_ptr<spdlog::logger> log;
};

using pool_pointer = recall_actor::stateful_pointer<pool_state>;

// Starts as many queued searches as there are idle readers.
void pump(pool_pointer self) {
  auto& st = self->state;
  while (!st.idle.empty() && !st.queue.empty()) {
    auto reader = st.idle.back();
    st.idle.pop_back();
    auto j = std::move(st.queue.front());
    st.queue.pop_front();
    auto finish = [=](auto&& result) mutable {
      j.rp.deliver(std::forward<decltype(result)>(result));
      self->state.idle.push_back(reader);
      pump(self);
    };
    auto skipped = j.skipped;
    then_forgetting(
      self, self->request(reader, st.params.reader_timeout, rc_search_atom_v, j.req),
      [=](recall_result& r) mutable {
        if (skipped != vector_skip::none)
          r.vector_skipped = skipped;
        finish(std::move(r));
      },
      [=](caf::error& err) mutable { finish(std::move(err)); });
  }
}

// Whether `req` needs the query's vector before a reader can run it.
bool wants_query_vector(const pool_state& st, const recall_request& req) {
  return req.mode != recall_mode::fts && st.vectors.index && st.vectors.embedder
         && req.query_vector.empty();
}

recall_actor::behavior_type pool_impl(pool_pointer self,
                                      std::vector<std::shared_ptr<recall_source>> readers,
                                      std::shared_ptr<spdlog::logger> log,
                                      recall_pool_params params, recall_vectors vectors) {
  auto& st = self->state;
  st.params = params;
  st.vectors = std::move(vectors);
  st.log = log;
  for (auto& r : readers) {
    r->use_vectors(st.vectors.index);
    st.idle.push_back(self->spawn<caf::detached + caf::linked>(reader_impl, std::move(r), log));
  }
  return {
    [=](rc_search_atom, recall_request& req) -> caf::result<recall_result> {
      auto& st = self->state;
      if (st.queue.size() + st.embedding >= st.params.max_queued)
        return caf::make_error(errc::overloaded,
                               "recall: " + std::to_string(st.queue.size() + st.embedding)
                                 + " searches already wait for a reader");
      auto rp = self->make_response_promise<recall_result>();
      if (!wants_query_vector(st, req)) {
        st.queue.push_back({std::move(req), rp, vector_skip::none});
        pump(self);
        return rp;
      }
      // The query's vector first (asynchronously, bounded by query_timeout); a
      // failure or timeout runs the search on full text and the result says so.
      ++st.embedding;
      auto text = req.query;
      auto shared_req = std::make_shared<recall_request>(std::move(req));
      then_forgetting(
        self, self->request(st.vectors.embedder, st.vectors.query_timeout, em_query_atom_v, text),
        [=](std::vector<float>& v) mutable {
          --self->state.embedding;
          shared_req->query_vector = std::move(v);
          self->state.queue.push_back({std::move(*shared_req), rp, vector_skip::none});
          pump(self);
        },
        [=](caf::error& err) mutable {
          auto& st = self->state;
          --st.embedding;
          auto why = err == caf::sec::request_timeout ? vector_skip::timed_out
                                                      : vector_skip::provider_failed;
          if (st.vectors.metrics)
            st.vectors.metrics->vector_legs_skipped[why == vector_skip::timed_out ? 1 : 0]
              .fetch_add(1, std::memory_order_relaxed);
          if (st.log)
            st.log->debug("session=- user={} event=search_vector_skipped reason={} error={}",
                         log_quoted(shared_req->user_id), to_string(why),
                         log_quoted(render_error(err)));
          shared_req->mode = recall_mode::fts;
          st.queue.push_back({std::move(*shared_req), rp, why});
          pump(self);
        });
      return rp;
    },
  };
}

} // namespace

caf::expected<recall_actor> spawn_recall(caf::actor_system& sys, const store_params& params,
                                         std::shared_ptr<spdlog::logger> log,
                                         recall_pool_params pool,
                                         recall_vectors vectors) {
  if (pool.readers < 1 || pool.readers > max_readers)
    return caf::make_error(errc::bad_request,
                           "recall: readers must be 1.." + std::to_string(max_readers)
                             + ", got " + std::to_string(pool.readers));
  std::vector<std::shared_ptr<recall_source>> readers;
  for (std::size_t i = 0; i < pool.readers; ++i) {
    auto r = open_recall_source(params);
    if (!r) {
      if (log)
        log->error("session=- event=reader_open_failed backend={} path={} error={}",
                   to_string(params.backend),
                   params.backend == store_backend::sqlite ? params.path : "-",
                   log_quoted(render_error(r.error())));
      return std::move(r.error());
    }
    readers.emplace_back(std::move(*r));
  }
  if (log)
    log->info("session=- event=recall_opened backend={} path={} readers={} max_queued={}"
              " vectors={}",
              to_string(params.backend),
              params.backend == store_backend::sqlite ? params.path : "-", pool.readers,
              pool.max_queued, vectors.index ? "on" : "off");
  return sys.spawn(pool_impl, std::move(readers), std::move(log), pool, std::move(vectors));
}

} // namespace mneme
