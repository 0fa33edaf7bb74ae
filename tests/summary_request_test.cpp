// Tests of the summarizer request (SPEC §3): the per-message limit (6,000 -> first
// 4,000 + last 1,500), the prompt cap (160,000, 45% head / 55% tail, exact omitted
// count), character-safe cuts with CJK and emoji at the cut points, the sections
// and rules the prompt asks for, the target phrase, no max_tokens, the iterative
// update and the focus text.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "policies/summary_markers.hpp"
#include "policies/summary_request.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(summary_request_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using mneme::testing::msg;
using mneme::testing::tool_result;

namespace {

const std::string cjk = "数";     // 3 bytes
const std::string emoji = "😀";   // 4 bytes

// True when s is well-formed UTF-8 (no split or stray sequences).
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

std::string repeat(const std::string& unit, size_t n) {
  std::string out;
  out.reserve(unit.size() * n);
  for (size_t i = 0; i < n; ++i) out += unit;
  return out;
}

// n characters of Latin text that never repeats within 26 characters, so a kept
// head or tail is a recognisable slice of the original.
std::string latin(size_t n) {
  std::string out(n, 'a');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>('a' + i % 26);
  return out;
}

summary_request_params params_with_budget(int64_t budget) {
  summary_request_params p;
  p.model = "fake-summarizer";
  p.budget_tokens = budget;
  return p;
}

size_t count_of(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + needle.size()))
    ++n;
  return n;
}

// What a capped prompt is made of, read back from its marker.
struct capped_parts {
  std::string head, tail;
  size_t omitted = 0;
  size_t marker_chars = 0;
};

capped_parts split_at_prompt_marker(const std::string& s) {
  const std::string open = "\n\n...[input truncated: ";
  const std::string close = " chars omitted]...\n\n";
  const size_t at = s.find(open);
  BOOST_REQUIRE(at != std::string::npos);
  const size_t num_end = s.find(close, at);
  BOOST_REQUIRE(num_end != std::string::npos);
  capped_parts p;
  p.head = s.substr(0, at);
  p.omitted = std::stoul(s.substr(at + open.size(), num_end - at - open.size()));
  p.tail = s.substr(num_end + close.size());
  p.marker_chars = num_end + close.size() - at;
  return p;
}

} // namespace

// ---------------------------------------------------------------------------
// Characters and cuts

BOOST_DATA_TEST_CASE(characters_are_code_points_not_bytes,
                     data::make({std::string{}, std::string{"abc"}, cjk + cjk, emoji,
                                 "a" + emoji + "b", std::string{"é"}, std::string{"\x80"
                                                                                  "abc"},
                                 std::string{"\xff"}, repeat("a" + cjk + emoji + "é", 101),
                                 repeat("\x80\x80x", 50)})
                         ^ data::make({0u, 3u, 2u, 1u, 3u, 1u, 4u, 1u, 404u, 51u}),
                     text, want) {
  BOOST_TEST(utf8_char_count(text) == want);
}

BOOST_AUTO_TEST_CASE(a_head_and_tail_cut_keeps_whole_multibyte_characters) {
  const std::string text = "ab" + emoji + "cd" + cjk + "ef";  // 8 characters
  const auto cut = cut_head_and_tail(text, 3, 3);
  BOOST_TEST(cut.head == "ab" + emoji);
  BOOST_TEST(cut.tail == cjk + "ef");
  BOOST_TEST(cut.omitted_chars == 2u);
  const auto whole = cut_head_and_tail(text, 5, 3);
  BOOST_TEST(whole.head == text);
  BOOST_TEST(whole.tail.empty());
  BOOST_TEST(whole.omitted_chars == 0u);
}

// ---------------------------------------------------------------------------
// Per-message limit: over 6,000 characters keeps the first 4,000 and last 1,500

