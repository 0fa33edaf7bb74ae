// The curl-multi event loop of the LLM transport; see curl_multi_loop.hpp.
//
// Event-driven: curl tells the loop which sockets to watch (CURLMOPT_SOCKETFUNCTION) and
// when its next timeout is due (CURLMOPT_TIMERFUNCTION); the loop waits in epoll and
// hands curl only the sockets that are ready (curl_multi_socket_action). A loop step
// costs what happened in it, not the number of transfers in flight (curl_multi_perform
// visits every transfer, curl_multi_poll every socket).
//
// Invariants (loop thread only, except `incoming_`/`stopping_` under `mtx_`):
//   1. Every transfer in `active_` is added to `multi_`; it leaves both together, and
//      its completion runs right after, exactly once.
//   2. `in_flight_` == |incoming_| + |active_| outside a loop step.
//   3. A transfer's `last_activity` only moves forward, so no transfer in `active_` can
//      reach its idle deadline before `next_sweep_`; while a cancellable transfer
//      (http_call::cancelled) is in `active_`, `next_sweep_` is at most a second away.
#include "actors/llm/curl_multi_loop.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cassert>
#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <curl/curl.h>

#include "actors/llm/llm_errors.hpp"

namespace mneme::llm {

namespace {

using clock = std::chrono::steady_clock;

constexpr size_t max_answer_bytes = 32 * 1024 * 1024;
constexpr auto max_poll_wait = std::chrono::milliseconds{1000};
constexpr int max_events = 256;

// Milliseconds from now to `t`, rounded up (a wait never ends before its deadline).
int wait_ms(clock::time_point now, clock::time_point t) {
  if (t <= now)
    return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(t - now).count());
}

struct transfer {
  http_call call;
  curl_multi_loop::completion done;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  http_outcome outcome;
  clock::time_point started;
  clock::time_point last_activity;
  curl_off_t last_up = 0;
  curl_off_t last_down = 0;
  bool too_large = false;
  bool was_cancelled = false;
  char errbuf[CURL_ERROR_SIZE] = {0};

  ~transfer() {
    if (easy)
      curl_easy_cleanup(easy);
    if (headers)
      curl_slist_free_all(headers);
  }

  // The caller asked the transfer to stop (http_call::cancelled).
  bool cancel_asked() {
    if (call.cancelled && call.cancelled())
      was_cancelled = true;
    return was_cancelled;
  }

  static size_t on_body(char* ptr, size_t size, size_t n, void* user) {
    auto* t = static_cast<transfer*>(user);
    if (t->cancel_asked())
      return 0; // CURLE_WRITE_ERROR
    t->last_activity = clock::now();
    if (t->outcome.body.size() + size * n > max_answer_bytes) {
      t->too_large = true;
      return 0; // curl fails the transfer with CURLE_WRITE_ERROR
    }
    t->outcome.body.append(ptr, size * n);
    if (t->call.on_body_piece) {
      long status = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 200 && status <= 299)
        t->call.on_body_piece(std::string_view{ptr, size * n});
    }
    return size * n;
  }

  // One header line of the answer (curl hands each line with its CRLF, and the status
  // line of every head: a new head forgets the previous one's Retry-After).
  static size_t on_header(char* ptr, size_t size, size_t n, void* user) {
    auto* t = static_cast<transfer*>(user);
    t->last_activity = clock::now();
    std::string_view line{ptr, size * n};
    if (line.rfind("HTTP/", 0) == 0) {
      t->outcome.retry_after.clear();
    } else if (constexpr std::string_view name = "retry-after:";
               line.size() >= name.size()
               && std::equal(name.begin(), name.end(), line.begin(), [](char a, char b) {
                    return a == std::tolower(static_cast<unsigned char>(b));
                  })) {
      auto value = line.substr(name.size());
      auto first = value.find_first_not_of(" \t");
      auto last = value.find_last_not_of(" \t\r\n");
      t->outcome.retry_after =
        first == std::string_view::npos ? std::string{}
                                        : std::string{value.substr(first, last - first + 1)};
    }
    return size * n;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
    auto* t = static_cast<transfer*>(user);
    if (t->cancel_asked())
      return 1; // CURLE_ABORTED_BY_CALLBACK
    if (dlnow != t->last_down || ulnow != t->last_up) {
      t->last_down = dlnow;
      t->last_up = ulnow;
      t->last_activity = clock::now();
    }
    return 0;
  }
};

} // namespace

