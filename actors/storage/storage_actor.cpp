// The storage actor: group commits and the write/read operations; see storage_actor.hpp.
#include "actors/storage/storage_actor.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <sstream>
#include <utility>

#include "caf/all.hpp"

#include "actors/storage/index_schedule.hpp"
#include "actors/storage/index_space_gate.hpp"
#include "actors/storage/storage_cold.hpp"
#include "actors/storage/wal_checkpointer.hpp"
#include "policies/index_pacing.hpp"
#include "policies/index_space.hpp"
#include "policies/client_text.hpp"
#include "policies/wal_checkpoint.hpp"
#include "store/fact_vectors.hpp"
#include "store/open_store.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

namespace {

// One append request waiting for the next group commit.
struct pending_append {
  std::vector<message> rows;
  bool single = true;
  caf::typed_response_promise<int64_t> one;        // set when single
  caf::typed_response_promise<message_ids> many;   // set when !single
};

struct storage_state {
  static inline const char* name = "storage";
  std::shared_ptr<message_store> store;
  // The background work the store needs (indexing ticks on both backends; log
  // checkpoints and cold copies on SQLite: store/store_maintenance.hpp); null when it
  // needs none.
  store_maintenance* maintenance = nullptr;
  std::shared_ptr<spdlog::logger> log;
  std::shared_ptr<storage_metrics> metrics;
  std::vector<pending_append> pending;
  int64_t pending_rows = 0;
  bool flush_queued = false;
  int64_t tick_seq = 0; // the number of the queued tick (a tick message with another is not ours)
  // The committed rows each recall index lacks and when the next idle-time tick
  // runs (steady-clock milliseconds).
  index_schedule indexing;
  // No index tick below the reserve of free space (policies/index_space).
  index_space_gate space;
  // Write-ahead log checkpoints (policies/wal_checkpoint): the thresholds for this
  // file's page size, the checkpointer thread when the file has one, and whether
  // it is working on a request.
  wal_checkpoint_params wal;
  std::optional<wal_checkpointer_actor> checkpointer;
  std::shared_ptr<wal_checkpoint_connection> checkpoint_db; // closed before `store`
  bool checkpoint_running = false;

  // Rows above the lowest watermark (the rows recall's tail scan reads).
  int64_t unindexed() const { return indexing.unindexed(); }

  // Clean shutdown: everything committed is indexed before the file closes, and
  // the checkpointer's connection closes before the writer's (wal_checkpointer.hpp).
  ~storage_state() {
    final_index();
    if (checkpoint_db)
      checkpoint_db->close();
  }

