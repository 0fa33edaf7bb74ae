// Reciprocal rank fusion of the two rankings of a hybrid search (issue 48): the
// full-text ranking and the vector ranking, each one entry per conversation, best
// first (policies/recall_grouping.hpp), fused into one ranking of conversations.
// Pure functions, standard library only, any thread. Used by store/vector_recall.cpp
// (every backend's hybrid search) and by the benchmark; owned by the recall module.
//
// The rule: a conversation at 1-based rank r of a ranking earns 1 / (k + r) from
// it; its fused score is the sum over the rankings holding it (k = 60, the constant
// of the RRF paper, kept: docs/memory.md "Hybrid search" says why). Order: higher
// fused score first; equal scores: the better single rank first, then the one the
// full-text ranking holds, then the smaller key (byte order), so the result never
// depends on hash or thread order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mneme {

inline constexpr double rank_fusion_k = 60;

// How many conversations each leg of a hybrid search brings to the fusion when the
// caller wants `max_sessions`: three times that, at least 10, so a conversation
// ranked low by one leg and high by the other can still be fused to the top.
// REQUIRES: max_sessions >= 1.
std::size_t fusion_leg_conversations(std::size_t max_sessions);

// How many nearest rows the vector leg asks the index for to find `conversations`
// distinct conversations (a conversation's near rows come in runs: four rows per
// conversation wanted).
std::size_t vector_leg_rows(std::size_t conversations);

struct fused_entry {
  static constexpr std::size_t absent = static_cast<std::size_t>(-1);
  std::size_t full_text = absent; // index into the full-text ranking, or absent
  std::size_t vector = absent;    // index into the vector ranking, or absent
  double score = 0;               // the RRF sum
};

// The fused ranking of `full_text` and `vector` (conversation keys, best first; a key
// repeated within one ranking counts at its first place only), at most `limit`
// entries, best first.
std::vector<fused_entry> fuse_rankings(const std::vector<std::string>& full_text,
                                       const std::vector<std::string>& vector,
                                       std::size_t limit, double k = rank_fusion_k);

} // namespace mneme
