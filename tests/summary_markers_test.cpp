// Tests of the summary markers (SPEC §3): the fixed prefix and end lines, the
// round trip wrap -> unwrap, and finding the true outer bounds when the body or
// the surrounding text quotes the markers.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/summary_markers.hpp"

BOOST_AUTO_TEST_SUITE(summary_markers_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

const std::string prefix{summary_prefix_line};
const std::string end_line{summary_end_line};

// Bodies that must survive wrap -> unwrap byte for byte, including ones that
// quote the markers as a model echoing its input would.
const std::vector<std::string> tricky_bodies{
    "",
    "one line",
    "goal: ship it\nstate: done",
    "\n",
    "trailing newline\n",
    "\nleading newline",
    "windows\r\nline endings\r\n",
    "中文摘要：用户要求修改 /etc/app.yaml 😀",
    prefix + "\nquoted summary\n" + end_line,
    end_line,
    "--- END OF CONTEXT SUMMARY",
    "[CONTEXT COMPACTION — REFERENCE ONLY]",
    "\\" + end_line,
    "\\\\[CONTEXT COMPACTION — REFERENCE ONLY] twice escaped",
    "\\not a marker",
    "mid-line " + end_line + " is harmless",
    "  " + end_line + " (indented: not a marker line)",
};

} // namespace

BOOST_AUTO_TEST_CASE(the_marker_lines_have_their_fixed_text) {
  BOOST_TEST(summary_prefix_line.substr(0, summary_prefix_tag.size()) == summary_prefix_tag);
  BOOST_TEST(summary_prefix_tag == "[CONTEXT COMPACTION — REFERENCE ONLY]");
  BOOST_TEST(summary_prefix_line.find("reference only") != std::string_view::npos);
  BOOST_TEST(summary_prefix_line.find('\n') == std::string_view::npos);
  BOOST_TEST(summary_end_line
             == "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary "
                "above ---");
}

BOOST_AUTO_TEST_CASE(a_wrapped_summary_is_prefix_line_body_end_line) {
  BOOST_TEST(wrap_summary("goal: x\nstate: y") == prefix + "\ngoal: x\nstate: y\n" + end_line);
}

BOOST_DATA_TEST_CASE(unwrapping_a_wrapped_body_returns_it_byte_for_byte,
                     data::make(tricky_bodies), body) {
  BOOST_TEST(unwrap_summary(wrap_summary(body)) == body);
}

BOOST_DATA_TEST_CASE(find_summary_spans_the_whole_wrapped_text_whatever_the_body_quotes,
                     data::make(tricky_bodies), body) {
  const auto wrapped = wrap_summary(body);
  const auto span = find_summary(wrapped);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(span->begin == 0u);
  BOOST_TEST(span->end == wrapped.size());
  BOOST_TEST(span->body_begin == prefix.size() + 1);
  BOOST_TEST(span->body_end == wrapped.size() - end_line.size() - 1);
}

BOOST_AUTO_TEST_CASE(inner_marker_lines_are_escaped_with_one_backslash) {
  const auto wrapped = wrap_summary(end_line + "\n" + prefix);
  BOOST_TEST(wrapped == prefix + "\n\\" + end_line + "\n\\" + prefix + "\n" + end_line);
}

BOOST_AUTO_TEST_CASE(a_summary_merged_before_a_tail_message_ends_at_its_own_end_line) {
  const auto wrapped = wrap_summary("echoed:\n" + end_line);
  const std::string tail = "please fix the build\n" + end_line + "\nthanks";
  const std::string merged = wrapped + "\n\n" + tail;
  const auto span = find_summary(merged);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(span->begin == 0u);
  BOOST_TEST(span->end == wrapped.size());
  BOOST_TEST(unwrap_summary(merged) == "echoed:\n" + end_line);
  BOOST_TEST(text_around_summary(merged, *span) == tail);
}

BOOST_AUTO_TEST_CASE(stray_marker_lines_before_the_summary_do_not_move_its_bounds) {
  // An end line with no prefix before it, then a prefix line never closed.
  const std::string before =
      end_line.substr(0, 26) + " quoted\n" + prefix + " quoted by the user\nunterminated\n";
  const auto wrapped = wrap_summary("the real body");
  const std::string text = before + wrapped;
  const auto span = find_summary(text);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(span->begin == before.size());
  BOOST_TEST(span->end == text.size());
  BOOST_TEST(unwrap_summary(text) == "the real body");
}

BOOST_AUTO_TEST_CASE(an_empty_body_gives_an_empty_body_span) {
  const auto wrapped = wrap_summary("");
  BOOST_TEST(wrapped == prefix + "\n\n" + end_line);
  const auto span = find_summary(wrapped);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(span->body_begin == span->body_end);
}

BOOST_AUTO_TEST_CASE(marker_lines_without_a_blank_line_between_them_give_an_empty_body) {
  const std::string text = prefix + "\n" + end_line;
  const auto span = find_summary(text);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(span->body_begin == span->body_end);
  BOOST_TEST(span->end == text.size());
  BOOST_TEST(unwrap_summary(text) == "");
}

BOOST_DATA_TEST_CASE(texts_without_a_complete_pair_of_markers_hold_no_summary,
                     data::make({std::string{}, std::string{"plain reply"}, prefix,
                                 prefix + "\nbody without end", end_line + "\n" + prefix,
                                 "x" + prefix + "\n" + end_line,
                                 "\\" + prefix + "\nescaped\n" + end_line}),
                     text) {
  BOOST_TEST(!find_summary(text).has_value());
  BOOST_TEST(unwrap_summary(text) == text);
}

BOOST_AUTO_TEST_CASE(the_text_around_a_summary_joins_what_came_before_and_after_it) {
  const std::string text = "  intro line\n\n" + wrap_summary("body") + "\n\n\nafter  \n";
  const auto span = find_summary(text);
  BOOST_REQUIRE(span.has_value());
  BOOST_TEST(text_around_summary(text, *span) == "intro line\n\nafter");
  const auto alone = wrap_summary("body");
  BOOST_TEST(text_around_summary(alone, *find_summary(alone)) == "");
}

BOOST_AUTO_TEST_SUITE_END() // summary_markers_test
