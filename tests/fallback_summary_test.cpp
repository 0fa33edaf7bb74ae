// Tests of the local fallback summary (SPEC §3): readable "role: content" lines,
// the 8,000-character cap (exact), the omitted-count marker, determinism, UTF-8
// safety at the cut points, readable tool rows and earlier summaries.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <limits>
#include <string>
#include <vector>

#include "policies/fallback_summary.hpp"
#include "policies/summary_markers.hpp"
#include "policies/summary_budget.hpp"
#include "policies/summary_request.hpp"
#include "policies/token_estimate.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(fallback_summary_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using mneme::testing::msg;
using mneme::testing::tool_result;

namespace {

const std::string cjk = "数";
const std::string emoji = "😀";

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xE  ? 3
                       : (c >> 3) == 0x1E ? 4
                                          : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

// A conversation of n exchanges whose lines are each distinct.
std::vector<message> conversation(size_t n) {
  std::vector<message> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(msg(msg_role::user, "question " + std::to_string(i) + " about /srv/app"));
    out.push_back(msg(msg_role::assistant, "answer " + std::to_string(i) + ": restart it"));
  }
  return out;
}

fallback_summary_limits uncapped() {
  fallback_summary_limits l;
  l.cap_chars = std::numeric_limits<size_t>::max();
  return l;
}

struct capped_parts {
  std::string head, tail;
  size_t omitted = 0, whole = 0;
};

// Reads back "<head>\n[... N chars omitted, including K whole messages ...]\n<tail>".
capped_parts split_at_marker(const std::string& s) {
  const std::string open = "\n[... ";
  const std::string mid = " chars omitted, including ";
  const std::string close = " whole messages ...]\n";
  const size_t at = s.find(open);
  BOOST_REQUIRE(at != std::string::npos);
  const size_t m = s.find(mid, at);
  const size_t c = s.find(close, at);
  BOOST_REQUIRE(m != std::string::npos);
  BOOST_REQUIRE(c != std::string::npos);
  capped_parts p;
  p.head = s.substr(0, at);
  p.omitted = std::stoul(s.substr(at + open.size(), m - at - open.size()));
  p.whole = std::stoul(s.substr(m + mid.size(), c - m - mid.size()));
  p.tail = s.substr(c + close.size());
  return p;
}

} // namespace

BOOST_AUTO_TEST_CASE(messages_become_one_readable_role_content_line_each) {
  message call = msg(msg_role::assistant, "Let me look.");
  call.tool_calls = {tool_call{"call_1", "grep", R"({"q": "ERR_42"})"},
                     tool_call{"call_2", "ls", "{}"}};
  message result = tool_result("call_1", "grep", "line 7:\n  ERR_42\tdisk full\n");
  const std::vector<message> middle{msg(msg_role::user, "Why\n\nERR_42?"), call, result,
                                    msg(msg_role::assistant, "")};
  BOOST_TEST(build_fallback_summary(middle)
             == "Local fallback summary (the summarizer was unavailable): the 4 compacted "
                "messages as \"role: content\" lines, long ones shortened.\n"
                "user: Why ERR_42?\n"
                "assistant: Let me look. [tool calls: grep({\"q\": \"ERR_42\"}); ls({})]\n"
                "tool grep: line 7: ERR_42 disk full\n"
                "assistant:");
}

BOOST_AUTO_TEST_CASE(an_empty_middle_says_nothing_was_compacted) {
  BOOST_TEST(build_fallback_summary({}) == "Local fallback summary: no messages were compacted.");
}

