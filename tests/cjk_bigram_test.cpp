// The CJK bigram tokenizer: bigrams of CJK runs, folded words, glued Latin,
// byte offsets, and safety on any input.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>

#include "policies/cjk_bigram.hpp"

BOOST_AUTO_TEST_SUITE(cjk_bigram_test)

using namespace mneme;
namespace bdata = boost::unit_test::data;

namespace {

std::string joined(std::string_view text) {
  std::string out;
  for (auto& t : cjk_bigram_tokens(text)) {
    if (!out.empty()) out += ' ';
    out += t.text;
  }
  return out;
}

} // namespace

BOOST_DATA_TEST_CASE(
  tokens_follow_the_three_rules,
  bdata::make({"我爱数据库", "数据", "桂", "修改youer服务端", "Hello, World!", "ＵＳＢ１２３",
               "東京タワーに行く", "한국어 검색", "ｶﾀｶﾅ", "gpt-5.3-codex", "ÉCOLE Straße",
               "ΑΒΓ Привет", "a。b、c", "🙂 emoji 🙂", "", "   "}) ^
    bdata::make({"我爱 爱数 数据 据库", "数据", "桂", "修改 youer 服务 务端", "hello world",
                 "usb123", "東京 京タ タワ ワー ーに に行 行く", "한국 국어 검색", "カタ タカ カナ",
                 "gpt 5 3 codex", "école straße", "αβγ привет", "a b c", "emoji", "", ""}),
  text, expected) {
  BOOST_TEST(joined(text) == std::string{expected});
}

BOOST_AUTO_TEST_CASE(offsets_are_byte_ranges_of_the_source_text) {
  std::string text = "ab 我爱数 cd";
  auto toks = cjk_bigram_tokens(text);
  BOOST_REQUIRE_EQUAL(toks.size(), 4u);
  BOOST_TEST(text.substr(toks[0].begin, toks[0].end - toks[0].begin) == "ab");
  BOOST_TEST(text.substr(toks[1].begin, toks[1].end - toks[1].begin) == "我爱");
  BOOST_TEST(text.substr(toks[2].begin, toks[2].end - toks[2].begin) == "爱数");
  BOOST_TEST(text.substr(toks[3].begin, toks[3].end - toks[3].begin) == "cd");
  BOOST_TEST((toks[1].kind == bigram_token_kind::cjk));
  BOOST_TEST((toks[3].kind == bigram_token_kind::word));
}

BOOST_AUTO_TEST_CASE(a_query_word_is_a_contiguous_subsequence_of_the_document_tokens) {
  // "数据库" must find "我爱数据库": its tokens appear consecutively in the document's.
  auto doc = cjk_bigram_tokens("我爱数据库");
  auto query = cjk_bigram_tokens("数据库");
  BOOST_REQUIRE_EQUAL(query.size(), 2u);
  bool found = false;
  for (std::size_t i = 0; i + query.size() <= doc.size(); ++i) {
    bool all = true;
    for (std::size_t j = 0; j < query.size(); ++j)
      all = all && doc[i + j].text == query[j].text;
    found = found || all;
  }
  BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(words_are_cut_at_the_maximum_length_the_same_way_for_queries) {
  std::string long_word(300, 'x');
  auto toks = cjk_bigram_tokens(long_word + " tail");
  BOOST_REQUIRE_EQUAL(toks.size(), 2u);
  BOOST_TEST(toks[0].text.size() == max_word_chars);
  BOOST_TEST(toks[0].end == 300u); // the range still covers the whole word
  BOOST_TEST(toks[1].text == "tail");
}

BOOST_AUTO_TEST_CASE(a_sink_can_stop_tokenizing_and_its_code_is_returned) {
  int seen = 0;
  int rc = tokenize_cjk_bigram("one two three", &seen,
                               [](void* ctx, std::string_view, std::size_t, std::size_t,
                                  bigram_token_kind) { return ++*static_cast<int*>(ctx) == 2 ? 7 : 0; });
  BOOST_TEST(rc == 7);
  BOOST_TEST(seen == 2);
}

BOOST_AUTO_TEST_CASE(invalid_utf8_and_random_bytes_never_crash_and_stay_in_range) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(rng() % 200, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng() % 256);
    for (auto& t : cjk_bigram_tokens(bytes)) {
      BOOST_REQUIRE(t.begin < t.end);
      BOOST_REQUIRE(t.end <= bytes.size());
      BOOST_REQUIRE(!t.text.empty());
    }
  }
  // A truncated 3-byte sequence between CJK letters separates the runs.
  BOOST_TEST(joined("数据\xE6\x95库房") == "数据 库房");
}

BOOST_DATA_TEST_CASE(folding_maps_case_and_width,
                     bdata::make({U'A', U'Ｚ', U'ｚ', U'１', U'É', U'Ÿ', U'Ł', U'Σ', U'Д', U'Ё', U'ｱ', U'数'}) ^
                       bdata::make({U'a', U'z', U'z', U'1', U'é', U'ÿ', U'ł', U'σ', U'д', U'ё', U'ア', U'数'}),
                     in, out) {
  BOOST_TEST(static_cast<uint32_t>(fold_code_point(in)) == static_cast<uint32_t>(out));
}

BOOST_AUTO_TEST_SUITE_END() // cjk_bigram_test
