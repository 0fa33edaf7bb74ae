// Tests of policies/tsquery_text.hpp: a parsed recall query as tsquery text over
// mneme's own tokens (phrases of CJK bigrams, folded words, prefixes, OR, NOT), and
// that no input text can add an operator or break the quoting.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/fts_query.hpp"
#include "policies/tsquery_text.hpp"

BOOST_AUTO_TEST_SUITE(tsquery_text_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

std::string tsq(const char* text) {
  return to_pg_tsquery(parse_user_query(text));
}

} // namespace

BOOST_AUTO_TEST_CASE(words_are_folded_lexemes_anded) {
  BOOST_TEST(tsq("Vim Editor") == "('vim') & ('editor')");
}

BOOST_AUTO_TEST_CASE(a_cjk_run_is_a_phrase_of_its_overlapping_bigrams) {
  BOOST_TEST(tsq("乌龙茶") == "(('乌龙' <-> '龙茶'))");
  BOOST_TEST(tsq("茶") == "('茶')");
}

BOOST_AUTO_TEST_CASE(latin_glued_to_cjk_splits_as_the_column_does) {
  BOOST_TEST(tsq("youer服务") == "(('youer' <-> '服务'))");
}

BOOST_AUTO_TEST_CASE(or_not_and_prefix_map_to_tsquery_operators) {
  BOOST_TEST(tsq("vim OR helix") == "('vim' | 'helix')");
  BOOST_TEST(tsq("editor NOT emacs") == "('editor') & !('emacs')");
  BOOST_TEST(tsq("edit*") == "('edit':*)");
}

BOOST_AUTO_TEST_CASE(no_positive_clause_or_only_punctuation_gives_nothing) {
  BOOST_TEST(tsq("NOT emacs").empty());
  BOOST_TEST(tsq("!!! ...").empty());
  BOOST_TEST(tsq("").empty());
}

BOOST_DATA_TEST_CASE(hostile_text_stays_inside_quoted_lexemes,
                     data::make({"it's", "a\\b", "'; DROP TABLE facts; --", "x & y | !z",
                                 "<-> :* ( )"}),
                     text) {
  auto out = tsq(text);
  // Outside quotes only the operators this unit writes may appear.
  bool quoted = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '\'')
        quoted = false;
      continue;
    }
    if (c == '\'') {
      quoted = true;
      continue;
    }
    BOOST_TEST(std::string{"()&|!<->:* "}.find(c) != std::string::npos, text << " -> " << out);
  }
  BOOST_TEST(!quoted, out);
}

BOOST_AUTO_TEST_SUITE_END() // tsquery_text_test