  void final_index() {
    if (!maintenance || unindexed() == 0 || maintenance->in_transaction())
      return;
    // The checkpointer takes no request from here: the writer copies the log
    // back itself between the ticks.
    auto n = maintenance->index_all();
    if (!n && log)
      log->warn("session=- event=final_index_failed error={}",
                log_quoted(render_error(n.error())));
    else if (log)
      log->info("session=- event=final_index rows={}", *n);
  }
};

using storage_pointer = storage_actor::stateful_pointer<storage_state>;

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class T>
caf::result<T> to_result(caf::expected<T>&& x) {
  if (x)
    return std::move(*x);
  return std::move(x.error());
}

template <class... Ts>
void log_warn(storage_state& st, const char* fmt, Ts&&... xs) {
  if (st.log)
    st.log->warn(fmt, std::forward<Ts>(xs)...);
}

// Delivers the outcome of one request of a group.
void answer(pending_append& p, caf::expected<int64_t>&& id) {
  if (id)
    p.one.deliver(*id);
  else
    p.one.deliver(std::move(id.error()));
}

void answer(pending_append& p, caf::expected<message_ids>&& ids) {
  if (ids)
    p.many.deliver(std::move(*ids));
  else
    p.many.deliver(std::move(ids.error()));
}

// Counts a failed store operation (storage_failures.hpp); nothing without metrics.
void count_failure(storage_state& st, storage_op op, const caf::error& err) {
  if (st.metrics)
    st.metrics->failures.record(op, err);
}

// Answers every request of `group` with `err`; `counted` of them were already counted
// as failed appends (their own insert failed), the rest are counted here.
void fail_all(storage_state& st, std::vector<pending_append>& group, const caf::error& err,
              size_t counted) {
  if (st.metrics && group.size() > counted)
    st.metrics->failed_appends.fetch_add(static_cast<int64_t>(group.size() - counted),
                                         std::memory_order_relaxed);
  for (auto& p : group) {
    if (p.single)
      p.one.deliver(err);
    else
      p.many.deliver(err);
  }
}

// After any write transaction: checkpoints the write-ahead log as
// policies/wal_checkpoint says. A failed checkpoint is logged; the log then grows
// until one succeeds (nothing is lost: the log is part of the database).
void checkpoint_wal(storage_pointer self) {
  auto& st = self->state;
  if (!st.maintenance)
    return; // the backend copies its own log back
  auto& m = *st.maintenance;
  if (!m.take_log_commit())
    return; // the log has not grown since the last plan
  auto pages = m.log_pages();
  if (st.metrics)
    st.metrics->wal_pages.store(pages, std::memory_order_relaxed);
  switch (plan_wal_checkpoint(st.wal, pages, st.checkpointer.has_value(),
                              st.checkpoint_running)) {
    case wal_checkpoint_action::none:
      return;
    case wal_checkpoint_action::background:
      st.checkpoint_running = true;
      self->request(*st.checkpointer, caf::infinite, st_wal_checkpoint_atom_v)
        .then(
          [self](int64_t, int64_t checkpointed) {
            self->state.checkpoint_running = false;
            if (checkpointed < 0) // busy: the writer's own was running; plan again
              self->state.maintenance->mark_log_commit();
            else if (self->state.metrics)
              self->state.metrics->wal_checkpoints_background.fetch_add(
                1, std::memory_order_relaxed);
          },
          [self](caf::error& err) {
            self->state.checkpoint_running = false;
            count_failure(self->state, storage_op::checkpoint, err);
            log_warn(self->state,
                     "session=- event=wal_checkpoint_failed where=background error={}",
                     log_quoted(render_error(err)));
          });
      return;
    case wal_checkpoint_action::inline_passive:
      if (auto r = m.checkpoint_log(); !r) {
        count_failure(st, storage_op::checkpoint, r.error());
        log_warn(st, "session=- event=wal_checkpoint_failed where=writer pages={} error={}", pages,
                 log_quoted(render_error(r.error())));
      } else if (r->busy)
        m.mark_log_commit(); // the checkpointer's was running: plan again after it
      else if (st.metrics)
        st.metrics->wal_checkpoints_inline.fetch_add(1, std::memory_order_relaxed);
      return;
  }
}

// One attempt at committing a group of appends in one transaction: each request's own
// outcome, or the error that failed the whole group (nothing of it committed).
struct group_attempt {
  caf::error fatal;
  std::vector<caf::expected<int64_t>> singles;
  std::vector<caf::expected<message_ids>> batches;
  int64_t rows = 0;
  int64_t last_id = 0; // ids grow: the last row inserted has the highest
  size_t refused = 0;  // requests whose own insert failed
};

group_attempt try_group(storage_state& st, const std::vector<pending_append>& group) {
  auto& store = *st.store;
  group_attempt a;
  if (auto err = store.begin_group()) {
    count_failure(st, storage_op::begin, err);
    a.fatal = std::move(err);
    return a;
  }
  int64_t expected = 0;
  for (const auto& p : group)
    expected += static_cast<int64_t>(p.rows.size());
  store.expect_group_rows(expected);
  for (const auto& p : group) {
    caf::error last;
    if (p.single) {
      a.singles.push_back(store.insert_in_group(p.rows.front()));
      if (a.singles.back()) {
        ++a.rows;
        a.last_id = *a.singles.back();
      } else {
        last = a.singles.back().error();
      }
    } else {
      a.batches.push_back(store.insert_batch_in_group(p.rows));
      if (a.batches.back()) {
        a.rows += static_cast<int64_t>(p.rows.size());
        if (!a.batches.back()->ids.empty())
          a.last_id = a.batches.back()->ids.back();
      } else {
        last = a.batches.back().error();
      }
    }
    if (last) {
      ++a.refused;
      count_failure(st, storage_op::insert, last);
    }
    if (!store.group_open()) { // the backend rolled the whole transaction back
      a.fatal = last ? last
                     : caf::make_error(errc::internal, std::string{"group transaction ended"});
      if (!last)
        count_failure(st, storage_op::insert, a.fatal);
      break;
    }
  }
  if (!a.fatal) {
    a.fatal = store.commit_group(); // a full disk fails here: the rows reach the file now
    count_failure(st, storage_op::commit, a.fatal);
  } else {
    store.abort_group();
  }
  return a;
}

// A group failed because the connection to the database server was lost before its
// COMMIT (store/pg: nothing of it was committed; a COMMIT whose outcome is unknown is
// another error): it is run once more, after the store's reconnection waits.
bool lost_connection(const caf::error& err) {
  return err && err.category() == caf::atom("mneme")
         && static_cast<errc>(err.code()) == errc::storage_cant_open;
}

// Commits every buffered append in one transaction and answers each request.
void flush(storage_pointer self) {
  auto& st = self->state;
  if (st.pending.empty())
    return;
  auto group = std::move(st.pending);
  st.pending.clear();
  st.pending_rows = 0;
  auto began = std::chrono::steady_clock::now();
  auto attempt = try_group(st, group);
  if (lost_connection(attempt.fatal)) {
    log_warn(st, "session={} event=group_retry reason=connection_lost requests={} error={}",
             group.front().rows.front().session_id, group.size(),
             log_quoted(render_error(attempt.fatal)));
    attempt = try_group(st, group);
  }
  if (st.metrics && attempt.refused > 0)
    st.metrics->failed_appends.fetch_add(static_cast<int64_t>(attempt.refused),
                                         std::memory_order_relaxed);
  if (attempt.fatal) {
    log_warn(st, "session={} event=group_commit_failed requests={} error={}",
             group.front().rows.front().session_id, group.size(),
             log_quoted(render_error(attempt.fatal)));
    fail_all(st, group, attempt.fatal, attempt.refused);
    return;
  }
  auto& singles = attempt.singles;
  auto& batches = attempt.batches;
  auto rows = attempt.rows;
  auto last_id = attempt.last_id;
  checkpoint_wal(self);
  if (st.maintenance) // a backend without maintenance indexes in the append's transaction
    st.indexing.committed(rows, last_id, steady_ms());
  if (st.metrics) {
    st.metrics->commit_latency.observe_us(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now()
                                                            - began).count());
    st.metrics->record_commit(rows);
    st.metrics->unindexed_rows.store(st.unindexed(), std::memory_order_relaxed);
  }
  size_t si = 0;
  size_t bi = 0;
  for (auto& p : group) {
    if (p.single) {
      auto& r = singles[si++];
      if (!r)
        log_warn(st, "session={} event=append_refused error={}", p.rows.front().session_id,
                 log_quoted(render_error(r.error())));
      answer(p, std::move(r));
    } else {
      auto& r = batches[bi++];
      if (!r)
        log_warn(st, "session={} event=batch_refused rows={} error={}",
                 p.rows.empty() ? "-" : p.rows.front().session_id, p.rows.size(),
                 log_quoted(render_error(r.error())));
      answer(p, std::move(r));
    }
  }
}

