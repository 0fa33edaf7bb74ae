// The ingest part of `mneme-bench storage` (storage_ingest.hpp).
#include "apps/mneme-bench/storage_ingest.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "caf/all.hpp"

#include "actors/storage/storage_actor.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {

double ms_since(steady::time_point t0) {
  return std::chrono::duration<double, std::milli>(steady::now() - t0).count();
}

// A pool of realistic message bodies, reused round-robin.
std::vector<std::string> make_bodies(size_t n, unsigned seed) {
  static const std::string en = "The deployment failed because the config path was wrong. ";
  static const std::string zh = "部署失败，因为配置路径写错了，请检查服务端日志。";
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pct(0, 99);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    size_t size = pct(rng) < 2 ? std::uniform_int_distribution<size_t>(20000, 200000)(rng)
                               : std::uniform_int_distribution<size_t>(50, 2000)(rng);
    const auto& unit = pct(rng) < 35 ? zh : en;
    std::string s;
    while (s.size() < size)
      s += unit;
    out.push_back(std::move(s));
  }
  return out;
}

message make_message(const std::string& sid, const std::string& body, int64_t seq) {
  message m;
  m.session_id = sid;
  m.role = seq % 2 == 0 ? msg_role::user : msg_role::assistant;
  m.content = body;
  m.timestamp_ms = 1700000000000 + seq;
  m.token_estimate = static_cast<int64_t>(body.size() / 4);
  return m;
}

fresh_file::fresh_file(const std::string& dir, const std::string& name) : path(dir + "/" + name) {
  for (auto suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(path + suffix);
}

namespace {

constexpr auto request_timeout = std::chrono::seconds(60);

// --- 1. ingest through the actor

// A session actor: appends `count` messages one after the other, each sent when
// the previous is acknowledged (or on a timer tick when `pace` > 0), recording
// the send-to-acknowledge latency of each into its own slot of `latencies`.
struct session_job {
  std::string sid;
  const std::vector<std::string>* bodies;
  size_t first_body;
  int count;
  std::chrono::microseconds pace{0};
  std::chrono::microseconds offset{0};
  std::vector<double>* latencies;
  std::atomic<int64_t>* errors;
};

struct session_bench_state {
  session_job job;
  storage_actor storage;
  caf::actor done;
  int sent = 0;
  int answered = 0;
};

using session_bench_actor = caf::stateful_actor<session_bench_state>;

void send_one(session_bench_actor* self);

void on_answer(session_bench_actor* self) {
  auto& st = self->state;
  if (++st.answered == st.job.count) {
    self->send(st.done, caf::ok_atom_v);
    self->quit();
    return;
  }
  if (st.job.pace.count() == 0)
    send_one(self);
}

void send_one(session_bench_actor* self) {
  auto& st = self->state;
  if (st.sent == st.job.count)
    return;
  auto i = st.sent++;
  auto t0 = steady::now();
  const auto& bodies = *st.job.bodies;
  const auto& body = bodies[(st.job.first_body + static_cast<size_t>(i)) % bodies.size()];
  self->request(st.storage, request_timeout, st_append_atom_v, make_message(st.job.sid, body, i))
    .then(
      [self, t0](int64_t) {
        self->state.job.latencies->push_back(ms_since(t0));
        on_answer(self);
      },
      [self](caf::error&) {
        self->state.job.errors->fetch_add(1);
        on_answer(self);
      });
}

caf::behavior session_actor(session_bench_actor* self, session_job job, storage_actor storage,
                            caf::actor done) {
  self->state.job = std::move(job);
  self->state.storage = std::move(storage);
  self->state.done = std::move(done);
  if (self->state.job.pace.count() == 0) {
    send_one(self);
  } else {
    self->delayed_send(self, self->state.job.offset, caf::tick_atom_v);
  }
  return {
    [self](caf::tick_atom) { // paced: one append per tick
      send_one(self);
      if (self->state.sent < self->state.job.count)
        self->delayed_send(self, self->state.job.pace, caf::tick_atom_v);
    },
  };
}


} // namespace

// Creates `n` sessions through the actor; returns their ids.
std::vector<std::string> create_sessions(caf::scoped_actor& self, const storage_actor& st,
                                         size_t n) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    session_record rec;
    rec.user_id = "bench";
    rec.session_key = "k" + std::to_string(i);
    self->request(st, request_timeout, st_new_session_atom_v, rec, int64_t{1})
      .receive([&](session_record& r) { ids.push_back(r.id); },
               [&](caf::error& err) { std::fprintf(stderr, "%s\n", render_error(err).c_str()); });
  }
  return ids;
}

