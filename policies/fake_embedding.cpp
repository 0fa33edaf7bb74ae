// Implementation of policies/fake_embedding.hpp; see there for the rules.
#include "policies/fake_embedding.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#include "policies/cjk_bigram.hpp"

namespace mneme {

namespace {

uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 1469598103934665603ull) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// splitmix64: spreads a hash into independent-looking 64-bit values.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<std::string> token_texts(std::string_view text) {
  std::vector<std::string> out;
  for (auto& t : cjk_bigram_tokens(text))
    out.push_back(std::move(t.text));
  return out;
}

void normalize(std::vector<float>& v) {
  double sum = 0;
  for (float x : v)
    sum += double(x) * double(x);
  if (sum <= 0) {
    std::fill(v.begin(), v.end(), 0.0f);
    v[0] = 1.0f;
    return;
  }
  const double inv = 1.0 / std::sqrt(sum);
  for (float& x : v)
    x = float(double(x) * inv);
}

std::vector<float> bag_of_words(const std::vector<std::string>& tokens, std::size_t dims) {
  std::vector<float> v(dims, 0.0f);
  for (const auto& t : tokens) {
    const uint64_t h = mix(fnv1a64(t));
    v[h % dims] += (h >> 63) ? -1.0f : 1.0f;
  }
  normalize(v);
  return v;
}

// A pseudo-random unit direction named by `name`: every coordinate in [-1, 1).
std::vector<float> concept_direction(std::string_view name, std::size_t dims) {
  std::vector<float> v(dims);
  const uint64_t seed = fnv1a64(name);
  for (std::size_t i = 0; i < dims; ++i) {
    const uint64_t h = mix(seed ^ mix(i + 1));
    v[i] = float(double(h >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  normalize(v);
  return v;
}

bool contains_run(const std::vector<std::string>& hay, const std::vector<std::string>& run) {
  if (run.empty() || run.size() > hay.size())
    return false;
  for (std::size_t i = 0; i + run.size() <= hay.size(); ++i) {
    std::size_t j = 0;
    while (j < run.size() && hay[i + j] == run[j])
      ++j;
    if (j == run.size())
      return true;
  }
  return false;
}

std::vector<std::size_t> groups_of_tokens(const std::vector<std::string>& tokens) {
  std::vector<std::size_t> out;
  const auto& groups = fake_paraphrase_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& member : groups[g].members) {
      if (contains_run(tokens, token_texts(member))) {
        out.push_back(g);
        break;
      }
    }
  }
  return out;
}

} // namespace

const std::vector<paraphrase_group>& fake_paraphrase_groups() {
  static const std::vector<paraphrase_group> groups = {
    {"database-locked",
     {"数据库卡住了", "数据库被锁", "database is locked", "DB is stuck", "database locked",
      "データベースがロック"}},
    {"deploy-failed",
     {"the deploy broke", "rollout failed", "发布失败了", "deployment failed", "部署失败"}},
    {"out-of-memory",
     {"out of memory", "ran out of RAM", "OOM killed", "内存不足", "内存溢出"}},
    {"login-broken",
     {"cannot log in", "can't sign in", "login fails", "登录不了", "无法登录"}},
    {"disk-full",
     {"disk is full", "no space left on device", "磁盘满了", "硬盘空间不足"}},
    {"network-slow",
     {"the network is slow", "connection is laggy", "网络很慢", "网速太慢"}},
    {"cat-pet",
     {"my cat", "the kitten", "我的猫", "小猫咪"}},
  };
  return groups;
}

std::vector<std::size_t> paraphrase_groups_in(std::string_view text) {
  return groups_of_tokens(token_texts(text));
}

std::vector<float> fake_embedding(std::string_view text, std::size_t dims,
                                  fake_embedding_mode mode) {
  assert(dims >= 1 && dims <= fake_embedding_max_dims);
  const auto tokens = token_texts(text);
  auto v = bag_of_words(tokens, dims);
  if (mode == fake_embedding_mode::paraphrase) {
    const auto& groups = fake_paraphrase_groups();
    bool any = false;
    for (std::size_t g : groups_of_tokens(tokens)) {
      const auto dir = concept_direction(groups[g].concept_name, dims);
      for (std::size_t i = 0; i < dims; ++i)
        v[i] += concept_weight * dir[i];
      any = true;
    }
    if (any)
      normalize(v);
  }
  return v;
}

float cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return 0.0f;
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * double(b[i]);
    na += double(a[i]) * double(a[i]);
    nb += double(b[i]) * double(b[i]);
  }
  if (na <= 0 || nb <= 0)
    return 0.0f;
  return float(dot / std::sqrt(na * nb));
}

} // namespace mneme