// Queues the next flush/index tick behind whatever is in the mailbox.
void queue_tick(storage_pointer self) {
  auto& st = self->state;
  if (!st.flush_queued) {
    st.flush_queued = true;
    self->send(self, st_flush_atom_v, ++st.tick_seq);
  }
}

// Arms a tick for `due_ms` unless one is pending for that time or earlier.
void arm_index_timer(storage_pointer self, int64_t now_ms, int64_t due_ms) {
  if (!self->state.indexing.claim_timer(due_ms))
    return;
  self->delayed_send(self, std::chrono::milliseconds(std::max<int64_t>(1, due_ms - now_ms)),
                     st_flush_atom_v);
}

// Sets the backlogs from the file (at start, after an import). False when there is none.
bool read_backlogs(storage_state& st) {
  if (!st.maintenance)
    return false; // the backend indexes in the append's transaction
  auto backlogs = st.maintenance->index_backlogs();
  if (!backlogs)
    return false;
  st.indexing.set_backlogs(*backlogs);
  if (st.metrics)
    st.metrics->unindexed_rows.store(st.unindexed(), std::memory_order_relaxed);
  return st.unindexed() > 0;
}

// Idle-time indexing: one paced tick (policies/index_pacing), only when no
// message waits; the tick checks for a message after every row and then ends
// (store/sqlite/fts_indexer), so an append waits for one row plus the tick's COMMIT.
// Another tick follows while a
// backlog remains, except when every index waits behind a large row that must
// wait: then a timer brings the tick back when the row is due. No tick runs while the
// database's filesystem has less free space than the reserve (index_space_gate).
// An index failure is logged, counted and retried after policies/index_retry's delay
// (a timer: no new append is needed); it never fails an append (recall finds
// unindexed rows by its tail scan).
void index_when_idle(storage_pointer self) {
  auto& st = self->state;
  if (!st.maintenance)
    return; // the backend indexes in the append's transaction
  auto now = steady_ms();
  auto step = st.indexing.next(now);
  if (step.what == index_step::kind::idle)
    return;
  if (step.what == index_step::kind::wait) {
    arm_index_timer(self, now, step.due_ms);
    return;
  }
  if (!self->mailbox().empty()) {
    queue_tick(self);
    return;
  }
  if (!st.space.admit(step.plan, st.indexing, st.metrics.get(), st.log.get())) {
    arm_index_timer(self, now, now + index_space_poll_ms); // look again then
    return;
  }
  auto done = st.maintenance->index_tick(step.plan, [self] { return !self->mailbox().empty(); });
  if (!done) { // e.g. a full disk: try again after policies/index_retry's delay
    count_failure(st, storage_op::index, done.error());
    bool refused = done.error().category() == caf::atom("mneme")
                   && done.error().code() == static_cast<uint8_t>(errc::storage_disk_full);
    // The refused transaction's log pages go back to the filesystem first.
    bool log_cut = refused && truncate_log_after_refusal(*st.maintenance, st.log.get());
    auto retry = refused ? st.indexing.refused(now, log_cut) : st.indexing.failed(now);
    publish_index_cap(st.indexing, st.metrics.get());
    log_warn(st, "session=- event=index_failed backlog={} retry_in_ms={} cap_rows={} "
                 "cap_bytes={} error={}",
             st.unindexed(), retry.due_ms - now, st.indexing.cap().rows,
             st.indexing.cap().bytes, log_quoted(render_error(done.error())));
    arm_index_timer(self, now, retry.due_ms);
    return;
  }
  checkpoint_wal(self);
  auto after = st.indexing.finished(*done, now);
  publish_index_cap(st.indexing, st.metrics.get());
  if (st.metrics) {
    st.metrics->indexed_rows.fetch_add(done->rows, std::memory_order_relaxed);
    if (done->rows > 0)
      st.metrics->index_batches.fetch_add(1, std::memory_order_relaxed);
    st.metrics->unindexed_rows.store(st.unindexed(), std::memory_order_relaxed);
  }
  if (after.what == index_step::kind::wait)
    arm_index_timer(self, now, after.due_ms);
  else if (after.what == index_step::kind::run)
    queue_tick(self);
}

