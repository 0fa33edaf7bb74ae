// The fake LLM's embeddings: determinism, unit length, nearness by shared words, and
// the paraphrase mode's cross-language groups near while unrelated text stays far.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "policies/fake_embedding.hpp"

BOOST_AUTO_TEST_SUITE(fake_embedding_test)

using namespace mneme;

namespace {

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

float cos_of(std::string_view a, std::string_view b, fake_embedding_mode mode,
             std::size_t dims = fake_embedding_default_dims) {
  return cosine_similarity(fake_embedding(a, dims, mode), fake_embedding(b, dims, mode));
}

} // namespace

BOOST_AUTO_TEST_CASE(the_same_text_gives_the_same_unit_vector_of_the_asked_size) {
  for (std::size_t dims : {1u, 3u, 256u, 1536u}) {
    const auto a = fake_embedding("The database is locked again", dims,
                                  fake_embedding_mode::bag_of_words);
    const auto b = fake_embedding("The database is locked again", dims,
                                  fake_embedding_mode::bag_of_words);
    BOOST_TEST(a.size() == dims);
    BOOST_TEST(a == b);
    BOOST_TEST(std::abs(norm(a) - 1.0) < 1e-5);
    for (float x : a) BOOST_TEST(std::isfinite(x));
  }
}

BOOST_AUTO_TEST_CASE(a_pinned_coordinate_keeps_vectors_stable_across_builds) {
  // FNV-1a and splitmix only: the vector of a text never changes between builds, so
  // stored vectors of the fake stay valid. "hello" is one token: one coordinate +-1.
  const auto v = fake_embedding("hello", 8, fake_embedding_mode::bag_of_words);
  int nonzero = 0;
  for (float x : v) nonzero += x != 0.0f;
  BOOST_TEST(nonzero == 1);
  BOOST_TEST(fake_embedding("HELLO", 8, fake_embedding_mode::bag_of_words) == v);
}

BOOST_AUTO_TEST_CASE(text_without_tokens_is_the_first_unit_vector) {
  const auto v = fake_embedding("  ?! ", 4, fake_embedding_mode::paraphrase);
  BOOST_TEST((v == std::vector<float>{1, 0, 0, 0}));
}

BOOST_AUTO_TEST_CASE(texts_sharing_words_are_nearer_than_texts_sharing_none) {
  const auto mode = fake_embedding_mode::bag_of_words;
  const float shared = cos_of("postgres replication lag on the replica",
                              "the replica has replication lag", mode);
  const float none = cos_of("postgres replication lag on the replica",
                            "bake bread with sourdough starter", mode);
  BOOST_TEST(shared > 0.4f);
  BOOST_TEST(std::abs(none) < 0.2f);
  // CJK by bigrams: 数据库 shares 数据 据库 with 数据库连接.
  BOOST_TEST(cos_of("数据库很慢", "数据库连接", mode) > 0.3f);
}

BOOST_AUTO_TEST_CASE(bag_of_words_does_not_bridge_the_synonym_gap) {
  // What full text cannot do, the bag of words cannot either: the paraphrase mode exists
  // for it.
  BOOST_TEST(std::abs(cos_of("数据库卡住了", "database is locked",
                             fake_embedding_mode::bag_of_words)) < 0.2f);
}

BOOST_AUTO_TEST_CASE(paraphrases_are_near_across_languages_and_unrelated_text_is_far) {
  const auto mode = fake_embedding_mode::paraphrase;
  const std::vector<std::pair<std::string, std::string>> pairs = {
    {"数据库卡住了", "database is locked"},
    {"数据库卡住了", "DB is stuck"},
    {"the deploy broke", "rollout failed"},
    {"the deploy broke", "发布失败了"},
    {"out of memory", "内存不足"},
    {"cannot log in", "登录不了"},
    {"disk is full", "磁盘满了"},
  };
  for (const auto& [a, b] : pairs) {
    BOOST_TEST_CONTEXT(a << " / " << b) {
      const float near = cos_of(a, b, mode);
      BOOST_TEST(near > 0.8f);
      BOOST_TEST(cos_of(a, "bake bread with sourdough starter", mode) < 0.3f);
      BOOST_TEST(cos_of(a, "rollout of the garden hose", mode) < near);
    }
  }
  // A member inside a longer sentence still carries its concept.
  BOOST_TEST(cos_of("yesterday at 3pm the database is locked error came back",
                    "数据库卡住了", mode) > 0.7f);
  // Different groups are far from each other.
  BOOST_TEST(cos_of("数据库卡住了", "发布失败了", mode) < 0.3f);
}

BOOST_AUTO_TEST_CASE(groups_are_found_as_token_runs_not_substrings) {
  BOOST_TEST((paraphrase_groups_in("Error: Database IS locked!") ==
              std::vector<std::size_t>{0}));
  BOOST_TEST(paraphrase_groups_in("database, is it locked").empty());
  BOOST_TEST((paraphrase_groups_in("DB is stuck and the deploy broke").size() == 2));
}

BOOST_AUTO_TEST_CASE(the_paraphrase_table_has_the_required_groups) {
  const auto& groups = fake_paraphrase_groups();
  BOOST_TEST(groups.size() >= 5u);
  BOOST_TEST(paraphrase_groups_in("数据库卡住了") == paraphrase_groups_in("DB is stuck"));
  BOOST_TEST(paraphrase_groups_in("rollout failed") == paraphrase_groups_in("发布失败了"));
}

BOOST_AUTO_TEST_SUITE_END()