BOOST_DATA_TEST_CASE(a_message_text_over_six_thousand_chars_keeps_its_first_4000_and_last_1500,
                     data::make({size_t{1}, size_t{5999}, size_t{6000}, size_t{6001},
                                 size_t{20000}})
                         ^ data::make({false, false, false, true, true}),
                     length, cut) {
  const summary_input_caps caps;
  const std::string text = latin(length);
  const std::string out = truncate_long_text(text, caps.message_cap_chars,
                                             caps.message_head_chars, caps.message_tail_chars);
  if (!cut) {
    BOOST_TEST(out == text);
    return;
  }
  BOOST_TEST(out == text.substr(0, 4000) + "\n...[truncated]...\n" + text.substr(length - 1500));
}

BOOST_AUTO_TEST_CASE(the_per_message_cut_lands_between_cjk_and_emoji_characters) {
  const summary_input_caps caps;
  // 7,000 characters: CJK everywhere, emoji right at both cut points.
  const std::string text = repeat(cjk, 3999) + emoji + emoji + repeat(cjk, 1499) + emoji
                           + repeat(cjk, 1499);
  BOOST_REQUIRE(utf8_char_count(text) == 7000u);
  const std::string out = truncate_long_text(text, caps.message_cap_chars,
                                             caps.message_head_chars, caps.message_tail_chars);
  BOOST_TEST(valid_utf8(out));
  const size_t at = out.find("\n...[truncated]...\n");
  BOOST_REQUIRE(at != std::string::npos);
  BOOST_TEST(utf8_char_count(out.substr(0, at)) == 4000u);
  BOOST_TEST(out.substr(0, at) == repeat(cjk, 3999) + emoji);
  const std::string tail = out.substr(at + std::string{"\n...[truncated]...\n"}.size());
  BOOST_TEST(utf8_char_count(tail) == 1500u);
  BOOST_TEST(tail == emoji + repeat(cjk, 1499));
}

// ---------------------------------------------------------------------------
// Prompt cap: 160,000 characters, 45% head / 55% tail, exact omitted count

BOOST_DATA_TEST_CASE(a_prompt_over_160000_chars_keeps_45_percent_head_and_55_percent_tail,
                     data::make({size_t{160001}, size_t{200000}, size_t{1000000}}), length) {
  const std::string text = latin(length);
  const std::string out = cap_summary_prompt(text);
  BOOST_TEST(out.size() == 160000u);
  const auto parts = split_at_prompt_marker(out);
  const size_t kept = 160000 - parts.marker_chars;
  BOOST_TEST(parts.head.size() == static_cast<size_t>(std::floor(0.45 * kept)));
  BOOST_TEST(parts.tail.size() == kept - parts.head.size());
  BOOST_TEST(std::fabs(parts.tail.size() / double(kept) - 0.55) < 1.0 / kept + 1e-12);
  BOOST_TEST(parts.omitted == length - parts.head.size() - parts.tail.size());
  BOOST_TEST(text.compare(0, parts.head.size(), parts.head) == 0);
  BOOST_TEST(text.compare(length - parts.tail.size(), parts.tail.size(), parts.tail) == 0);
}

BOOST_DATA_TEST_CASE(a_prompt_of_at_most_160000_chars_is_not_touched,
                     data::make({size_t{0}, size_t{159999}, size_t{160000}}), length) {
  const std::string text = latin(length);
  BOOST_TEST(cap_summary_prompt(text) == text);
}

BOOST_AUTO_TEST_CASE(the_prompt_cap_counts_characters_and_cuts_between_cjk_and_emoji) {
  // 200,000 CJK characters with emoji sprinkled near both cut points.
  std::string text;
  for (size_t i = 0; i < 200000; ++i) text += (i % 7 == 0) ? emoji : cjk;
  const std::string out = cap_summary_prompt(text);
  BOOST_TEST(valid_utf8(out));
  BOOST_TEST(utf8_char_count(out) == 160000u);
  const auto parts = split_at_prompt_marker(out);
  const size_t kept = 160000 - parts.marker_chars;
  BOOST_TEST(utf8_char_count(parts.head) == static_cast<size_t>(std::floor(0.45 * kept)));
  BOOST_TEST(utf8_char_count(parts.tail) == kept - utf8_char_count(parts.head));
  BOOST_TEST(parts.omitted
             == 200000 - utf8_char_count(parts.head) - utf8_char_count(parts.tail));
}