// Buffers an append and arranges its commit (now when the buffer is full).
void enqueue(storage_pointer self, pending_append p) {
  auto& st = self->state;
  st.indexing.appended(steady_ms());
  auto rows = static_cast<int64_t>(p.rows.size());
  if (!p.single && rows >= st.store->params().max_batch)
    flush(self); // an oversized batch commits on its own, after what came before
  st.pending.push_back(std::move(p));
  st.pending_rows += rows;
  if (st.pending_rows >= st.store->params().max_batch)
    flush(self); // its index tick is the one queued below
  queue_tick(self);
}

// Counts a fact put or remove the store acknowledged (storage_metrics).
caf::expected<fact_record> count_fact(storage_pointer self, caf::expected<fact_record> r,
                                      bool removed) {
  if (r && self->state.metrics)
    (removed ? self->state.metrics->fact_removes : self->state.metrics->fact_puts)
      .fetch_add(1, std::memory_order_relaxed);
  return r;
}

// Runs a non-append operation after committing the buffered appends; an
// exception becomes errc::internal instead of killing the actor.
template <class F>
auto run_op(storage_pointer self, const char* op, F fun) -> decltype(to_result(fun())) {
  flush(self);
  try {
    auto result = fun();
    checkpoint_wal(self);
    if (!result) { // a storage failure is a warning; a refused request (unknown key) is not
      auto& st = self->state;
      bool failure = st.metrics ? st.metrics->failures.record(storage_op::other, result.error())
                                : storage_failure_slot(result.error()).has_value();
      if (failure)
        log_warn(st, "session=- event=op_failed op={} error={}", op,
                 log_quoted(render_error(result.error())));
      else if (st.log)
        st.log->debug("session=- event=op_refused op={} error={}", op,
                      log_quoted(render_error(result.error())));
    }
    return to_result(std::move(result));
  } catch (const std::exception& e) {
    log_warn(self->state, "session=- event=op_threw op={} what={}", op, log_quoted(e.what()));
    auto err = caf::make_error(errc::internal, std::string{op} + ": " + e.what());
    count_failure(self->state, storage_op::other, err);
    return err;
  }
}

