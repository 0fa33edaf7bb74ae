// The `gateway:` block of the configuration: the HTTP API and session hosting limits.
// Plain values filled by apps/common/app_config; read by the gateway and daemon.
#pragma once

#include <cstdint>
#include <string>

namespace mneme {

struct gateway_params {
  std::string host = "127.0.0.1";
  int64_t port = 8077;
  std::string auth_token;               // empty = no bearer token required
  std::string auth_token_file;
  int64_t max_body_bytes = 4 * 1024 * 1024;
  int64_t idle_evict_seconds = 600;     // resident session actors idle this long are evicted
  int64_t request_timeout_seconds = 330;// longer than any LLM timeout so the precise error wins
  std::string default_user = "default";
  std::string system_prompt = "You are a helpful assistant.";
  std::string skills_dir;               // folder of <name>/SKILL.md; empty = no skills
};

} // namespace mneme
