// The vector index; see vector_index.hpp. This version scans every vector of the tenant
// exactly (a dot product per vector); the HNSW graph for large tenants comes on top.
#include "store/vector_index.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace mneme {

namespace {

struct tenant_vectors {
  // Row-major: vectors[i * dims .. (i + 1) * dims) belongs to keys[i].
  std::vector<float> vectors;
  std::vector<std::pair<vector_source, int64_t>> keys;
  std::map<std::pair<vector_source, int64_t>, std::size_t> slot;
};

float dot(const float* a, const float* b, std::size_t n) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i)
    s += a[i] * b[i];
  return s;
}

} // namespace

struct vector_index::impl {
  std::size_t dims;
  mutable std::shared_mutex mtx;
  std::unordered_map<std::string, tenant_vectors> tenants;
  std::size_t count = 0;
};

vector_index::vector_index(std::size_t dims) : impl_(std::make_unique<impl>()) {
  impl_->dims = dims;
}

vector_index::~vector_index() = default;

std::size_t vector_index::dims() const { return impl_->dims; }

void vector_index::add(const std::string& user_id, vector_source source, int64_t id,
                       const std::vector<float>& v) {
  std::unique_lock lock{impl_->mtx};
  auto& t = impl_->tenants[user_id];
  auto key = std::make_pair(source, id);
  auto d = impl_->dims;
  if (auto it = t.slot.find(key); it != t.slot.end()) {
    std::copy(v.begin(), v.end(), t.vectors.begin() + static_cast<std::ptrdiff_t>(it->second * d));
    return;
  }
  t.slot.emplace(key, t.keys.size());
  t.keys.push_back(key);
  t.vectors.insert(t.vectors.end(), v.begin(), v.end());
  ++impl_->count;
}

std::vector<vector_hit> vector_index::nearest(const std::string& user_id,
                                              const std::vector<float>& query, std::size_t k,
                                              vector_source source) const {
  std::shared_lock lock{impl_->mtx};
  std::vector<vector_hit> hits;
  auto it = impl_->tenants.find(user_id);
  if (it == impl_->tenants.end() || k == 0)
    return hits;
  auto& t = it->second;
  auto d = impl_->dims;
  for (std::size_t i = 0; i < t.keys.size(); ++i) {
    if (t.keys[i].first != source)
      continue;
    hits.push_back({source, t.keys[i].second, 1.0f - dot(query.data(), &t.vectors[i * d], d)});
  }
  auto better = [](const vector_hit& a, const vector_hit& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.id > b.id;
  };
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                      better);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), better);
  }
  return hits;
}

void vector_index::clear() {
  std::unique_lock lock{impl_->mtx};
  impl_->tenants.clear();
  impl_->count = 0;
}

std::size_t vector_index::size() const {
  std::shared_lock lock{impl_->mtx};
  return impl_->count;
}

std::size_t vector_index::memory_bytes() const {
  std::shared_lock lock{impl_->mtx};
  std::size_t bytes = 0;
  for (auto& [user, t] : impl_->tenants)
    bytes += user.capacity() + t.vectors.capacity() * sizeof(float)
             + t.keys.capacity() * sizeof(t.keys[0]) + t.slot.size() * 64;
  return bytes;
}

} // namespace mneme
