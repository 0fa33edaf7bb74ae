// A search text's vector for a route (issue 48): `with_query_vector(c, text, f)` asks the
// runtime's embedder for it, at most embeddings.query_timeout_ms, and runs f(vector) in
// the request's actor; f gets an empty vector at once while embeddings are off or when
// the text is empty, and after the embedder failed or was late (the search then runs on
// words alone: a search never fails for its vector). Used by the fact routes; the
// message search embeds its query in the recall pool (actors/recall).
//
// Threads: in the request's actor.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "caf/all.hpp"

#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/ask.hpp"
#include "apps/common/api/plumbing/call.hpp"

namespace mneme::api {

template <class F>
void with_query_vector(const call_ptr& c, std::string text, F f) {
  const auto& rt = c->api->rt;
  if (text.empty() || !rt.embedder() || !rt.config().embeddings) {
    f(std::vector<float>{});
    return;
  }
  std::chrono::milliseconds timeout{rt.config().embeddings->params.query_timeout_ms};
  auto next = std::make_shared<F>(std::move(f)); // f may be a mutable lambda
  ask<std::vector<float>>(c, caf::actor_cast<query_embedder>(rt.embedder()), timeout,
                          em_query_atom_v, std::move(text))
    .then([next](caf::expected<std::vector<float>> v) {
      (*next)(v ? std::move(*v) : std::vector<float>{});
    });
}

} // namespace mneme::api