BOOST_AUTO_TEST_CASE(a_huge_middle_yields_a_capped_prompt_that_keeps_instructions_and_target) {
  std::vector<message> middle;
  for (int i = 0; i < 100; ++i) middle.push_back(msg(msg_role::user, latin(5000)));
  middle.push_back(msg(msg_role::user, "LATEST-REQUEST: deploy to staging"));
  const std::string prompt = build_summary_prompt(middle, params_with_budget(7777));
  BOOST_TEST(utf8_char_count(prompt) == 160000u);
  const auto parts = split_at_prompt_marker(prompt);
  BOOST_TEST(parts.head.find("## Goal") != std::string::npos);
  BOOST_TEST(parts.tail.find("LATEST-REQUEST: deploy to staging") != std::string::npos);
  BOOST_TEST(parts.tail.find("target about 7777 tokens") != std::string::npos);
  BOOST_TEST(parts.head.find("target about 7777 tokens") != std::string::npos);
}

// ---------------------------------------------------------------------------
// What the prompt asks for

BOOST_AUTO_TEST_CASE(the_prompt_asks_for_the_eight_sections_in_order) {
  const std::string prompt =
      build_summary_prompt({msg(msg_role::user, "hello")}, params_with_budget(2000));
  const std::vector<std::string> headings{
      "## Goal", "## Constraints and preferences", "## Completed actions",
      "## Current state", "## Open questions and blocked items", "## Key decisions",
      "## Relevant files and identifiers", "## Latest user request (verbatim)"};
  size_t pos = 0;
  for (const auto& h : headings) {
    const size_t at = prompt.find(h, pos);
    BOOST_TEST(at != std::string::npos, "missing or out of order: " << h);
    if (at != std::string::npos) pos = at;
  }
}

BOOST_DATA_TEST_CASE(the_prompt_states_each_writing_rule,
                     data::make({"in the language the user writes in",
                                 "Copy identifiers exactly as they appear: file paths, URLs, ids",
                                 "error strings", "Redact secrets", "[REDACTED]",
                                 "Quote the latest user request word for word"}),
                     phrase) {
  const std::string prompt =
      build_summary_prompt({msg(msg_role::user, "hello")}, params_with_budget(2000));
  BOOST_TEST(prompt.find(phrase) != std::string::npos);
}

BOOST_DATA_TEST_CASE(the_budget_is_written_into_the_prompt_as_target_about_n_tokens,
                     data::make({int64_t{1}, int64_t{2000}, int64_t{6543}, int64_t{10000}}),
                     budget) {
  const std::string prompt =
      build_summary_prompt({msg(msg_role::user, "hello")}, params_with_budget(budget));
  const std::string phrase = "target about " + std::to_string(budget) + " tokens";
  BOOST_TEST(count_of(prompt, phrase) == 2u);  // instructions and closing line
  BOOST_TEST(count_of(prompt, "target about") == 2u);
}

BOOST_AUTO_TEST_CASE(the_request_is_one_user_message_for_the_summarizer_with_no_max_tokens) {
  const auto req = build_summary_request({msg(msg_role::user, "hello")}, params_with_budget(3000));
  BOOST_TEST(req.model == "fake-summarizer");
  BOOST_TEST((req.purpose == llm_purpose::summary));
  BOOST_TEST(!req.max_tokens.has_value());
  BOOST_TEST(!req.temperature.has_value());
  BOOST_TEST(!req.stream);
  BOOST_REQUIRE(req.messages.size() == 1u);
  BOOST_TEST((req.messages[0].role == msg_role::user));
  BOOST_TEST(req.messages[0].content
             == build_summary_prompt({msg(msg_role::user, "hello")}, params_with_budget(3000)));
}

// ---------------------------------------------------------------------------
// Rendering of the turns

