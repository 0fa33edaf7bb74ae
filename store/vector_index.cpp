// The vector index; see vector_index.hpp. Exact scan per small tenant, an HNSW graph
// (Debian's libhnswlib-dev, header-only; included by this file only, as its header
// defines functions) per large one.
#include "store/vector_index.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include <hnswlib/hnswlib.h>

namespace mneme {

namespace {

constexpr std::size_t graph_m = 16;
constexpr std::size_t graph_ef_construction = 100;
constexpr std::size_t graph_ef_search = 256;

using graph_t = hnswlib::HierarchicalNSW<float>;

// Eight independent sums, so the compiler can keep them in vector registers.
float dot(const float* a, const float* b, std::size_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (std::size_t j = 0; j < 8; ++j)
      s[j] += a[i + j] * b[i + j];
  float total = 0;
  for (; i < n; ++i)
    total += a[i] * b[i];
  return total + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Best first; equal distances: the newer id first.
bool better(const vector_hit& a, const vector_hit& b) {
  return a.distance != b.distance ? a.distance < b.distance : a.id > b.id;
}

// The vectors of one (user, source). Label i of the graph (or slot i of `flat`) is
// row ids[i]; label_of is the inverse.
struct tenant {
  mutable std::shared_mutex mtx;
  std::vector<int64_t> ids;
  std::unordered_map<int64_t, std::size_t> label_of;
  std::vector<float> flat;         // ids.size() * dims while there is no graph
  std::unique_ptr<graph_t> graph;  // from graph_threshold vectors up
  std::atomic<std::size_t> count{0};
};

std::size_t graph_bytes(const graph_t& g) {
  std::size_t bytes = g.max_elements_ * (g.size_data_per_element_ + sizeof(void*)
                                         + sizeof(std::mutex) + sizeof(int));
  for (std::size_t i = 0; i < g.cur_element_count; ++i)
    if (g.element_levels_[i] > 0)
      bytes += g.size_links_per_element_ * static_cast<std::size_t>(g.element_levels_[i]);
  // label_lookup_: one hash node (key, value, next) plus a bucket per label.
  bytes += g.label_lookup_.size() * (3 * sizeof(void*) + sizeof(std::size_t))
           + g.label_lookup_.bucket_count() * sizeof(void*);
  // The visited-list pool: one epoch array per searching thread.
  bytes += g.max_elements_ * sizeof(unsigned short);
  return bytes;
}

} // namespace

struct vector_index::impl {
  std::size_t dims = 0;
  std::size_t graph_threshold = vector_graph_threshold;
  hnswlib::InnerProductSpace space;
  mutable std::shared_mutex mtx; // guards `tenants` (the map, not the tenants)
  std::map<std::pair<std::string, vector_source>, std::shared_ptr<tenant>> tenants;

  impl(std::size_t d, std::size_t threshold) : dims(d), graph_threshold(threshold), space(d) {}

  std::shared_ptr<tenant> find(const std::string& user, vector_source source) const {
    std::shared_lock lock{mtx};
    auto it = tenants.find({user, source});
    return it == tenants.end() ? nullptr : it->second;
  }

  std::shared_ptr<tenant> find_or_add(const std::string& user, vector_source source) {
    if (auto t = find(user, source))
      return t;
    std::unique_lock lock{mtx};
    auto& t = tenants[{user, source}];
    if (!t)
      t = std::make_shared<tenant>();
    return t;
  }

