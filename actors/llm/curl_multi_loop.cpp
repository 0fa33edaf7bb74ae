// The curl-multi event loop of the LLM transport; see curl_multi_loop.hpp.
//
// Invariants (loop thread only, except `incoming_`/`stopping_` under `mtx_`):
//   1. Every transfer in `active_` is added to `multi_`; it leaves both together, and
//      its completion runs right after, exactly once.
//   2. `in_flight_` == |incoming_| + |active_| outside a loop step.
//   3. A transfer's `last_activity` only moves forward.
#include "actors/llm/curl_multi_loop.hpp"

#include <pthread.h>

#include <atomic>
#include <cassert>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <curl/curl.h>

#include "actors/llm/llm_errors.hpp"

namespace mneme::llm {

namespace {

using clock = std::chrono::steady_clock;

constexpr size_t max_answer_bytes = 32 * 1024 * 1024;
constexpr auto max_poll_wait = std::chrono::milliseconds{1000};

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
  char errbuf[CURL_ERROR_SIZE] = {0};

  ~transfer() {
    if (easy)
      curl_easy_cleanup(easy);
    if (headers)
      curl_slist_free_all(headers);
  }

  static size_t on_body(char* ptr, size_t size, size_t n, void* user) {
    auto* t = static_cast<transfer*>(user);
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

  static size_t on_header(char*, size_t size, size_t n, void* user) {
    static_cast<transfer*>(user)->last_activity = clock::now();
    return size * n;
  }

  static int on_progress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
    auto* t = static_cast<transfer*>(user);
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
  std::thread thread;

  std::mutex mtx_;
  std::vector<std::unique_ptr<transfer>> incoming_;
  bool stopping_ = false;
  std::atomic<size_t> in_flight_{0};

  std::unordered_map<CURL*, std::unique_ptr<transfer>> active_;

  ~impl() {
    if (multi)
      curl_multi_cleanup(multi);
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
    } else {
      t->outcome.transport = classify_curl_code(code);
      t->outcome.transport_detail = curl_easy_strerror(code);
      if (t->errbuf[0] != '\0')
        t->outcome.transport_detail += std::string{": "} + t->errbuf;
    }
    complete(std::move(t));
  }

  // Fails every transfer idle for its idle timeout; returns how long the loop may
  // sleep before the next one could expire.
  std::chrono::milliseconds sweep_idle(clock::time_point now) {
    auto next = max_poll_wait;
    std::vector<CURL*> expired;
    for (auto& [easy, t] : active_) {
      auto deadline = t->last_activity + t->call.idle_timeout;
      if (deadline <= now)
        expired.push_back(easy);
      else
        next = std::min(next, std::chrono::ceil<std::chrono::milliseconds>(deadline - now));
    }
    for (auto* easy : expired) {
      auto t = detach(easy);
      t->outcome.transport = llm_error_kind::idle_timeout;
      t->outcome.transport_detail =
        "no byte for " + std::to_string(t->call.idle_timeout.count()) + " ms";
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

  static void run(std::shared_ptr<impl> self) {
    pthread_setname_np(pthread_self(), self->name.substr(0, 15).c_str());
    std::vector<std::unique_ptr<transfer>> batch;
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
      int running = 0;
      curl_multi_perform(self->multi, &running);
      int left = 0;
      while (auto* msg = curl_multi_info_read(self->multi, &left))
        if (msg->msg == CURLMSG_DONE)
          self->finish_curl(msg->easy_handle, msg->data.result);
      auto wait = self->sweep_idle(clock::now());
      long curl_wait = -1;
      curl_multi_timeout(self->multi, &curl_wait);
      if (curl_wait >= 0)
        wait = std::min(wait, std::chrono::milliseconds{curl_wait});
      curl_multi_poll(self->multi, nullptr, 0, static_cast<int>(wait.count()), nullptr);
    }
  }
};

curl_multi_loop::curl_multi_loop(std::string name) : impl_(std::make_shared<impl>()) {
  ensure_curl_global_init();
  impl_->name = std::move(name);
  impl_->multi = curl_multi_init();
  assert(impl_->multi != nullptr);
  impl_->thread = std::thread{&impl::run, impl_};
}

curl_multi_loop::~curl_multi_loop() {
  {
    std::lock_guard<std::mutex> guard{impl_->mtx_};
    impl_->stopping_ = true;
  }
  curl_multi_wakeup(impl_->multi);
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
  curl_multi_wakeup(impl_->multi);
}

size_t curl_multi_loop::in_flight() const {
  return impl_->in_flight_.load(std::memory_order_relaxed);
}

} // namespace mneme::llm
