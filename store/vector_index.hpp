// The in-process vector index of semantic recall (issue 48): the unit vectors of the
// rows the embedder has embedded, per tenant (user id), answering "the k rows of this
// user nearest to a query vector". One instance per process, shared by the embedder
// (adds what it stored) and the recall readers (query); rebuilt at start from the
// stored vectors (store/message_store.hpp), so nothing is recomputed.
//
// Contract:
//   - Vectors are of dims() floats and unit length (the embedder normalizes); the
//     distance is 1 - cosine similarity (0 = same direction, 2 = opposite).
//   - Tenants never mix: nearest() only ever returns rows added under that user id.
//   - add() of a (source, id) already present replaces its vector (a model change
//     re-embeds in place); clear() empties the index (a new model, new dimensions).
//   - A tenant with few vectors is scanned exactly; above a size where a graph is
//     faster the index keeps an HNSW graph (Debian's libhnswlib-dev) for it. Results
//     are best first; ties by id, newest first.
//   - memory_bytes() is the index's own memory (vectors, graphs, maps), what
//     /metrics and `mneme-bench recall --vectors` report.
//
// Layout: one tenant per (user id, source), each behind its own reader/writer lock.
// A tenant holds its vectors in one flat array and answers by an exact scan until it
// reaches graph_threshold vectors; then its vectors move into an HNSW graph
// (hnswlib, inner-product space, M = 16, ef_construction = 100, ef = max(256, k)) and
// the flat array is freed, so no vector is held twice. Replacement in a graph uses
// hnswlib's update of an existing label (its links are repaired in place). Memory
// per vector at 256 dims: flat 1,024 bytes + ~70 bytes of maps; in a graph ~1,250
// bytes (data + level-0 links + lock + maps; docs/benchmarks.md measures it:
// about 1.25 GB per million vectors).
// Thread: every member may be called from any thread at any time (internally locked;
// queries of different tenants do not wait for each other's adds).
// Owned by the recall module; the embedder only adds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mneme {

// What a vector stands for: a stored message row (messages.id, summaries included) or a
// fact (facts.id).
enum class vector_source : uint8_t { message = 0, fact = 1 };

struct vector_hit {
  vector_source source = vector_source::message;
  int64_t id = 0;
  float distance = 0; // 1 - cosine similarity
};

// Tenants from this many vectors up are searched through an HNSW graph: below it the
// exact scan is fast enough (about 4 ms at 64k vectors of 256 dims) and exact, while
// the graph at ef 256 is slower than the scan up to ~16k vectors
// (docs/benchmarks.md "recall --vectors").
inline constexpr std::size_t vector_graph_threshold = 65536;

class vector_index {
public:
  // REQUIRES: dims >= 1, graph_threshold >= 1 (tests pass a small one).
  explicit vector_index(std::size_t dims, std::size_t graph_threshold = vector_graph_threshold);
  ~vector_index();
  vector_index(const vector_index&) = delete;
  vector_index& operator=(const vector_index&) = delete;

  std::size_t dims() const;
  // Adds or replaces the vector of (source, id) under user_id.
  // REQUIRES: v.size() == dims().
  void add(const std::string& user_id, vector_source source, int64_t id,
           const std::vector<float>& v);
  // The k nearest vectors of `source` under user_id, best first; fewer when the user
  // has fewer. REQUIRES: query.size() == dims().
  std::vector<vector_hit> nearest(const std::string& user_id, const std::vector<float>& query,
                                  std::size_t k, vector_source source) const;
  void clear();
  std::size_t size() const;         // vectors held, all tenants
  std::size_t memory_bytes() const;
  std::size_t graph_threshold() const;
  // Tenants (user, source) currently searched through a graph.
  std::size_t graph_tenants() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mneme