void ensure_curl_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct curl_multi_loop::impl {
  std::string name;
  CURLM* multi = nullptr;
  int epoll_fd = -1;
  int wake_fd = -1; // eventfd: submit() and the destructor wake the loop
  std::thread thread;

  std::mutex mtx_;
  std::vector<std::unique_ptr<transfer>> incoming_;
  bool stopping_ = false;
  std::atomic<size_t> in_flight_{0};

  std::unordered_map<CURL*, std::unique_ptr<transfer>> active_;
  std::optional<clock::time_point> curl_due_; // curl's next timeout
  clock::time_point next_sweep_ = clock::time_point::max(); // invariant 3

  ~impl() {
    if (multi)
      curl_multi_cleanup(multi);
    if (epoll_fd >= 0)
      ::close(epoll_fd);
    if (wake_fd >= 0)
      ::close(wake_fd);
  }

  void wake() const {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof one);
  }

  // CURLMOPT_SOCKETFUNCTION: watch `s` for what curl waits for, or stop watching it.
  static int on_socket(CURL*, curl_socket_t s, int what, void* user, void*) {
    auto* self = static_cast<impl*>(user);
    if (what == CURL_POLL_REMOVE) {
      ::epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, s, nullptr); // may be closed already
      return 0;
    }
    epoll_event ev{};
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (::epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT)
      ::epoll_ctl(self->epoll_fd, EPOLL_CTL_ADD, s, &ev);
    return 0;
  }

  // CURLMOPT_TIMERFUNCTION: curl's next timeout (-1: none).
  static int on_timer(CURLM*, long timeout_ms, void* user) {
    auto* self = static_cast<impl*>(user);
    if (timeout_ms < 0)
      self->curl_due_.reset();
    else
      self->curl_due_ = clock::now() + std::chrono::milliseconds{timeout_ms};
    return 0;
  }

  void init() {
    multi = curl_multi_init();
    assert(multi != nullptr);
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    assert(epoll_fd >= 0 && wake_fd >= 0);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
  }

  void start(std::unique_ptr<transfer> t) {
    auto* easy = curl_easy_init();
    if (easy == nullptr) {
      t->outcome.transport = llm_error_kind::network;
      t->outcome.transport_detail = "curl_easy_init failed";
      complete(std::move(t));
      return;
    }
    t->easy = easy;
    t->started = clock::now();
    t->last_activity = t->started;
    for (const auto& h : t->call.headers)
      t->headers = curl_slist_append(t->headers, h.c_str());
    t->headers = curl_slist_append(t->headers, "Expect:"); // no 100-continue round trip
    curl_easy_setopt(easy, CURLOPT_URL, t->call.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    // Settings come from the config file only: no proxy from http_proxy & co.
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(t->call.body.size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, t->call.body.data());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(t->call.total_timeout.count()));
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(t->call.total_timeout.count()));
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &transfer::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &transfer::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &transfer::on_progress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, t.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
    if (auto rc = curl_multi_add_handle(multi, easy); rc != CURLM_OK) {
      t->outcome.transport = llm_error_kind::network;
      t->outcome.transport_detail = std::string{"curl_multi_add_handle: "}
                                    + curl_multi_strerror(rc);
      complete(std::move(t));
      return;
    }
    next_sweep_ = std::min(next_sweep_, t->last_activity + t->call.idle_timeout);
    if (t->call.cancelled) // a cancellable transfer is swept at least once a second
      next_sweep_ = std::min(next_sweep_, t->last_activity + max_poll_wait);
    active_.emplace(easy, std::move(t));
  }

  // Takes the transfer of `easy` out of the multi handle (invariant 1).
  std::unique_ptr<transfer> detach(CURL* easy) {
    auto i = active_.find(easy);
    assert(i != active_.end());
    auto t = std::move(i->second);
    active_.erase(i);
    curl_multi_remove_handle(multi, easy);
    return t;
  }

  void complete(std::unique_ptr<transfer> t) {
    t->outcome.elapsed =
      std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t->started);
    t->outcome.completed_unix_s = std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    auto done = std::move(t->done);
    auto outcome = std::move(t->outcome);
    t.reset(); // frees the easy handle before the completion runs
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    done(std::move(outcome));
  }

  void finish_curl(CURL* easy, CURLcode code) {
    auto t = detach(easy);
    if (code == CURLE_OK) {
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->outcome.status);
    } else if (t->too_large) {
      t->outcome.transport = llm_error_kind::network;
      t->outcome.transport_detail = "answer larger than 32 MiB";
    } else if (t->was_cancelled) {
      t->outcome.transport = llm_error_kind::network;
      t->outcome.transport_detail = "cancelled by the client";
    } else {
      t->outcome.transport = classify_curl_code(code);
      t->outcome.transport_detail = curl_easy_strerror(code);
      if (t->errbuf[0] != '\0')
        t->outcome.transport_detail += std::string{": "} + t->errbuf;
    }
    complete(std::move(t));
  }

  // Fails every transfer idle for its idle timeout, or cancelled by its caller; returns
  // how long the loop may sleep before the next one could expire.
  clock::duration sweep_idle(clock::time_point now) {
    clock::duration next = max_poll_wait;
    std::vector<CURL*> expired;
    for (auto& [easy, t] : active_) {
      auto deadline = t->last_activity + t->call.idle_timeout;
      if (deadline <= now || t->cancel_asked())
        expired.push_back(easy);
      else
        next = std::min(next, deadline - now);
    }
    for (auto* easy : expired) {
      auto t = detach(easy);
      if (t->was_cancelled) {
        t->outcome.transport = llm_error_kind::network;
        t->outcome.transport_detail = "cancelled by the client";
        complete(std::move(t));
        continue;
      }
      // An idle deadline at or past the total deadline is the total timeout firing
      // (idle_timeout is clamped to total_timeout, so the two can coincide); the
      // sweep must not win that race against curl's own CURLOPT_TIMEOUT_MS.
      if (t->last_activity + t->call.idle_timeout >= t->started + t->call.total_timeout) {
        t->outcome.transport = llm_error_kind::total_timeout;
        t->outcome.transport_detail =
          "no answer within " + std::to_string(t->call.total_timeout.count()) + " ms";
      } else {
        t->outcome.transport = llm_error_kind::idle_timeout;
        t->outcome.transport_detail =
          "no byte for " + std::to_string(t->call.idle_timeout.count()) + " ms";
      }
      complete(std::move(t));
    }
    return next;
  }

  void fail_all(std::vector<std::unique_ptr<transfer>> waiting) {
    std::vector<CURL*> handles;
    for (auto& [easy, t] : active_)
      handles.push_back(easy);
    for (auto* easy : handles)
      waiting.push_back(detach(easy));
    for (auto& t : waiting) {
      t->outcome.transport = llm_error_kind::network;
      t->outcome.transport_detail = "transport stopped";
      if (!t->easy)
        t->started = clock::now();
      complete(std::move(t));
    }
  }

  // Completes every transfer curl reports done.
  void drain_done() {
    int left = 0;
    while (auto* msg = curl_multi_info_read(multi, &left))
      if (msg->msg == CURLMSG_DONE)
        finish_curl(msg->easy_handle, msg->data.result);
  }

  // Hands curl the ready sockets of one wait (the wake-up fd is only drained).
  void dispatch(const epoll_event* events, int n) {
    int running = 0;
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      if (fd == wake_fd) {
        uint64_t count = 0;
        [[maybe_unused]] auto r = ::read(wake_fd, &count, sizeof count);
        continue;
      }
      int mask = 0;
      if (events[i].events & EPOLLIN)
        mask |= CURL_CSELECT_IN;
      if (events[i].events & EPOLLOUT)
        mask |= CURL_CSELECT_OUT;
      if (events[i].events & (EPOLLERR | EPOLLHUP))
        mask |= CURL_CSELECT_ERR;
      curl_multi_socket_action(multi, fd, mask, &running);
    }
  }

  static void run(std::shared_ptr<impl> self) {
    pthread_setname_np(pthread_self(), self->name.substr(0, 15).c_str());
    std::vector<std::unique_ptr<transfer>> batch;
    epoll_event events[max_events];
    for (;;) {
      bool stop = false;
      {
        std::lock_guard<std::mutex> guard{self->mtx_};
        batch.swap(self->incoming_);
        stop = self->stopping_;
      }
      if (stop) {
        self->fail_all(std::move(batch));
        return;
      }
      for (auto& t : batch)
        self->start(std::move(t));
      batch.clear();
      auto now = clock::now();
      if (self->curl_due_ && *self->curl_due_ <= now) {
        self->curl_due_.reset();
        int running = 0;
        curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        self->drain_done();
        now = clock::now();
      }
      if (now >= self->next_sweep_)
        self->next_sweep_ = now + self->sweep_idle(now);
      auto until = std::min(self->next_sweep_, now + max_poll_wait);
      if (self->curl_due_)
        until = std::min(until, *self->curl_due_);
      int n = ::epoll_wait(self->epoll_fd, events, max_events, wait_ms(now, until));
      if (n > 0) {
        self->dispatch(events, n);
        self->drain_done();
      }
    }
  }
};

curl_multi_loop::curl_multi_loop(std::string name) : impl_(std::make_shared<impl>()) {
  ensure_curl_global_init();
  impl_->name = std::move(name);
  impl_->init();
  impl_->thread = std::thread{&impl::run, impl_};
}

curl_multi_loop::~curl_multi_loop() {
  {
    std::lock_guard<std::mutex> guard{impl_->mtx_};
    impl_->stopping_ = true;
  }
  impl_->wake();
  if (std::this_thread::get_id() == impl_->thread.get_id())
    impl_->thread.detach(); // a completion released the last owner; run() ends by itself
  else
    impl_->thread.join();
}

void curl_multi_loop::submit(http_call call, completion done) {
  auto t = std::make_unique<transfer>();
  t->call = std::move(call);
  t->done = std::move(done);
  impl_->in_flight_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard{impl_->mtx_};
    impl_->incoming_.push_back(std::move(t));
  }
  impl_->wake();
}

size_t curl_multi_loop::in_flight() const {
  return impl_->in_flight_.load(std::memory_order_relaxed);
}

} // namespace mneme::llm