// Runs N sessions × M messages through a fresh storage actor. pace_rate > 0 paces
// the total offered load at that many messages per second.
ingest_result run_ingest(const store_params& params, size_t sessions, int per_session,
                         const std::vector<std::string>& bodies, double pace_rate) {
  caf::actor_system_config cfg;
  register_mneme_types(cfg);
  caf::actor_system sys{cfg};
  auto metrics = std::make_shared<storage_metrics>();
  auto spawned = spawn_storage(sys, params, nullptr, metrics);
  if (!spawned) {
    std::fprintf(stderr, "storage: %s\n", render_error(spawned.error()).c_str());
    std::exit(1);
  }
  auto storage = *spawned;
  caf::scoped_actor self{sys};
  auto ids = create_sessions(self, storage, sessions);
  auto base_commits = metrics->group_commits.load();
  std::vector<std::vector<double>> latencies(sessions);
  std::atomic<int64_t> errors{0};
  auto pace = pace_rate > 0 ? std::chrono::microseconds(static_cast<int64_t>(
                                1e6 * static_cast<double>(sessions) / pace_rate))
                            : std::chrono::microseconds(0);
  std::mt19937 rng(7);
  auto t0 = steady::now();
  for (size_t i = 0; i < sessions; ++i) {
    latencies[i].reserve(static_cast<size_t>(per_session));
    session_job job{ids[i], &bodies, i * 7, per_session, pace,
                    std::chrono::microseconds(pace.count() > 0
                      ? std::uniform_int_distribution<int64_t>(0, pace.count())(rng) : 0),
                    &latencies[i], &errors};
    sys.spawn(session_actor, job, storage, caf::actor_cast<caf::actor>(self));
  }
  for (size_t i = 0; i < sessions; ++i)
    self->receive([](caf::ok_atom) {});
  auto elapsed = ms_since(t0);
  ingest_result r;
  r.index_backlog = metrics->unindexed_rows.load();
  auto idle_t0 = steady::now();
  while (metrics->unindexed_rows.load() > 0 && ms_since(idle_t0) < 120000)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  r.index_catchup_ms = ms_since(idle_t0);
  r.wal_checkpoints_background = metrics->wal_checkpoints_background.load();
  r.wal_checkpoints_inline = metrics->wal_checkpoints_inline.load();
  std::vector<double> all;
  for (auto& l : latencies)
    all.insert(all.end(), l.begin(), l.end());
  r.messages = static_cast<int64_t>(all.size());
  r.errors = errors.load();
  r.msgs_per_s = static_cast<double>(r.messages) / (elapsed / 1000.0);
  r.p50_ms = percentile_or_zero(all, 0.50);
  r.p99_ms = percentile_or_zero(all, 0.99);
  auto commits = metrics->group_commits.load() - base_commits;
  r.mean_batch = commits > 0 ? static_cast<double>(r.messages) / static_cast<double>(commits) : 0;
  for (size_t i = 0; i < metrics->batch_buckets.size(); ++i)
    r.batches.emplace_back(storage_metrics::bucket_label(i), metrics->batch_buckets[i].load());
  r.batches.front().second -= base_commits; // session creation commits
  self->send_exit(storage, caf::exit_reason::user_shutdown);
  return r;
}

// --- 3. compaction commit

double compaction_commit_ms(message_store& store, const std::vector<std::string>& bodies,
                            int reps) {
  std::vector<double> times;
  for (int rep = 0; rep < reps; ++rep) {
    auto sid = store.create_session(session_record{}, 1);
    if (!sid)
      throw std::runtime_error("create_session: " + render_error(sid.error()));
    std::vector<message> batch;
    for (int i = 0; i < compaction_session_rows; ++i)
      batch.push_back(make_message(
        sid->id, bodies[static_cast<size_t>(rep * compaction_session_rows + i) % bodies.size()], i));
    auto ids = store.append_batch(batch);
    if (!ids)
      throw std::runtime_error("append_batch: " + render_error(ids.error()));
    compaction_commit c;
    c.session_id = sid->id;
    c.archive_ids.assign(ids->ids.begin() + 4, ids->ids.end() - 20);
    c.summary.role = msg_role::assistant;
    c.summary.content = "[CONTEXT COMPACTION — REFERENCE ONLY] " + bodies[0];
    c.update_triggers = true;
    c.triggers.compaction_count = 1;
    auto t0 = steady::now();
    auto s = store.commit_compaction(c);
    times.push_back(ms_since(t0));
    if (!s)
      throw std::runtime_error("commit_compaction: " + render_error(s.error()));
  }
  return median_or_zero(times);
}

} // namespace mneme::bench