  // Moves the tenant's flat vectors into a new graph. REQUIRES: t's lock held.
  void build_graph(tenant& t) {
    auto n = t.ids.size();
    t.graph = std::make_unique<graph_t>(&space, std::max<std::size_t>(2 * n, 1024), graph_m,
                                        graph_ef_construction);
    t.graph->setEf(graph_ef_search);
    for (std::size_t i = 0; i < n; ++i)
      t.graph->addPoint(&t.flat[i * dims], i);
    std::vector<float>{}.swap(t.flat);
  }
};

vector_index::vector_index(std::size_t dims, std::size_t graph_threshold)
  : impl_(std::make_unique<impl>(dims, std::max<std::size_t>(graph_threshold, 1))) {
  assert(dims >= 1);
}

vector_index::~vector_index() = default;

std::size_t vector_index::dims() const { return impl_->dims; }

std::size_t vector_index::graph_threshold() const { return impl_->graph_threshold; }

void vector_index::add(const std::string& user_id, vector_source source, int64_t id,
                       const std::vector<float>& v) {
  assert(v.size() == impl_->dims);
  auto t = impl_->find_or_add(user_id, source);
  std::unique_lock lock{t->mtx};
  auto d = impl_->dims;
  if (auto it = t->label_of.find(id); it != t->label_of.end()) {
    if (t->graph)
      t->graph->addPoint(v.data(), it->second); // an existing label: updated in place
    else
      std::copy(v.begin(), v.end(), t->flat.begin() + static_cast<std::ptrdiff_t>(it->second * d));
    return;
  }
  auto label = t->ids.size();
  t->label_of.emplace(id, label);
  t->ids.push_back(id);
  if (t->graph) {
    if (t->graph->cur_element_count >= t->graph->max_elements_)
      t->graph->resizeIndex(2 * t->graph->max_elements_);
    t->graph->addPoint(v.data(), label);
  } else {
    t->flat.insert(t->flat.end(), v.begin(), v.end());
    if (t->ids.size() >= impl_->graph_threshold)
      impl_->build_graph(*t);
  }
  t->count.fetch_add(1, std::memory_order_relaxed);
}

std::vector<vector_hit> vector_index::nearest(const std::string& user_id,
                                              const std::vector<float>& query, std::size_t k,
                                              vector_source source) const {
  assert(query.size() == impl_->dims);
  std::vector<vector_hit> hits;
  auto t = impl_->find(user_id, source);
  if (!t || k == 0)
    return hits;
  std::shared_lock lock{t->mtx};
  auto d = impl_->dims;
  if (t->graph) {
    // searchKnn uses max(ef, k) candidates; ef is fixed at creation (setting it per
    // query would race with other readers).
    auto found = t->graph->searchKnn(query.data(), k);
    hits.reserve(found.size());
    for (; !found.empty(); found.pop())
      hits.push_back({source, t->ids[found.top().second], found.top().first});
    std::sort(hits.begin(), hits.end(), better);
    return hits;
  }
  hits.reserve(t->ids.size());
  for (std::size_t i = 0; i < t->ids.size(); ++i)
    hits.push_back({source, t->ids[i], 1.0f - dot(query.data(), &t->flat[i * d], d)});
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
}

std::size_t vector_index::size() const {
  std::shared_lock lock{impl_->mtx};
  std::size_t n = 0;
  for (auto& [key, t] : impl_->tenants)
    n += t->count.load(std::memory_order_relaxed);
  return n;
}

std::size_t vector_index::graph_tenants() const {
  std::shared_lock lock{impl_->mtx};
  std::size_t n = 0;
  for (auto& [key, t] : impl_->tenants) {
    std::shared_lock tl{t->mtx};
    n += t->graph ? 1 : 0;
  }
  return n;
}

std::size_t vector_index::memory_bytes() const {
  std::shared_lock lock{impl_->mtx};
  std::size_t bytes = 0;
  for (auto& [key, t] : impl_->tenants) {
    std::shared_lock tl{t->mtx};
    bytes += sizeof(tenant) + key.first.capacity() + t->ids.capacity() * sizeof(int64_t)
             + t->label_of.size() * (3 * sizeof(void*) + sizeof(std::size_t))
             + t->label_of.bucket_count() * sizeof(void*) + t->flat.capacity() * sizeof(float);
    if (t->graph)
      bytes += graph_bytes(*t->graph);
  }
  return bytes;
}

} // namespace mneme
