// The embeddings endpoint's wire format as the fake LLM speaks it: OpenAI's
// `POST /v1/embeddings` (issue 48), what hosted providers, Ollama and vLLM serve.
//
// Request:  {"model": "...", "input": "text" | ["text", ...],
//            "dimensions": N (optional, 1..4096), "encoding_format": "float" (optional;
//            anything else is a 400: the fake speaks floats only)}
// Answer:   {"object": "list",
//            "data": [{"object": "embedding", "index": i, "embedding": [floats]}...],
//            "model": "...", "usage": {"prompt_tokens": P, "total_tokens": P}}
// The vectors are policies/fake_embedding.hpp's, in the scenario's embedding mode, of
// `dimensions` (default fake_embedding_default_dims). Pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"
#include "policies/fake_embedding.hpp"

namespace mneme::fakellm {

inline constexpr std::size_t max_embedding_inputs = 2048;

struct embeddings_call {
  std::string model;
  std::vector<std::string> input;
  std::size_t dimensions = fake_embedding_default_dims;
};

// Parses an embeddings request. Errors are errc::bad_request naming the field.
caf::expected<embeddings_call> parse_embeddings_call(std::string_view body);

// The answer body: each input's fake_embedding in `mode`, usage by the token estimate.
// An `empty` answer carries "data": [] (the empty_content fault).
std::string embeddings_body(const embeddings_call& call, fake_embedding_mode mode,
                            bool empty = false);

std::string_view to_string(fake_embedding_mode m);
// "bag_of_words" | "paraphrase"; anything else nullopt-like: false.
bool parse_fake_embedding_mode(std::string_view s, fake_embedding_mode& out);

} // namespace mneme::fakellm
