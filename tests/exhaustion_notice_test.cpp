// Tests of the notice after an exhausted turn (SPEC §5.3, issue 25 item 6): it names the
// compactions tried and says whether the message was answered in the new session, or
// asks to send it again quoting its first 200 characters, cut on a character boundary.
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/exhaustion_notice.hpp"
#include "policies/utf8.hpp"

BOOST_AUTO_TEST_SUITE(exhaustion_notice_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(a_short_message_is_quoted_whole) {
  BOOST_TEST(resend_quote("what is the status of /srv/app?") == "what is the status of /srv/app?");
  BOOST_TEST(resend_quote("").empty());
}

BOOST_AUTO_TEST_CASE(a_long_message_is_cut_at_200_characters_and_marked) {
  std::string text(199, 'a');
  text += "bc";
  BOOST_TEST(resend_quote(text) == std::string(199, 'a') + "b…");
  BOOST_TEST(resend_quote(std::string(200, 'a')) == std::string(200, 'a'));
}

BOOST_AUTO_TEST_CASE(the_cut_never_splits_a_multibyte_character) {
  std::string text;
  for (int i = 0; i < 150; ++i)
    text += "数据"; // 300 code points, 900 bytes
  auto quote = resend_quote(text);
  BOOST_TEST(count_code_points(quote) == 201u); // 200 + the ellipsis
  BOOST_TEST(quote.substr(0, 600) == text.substr(0, 600));
  BOOST_TEST(quote.substr(600) == "…");
}

BOOST_AUTO_TEST_CASE(the_notice_says_what_was_tried_and_what_became_of_the_message) {
  auto answered = exhaustion_notice(3, true, "hello");
  BOOST_TEST(answered.find("(3 compactions tried)") != std::string::npos);
  BOOST_TEST(answered.find("answered in the new session") != std::string::npos);
  BOOST_TEST(answered.find("hello") == std::string::npos);
  auto resend = exhaustion_notice(1, false, std::string(300, 'q'));
  BOOST_TEST(resend.find("(1 compaction tried)") != std::string::npos);
  BOOST_TEST(resend.find("please send it again: \"" + std::string(200, 'q') + "…\"")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_a_text_the_notice_asks_again_without_an_empty_quote) {
  auto notice = exhaustion_notice(2, false, "");
  BOOST_TEST(notice.find("please send it again.") != std::string::npos);
  BOOST_TEST(notice.find("\"\"") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // exhaustion_notice_test
