// The in-process vector index (store/vector_index.hpp, issue 48): nearest rows by
// cosine, per tenant, replacement in place, clear.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "store/vector_index.hpp"

BOOST_AUTO_TEST_SUITE(vector_index_test)

using namespace mneme;

namespace {

std::vector<float> unit(std::vector<float> v) {
  float n = 0;
  for (float x : v)
    n += x * x;
  n = std::sqrt(n);
  for (float& x : v)
    x /= n;
  return v;
}

std::vector<int64_t> ids_of(const std::vector<vector_hit>& hits) {
  std::vector<int64_t> ids;
  for (auto& h : hits)
    ids.push_back(h.id);
  return ids;
}

} // namespace

BOOST_AUTO_TEST_CASE(nearest_orders_by_cosine_and_keeps_tenants_apart) {
  vector_index index{3};
  index.add("alice", vector_source::message, 1, unit({1, 0, 0}));
  index.add("alice", vector_source::message, 2, unit({1, 1, 0}));
  index.add("alice", vector_source::message, 3, unit({0, 0, 1}));
  index.add("bob", vector_source::message, 4, unit({1, 0, 0}));
  index.add("alice", vector_source::fact, 5, unit({1, 0, 0}));
  auto hits = index.nearest("alice", unit({1, 0.1f, 0}), 2, vector_source::message);
  BOOST_TEST((ids_of(hits) == std::vector<int64_t>{1, 2}));
  BOOST_TEST(hits[0].distance < hits[1].distance);
  BOOST_TEST(hits[0].distance >= -1e-6f);
  // bob's row and alice's fact are never among alice's message hits.
  auto all = index.nearest("alice", unit({1, 0, 0}), 10, vector_source::message);
  BOOST_TEST((ids_of(all) == std::vector<int64_t>{1, 2, 3}));
  BOOST_TEST((ids_of(index.nearest("bob", unit({0, 0, 1}), 10, vector_source::message))
              == std::vector<int64_t>{4}));
  BOOST_TEST(index.nearest("carol", unit({1, 0, 0}), 10, vector_source::message).empty());
  BOOST_TEST(index.size() == 5u);
}

BOOST_AUTO_TEST_CASE(adding_an_id_again_replaces_its_vector_and_clear_empties) {
  vector_index index{2};
  index.add("u", vector_source::message, 7, unit({1, 0}));
  index.add("u", vector_source::message, 8, unit({0, 1}));
  index.add("u", vector_source::message, 7, unit({0, 1})); // re-embedded
  BOOST_TEST(index.size() == 2u);
  auto hits = index.nearest("u", unit({0, 1}), 2, vector_source::message);
  BOOST_TEST(hits[0].distance < 1e-5f);
  BOOST_TEST(hits[1].distance < 1e-5f);
  // Equal distances: the newer id first.
  BOOST_TEST((ids_of(hits) == std::vector<int64_t>{8, 7}));
  BOOST_TEST(index.memory_bytes() > 0u);
  index.clear();
  BOOST_TEST(index.size() == 0u);
  BOOST_TEST(index.nearest("u", unit({0, 1}), 2, vector_source::message).empty());
}

BOOST_AUTO_TEST_SUITE_END()
