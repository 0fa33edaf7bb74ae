// What the embedder (actors/embed) and the storage actor exchange about stored vectors
// (issue 48): the rows still to embed, a batch of vectors to store with the watermark
// it moves, the stored vectors read back at start, and the progress of a model.
// Plain values plus their CAF inspect(); included by messages/mneme_types.hpp inside the
// type-ID block (it uses no __COUNTER__). Safe from any thread; no shared state.
//
// `source` is 0 for a message row (messages.id: user and assistant rows, summaries,
// any state) and 1 for a fact version (facts.id); the same values as
// store/vector_index.hpp's vector_source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/meta/type_name.hpp"

namespace mneme {

inline constexpr int32_t embed_source_message = 0;
inline constexpr int32_t embed_source_fact = 1;

// One stored row above a watermark, as the store has it; the embedder's policy
// (policies/embed_plan.hpp) decides whether and how much of it to embed.
struct embed_candidate {
  int64_t id = 0;
  std::string user_id;
  std::string role;        // message: system|user|assistant|tool; fact: "fact"
  bool is_summary = false; // message rows only
  bool active = true;      // facts: false for a retired version
  std::string text;        // message content; fact: "key: value"
};

// Rows in id order above a watermark, and the highest id the read looked at (the
// watermark a batch may move to once these are embedded or skipped).
struct embed_candidates {
  std::vector<embed_candidate> rows;
  int64_t scanned_through = 0;
};

struct stored_vector {
  int64_t id = 0;
  std::string user_id;
  std::vector<float> vec;
};

// One batch to store: vectors of (model, dims, source) and the watermark to move to,
// written in one transaction (message_store::store_vectors).
struct embed_write {
  std::string model;
  int32_t dims = 0;
  int32_t source = embed_source_message;
  int64_t through = 0;
  std::vector<stored_vector> rows;
};

// Where a model stands: its watermarks per source and the rows above them.
struct embed_progress {
  int64_t messages_through = 0;
  int64_t facts_through = 0;
  int64_t messages_backlog = 0; // message rows with id above messages_through
  int64_t facts_backlog = 0;    // fact versions with id above facts_through
  int64_t stored_vectors = 0;   // vectors of this (model, dims), both sources
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embed_candidate& x) {
  return f(caf::meta::type_name("mneme::embed_candidate"), x.id, x.user_id, x.role,
           x.is_summary, x.active, x.text);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embed_candidates& x) {
  return f(caf::meta::type_name("mneme::embed_candidates"), x.rows, x.scanned_through);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stored_vector& x) {
  return f(caf::meta::type_name("mneme::stored_vector"), x.id, x.user_id, x.vec);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embed_write& x) {
  return f(caf::meta::type_name("mneme::embed_write"), x.model, x.dims, x.source, x.through,
           x.rows);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, embed_progress& x) {
  return f(caf::meta::type_name("mneme::embed_progress"), x.messages_through,
           x.facts_through, x.messages_backlog, x.facts_backlog, x.stored_vectors);
}

} // namespace mneme
