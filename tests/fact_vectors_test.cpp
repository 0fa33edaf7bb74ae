// Facts found by meaning (store/fact_vectors.hpp), on both backends: a query whose words
// match no fact finds the user's fact whose vector is near its own, never another user's
// (even with that user's vector misfiled under the searcher), never a replaced or
// removed version unless include_inactive asks; a fact both legs find comes first; a
// query vector of other dimensions, a negated-only query or no index leave the search
// to the words, exactly as before.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "store/fact_vectors.hpp"
#include "store/vector_index.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(fact_vectors_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

// Meaning directions: "the database is stuck", "lunch", "travel", another.
const std::vector<float> stuck_dir{1, 0, 0, 0};
const std::vector<float> lunch_dir{0, 1, 0, 0};
const std::vector<float> travel_dir{0, 0, 1, 0};

struct fact_vectors_fixture {
  testing::temp_dir dir{"mneme-fact-vectors"};
  store_params params;
  testing::test_store store;
  vector_index index{4};

  void open(store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }

  // Puts the fact and (what the embedder does) its vector under `user`.
  fact_record put(const std::string& user, const std::string& key, const std::string& value,
                  const std::vector<float>* v, int64_t now = 10) {
    fact_record f;
    f.user_id = user;
    f.key = key;
    f.value = value;
    auto stored = store->put_fact(f, now);
    BOOST_REQUIRE_MESSAGE(stored, err_of(stored));
    if (v)
      index.add(user, vector_source::fact, stored->id, *v);
    return *stored;
  }

  std::vector<fact_record> search(const std::string& user, const std::string& text,
                                  std::vector<float> v, bool include_inactive = false,
                                  bool with_index = true) {
    fact_query q;
    q.user_id = user;
    q.text = text;
    q.query_vector = std::move(v);
    q.include_inactive = include_inactive;
    q.limit = 5;
    auto r = search_facts(*store, with_index ? &index : nullptr, q);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return std::move(*r);
  }
};

std::vector<std::string> keys_of(const std::vector<fact_record>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs)
    out.push_back(f.key);
  return out;
}

const auto both_backends = data::make(testing::all_store_backends());

} // namespace

BOOST_DATA_TEST_CASE_F(fact_vectors_fixture, a_fact_is_found_by_meaning_within_its_user_only,
                       both_backends, backend) {
  open(backend);
  auto mine = put("alice", "incident", "the database is locked during the nightly backup",
                  &stuck_dir);
  put("alice", "lunch", "noodles on friday", &lunch_dir);
  auto theirs = put("bob", "incident", "数据库卡住了 again", &stuck_dir);
  // Bob's vector misfiled under alice: the database says whose it is.
  index.add("alice", vector_source::fact, theirs.id, stuck_dir);
  // Words alone find nothing: the query shares no word with alice's fact.
  BOOST_TEST(search("alice", "数据库卡住了", {}).empty());
  auto found = search("alice", "数据库卡住了", stuck_dir);
  BOOST_REQUIRE(!found.empty());
  BOOST_TEST(found[0].id == mine.id);
  for (const auto& f : found)
    BOOST_TEST(f.user_id == "alice");
  // Without the index the vector is ignored: words only, as before.
  BOOST_TEST(search("alice", "数据库卡住了", stuck_dir, false, false).empty());
  // A vector of other dimensions (another model's) is ignored too.
  BOOST_TEST(search("alice", "数据库卡住了", {1, 0, 0}).empty());
  // A query with only negated words has nothing to look for, by words or meaning.
  BOOST_TEST(search("alice", "NOT noodles", stuck_dir).empty());
  // Bob's own search by meaning finds his fact.
  auto bobs = search("bob", "the database is stuck", stuck_dir);
  BOOST_REQUIRE_EQUAL(bobs.size(), 1u);
  BOOST_TEST(bobs[0].id == theirs.id);
}

BOOST_DATA_TEST_CASE_F(fact_vectors_fixture, retired_versions_come_from_the_index_only_when_asked,
                       both_backends, backend) {
  open(backend);
  auto old_version = put("alice", "trip", "flying to lisbon in may", &travel_dir, 10);
  // The new version is not embedded yet: only the old one's vector is in the index.
  auto new_version = put("alice", "trip", "flying to porto in june", nullptr, 20);
  BOOST_TEST(new_version.id != old_version.id);
  auto found = search("alice", "holiday plans", travel_dir);
  BOOST_TEST(found.empty(), "a replaced version found: " << keys_of(found).size());
  auto all = search("alice", "holiday plans", travel_dir, true);
  BOOST_REQUIRE_EQUAL(all.size(), 1u);
  BOOST_TEST(all[0].id == old_version.id);
  BOOST_TEST(!all[0].active);
  // Removed: the tombstone's vector is never shown without include_inactive either.
  auto lunch = put("alice", "lunch", "noodles on friday", &lunch_dir, 30);
  auto removed = store->remove_fact("alice", "lunch", 40);
  BOOST_REQUIRE_MESSAGE(removed, err_of(removed));
  BOOST_TEST(search("alice", "what do we eat", lunch_dir).empty());
  (void)lunch;
}

BOOST_DATA_TEST_CASE_F(fact_vectors_fixture, both_legs_fuse_and_the_limit_holds,
                       both_backends, backend) {
  open(backend);
  // "database" is in two facts; the vector points at the second only.
  auto by_words = put("alice", "schema", "database schema review on monday", &travel_dir);
  auto by_both = put("alice", "incident", "the database is locked during backups", &stuck_dir);
  auto by_meaning = put("alice", "outage", "writes stall at midnight", &stuck_dir);
  for (int i = 0; i < 8; ++i)
    put("alice", "filler-" + std::to_string(i), "unrelated note " + std::to_string(i),
        &lunch_dir);
  auto found = search("alice", "database", stuck_dir);
  BOOST_REQUIRE_GE(found.size(), 3u);
  BOOST_TEST(found.size() <= 5u); // q.limit
  BOOST_TEST(found[0].id == by_both.id); // found by both legs: first
  std::vector<int64_t> ids;
  for (const auto& f : found)
    ids.push_back(f.id);
  BOOST_TEST((std::find(ids.begin(), ids.end(), by_words.id) != ids.end()));
  BOOST_TEST((std::find(ids.begin(), ids.end(), by_meaning.id) != ids.end()));
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t j = i + 1; j < ids.size(); ++j)
      BOOST_TEST(ids[i] != ids[j]);
  // An empty text lists, whatever the vector: newest first, as before.
  auto listed = search("alice", "", stuck_dir);
  BOOST_REQUIRE(!listed.empty());
  BOOST_TEST(listed[0].key == "filler-7");
}

BOOST_AUTO_TEST_SUITE_END()
