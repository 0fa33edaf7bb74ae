// The storage actor's checkpoint arrangement for benchmark runs; see bench_checkpointer.hpp.
#include "apps/mneme-bench/bench_checkpointer.hpp"

#include <cstdio>
#include <ctime>

namespace mneme::bench {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bench_checkpointer::bench_checkpointer(const std::string& path, int64_t page_bytes)
  : params_(wal_checkpoint_params_for(page_bytes)) {
  if (sqlite3_open_v2(path.c_str(), &own_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr)
      != SQLITE_OK)
    std::fprintf(stderr, "checkpointer: cannot open %s: %s\n", path.c_str(), sqlite3_errmsg(own_));
  // A connection that has read nothing does not know the file is in WAL mode, and
  // its checkpoints would do nothing.
  sqlite3_exec(own_, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
  thread_ = std::thread([this] { run(); });
}

bench_checkpointer::~bench_checkpointer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  sqlite3_close(own_);
}

void bench_checkpointer::watch(sqlite3* writer) {
  writer_ = writer;
  // The pragma installs SQLite's own hook (or none), so it goes first.
  sqlite3_exec(writer, "PRAGMA wal_autocheckpoint=0", nullptr, nullptr, nullptr);
  sqlite3_wal_hook(
    writer,
    [](void* self, sqlite3*, const char*, int pages) {
      auto* me = static_cast<bench_checkpointer*>(self);
      me->wal_pages_ = pages;
      me->committed_ = true;
      return SQLITE_OK;
    },
    this);
}

void bench_checkpointer::after_commit() {
  if (!committed_)
    return;
  committed_ = false;
  bool busy = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy = requested_ || running_;
  }
  switch (plan_wal_checkpoint(params_, wal_pages_, true, busy)) {
    case wal_checkpoint_action::none:
      break;
    case wal_checkpoint_action::background: {
      std::lock_guard<std::mutex> lock(mutex_);
      requested_ = true;
      ++background_;
      changed_.notify_all();
      break;
    }
    case wal_checkpoint_action::inline_passive:
      ++inline_;
      if (sqlite3_wal_checkpoint_v2(writer_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr)
          == SQLITE_BUSY)
        committed_ = true; // the thread's was running: plan again after the next commit
      break;
  }
}

void bench_checkpointer::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !requested_ && !running_; });
}

double bench_checkpointer::thread_seconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  return own_seconds_;
}

void bench_checkpointer::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_)
      return;
    requested_ = false;
    running_ = true;
    lock.unlock();
    // SQLITE_BUSY: the writer's own checkpoint runs; it copies the same log.
    int log = 0;
    int rc = sqlite3_wal_checkpoint_v2(own_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, nullptr);
    if ((rc != SQLITE_OK && rc != SQLITE_BUSY) || log < 0)
      std::fprintf(stderr, "checkpointer: the checkpoint did nothing (rc=%d log=%d): %s\n", rc, log,
                   sqlite3_errmsg(own_));
    auto seconds = thread_cpu_seconds();
    lock.lock();
    running_ = false;
    own_seconds_ = seconds;
    changed_.notify_all();
  }
}

} // namespace mneme::bench
