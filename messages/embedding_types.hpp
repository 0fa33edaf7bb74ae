// The handle between the embedder (issue 48: it owns the `embeddings:` provider) and
// the recall pool: the pool asks it for the vector of a search query before a vector or
// hybrid search. The atom and std::vector<float> are in messages/mneme_types.hpp's
// "embeddings" section. The embedder's full interface extends this one.
#pragma once

#include <string>
#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

#include "messages/mneme_types.hpp"

namespace mneme {

// (em_query_atom, query text) -> the query's unit vector, of the index's dimensions.
// Errors: the provider's (the llm_* errc of the LLM edge), or errc::overloaded while the
// embedder backs off from a failing provider; the caller then searches by full text
// only (and says so in its result). While embeddings are off there is no embedder.
using query_embedder =
  caf::typed_actor<caf::replies_to<em_query_atom, std::string>::with<std::vector<float>>>;

} // namespace mneme