// Cold copies of ended sessions (a backend that keeps them: actors/storage/storage_cold.hpp).
void sweep_cold(storage_state& st, int64_t now) {
  if (st.maintenance)
    sweep_cold_copies(*st.maintenance, st.log, now, st.metrics.get());
}

storage_actor::behavior_type storage_impl(storage_pointer self, std::shared_ptr<message_store> store,
                                          std::shared_ptr<spdlog::logger> log,
                                          std::shared_ptr<storage_metrics> metrics,
                                          std::optional<wal_checkpointer> checkpointer,
                                          free_space_probe free_space) {
  self->state.store = std::move(store);
  self->state.maintenance = self->state.store->maintenance();
  if (auto* m = self->state.maintenance; m && !free_space)
    free_space = [m] { return m->free_space_bytes(); };
  self->state.space = index_space_gate{std::move(free_space),
                                       self->state.store->params().index_free_space_reserve_bytes};
  self->state.log = std::move(log);
  self->state.metrics = std::move(metrics);
  publish_index_cap(self->state.indexing, self->state.metrics.get());
  if (checkpointer && self->state.maintenance) {
    // The writer's bound is in bytes; the log is counted in the file's pages.
    auto page = self->state.maintenance->page_bytes();
    self->state.wal = wal_checkpoint_params_for(page ? *page : 0);
    self->state.maintenance->watch_log(); // the backend's own checkpoint is off now
    self->state.checkpointer = checkpointer->actor;
    self->state.checkpoint_db = checkpointer->connection;
    self->attach_functor([ckpt = checkpointer->actor](const caf::error&) {
      caf::anon_send_exit(ckpt, caf::exit_reason::user_shutdown);
    });
    // A checkpointer that dies leaves the writer checkpointing itself, from
    // policies/wal_checkpoint's first threshold on, as SQLite would.
    self->monitor(checkpointer->actor);
    self->set_down_handler([self](caf::down_msg& down) {
      auto& st = self->state;
      if (!st.checkpointer || down.source != caf::actor_cast<caf::actor_addr>(*st.checkpointer))
        return;
      log_warn(st, "session=- event=wal_checkpointer_down reason={}",
               log_quoted(render_error(down.reason)));
      st.checkpointer.reset();
      st.checkpoint_running = false;
    });
  }
  // A backlog left by a crash (or an older binary) is indexed in idle ticks too.
  if (read_backlogs(self->state))
    queue_tick(self);
  // Ended sessions still without a cold copy (a failed write, an older binary).
  sweep_cold(self->state, std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count());
  return {
    [=](st_append_atom, message& m) -> caf::result<int64_t> {
      pending_append p;
      p.single = true;
      p.rows.push_back(std::move(m));
      p.one = self->make_response_promise<int64_t>();
      auto rp = p.one;
      enqueue(self, std::move(p));
      return rp;
    },
    [=](st_append_atom, std::vector<message>& batch) -> caf::result<message_ids> {
      if (batch.empty())
        return message_ids{};
      pending_append p;
      p.single = false;
      p.rows = std::move(batch);
      p.many = self->make_response_promise<message_ids>();
      auto rp = p.many;
      enqueue(self, std::move(p));
      return rp;
    },
    [=](st_flush_atom) { queue_tick(self); },
    [=](st_flush_atom, int64_t seq) {
      auto& st = self->state;
      if (!st.flush_queued || seq != st.tick_seq)
        return; // not the tick this actor queued
      if (st.metrics)
        st.metrics->ticks.fetch_add(1, std::memory_order_relaxed);
      st.flush_queued = false;
      flush(self);
      index_when_idle(self);
    },
    [=](st_live_atom, const std::string& sid) {
      return run_op(self, "live", [&] { return self->state.store->live_context(sid); });
    },
    [=](st_range_atom, const std::string& sid, int64_t first, int64_t last) {
      return run_op(self, "range", [&] { return self->state.store->range(sid, first, last); });
    },
    [=](st_range_atom, const std::string& sid, int64_t first, int64_t last, int64_t limit) {
      return run_op(self, "range",
                    [&] { return self->state.store->range(sid, first, last, limit); });
    },
    [=](st_idem_atom, const std::string& key, const std::string& idem, int64_t since,
        int64_t limit) {
      return run_op(self, "idempotent_rows", [&] {
        return self->state.store->idempotent_rows(key, idem, since, limit);
      });
    },
    [=](st_compact_atom, const compaction_commit& c) {
      return run_op(self, "compact", [&] { return self->state.store->commit_compaction(c); });
    },
    [=](st_replace_atom, const replacement_commit& c) {
      return run_op(self, "replace", [&] { return self->state.store->commit_replacement(c); });
    },
    [=](st_new_session_atom, session_record& rec, int64_t now) {
      return run_op(self, "create_session",
                    [&] { return self->state.store->create_session(std::move(rec), now); });
    },
    [=](st_session_atom, const std::string& sid) {
      return run_op(self, "session", [&] { return self->state.store->session(sid); });
    },
    [=](st_list_atom, const session_filter& f) {
      return run_op(self, "list", [&] { return self->state.store->sessions(f); });
    },
    [=](st_stats_atom, const std::string& sid) {
      return run_op(self, "stats", [&] { return self->state.store->stats(sid); });
    },
    [=](st_end_atom, const std::string& sid, int64_t now, const std::string& reason) {
      auto r = run_op(self, "end", [&] { return self->state.store->end_session(sid, now, reason); });
      sweep_cold(self->state, now);
      return r;
    },
    [=](st_reset_atom, const std::string& sid, int32_t head, int64_t now,
        const std::string& reason) {
      auto r = run_op(self, "reset",
                      [&] { return self->state.store->reset_session(sid, head, now, reason); });
      sweep_cold(self->state, now);
      return r;
    },
    [=](st_reset_atom, const std::string& sid, int32_t head, int64_t now,
        const std::string& reason, int64_t max_row_tokens) {
      auto r = run_op(self, "reset", [&] {
        return self->state.store->reset_session(sid, head, now, reason, max_row_tokens);
      });
      sweep_cold(self->state, now);
      return r;
    },
    [=](st_child_atom, const compaction_commit& c, int64_t now) {
      auto r = run_op(self, "child",
                      [&] { return self->state.store->continue_in_child(c, now); });
      sweep_cold(self->state, now);
      return r;
    },
    [=](st_checkpoint_atom, const std::string& sid, const std::string& name, int64_t now) {
      return run_op(self, "checkpoint",
                    [&] { return self->state.store->create_checkpoint(sid, name, now); });
    },
    [=](st_checkpoints_atom, const std::string& sid) {
      return run_op(self, "checkpoints", [&] { return self->state.store->checkpoints(sid); });
    },
    [=](st_rollback_atom, const std::string& sid, const std::string& name) {
      return run_op(self, "rollback",
                    [&] { return self->state.store->rollback_to_checkpoint(sid, name); });
    },
    [=](st_rollback_atom, const std::string& sid, int64_t last_kept_id,
        const std::string& label) {
      return run_op(self, "rollback", [&] {
        return self->state.store->rollback_after_row(sid, last_kept_id, label);
      });
    },
    [=](st_put_triggers_atom, const std::string& sid, const trigger_state& t) {
      return run_op(self, "put_triggers", [&]() -> caf::expected<caf::ok_atom> {
        if (auto err = self->state.store->save_triggers(sid, t))
          return err;
        return caf::ok_atom_v;
      });
    },
    [=](st_tools_put_atom, const std::string& key, const std::string& sid,
        const std::string& tools, int64_t now) {
      return run_op(self, "tools_put", [&]() -> caf::expected<caf::ok_atom> {
        if (auto err = self->state.store->put_session_tools(key, sid, tools, now))
          return err;
        return caf::ok_atom_v;
      });
    },
    [=](st_tools_get_atom, const std::string& key) {
      return run_op(self, "tools_get",
                    [&] { return self->state.store->session_tools(key); });
    },
    [=](st_clog_put_atom, const compaction_log_entry& e) {
      return run_op(self, "clog_put",
                    [&] { return self->state.store->log_compaction_attempt(e); });
    },
    [=](st_clog_atom, const std::string& sid, int64_t limit) {
      return run_op(self, "clog",
                    [&] { return self->state.store->compaction_log(sid, limit); });
    },
    [=](st_resp_put_atom, const response_record& r) {
      return run_op(self, "response_put", [&]() -> caf::expected<caf::ok_atom> {
        if (auto err = self->state.store->put_response(r))
          return err;
        return caf::ok_atom_v;
      });
    },
    [=](st_resp_get_atom, const std::string& id) {
      return run_op(self, "response_get", [&] { return self->state.store->response(id); });
    },
    [=](st_resp_del_atom, const std::string& id, int64_t now) {
      return run_op(self, "response_del",
                    [&] { return self->state.store->delete_response(id, now); });
    },
    [=](st_get_triggers_atom, const std::string& sid) {
      return run_op(self, "get_triggers", [&] { return self->state.store->triggers(sid); });
    },
    [=](st_export_atom, const std::string& sid) {
      return run_op(self, "export", [&]() -> caf::expected<std::string> {
        std::ostringstream out;
        auto lines = self->state.store->export_jsonl(sid, out);
        if (!lines)
          return std::move(lines.error());
        return out.str();
      });
    },
    [=](st_fact_put_atom, const fact_record& f, int64_t now) {
      return run_op(self, "fact_put",
                    [&] {
                      return count_fact(self, self->state.store->put_fact(f, now), false);
                    });
    },
    [=](st_fact_del_atom, const std::string& user, const std::string& key, int64_t now) {
      return run_op(self, "fact_del",
                    [&] {
                      return count_fact(self, self->state.store->remove_fact(user, key, now),
                                        true);
                    });
    },
    [=](st_facts_atom, const fact_query& q) {
      return run_op(self, "facts", [&] {
        auto& store = *self->state.store;
        return search_facts(store, store.params().vectors.get(), q);
      });
    },
    [=](st_emrows_atom, int32_t source, int64_t after, int64_t limit) {
      return run_op(self, "embed_rows",
                    [&] { return self->state.store->rows_to_embed(source, after, limit); });
    },
    [=](st_emput_atom, const embed_write& w) {
      return run_op(self, "embed_put", [&]() -> caf::expected<int64_t> {
        if (auto err = self->state.store->store_vectors(w))
          return err;
        return w.through;
      });
    },
    [=](st_emstate_atom, const std::string& model, int32_t dims) {
      return run_op(self, "embed_state",
                    [&] { return self->state.store->embed_progress_of(model, dims); });
    },
    [=](st_emload_atom, const std::string& model, int32_t dims, int32_t source, int64_t after,
        int64_t limit) {
      return run_op(self, "embed_load", [&] {
        return self->state.store->stored_vectors(model, dims, source, after, limit);
      });
    },
    [=](st_fence_atom, const std::string& key, int64_t token) {
      self->state.store->set_fence(key, token);
    },
    [=](st_import_atom, const std::string& jsonl, session_record& into, int64_t now) {
      auto& st = self->state;
      auto r = run_op(self, "import", [&] {
        return st.store->import_jsonl(jsonl, std::move(into), now);
      });
      // The imported rows lie above the index watermark: index them when idle.
      if (read_backlogs(st))
        queue_tick(self);
      return r;
    },
  };
}

} // namespace

