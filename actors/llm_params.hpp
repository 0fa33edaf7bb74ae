// Endpoint settings of the LLM client pools: the `auxiliary.compression:` block
// (summarizer) and the transport part of the `model:` block (chat). Plain values
// filled by apps/common/config/app_config; read by the pools at spawn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "policies/compression_params.hpp"

namespace mneme {

struct summarizer_params {
  std::string base_url;        // empty = the model block's base_url
  std::string model;           // empty = the model block's name
  std::string api_key;         // never logged
  std::string api_key_file;    // read at start; wins over api_key when set
  std::optional<llm_api> api;  // unset = the model block's api
  int64_t timeout_seconds = 120; // total timeout of one summary call
  int64_t max_concurrency = 8;   // HTTP calls in flight
  int64_t max_queue = 256;       // waiting requests beyond which overload is returned
};

struct chat_pool_params {
  int64_t max_concurrency = 32;
  int64_t max_queue = 4096;
  int64_t timeout_seconds = 300;
};

} // namespace mneme
