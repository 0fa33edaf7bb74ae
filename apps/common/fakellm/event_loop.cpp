// Implementation of the epoll event loop (see event_loop.hpp).
#include "apps/common/fakellm/event_loop.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace mneme::fakellm {

event_loop::event_loop() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ >= 0 && wake_fd_ >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  }
}

event_loop::~event_loop() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

bool event_loop::add(int fd, uint32_t events, fd_handler handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  handlers_[fd] = std::make_shared<fd_handler>(std::move(handler));
  return true;
}

bool event_loop::modify(int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  return ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void event_loop::remove(int fd) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(fd);
}

event_loop::timer_id event_loop::schedule(std::chrono::milliseconds delay,
                                          std::function<void()> fn) {
  auto id = next_timer_id_++;
  heap_.push(deadline{clock::now() + delay, id});
  timers_.emplace(id, std::move(fn));
  return id;
}

void event_loop::cancel(timer_id id) {
  timers_.erase(id);  // the heap entry is skipped when it comes due
}

void event_loop::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> guard{posted_mtx_};
    posted_.push_back(std::move(fn));
  }
  wake();
}

void event_loop::stop() {
  post([this] { stopping_ = true; });
}

void event_loop::wake() {
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void event_loop::drain_posted() {
  uint64_t count = 0;
  [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof count);
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> guard{posted_mtx_};
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

int event_loop::next_timeout_ms() const {
  if (heap_.empty()) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(heap_.top().at - clock::now());
  // Round up so a timer is never polled for a few microseconds early in a busy loop.
  return left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
}

void event_loop::fire_due_timers() {
  auto now = clock::now();
  while (!heap_.empty() && heap_.top().at <= now) {
    auto id = heap_.top().id;
    heap_.pop();
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;  // cancelled
    auto fn = std::move(it->second);
    timers_.erase(it);
    fn();
  }
}

void event_loop::run() {
  std::array<epoll_event, 256> events{};
  while (!stopping_) {
    int n = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                         next_timeout_ms());
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        drain_posted();
        continue;
      }
      auto it = handlers_.find(fd);
      if (it == handlers_.end()) continue;  // removed by an earlier handler this round
      auto handler = it->second;            // keeps the handler alive while it runs
      (*handler)(events[i].events);
    }
    fire_due_timers();
  }
}

} // namespace mneme::fakellm
