// The in-process vector index (store/vector_index.hpp, issue 48): nearest rows by
// cosine, per tenant, replacement in place, clear; the HNSW graph of a large tenant
// agrees with the exact scan on random data (recall@10 >= 0.9), replaces in place,
// never mixes tenants, and takes adds and queries from several threads at once.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <thread>
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

std::vector<float> random_unit(std::mt19937& rng, std::size_t dims) {
  std::normal_distribution<float> gauss;
  std::vector<float> v(dims);
  for (auto& x : v)
    x = gauss(rng);
  return unit(std::move(v));
}

} // namespace

BOOST_AUTO_TEST_CASE(the_graph_agrees_with_the_exact_scan_on_random_data) {
  constexpr std::size_t dims = 64, n = 3000, k = 10, queries = 50;
  vector_index exact{dims, n + 1};  // never builds a graph
  vector_index graph{dims, 500};    // a graph from the 500th vector on
  std::mt19937 rng{7};
  for (std::size_t i = 0; i < n; ++i) {
    auto v = random_unit(rng, dims);
    exact.add("u", vector_source::message, static_cast<int64_t>(i), v);
    graph.add("u", vector_source::message, static_cast<int64_t>(i), v);
  }
  BOOST_TEST(exact.graph_tenants() == 0u);
  BOOST_TEST(graph.graph_tenants() == 1u);
  BOOST_TEST(graph.size() == n);
  std::size_t agreed = 0;
  for (std::size_t q = 0; q < queries; ++q) {
    auto query = random_unit(rng, dims);
    auto truth = ids_of(exact.nearest("u", query, k, vector_source::message));
    auto found = graph.nearest("u", query, k, vector_source::message);
    BOOST_REQUIRE(found.size() == k);
    BOOST_TEST(std::is_sorted(found.begin(), found.end(),
                              [](const vector_hit& a, const vector_hit& b) {
                                return a.distance < b.distance;
                              }));
    std::set<int64_t> expected(truth.begin(), truth.end());
    for (auto& h : found)
      agreed += expected.count(h.id);
  }
  auto recall = static_cast<double>(agreed) / static_cast<double>(queries * k);
  BOOST_TEST(recall >= 0.9, "recall@10 of the graph: " << recall);
}

BOOST_AUTO_TEST_CASE(a_graph_replaces_in_place_and_keeps_tenants_apart) {
  constexpr std::size_t dims = 16;
  vector_index index{dims, 50};
  std::mt19937 rng{3};
  for (int64_t i = 0; i < 200; ++i) {
    index.add("alice", vector_source::message, i, random_unit(rng, dims));
    index.add("bob", vector_source::message, 1000 + i, random_unit(rng, dims));
  }
  BOOST_TEST(index.graph_tenants() == 2u);
  // Row 17 re-embedded to a vector nobody else has: it is alice's nearest, found
  // once, and the count did not grow.
  std::vector<float> target(dims, 0.0f);
  target[0] = 1;
  index.add("alice", vector_source::message, 17, target);
  BOOST_TEST(index.size() == 400u);
  auto hits = index.nearest("alice", target, 5, vector_source::message);
  BOOST_REQUIRE(!hits.empty());
  BOOST_TEST(hits[0].id == 17);
  BOOST_TEST(hits[0].distance < 1e-5f);
  BOOST_TEST(std::count_if(hits.begin(), hits.end(), [](auto& h) { return h.id == 17; }) == 1);
  // Bob's tenant holds only bob's rows, whatever the query.
  for (auto& h : index.nearest("bob", target, 50, vector_source::message))
    BOOST_TEST(h.id >= 1000);
  for (auto& h : index.nearest("alice", target, 250, vector_source::message))
    BOOST_TEST(h.id < 1000);
  BOOST_TEST(index.nearest("alice", target, 5, vector_source::fact).empty());
  auto before = index.memory_bytes();
  BOOST_TEST(before > 400u * dims * sizeof(float));
  index.clear();
  BOOST_TEST(index.size() == 0u);
  BOOST_TEST(index.graph_tenants() == 0u);
  BOOST_TEST(index.memory_bytes() < before);
  BOOST_TEST(index.nearest("alice", target, 5, vector_source::message).empty());
}

BOOST_AUTO_TEST_CASE(adds_and_queries_from_several_threads) {
  constexpr std::size_t dims = 32;
  vector_index index{dims, 300};
  constexpr int writers = 3, per_writer = 600;
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&index, w] {
      std::mt19937 rng{static_cast<unsigned>(w)};
      auto user = "user" + std::to_string(w % 2); // two writers share a tenant
      for (int i = 0; i < per_writer; ++i)
        index.add(user, vector_source::message, int64_t{w} * 100000 + i, random_unit(rng, dims));
    });
  std::size_t foreign = 0; // hits of user1 not written by writer 1 (user1's only writer)
  threads.emplace_back([&index, &foreign] {
    std::mt19937 rng{99};
    for (int i = 0; i < 300; ++i) {
      auto q = random_unit(rng, dims);
      for (auto& h : index.nearest("user1", q, 5, vector_source::message))
        foreign += h.id / 100000 == 1 ? 0 : 1;
    }
  });
  for (auto& t : threads)
    t.join();
  BOOST_TEST(index.size() == std::size_t{writers * per_writer});
  BOOST_TEST(foreign == 0u);
  // Every row of user0 (writers 0 and 2) is findable as its own nearest neighbour.
  std::mt19937 rng{2};
  auto v = random_unit(rng, dims); // writer 2's first vector
  auto hits = index.nearest("user0", v, 1, vector_source::message);
  BOOST_REQUIRE(hits.size() == 1u);
  BOOST_TEST(hits[0].id == 200000);
}

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
