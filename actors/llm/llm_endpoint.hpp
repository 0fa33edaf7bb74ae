// Where and how one LLM pool calls: the resolved URL, the bearer key (read once from
// the config or a key file at start), the purpose header and the two timeouts. Built
// once by the app from the config blocks, then copied into a pool; immutable after.
// The key is never logged and never part of an error context.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "caf/expected.hpp"
#include "caf/make_message.hpp" // errc.hpp needs it for make_error with a context

#include "actors/llm_params.hpp"
#include "messages/chat_request.hpp"
#include "policies/compression_params.hpp"

namespace mneme::llm {

struct llm_endpoint {
  std::string url;                      // full chat-completions (or messages) URL
  llm_api api = llm_api::openai;        // the wire protocol spoken at `url`
  std::string api_key;                  // empty = no Authorization (x-api-key) header
  std::string model;                    // used when a request leaves `model` empty
  llm_purpose purpose = llm_purpose::chat;
  std::chrono::milliseconds idle_timeout{60000};   // no byte received (or sent) this long
  std::chrono::milliseconds total_timeout{300000}; // whole call, queueing included
};

// How one pool runs: its endpoint and its bounds.
struct llm_pool_config {
  std::string name = "llm";             // logger field and thread name ("llm-summary")
  llm_endpoint endpoint;
  size_t max_concurrency = 8;           // HTTP calls in flight
  size_t max_queue = 256;               // waiting beyond this -> errc::overloaded at once
};

// "{base_url}/v1/chat/completions"; a base_url that already ends in "/v1" (the
// usual OpenAI-style setting) only gets "/chat/completions". Trailing '/' ignored.
std::string chat_completions_url(std::string_view base_url);

// The URL of `base_url` for `api`: chat_completions_url or messages_url.
std::string endpoint_url(std::string_view base_url, llm_api api);

// The bearer key: the first line of `key_file` (whitespace trimmed) when `key_file` is
// set, else `inline_key`. A missing, unreadable or empty key file is config_invalid
// naming `config_path` and the file (never its content).
caf::expected<std::string> load_api_key(const std::string& inline_key,
                                        const std::string& key_file,
                                        std::string_view config_path);

// The summarizer pool: URL/model/key/api from `auxiliary.compression`, falling back to
// the model block; idle = compression.context_timeout_seconds; total =
// min(compression.context_total_ceiling_seconds, auxiliary.compression.timeout).
// A base_url of "builtin" must be replaced by the app (in-process fake) before this.
caf::expected<llm_pool_config> make_summary_pool_config(const summarizer_params& aux,
                                                        const model_params& model,
                                                        const compression_params& comp);

// The same pool for hygiene compactions (T3/T4, gateway side): idle =
// compression.hygiene_timeout_seconds; total = min(hygiene_total_ceiling_seconds,
// auxiliary.compression.timeout). Name "hygiene".
caf::expected<llm_pool_config> make_hygiene_pool_config(const summarizer_params& aux,
                                                        const model_params& model,
                                                        const compression_params& comp);

// The chat pool for the session's main model: URL/model/key/api from the model block;
// idle and total = model.timeout (a non-streaming answer sends no byte until
// it is complete, so an idle bound shorter than the total would cut slow answers).
caf::expected<llm_pool_config> make_chat_pool_config(const model_params& model,
                                                     const chat_pool_params& chat);

} // namespace mneme::llm