BOOST_AUTO_TEST_CASE(turns_render_role_tool_name_tool_calls_and_content_readably) {
  message call = msg(msg_role::assistant, "Searching the logs.");
  call.tool_calls = {tool_call{"call_1", "grep", R"({"q":"ERR_42"})"}};
  const std::vector<message> middle{msg(msg_role::user, "Why does /srv/app.log say ERR_42?"),
                                    call,
                                    tool_result("call_1", "grep", "line 7: ERR_42 disk full")};
  const std::string prompt = build_summary_prompt(middle, params_with_budget(2000));
  const std::string want = "=== TURNS TO SUMMARIZE ===\n"
                           "[1] USER:\nWhy does /srv/app.log say ERR_42?\n"
                           "[2] ASSISTANT:\nSearching the logs.\n"
                           "  [tool call call_1] grep({\"q\":\"ERR_42\"})\n"
                           "[3] TOOL grep (result of call_1):\nline 7: ERR_42 disk full\n"
                           "=== END OF TURNS ===\n";
  BOOST_TEST(prompt.find(want) != std::string::npos);
  BOOST_TEST(prompt.find("PREVIOUS SUMMARY") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(long_contents_are_cut_by_the_message_limit_and_tool_arguments_by_theirs) {
  message call = msg(msg_role::assistant, latin(6001));
  call.tool_calls = {tool_call{"call_9", "write_file", latin(7000)}};
  const std::string prompt = build_summary_prompt({call}, params_with_budget(2000));
  BOOST_TEST(count_of(prompt, "\n...[truncated]...") == 2u);
  BOOST_TEST(prompt.find(latin(6001).substr(0, 4000) + "\n...[truncated]...\n"
                         + latin(6001).substr(6001 - 1500) + "\n")
             != std::string::npos);
  BOOST_TEST(prompt.find("write_file(" + latin(7000).substr(0, 1200) + "\n...[truncated]...)")
             != std::string::npos);
}

// Tool-call arguments: at most 1,500 characters stay whole; longer ones keep
// their first 1,200 characters and the marker, nothing of their end.
BOOST_AUTO_TEST_CASE(tool_call_arguments_over_1500_chars_keep_their_first_1200) {
  struct row {
    size_t chars;
    bool cut;
  };
  for (const row r : {row{0, false}, row{1200, false}, row{1500, false}, row{1501, true},
                      row{6000, true}, row{100000, true}}) {
    BOOST_TEST_CONTEXT("arguments of " << r.chars << " chars") {
      const std::string args = latin(r.chars);
      const std::string out = truncate_text_head(args, 1500, 1200);
      if (!r.cut) {
        BOOST_TEST(out == args);
      } else {
        BOOST_TEST(out == args.substr(0, 1200) + "\n...[truncated]...");
      }
    }
  }
  // Characters, not bytes: 1,500 CJK characters (4,500 bytes) stay whole, and
  // 1,501 are cut on a character boundary.
  std::string cjk;
  for (int i = 0; i < 1500; ++i) cjk += "数";
  BOOST_TEST(truncate_text_head(cjk, 1500, 1200) == cjk);
  const std::string cut = truncate_text_head(cjk + "据", 1500, 1200);
  BOOST_TEST(utf8_char_count(cut) == 1200u + 1u + message_truncated_marker.size());
  BOOST_TEST(cut.substr(0, 3600) == cjk.substr(0, 3600));
}

BOOST_AUTO_TEST_CASE(the_summary_input_caps_default_to_the_reference_numbers) {
  const summary_input_caps caps;
  BOOST_TEST(caps.message_cap_chars == 6000u);
  BOOST_TEST(caps.message_head_chars == 4000u);
  BOOST_TEST(caps.message_tail_chars == 1500u);
  BOOST_TEST(caps.tool_args_cap_chars == 1500u);
  BOOST_TEST(caps.tool_args_head_chars == 1200u);
}

BOOST_AUTO_TEST_CASE(an_empty_middle_still_yields_a_well_formed_prompt) {
  const std::string prompt = build_summary_prompt({}, params_with_budget(2000));
  BOOST_TEST(prompt.find("(no turns)") != std::string::npos);
  BOOST_TEST(prompt.find("target about 2000 tokens") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Iterative update and focus

BOOST_AUTO_TEST_CASE(a_summary_in_the_middle_becomes_the_previous_summary_followed_by_new_turns) {
  message old = msg(msg_role::assistant, wrap_summary("## Goal\nmigrate DB-7 to v2"));
  old.is_summary = true;
  const std::vector<message> middle{old, msg(msg_role::user, "now also rotate the logs")};
  const std::string prompt = build_summary_prompt(middle, params_with_budget(2000));
  const std::string want = "=== PREVIOUS SUMMARY ===\n## Goal\nmigrate DB-7 to v2\n"
                           "=== END OF PREVIOUS SUMMARY ===\n\n"
                           "=== NEW TURNS ===\n[1] USER:\nnow also rotate the logs\n"
                           "=== END OF TURNS ===\n";
  BOOST_TEST(prompt.find(want) != std::string::npos);
  BOOST_TEST(prompt.find("Update it with the new turns") != std::string::npos);
  BOOST_TEST(prompt.find(summary_prefix_tag) == std::string::npos);
  BOOST_TEST(prompt.find(summary_end_tag) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_summary_merged_into_a_message_splits_into_previous_summary_and_turn) {
  const message merged =
      msg(msg_role::user, wrap_summary("goal: ship v3") + "\n\nand please add tests");
  const auto previous = previous_summary_in({merged});
  BOOST_REQUIRE(previous.has_value());
  BOOST_TEST(*previous == "goal: ship v3");
  const std::string prompt = build_summary_prompt({merged}, params_with_budget(2000));
  BOOST_TEST(prompt.find("=== PREVIOUS SUMMARY ===\ngoal: ship v3\n") != std::string::npos);
  BOOST_TEST(prompt.find("[1] USER:\nand please add tests\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_summaries_and_unmarked_summary_rows_join_in_order) {
  message a = msg(msg_role::user, "first summary, written without markers");
  a.is_summary = true;
  message b = msg(msg_role::assistant, wrap_summary("second summary"));
  const auto previous = previous_summary_in({a, msg(msg_role::user, "x"), b});
  BOOST_REQUIRE(previous.has_value());
  BOOST_TEST(*previous == "first summary, written without markers\n\nsecond summary");
  BOOST_TEST(!previous_summary_in({msg(msg_role::user, "x")}).has_value());
}

BOOST_AUTO_TEST_CASE(a_previous_summary_given_by_the_caller_wins_and_is_never_message_capped) {
  message old = msg(msg_role::assistant, wrap_summary("stale text"));
  old.is_summary = true;
  auto p = params_with_budget(2000);
  p.previous_summary = latin(20000);
  const std::string prompt = build_summary_prompt({old, msg(msg_role::user, "go")}, p);
  BOOST_TEST(prompt.find("=== PREVIOUS SUMMARY ===\n" + latin(20000) + "\n") != std::string::npos);
  BOOST_TEST(prompt.find("stale text") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_focus_text_is_written_into_the_prompt_only_when_given) {
  auto p = params_with_budget(2000);
  const std::vector<message> middle{msg(msg_role::user, "hello")};
  BOOST_TEST(build_summary_prompt(middle, p).find("Focus:") == std::string::npos);
  p.focus = "the Postgres 数据库 migration";
  const std::string prompt = build_summary_prompt(middle, p);
  BOOST_TEST(prompt.find("Focus:") != std::string::npos);
  BOOST_TEST(prompt.find("\nthe Postgres 数据库 migration\n") != std::string::npos);
  BOOST_TEST(prompt.find("Focus:") < prompt.find("=== TURNS TO SUMMARIZE ==="));
}

BOOST_AUTO_TEST_CASE(identifiers_to_keep_are_listed_before_the_turns_only_when_given) {
  auto p = params_with_budget(2000);
  const std::vector<message> middle{msg(msg_role::user, "edit src/a.cpp")};
  BOOST_TEST(build_summary_prompt(middle, p).find("dropped the identifiers")
             == std::string::npos);
  p.must_keep = "- src/a.cpp\n- make test\n";
  const std::string prompt = build_summary_prompt(middle, p);
  auto at = prompt.find("dropped the identifiers");
  BOOST_REQUIRE(at != std::string::npos);
  BOOST_TEST(prompt.find("- src/a.cpp\n- make test\n", at) != std::string::npos);
  BOOST_TEST(at < prompt.find("=== TURNS TO SUMMARIZE ==="));
}

BOOST_AUTO_TEST_SUITE_END() // summary_request_test
