// A single-threaded epoll event loop with a timer heap, for the fake LLM server.
// Ownership and threads: one thread calls run() and from then on is "the loop
// thread"; add/modify/remove/schedule/cancel may be called only on that thread
// (from inside handlers). post() and stop() are thread-safe and wake the loop
// through an eventfd. Handlers never block. Copy and move are deleted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <vector>

namespace mneme::fakellm {

class event_loop {
 public:
  using clock = std::chrono::steady_clock;
  using fd_handler = std::function<void(uint32_t epoll_events)>;
  using timer_id = uint64_t;

  event_loop();
  ~event_loop();
  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  // False when epoll/eventfd could not be created (errno tells why).
  bool valid() const { return epoll_fd_ >= 0 && wake_fd_ >= 0; }

  // Registers `fd` for `events` (EPOLLIN, EPOLLOUT, ...). Returns false on failure.
  // REQUIRES: called on the loop thread (or before run()); fd not yet registered.
  bool add(int fd, uint32_t events, fd_handler handler);
  bool modify(int fd, uint32_t events);
  // Unregisters `fd`; does not close it. Safe to call from inside its own handler.
  void remove(int fd);

  // Runs `fn` once after `delay` on the loop thread. Returns an id for cancel().
  timer_id schedule(std::chrono::milliseconds delay, std::function<void()> fn);
  void cancel(timer_id id);
  size_t pending_timers() const { return timers_.size(); }

  // Thread-safe: runs `fn` on the loop thread soon.
  void post(std::function<void()> fn);
  // Thread-safe: makes run() return after the current iteration.
  void stop();

  // Dispatches events and timers until stop(). Call from exactly one thread.
  void run();

 private:
  struct deadline {
    clock::time_point at;
    timer_id id;
    bool operator>(const deadline& o) const { return at != o.at ? at > o.at : id > o.id; }
  };

  void wake();
  void drain_posted();
  int next_timeout_ms() const;
  void fire_due_timers();

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool stopping_ = false;  // loop thread only, set from the posted stop
  std::unordered_map<int, std::shared_ptr<fd_handler>> handlers_;
  std::priority_queue<deadline, std::vector<deadline>, std::greater<>> heap_;
  std::unordered_map<timer_id, std::function<void()>> timers_;  // live (uncancelled) timers
  timer_id next_timer_id_ = 1;

  std::mutex posted_mtx_;
  std::vector<std::function<void()>> posted_;  // guarded by posted_mtx_
};

} // namespace mneme::fakellm
