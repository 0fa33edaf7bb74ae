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
  };
  std::vector<recall_actor> idle;
  std::deque<job> queue;
  recall_pool_params params;
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
    then_forgetting(
      self, self->request(reader, st.params.reader_timeout, rc_search_atom_v, j.req),
      [=](recall_result& r) mutable { finish(std::move(r)); },
      [=](caf::error& err) mutable { finish(std::move(err)); });
  }
}

recall_actor::behavior_type pool_impl(pool_pointer self,
                                      std::vector<std::shared_ptr<recall_source>> readers,
                                      std::shared_ptr<spdlog::logger> log,
                                      recall_pool_params params) {
  auto& st = self->state;
  st.params = params;
  for (auto& r : readers)
    st.idle.push_back(self->spawn<caf::detached + caf::linked>(reader_impl, std::move(r), log));
  return {
    [=](rc_search_atom, recall_request& req) -> caf::result<recall_result> {
      auto& st = self->state;
      if (st.queue.size() >= st.params.max_queued)
        return caf::make_error(errc::overloaded,
                               "recall: " + std::to_string(st.queue.size())
                                 + " searches already wait for a reader");
      auto rp = self->make_response_promise<recall_result>();
      st.queue.push_back({std::move(req), rp});
      pump(self);
      return rp;
    },
  };
}

} // namespace

caf::expected<recall_actor> spawn_recall(caf::actor_system& sys, const store_params& params,
                                         std::shared_ptr<spdlog::logger> log,
                                         recall_pool_params pool,
                                         recall_vectors vectors) {
  (void)vectors; // semantic recall: not used yet
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
    log->info("session=- event=recall_opened backend={} path={} readers={} max_queued={}",
              to_string(params.backend),
              params.backend == store_backend::sqlite ? params.path : "-", pool.readers,
              pool.max_queued);
  return sys.spawn(pool_impl, std::move(readers), std::move(log), pool);
}

} // namespace mneme