caf::expected<storage_actor> spawn_storage(caf::actor_system& sys,
                                           std::shared_ptr<message_store> store,
                                           std::shared_ptr<spdlog::logger> log,
                                           std::shared_ptr<storage_metrics> metrics,
                                           free_space_probe free_space) {
  if (log)
    log->info("session=- event=opened backend={} max_batch={}", store->backend_name(),
              store->params().max_batch);
  return sys.spawn<caf::detached>(storage_impl, std::move(store), std::move(log),
                                  std::move(metrics), std::nullopt, std::move(free_space));
}

caf::expected<storage_actor> spawn_storage(caf::actor_system& sys, const store_params& params,
                                           std::shared_ptr<spdlog::logger> log,
                                           std::shared_ptr<storage_metrics> metrics,
                                           free_space_probe free_space) {
  const bool postgres = params.backend == store_backend::postgres;
  auto opened = open_writer_store(params);
  if (!opened) {
    if (log && postgres)
      log->error("session=- event=open_failed backend=postgres error={}",
                 log_quoted(render_error(opened.error())));
    else if (log)
      log->error("session=- event=open_failed path={} error={}", log_quoted(params.path),
                 log_quoted(render_error(opened.error())));
    return std::move(opened.error());
  }
  std::shared_ptr<message_store> store{std::move(*opened)};
  if (postgres)
    return spawn_storage(sys, std::move(store), std::move(log), std::move(metrics),
                         std::move(free_space));
  // Another connection to the (now migrated) file checkpoints its log; an
  // in-memory file has none and keeps SQLite's automatic checkpoint.
  std::optional<wal_checkpointer> checkpointer;
  if (auto* maintenance = store->maintenance()) {
    if (auto c = spawn_wal_checkpointer(sys, *maintenance, log))
      checkpointer = *c;
    else if (log)
      log->info("session=- event=wal_checkpointer_off path={} reason={}", log_quoted(params.path),
                log_quoted(render_error(c.error())));
  }
  if (log)
    log->info("session=- event=opened path={} max_batch={} synchronous={} wal_checkpoints={}",
              params.path, params.max_batch, params.synchronous_full ? "FULL" : "NORMAL",
              checkpointer ? "background" : "inline");
  return sys.spawn<caf::detached>(storage_impl, std::move(store), std::move(log),
                                  std::move(metrics), std::move(checkpointer),
                                  std::move(free_space));
}

} // namespace mneme
