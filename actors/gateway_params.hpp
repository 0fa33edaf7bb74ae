// The `gateway:` block of the configuration: the HTTP API and session hosting limits.
// Plain values filled by apps/common/config/app_config; read by the gateway and daemon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mneme {

struct gateway_params {
  std::string host = "127.0.0.1";
  int64_t port = 8077;
  std::string auth_token;               // the admin token; empty = none
  std::string auth_token_file;
  std::string tokens_file;              // scoped tokens (apps/common/api/tokens/token_store.hpp)
  // Listen on a non-loopback host with no credential configured (policies/listen_guard).
  bool allow_unauthenticated = false;
  int64_t max_body_bytes = 4 * 1024 * 1024;
  int64_t idle_evict_seconds = 600;     // resident session actors idle this long are evicted
  int64_t request_timeout_seconds = 330;// longer than any LLM timeout so the precise error wins
  std::string default_user = "default";
  std::string system_prompt = "You are a helpful assistant.";
  std::string skills_dir;               // folder of <name>/SKILL.md; empty = no skills
  int64_t max_tool_rounds = 64;         // model answers with tool calls per user turn
  int64_t max_tool_calls_per_message = 128; // a stored row's tool_calls (policies/tool_call_rules)
  // The built-in tools offered to the model (policies/builtin_tools.hpp): any of
  // session_search, memory, skills; each only when available (session_search: a database
  // file; skills: skills_dir set). [] = none.
  std::vector<std::string> builtin_tools{"session_search", "memory", "skills"};
  int64_t builtin_result_max_bytes = 16384; // each built-in tool result, cut beyond
  // After a reset for compaction exhaustion the unanswered message is re-run once in the
  // new session (true), or the notice asks the user to send it again (false).
  bool replay_after_reset = true;
  // The HTTP front (apps/common/api/front/http_front.hpp).
  int64_t io_threads = 2;                  // the front's own threads, whatever the clients
  int64_t max_connections = 10000;         // open connections; more are closed at once
  int64_t max_connections_per_address = 2000; // of those, from one client address
  int64_t reserved_connections = 64;       // beyond them: health, metrics and admin only
  int64_t header_timeout_seconds = 10;     // a request's headers, from its first byte
  int64_t body_timeout_seconds = 10;       // a body's deadline: this + size / the rate below
  int64_t body_min_bytes_per_second = 65536;
  int64_t keep_alive_seconds = 60;         // idle between two requests of a connection
  int64_t stream_buffer_bytes = 1048576;   // unsent bytes of a streamed answer; more: dropped
  int64_t shutdown_drain_seconds = 30;     // SIGTERM: requests in flight may finish this long
  // Several nodes on one PostgreSQL database (docs/scale-out.md): a node id turns node
  // mode on (session-key leases, fencing, forwarding); advertise_url is where the other
  // nodes forward a key this node owns ("http://host:port"); a lease not renewed for
  // lease_seconds may be taken over.
  std::string node_id;
  std::string advertise_url;
  int64_t lease_seconds = 10;
  // Idempotent writes (docs/api.md "Idempotency-Key"): a re-send with the same key within
  // this many seconds of the first row answers the first answer; after it the key may
  // name a new request.
  int64_t idempotency_window_seconds = 86400;
};

} // namespace mneme