BOOST_AUTO_TEST_CASE(a_long_message_keeps_its_first_600_and_last_300_chars) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += static_cast<char>('a' + i % 26);
  const std::string out = build_fallback_summary({msg(msg_role::tool, text)});
  BOOST_TEST(out.find("\ntool: " + text.substr(0, 600) + " ...[truncated]... "
                      + text.substr(2000 - 300))
             != std::string::npos);
  const std::string at_cap(1000, 'z');
  BOOST_TEST(build_fallback_summary({msg(msg_role::user, at_cap)}).find("\nuser: " + at_cap)
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_earlier_summary_keeps_its_first_2000_and_last_800_chars) {
  std::string body;
  for (int i = 0; i < 5000; ++i) body += static_cast<char>('A' + i % 26);
  message old = msg(msg_role::assistant, wrap_summary(body));
  old.is_summary = true;
  const std::string out = build_fallback_summary({old, msg(msg_role::user, "next")});
  BOOST_TEST(out.find("\nearlier summary: " + body.substr(0, 2000) + " ...[truncated]... "
                      + body.substr(5000 - 800) + "\nuser: next")
             != std::string::npos);
  BOOST_TEST(out.find(summary_prefix_tag) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_merged_summary_gives_a_summary_line_and_a_message_line) {
  const std::string out = build_fallback_summary(
      {msg(msg_role::user, wrap_summary("goal: ship v3") + "\n\nand add tests")});
  BOOST_TEST(out.find("\nearlier summary: goal: ship v3\nuser: and add tests")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_text_of_exactly_8000_chars_is_kept_whole_and_one_more_is_cut_to_8000) {
  // Enough exchanges to come within 1,000 characters of the cap, then pad one
  // message so the whole text is exactly 8,000 characters.
  std::vector<message> middle;
  size_t base = 0;
  for (size_t n = 100; base < 7100; ++n) {
    middle = conversation(n);
    middle.push_back(msg(msg_role::user, ""));
    base = utf8_char_count(build_fallback_summary(middle, uncapped()));
  }
  const size_t pad = 8000 - base - 1;  // the ": " separator replaces ":"
  BOOST_REQUIRE(pad < 1000);           // stays under the per-message limit
  // 8,000 characters in all: returned unchanged.
  middle.back().content = std::string(pad, 'p');
  const std::string full = build_fallback_summary(middle, uncapped());
  BOOST_REQUIRE(utf8_char_count(full) == 8000u);
  BOOST_TEST(build_fallback_summary(middle) == full);
  // 8,001 characters: cut to exactly 8,000 with the marker.
  middle.back().content += 'p';
  const std::string out = build_fallback_summary(middle);
  BOOST_TEST(utf8_char_count(out) == 8000u);
  BOOST_TEST(out.find(" chars omitted, including ") != std::string::npos);
}

BOOST_DATA_TEST_CASE(a_long_middle_is_cut_to_exactly_8000_chars_keeping_45_and_55_percent,
                     data::make({size_t{200}, size_t{2000}}), exchanges) {
  const auto middle = conversation(exchanges);
  const std::string full = build_fallback_summary(middle, uncapped());
  const std::string out = build_fallback_summary(middle);
  BOOST_TEST(out.size() == 8000u);  // ASCII: characters == bytes
  const auto parts = split_at_marker(out);
  const size_t marker = 8000 - parts.head.size() - parts.tail.size();
  const size_t kept = 8000 - marker;
  BOOST_TEST(parts.head.size() == static_cast<size_t>(0.45 * kept));
  BOOST_TEST(parts.tail.size() == kept - parts.head.size());
  BOOST_TEST(full.compare(0, parts.head.size(), parts.head) == 0);
  BOOST_TEST(full.compare(full.size() - parts.tail.size(), parts.tail.size(), parts.tail) == 0);
  BOOST_TEST(parts.omitted == full.size() - parts.head.size() - parts.tail.size());
  BOOST_TEST(out.find("Local fallback summary") == 0u);
  BOOST_TEST(out.substr(out.size() - 30).find(std::to_string(exchanges - 1) + ": restart it")
             != std::string::npos);
  // Whole lines inside the cut, counted independently on the uncapped text.
  const size_t cut_begin = parts.head.size();
  const size_t cut_end = full.size() - parts.tail.size();
  size_t whole = 0;
  for (size_t start = full.find('\n') + 1; start != 0; start = full.find('\n', start) + 1) {
    const size_t nl = full.find('\n', start);
    const size_t end = nl == std::string::npos ? full.size() : nl;
    if (start >= cut_begin && end <= cut_end) ++whole;
    if (nl == std::string::npos) break;
  }
  BOOST_TEST(parts.whole == whole);
  BOOST_TEST(whole > 0u);
}

BOOST_AUTO_TEST_CASE(cjk_and_emoji_at_the_cut_points_stay_whole_characters) {
  std::vector<message> middle;
  for (int i = 0; i < 60; ++i) {
    std::string text;
    for (int k = 0; k < 400; ++k) text += (k % 3 == 0) ? emoji : cjk;
    middle.push_back(msg(i % 2 ? msg_role::assistant : msg_role::user, text));
  }
  const std::string out = build_fallback_summary(middle);
  BOOST_TEST(valid_utf8(out));
  BOOST_TEST(utf8_char_count(out) == 8000u);
  BOOST_TEST(out.size() > 8000u);  // counted in characters, not bytes
}

BOOST_AUTO_TEST_CASE(the_same_middle_always_yields_the_same_text) {
  auto middle = conversation(500);
  middle[3].tool_calls = {tool_call{"c", "run", "{\"cmd\":\"make\"}"}};
  const std::string first = build_fallback_summary(middle);
  for (int i = 0; i < 3; ++i) BOOST_TEST(build_fallback_summary(middle) == first);
  const auto copy = middle;
  BOOST_TEST(build_fallback_summary(copy) == first);
}

BOOST_AUTO_TEST_CASE(the_fallback_survives_wrapping_and_unwrapping_unchanged) {
  auto middle = conversation(300);
  middle.push_back(msg(msg_role::user, std::string{summary_end_line} + " quoted by the user"));
  const std::string body = build_fallback_summary(middle);
  BOOST_TEST(unwrap_summary(wrap_summary(body)) == body);
}

// ---- The fallback held to the summary budget (SPEC §5.6, issue 25) ---------------------------

// Table over the issue's windows: a 300-exchange middle (far over any cap) gets a
// fallback within the budget of its window, smaller than the middle it replaces.
BOOST_DATA_TEST_CASE(the_fallback_stays_within_the_budget_of_every_window,
                     data::make({int64_t{4096}, int64_t{8192}, int64_t{32768}, int64_t{131072},
                                 int64_t{200000}, int64_t{1000000}}),
                     window) {
  auto middle = conversation(300);
  const int64_t middle_tokens = estimate_messages_tokens(middle);
  auto budget = compute_summary_budget(middle_tokens, window);
  BOOST_REQUIRE(budget.ok());
  auto text = build_fallback_summary_within(middle, budget.tokens);
  BOOST_TEST(estimate_text_tokens(text) <= budget.tokens);
  BOOST_TEST(estimate_text_tokens(text) < middle_tokens);
  BOOST_TEST(utf8_char_count(text) <= 8000u);
  BOOST_TEST(text.find("chars omitted") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_budget_of_2000_or_more_leaves_the_8000_char_fallback_unchanged) {
  auto middle = conversation(300);
  BOOST_TEST(build_fallback_summary_within(middle, 2000) == build_fallback_summary(middle));
  BOOST_TEST(build_fallback_summary_within(middle, 10000) == build_fallback_summary(middle));
}

BOOST_AUTO_TEST_CASE(a_cjk_middle_is_shrunk_until_its_estimate_fits_the_budget) {
  std::vector<message> middle;
  std::string line;
  for (int k = 0; k < 60; ++k) line += cjk;
  for (int i = 0; i < 40; ++i) middle.push_back(msg(msg_role::user, line));
  auto text = build_fallback_summary_within(middle, 400);
  BOOST_TEST(estimate_text_tokens(text) <= 400);
  BOOST_TEST(valid_utf8(text));
}

BOOST_AUTO_TEST_CASE(a_small_middle_fits_whole_and_is_the_plain_fallback) {
  auto middle = conversation(2);
  BOOST_TEST(build_fallback_summary_within(middle, 400) == build_fallback_summary(middle));
}

BOOST_AUTO_TEST_SUITE_END() // fallback_summary_test
