// The `embeddings:` block (issue 48): where the embedder (actors/embed) gets vectors
// from and how hard it tries. Plain values filled by apps/common/config/app_config;
// read at start by the runtime. Off by default: without it nothing of semantic recall
// runs and every search is full text, exactly as before.
#pragma once

#include <cstdint>
#include <string>

namespace mneme {

struct embedding_params {
  bool enabled = false;
  // http(s)://... of an OpenAI-compatible provider (POST {base_url}/v1/embeddings), or
  // "builtin" (the in-process fake LLM), or "" = the model block's base_url.
  std::string base_url;
  std::string model = "text-embedding-3-small";
  int64_t dimensions = 256;          // the vectors' size: asked for, and checked
  bool send_dimensions = true;       // false: "dimensions" is left out of the request
                                     // (providers whose model has one fixed size)
  int64_t batch_size = 64;           // texts per provider call
  int64_t timeout_seconds = 30;      // idle: no byte for this long fails the call
  int64_t total_ceiling_seconds = 120; // one call, whole
  int64_t query_timeout_ms = 2000;   // a search query's embedding, whole
  // The environment variable holding the provider's key ("" = none; with base_url ""
  // the model block's key). The key itself is never in the file nor in a log.
  std::string api_key_env;
  int64_t max_input_chars = 8000;    // a longer text is cut to this many characters
  int64_t backoff_initial_ms = 1000; // first wait after a failed call, doubled per
  int64_t backoff_max_ms = 300000;   // failure up to this
  int64_t idle_poll_ms = 2000;       // how often to look for new rows with none left
};

} // namespace mneme
