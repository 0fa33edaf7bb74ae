// The LLM transport: one thread of its own drives every HTTP call of a pool through
// libcurl's multi interface, so a thousand concurrent calls cost one thread, not a
// thousand, and no blocking call ever runs on a CAF scheduler thread.
//
// Threads: submit() may be called from any thread. Completions run ON THE LOOP THREAD:
// they must not block (the pool's completion only sends a CAF message). The destructor
// stops the loop: calls still in flight are completed with `network` ("transport
// stopped") before it returns, unless it runs on the loop thread itself (a completion
// dropped the last owner), in which case the loop finishes on its own.
//
// Timeouts: the idle timeout (no byte received or sent for `idle_timeout`) is enforced
// by the loop, to the millisecond, during connect and transfer alike; the total
// timeout is curl's CURLOPT_TIMEOUT_MS.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "messages/llm_error_kind.hpp"

namespace mneme::llm {

struct http_call {
  std::string url;
  std::vector<std::string> headers;   // "Name: value"
  std::string body;                   // POSTed as is
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::milliseconds total_timeout{300000};
  // Set: called ON THE LOOP THREAD with each piece of a 2xx answer's body as it arrives
  // (a streamed answer is read while it streams); the body is collected all the same.
  // Must not block.
  std::function<void(std::string_view)> on_body_piece;
  // Set: polled ON THE LOOP THREAD at each body piece and progress tick, and at the
  // loop's idle sweep (at least once a second, so while the upstream is silent too); true
  // aborts the transfer, which completes as a `network` failure whose detail says it was
  // cancelled. Must not block.
  std::function<bool()> cancelled;
};

struct http_outcome {
  llm_error_kind transport = llm_error_kind::none; // none = an HTTP answer arrived
  std::string transport_detail;      // curl's message or the loop's reason
  long status = 0;                   // HTTP status, 0 without an answer
  std::string body;                  // answer body (possibly partial on failure)
  std::chrono::microseconds elapsed{0};
  // The answer's Retry-After header as sent (whitespace trimmed; "" = none; the last
  // answer's when curl saw several heads), and the wall-clock time (Unix seconds) at
  // which the call completed, to turn an HTTP-date into seconds
  // (policies/retry_after.hpp).
  std::string retry_after;
  int64_t completed_unix_s = 0;
};

class curl_multi_loop {
public:
  using completion = std::function<void(http_outcome)>;

  // Starts the loop thread; `name` becomes the thread name (at most 15 chars used).
  explicit curl_multi_loop(std::string name = "llm-curl");
  ~curl_multi_loop();
  curl_multi_loop(const curl_multi_loop&) = delete;
  curl_multi_loop& operator=(const curl_multi_loop&) = delete;

  // Queues a call; `done` runs exactly once on the loop thread.
  void submit(http_call call, completion done);

  // Calls submitted and not yet completed.
  size_t in_flight() const;

  struct impl;

private:
  std::shared_ptr<impl> impl_;
};

// curl_global_init, once per process, before any transfer. Called by the loop;
// exposed for programs that use curl directly too.
void ensure_curl_global_init();

} // namespace mneme::llm
