// Tests of the text handling the recall backends share (policies/recall_text): the
// tsquery literal of a parsed query (quoting, operators, phrases, prefixes, NOT),
// phrase occurrences, the BM25 formula and the FTS5-shaped snippets.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/cjk_bigram.hpp"
#include "policies/fts_query.hpp"
#include "policies/recall_text.hpp"

BOOST_AUTO_TEST_SUITE(recall_text_test)

using namespace mneme;

namespace {

std::vector<std::string> bigram_texts(std::string_view text) {
  std::vector<std::string> out;
  for (auto& t : cjk_bigram_tokens(text))
    out.push_back(t.text);
  return out;
}

std::string tsquery_of(const std::string& raw) {
  return to_tsquery(parse_user_query(raw), bigram_texts).tsquery;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_tsquery_mirrors_the_parsed_query) {
  BOOST_TEST(tsquery_of("Wombat") == "('wombat')");
  BOOST_TEST(tsquery_of("conne*") == "('conne':*)");
  BOOST_TEST(tsquery_of("a OR b c") == "('a' | 'b') & ('c')");
  BOOST_TEST(tsquery_of("deploy NOT staging") == "('deploy') & !('staging')");
  BOOST_TEST(tsquery_of("\"the wombat service\"") == "(('the' <-> 'wombat' <-> 'service'))");
  BOOST_TEST(tsquery_of("数据库") == "(('数据' <-> '据库'))");
  BOOST_TEST(tsquery_of("youer服务*") == "(('youer' <-> '服务':*))");
}

BOOST_AUTO_TEST_CASE(a_query_without_a_positive_clause_has_no_tsquery) {
  BOOST_TEST(tsquery_of("NOT wombat").empty());
  BOOST_TEST(tsquery_of("").empty());
  BOOST_TEST(tsquery_of("*** ((( ^").empty());
}

BOOST_AUTO_TEST_CASE(every_lexeme_is_quoted_so_no_user_text_is_an_operator) {
  // A tokenizer that keeps quotes, backslashes and operators (the real ones drop
  // them): each still lands inside one quoted, escaped lexeme.
  auto raw = [](std::string_view t) { return std::vector<std::string>{std::string{t}}; };
  auto q = to_tsquery(parse_user_query("it's a\\b x&!|<->:*y"), raw);
  BOOST_TEST(q.tsquery == "('it\\'s') & ('a\\\\b') & ('x&!|<->:*y')");
  BOOST_TEST(q.phrases.size() == 3u);
}

BOOST_AUTO_TEST_CASE(a_term_without_tokens_matches_nothing_or_is_ignored_when_negated) {
  auto none_for_b = [](std::string_view t) {
    return t == "b" ? std::vector<std::string>{} : std::vector<std::string>{std::string{t}};
  };
  BOOST_TEST(to_tsquery(parse_user_query("a b"), none_for_b).tsquery.empty());
  BOOST_TEST(to_tsquery(parse_user_query("a OR b"), none_for_b).tsquery == "('a')");
  BOOST_TEST(to_tsquery(parse_user_query("a NOT b"), none_for_b).tsquery == "('a')");
}

BOOST_AUTO_TEST_CASE(phrase_hits_count_each_phrase_and_prefixes_match_the_last_token) {
  auto doc = cjk_bigram_tokens("the wombat met the wombats; 我爱数据库 and 数据");
  std::vector<match_phrase> phrases{{{"wombat"}, false}, {{"wombat"}, true},
                                    {{"the", "wombat"}, false}, {{"数据", "据库"}, false},
                                    {{"数据"}, false}, {{"nothing"}, false}};
  BOOST_TEST(phrase_hits(doc, phrases) == (std::vector<int64_t>{1, 2, 1, 1, 2, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bm25_saturates_frequency_and_penalises_length) {
  // FTS5's formula, every phrase weighing 1: tf (k1 + 1) / (tf + k1 (1 - b + b dl/avg)).
  BOOST_TEST(bm25_without_idf({1}, 10, 10.0) == -1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(bm25_without_idf({3}, 3, 8.0) < bm25_without_idf({1}, 13, 8.0));
  BOOST_TEST(bm25_without_idf({2}, 10, 10.0) < bm25_without_idf({1}, 10, 10.0));
  BOOST_TEST(bm25_without_idf({1}, 5, 10.0) < bm25_without_idf({1}, 20, 10.0));
  BOOST_TEST(bm25_without_idf({1, 1}, 10, 10.0) == -2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(bm25_without_idf({0}, 10, 10.0) == 0.0);
}

BOOST_AUTO_TEST_CASE(token_snippets_mark_matches_and_cut_long_text_with_ellipses) {
  std::vector<match_phrase> wombat{{{"wombat"}, false}};
  std::string text = "One wombat.";
  BOOST_TEST(token_snippet(text, cjk_bigram_tokens(text), wombat) == "One >>>wombat<<<.");
  std::string long_text;
  for (int i = 0; i < 40; ++i)
    long_text += "w" + std::to_string(i) + " ";
  long_text += "wombat";
  for (int i = 40; i < 80; ++i)
    long_text += " w" + std::to_string(i);
  auto snip = token_snippet(long_text, cjk_bigram_tokens(long_text), wombat);
  BOOST_TEST(snip.find(">>>wombat<<<") != std::string::npos, snip);
  BOOST_TEST(snip.rfind("…", 0) == 0u, snip);
  BOOST_TEST(snip.size() >= 3u);
  BOOST_TEST(snip.substr(snip.size() - 3) == "…", snip);
  auto tokens_shown = cjk_bigram_tokens(snip).size();
  BOOST_TEST(tokens_shown == snippet_max_tokens);
}

BOOST_AUTO_TEST_CASE(overlapping_bigram_matches_are_marked_once) {
  std::string text = "我爱数据库";
  std::vector<match_phrase> q{{{"数据", "据库"}, false}};
  BOOST_TEST(token_snippet(text, cjk_bigram_tokens(text), q) == "我爱>>>数据库<<<");
  std::vector<match_phrase> two{{{"数据"}, false}, {{"据库"}, false}};
  BOOST_TEST(token_snippet(text, cjk_bigram_tokens(text), two) == "我爱>>>数据库<<<");
}

BOOST_AUTO_TEST_CASE(the_substring_side_applies_every_clause_ascii_case_insensitively) {
  auto lower = ascii_lower("Deploy the 数据库 backup to staging-eu");
  BOOST_TEST(text_matches_query(lower, parse_user_query("DEPLOY backup")));
  BOOST_TEST(text_matches_query(lower, parse_user_query("restore OR backup")));
  BOOST_TEST(!text_matches_query(lower, parse_user_query("deploy NOT staging")));
  BOOST_TEST(!text_matches_query(lower, parse_user_query("NOT restore")));
  BOOST_TEST(scan_snippet("Deploy the 数据库 backup", ascii_lower("Deploy the 数据库 backup"),
                          parse_user_query("据"))
             == "Deploy the 数>>>据<<<库 backup");
}

BOOST_AUTO_TEST_SUITE_END() // recall_text_test
