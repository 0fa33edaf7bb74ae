// The one way a mneme program builds its runtime from an app_config: the pool
// configurations (chat, summarizer, hygiene) and the runtime configuration derived from
// it, an actor system with mneme's types registered and CAF's own logger quiet, and the
// runtime started on that system. Used by `mneme serve`, `mneme run`, `mneme compact`
// and the soak's in-process target; tests and benchmarks that need a differently shaped
// runtime build their runtime_config themselves.
//
// Thread: start and destroy from one non-actor thread; the runtime's handles may be used
// from anywhere by messages.
#pragma once

#include <memory>
#include <string>

#include "caf/all.hpp"

#include "actors/runtime.hpp"
#include "apps/common/config/app_config.hpp"

namespace mneme {

// The runtime configuration of `cfg`: its compression, model, database and gateway
// blocks and the three LLM pools. Errors: the pool configuration's config_invalid (an
// unreadable key file, a bad URL), whose context names the setting. REQUIRES: no base_url is still
// "builtin" (point_builtin_at first).
caf::expected<runtime_config> runtime_config_of(const app_config& cfg);

// With `embeddings:` on, the embedder's endpoint too: its base_url (or the model's when
// unset) and its key (the environment variable embeddings.api_key_env names, read here;
// unset or empty: config_invalid; none named and no base_url of its own: the model's).
//
// Replaces the base_url "builtin" of the model, auxiliary.compression and embeddings with `url`
// (the in-process fake LLM the caller started).
void point_builtin_at(app_config& cfg, const std::string& url);

// True when the model, the summarizer or (enabled) the embeddings ask for the built-in
// fake LLM.
bool wants_builtin(const app_config& cfg);

// Owns the actor system and the runtime on it. Destruction stops the runtime, then the
// actor system; anything using system() (an HTTP server, a scoped actor) must be
// destroyed first.
class runtime_host {
 public:
  // Errors: runtime::start's (storage_cant_open, ...).
  static caf::expected<std::unique_ptr<runtime_host>> start(runtime_config rc);
  ~runtime_host();
  runtime_host(const runtime_host&) = delete;
  runtime_host& operator=(const runtime_host&) = delete;

  caf::actor_system& system() { return *sys_; }
  runtime& rt() { return *rt_; }

  // Stops the runtime (idempotent); the actor system stays until destruction.
  void stop();

 private:
  runtime_host() = default;

  std::unique_ptr<caf::actor_system_config> sys_cfg_; // outlives sys_
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<runtime> rt_;
};

} // namespace mneme
