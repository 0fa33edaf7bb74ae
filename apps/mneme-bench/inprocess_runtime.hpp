// What the in-process HTTP benchmarks of mneme-bench (http, agent, proxy) share to start
// mneme beside their load: the runtime configuration against the fake LLM, the file
// limit their thousands of sockets need, and inprocess_daemon, the whole rig (the fake
// LLM, the runtime on a fresh directory under /tmp, the HTTP server on 127.0.0.1).
// Only this program includes this file.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "caf/expected.hpp"

#include "actors/runtime.hpp"
#include "apps/common/api/http_server.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"

namespace mneme::bench {

// The runtime against the fake LLM at `llm_url`, its database at `db_path` (no fsync: a
// file under /tmp, not what is measured): the chat pool admits `concurrency` calls at
// once and queues as many (the pool is not what is measured), and the compaction
// threshold (90% of the window) is far above what the benchmarks' turns add, so no
// session compacts.
caf::expected<runtime_config> bench_runtime_config(int64_t concurrency, const std::string& llm_url,
                                                   const std::string& db_path);

// Raises the soft limit of open files to the hard one (each client holds a socket here,
// and the server, the chat pool and the fake LLM hold more).
void raise_file_limit();

// The flags every in-process rig benchmark takes: --llm-delay-ms, --io-threads,
// --max-seconds (each pass's deadline) and --json.
struct rig_flags {
  int llm_delay_ms = 200;
  int io_threads = 2;
  int max_seconds = 600;
  bool json_out = false;
};
void add_rig_flags(CLI::App& cmd, rig_flags& f);

// The fake LLM's scenario: chat calls answered after `delay_ms` (0: at once).
fakellm::scenario chat_delay_scenario(int delay_ms);

// The fake LLM answering by `scenario`, the runtime of bench_runtime_config(concurrency)
// on <dir>/bench.db (`adjust` may change its configuration), and the HTTP server with
// `io_threads` threads on a free loopback port. The directory is removed and the fake
// stopped by the destructor, after shut_down() if it was not called.
// Threads: start(), shut_down() and the destructor from one thread (the benchmark's).
class inprocess_daemon {
 public:
  struct settings {
    std::string name;                 // of the directory: /tmp/mneme-bench-<name>-XXXXXX
    fakellm::scenario scenario;
    int64_t concurrency = 1;
    int io_threads = 2;
    bool caf_default_polling = false; // true: CAF's scheduler settings, not the daemon's
    std::function<void(runtime_config&)> adjust; // may be empty
  };
  static caf::expected<std::unique_ptr<inprocess_daemon>> start(const settings& s);
  ~inprocess_daemon();
  inprocess_daemon(const inprocess_daemon&) = delete;
  inprocess_daemon& operator=(const inprocess_daemon&) = delete;

  uint16_t port() const { return port_; }
  std::string mneme_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string llm_url() const; // the fake's chat-completions URL
  const std::string& dir() const { return dir_; }
  // Rows stored but not yet in every full-text index (the writer indexes them when idle).
  int64_t unindexed_rows() const;
  // The daemon's shutdown: requests in flight get `grace`, the rest 503; then the runtime
  // and the server stop. Idempotent.
  void shut_down(std::chrono::milliseconds grace);

 private:
  inprocess_daemon() = default;

  fakellm::fake_llm_server fake_;
  std::string dir_;
  std::unique_ptr<caf::actor_system_config> cfg_; // the system keeps a reference to it
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<runtime> rt_;
  std::unique_ptr<api::http_server> server_;
  uint16_t port_ = 0;
  bool down_ = false;
};

// The rig of the door benchmarks (proxy, responses, anthropic): chat answered after
// rig.llm_delay_ms, the model named "fake-chat", `concurrency` sessions. nullptr after
// printing why it did not start.
std::unique_ptr<inprocess_daemon> start_door_rig(const std::string& name, int64_t concurrency,
                                                 const rig_flags& rig);

// Waits (at most 300 s) until every stored row is indexed, so the writer's idle indexing
// of a pass's unmeasured first sends is not counted as its measured requests' CPU.
void wait_until_indexed(const inprocess_daemon& d);

} // namespace mneme::bench
