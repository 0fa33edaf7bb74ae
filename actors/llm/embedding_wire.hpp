// One embeddings call (issue 48) as data, beside the chat calls of this folder: the HTTP
// call built from an endpoint and the texts, and the strict reading of its outcome into
// unit vectors or a classified caf::error. Pure functions; the transport
// (curl_multi_loop) runs the call between them, as for chat (llm_call.hpp).
//
// Wire: POST {base_url}/v1/embeddings (a base_url ending in /v1 gets /embeddings only),
// headers Content-Type, Accept, Authorization: Bearer <key> when a key is set,
// X-Mneme-Purpose: embedding. Body: {"model", "input": [texts], "dimensions" (when
// sent), "encoding_format": "float"}. Answer: {"data": [{"index", "embedding"}],
// "model", "usage"}.
//
// Failures: transport kinds as the loop reports them; a non-2xx answer through
// policies/error_classifier (its Retry-After carried as for chat); a 2xx error object
// with its embedded status; a 2xx body that is not exactly one vector per input ->
// llm_malformed naming what was wrong: not JSON, no "data" array, an item without an
// integer "index" in 0..n-1, an index twice or missing, an "embedding" that is not an
// array of numbers, of another size than the dimensions, with a non-finite number, or
// all zero (no direction). Vectors come back in input order, scaled to unit length.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"

#include "actors/llm/curl_multi_loop.hpp"

namespace mneme::llm {

struct embedding_endpoint {
  std::string url;                  // the full embeddings URL (embeddings_url)
  std::string api_key;              // empty = no Authorization header; never logged
  std::string model;
  std::size_t dimensions = 256;     // every vector must have this many numbers
  bool send_dimensions = true;      // put "dimensions" in the request
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds total_timeout{120000};
};

std::string embeddings_url(std::string_view base_url);

// The request body above.
std::string embedding_request_json(const embedding_endpoint& endpoint,
                                   const std::vector<std::string>& texts);

// REQUIRES: total_timeout > 0; the idle timeout is the endpoint's, capped by it.
http_call build_embedding_call(const embedding_endpoint& endpoint,
                               const std::vector<std::string>& texts,
                               std::chrono::milliseconds total_timeout);

// The 2xx body's vectors, `count` of `dims` numbers each, in input order, unit length;
// or llm_malformed naming the defect.
caf::expected<std::vector<std::vector<float>>> parse_embedding_answer(std::string_view body,
                                                                      std::size_t count,
                                                                      std::size_t dims);

// A finished call's vectors or its classified failure (see above); the error context
// names the failure, the elapsed time, the HTTP status and a body excerpt with
// `api_key` redacted.
caf::expected<std::vector<std::vector<float>>> read_embedding_outcome(const http_outcome& out,
                                                                      std::size_t count,
                                                                      std::size_t dims,
                                                                      const std::string& api_key);

} // namespace mneme::llm
