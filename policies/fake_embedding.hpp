// The fake LLM's embeddings (issue 48): deterministic vectors that stand in for a real
// embedding model in every offline test and benchmark. Pure functions, no state, safe
// from any thread. Used by apps/common/fakellm (POST /v1/embeddings) and by tests and
// mneme-bench that need the vector of a text without a server.
//
// Modes:
//   bag_of_words - a hashed bag of words: the text's tokens (policies/cjk_bigram: Latin
//     and other words case-folded, CJK runs as overlapping bigrams), each hashed to one
//     of `dims` coordinates with a hashed sign (+1/-1), summed, then unit length. Texts
//     sharing words are near; texts sharing none are near-orthogonal.
//   paraphrase   - the bag of words plus, for every paraphrase group (the table below)
//     one of whose members the text contains (as a contiguous run of its tokens), that
//     group's concept direction with weight `concept_weight` against the bag's unit
//     vector: members of one group are near (cosine >= ~0.9) whatever their language,
//     while texts of no group stay as in bag_of_words.
//
// Invariants: the result has exactly `dims` finite floats and unit length (a text with
// no token is the unit vector of coordinate 0); the same (text, dims, mode) always gives
// the same vector, on every platform (FNV-1a 64 of the token bytes, no std::hash).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mneme {

enum class fake_embedding_mode { bag_of_words, paraphrase };

inline constexpr std::size_t fake_embedding_default_dims = 256;
inline constexpr std::size_t fake_embedding_max_dims = 4096;
inline constexpr float concept_weight = 3.0f;

// REQUIRES: 1 <= dims <= fake_embedding_max_dims.
std::vector<float> fake_embedding(std::string_view text, std::size_t dims,
                                  fake_embedding_mode mode);

// One paraphrase group: phrases (any language) that mean the same thing.
struct paraphrase_group {
  std::string concept_name;
  std::vector<std::string> members;
};

// The built-in table (at least: 数据库卡住了 / database is locked / DB is stuck; the deploy
// broke / rollout failed / 发布失败了; more cross-language groups).
const std::vector<paraphrase_group>& fake_paraphrase_groups();

// Indexes into fake_paraphrase_groups() of the groups `text` contains a member of, in
// table order, each once.
std::vector<std::size_t> paraphrase_groups_in(std::string_view text);

// Cosine similarity of two vectors of the same size (0 when either is zero).
float cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);

} // namespace mneme
