// Tests of skills on demand (SPEC §7): SKILL.md parsing (front matter, heading
// fallback, folder-name fallback, errors), the index, the loaded-skill
// message, unloading when the task ends, and the token saving of the index
// over loading 100 skills up front.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

#include "policies/skills_index.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(skills_index_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

message row(int64_t id, msg_role role, std::string content) {
  message m;
  m.id = id;
  m.role = role;
  m.content = std::move(content);
  return m;
}

skill parsed(std::string_view text, std::string_view folder = {}) {
  const auto r = parse_skill(text, folder);
  BOOST_TEST_REQUIRE(r.ok(), "parse failed: " << r.error << " " << r.detail);
  return r.value;
}

const char* const topics[] = {"weather", "wechat", "feishu", "github", "aws", "redis",
                              "postgres", "calendar", "email", "translate"};

// A realistic SKILL.md: front matter, usage steps, a parameter schema, pitfalls.
std::string generated_skill(int k) {
  const std::string topic = topics[k % 10];
  const std::string name = topic + "-tool-" + std::to_string(k);
  std::string s = "---\nname: " + name + "\ndescription: Work with " + topic
                  + " for the user: query, update and report results (variant "
                  + std::to_string(k) + ")\n---\n# " + name + "\n\n## Usage\n";
  for (int step = 1; step <= 6; ++step)
    s += std::to_string(step) + ". Call `" + topic + "_api` with the account of the current "
         "user, check the response status and keep the identifiers it returns for step "
         + std::to_string(step + 1) + ".\n";
  s += "\n## Parameters\n```json\n{\"type\":\"object\",\"properties\":{\"account\":{\"type\":"
       "\"string\"},\"query\":{\"type\":\"string\",\"maxLength\":500},\"limit\":{\"type\":"
       "\"integer\",\"minimum\":1,\"maximum\":100},\"dry_run\":{\"type\":\"boolean\"}},"
       "\"required\":[\"account\",\"query\"]}\n```\n\n## Pitfalls\n";
  for (int p = 1; p <= 5; ++p)
    s += "- The " + topic + " API rate-limits bursts; pitfall " + std::to_string(p)
         + ": retry after the Retry-After header, never in a tight loop.\n";
  return s;
}

} // namespace

BOOST_AUTO_TEST_CASE(front_matter_gives_name_and_description) {
  const auto s = parsed("---\nname: blog-publisher\ndescription: \"Publish a markdown post to "
                        "WeChat\"\nversion: 2\n---\n# Something else\n\nBody text.\n");
  BOOST_TEST(s.name == "blog-publisher");
  BOOST_TEST(s.description == "Publish a markdown post to WeChat");
}

BOOST_AUTO_TEST_CASE(a_folded_front_matter_description_is_joined_on_one_line) {
  const auto s = parsed("---\nname: x-y\ndescription: >\n  first part\n  second part\n---\n");
  BOOST_TEST(s.description == "first part second part");
}

BOOST_AUTO_TEST_CASE(without_front_matter_the_heading_and_first_paragraph_are_used) {
  const auto s = parsed("\n# Blog Publisher\n\nPublish a markdown article\nto WeChat.\n\n"
                        "## Usage\nsteps\n");
  BOOST_TEST(s.name == "blog-publisher");
  BOOST_TEST(s.description == "Publish a markdown article to WeChat.");
}

BOOST_AUTO_TEST_CASE(front_matter_without_description_takes_the_first_paragraph) {
  const auto s = parsed("---\nname: db-fix\n---\n# DB fix\n\nUnlock a locked database.\n");
  BOOST_TEST(s.name == "db-fix");
  BOOST_TEST(s.description == "Unlock a locked database.");
}

BOOST_AUTO_TEST_CASE(a_skill_without_name_or_heading_takes_its_folder_name) {
  const auto s = parsed("Just some instructions.\n", "My Skill");
  BOOST_TEST(s.name == "my-skill");
  BOOST_TEST(s.description == "Just some instructions.");
  BOOST_TEST(parsed("# 发布博客\n\n把文章发布到微信。\n").name == "发布博客");
}

BOOST_AUTO_TEST_CASE(an_empty_heading_gives_no_name_and_the_folder_name_is_used) {
  const auto s = parsed("#\n\nDoes things.\n", "tools");
  BOOST_TEST(s.name == "tools");
  BOOST_TEST(s.description == "Does things.");
  BOOST_TEST(parse_skill("###   \n", "").error == skill_error::no_name);
}

BOOST_AUTO_TEST_CASE(a_long_description_is_cut_to_120_characters) {
  const auto s = parsed("---\nname: long\ndescription: " + std::string(300, 'd') + "\n---\n");
  BOOST_TEST(s.description == std::string(119, 'd') + "…");
  BOOST_TEST(k_skill_description_chars == 120u);
}

BOOST_AUTO_TEST_CASE(a_skill_without_any_description_says_so) {
  BOOST_TEST(parsed("# Lonely\n").description == "(no description)");
}

// text, folder -> error
BOOST_DATA_TEST_CASE(bad_skill_files_are_rejected_with_the_reason,
                     data::make({std::string(" \n\t\n"), std::string("---\nname: x\n"),
                                 std::string("no heading here"),
                                 std::string("---\nname: two words\n---\n"),
                                 std::string("---\nname: " + std::string(65, 'n') + "\n---\n"),
                                 std::string("---\nname: a(b)\n---\n")}) ^
                         data::make({std::string(""), std::string(""), std::string(""),
                                     std::string(""), std::string(""), std::string("")}) ^
                         data::make({skill_error::empty_text,
                                     skill_error::unterminated_front_matter, skill_error::no_name,
                                     skill_error::invalid_name, skill_error::invalid_name,
                                     skill_error::invalid_name}),
                     text, folder, want) {
  const auto r = parse_skill(text, folder);
  BOOST_TEST(r.error == want);
  BOOST_TEST(!r.detail.empty());
}

BOOST_AUTO_TEST_CASE(the_index_lists_each_name_once_sorted_with_one_line) {
  std::vector<skill> skills{{"zeta", "last one", "full z"},
                            {"alpha", "first one", "full a"},
                            {"zeta", "a duplicate", "dup"}};
  BOOST_TEST(build_skills_index(skills)
             == std::string{k_skills_index_title} + "\n- alpha: first one\n- zeta: last one");
  BOOST_TEST(duplicate_skill_names(skills) == (std::vector<std::string>{"zeta"}));
}

BOOST_AUTO_TEST_CASE(a_loaded_skill_carries_its_full_text_between_markers) {
  const skill s{"blog-publisher", "Publish", "# Blog\nline 1\nline 2"};
  const std::string c = loaded_skill_content(s);
  BOOST_TEST(c == "[SKILL LOADED: blog-publisher]\n# Blog\nline 1\nline 2\n"
                  "[END OF SKILL: blog-publisher]");
  BOOST_TEST(loaded_skill_name(c).value_or("") == "blog-publisher");
  BOOST_TEST(!loaded_skill_name("[SKILL LOADED: x]\nno end marker").has_value());
  BOOST_TEST(!loaded_skill_name("plain tool output").has_value());
}

namespace {

// user asks, the model loads a skill (tool row), then `after` rows follow.
std::vector<message> with_loaded_skill(std::vector<message> after) {
  const skill s{"blog-publisher", "Publish", std::string(4000, 's')};
  std::vector<message> rows{row(1, msg_role::user, "publish my post"),
                            row(2, msg_role::assistant, ""),
                            row(3, msg_role::tool, loaded_skill_content(s))};
  rows[1].tool_calls.push_back({"call_1", "skill_view", R"({"name":"blog-publisher"})"});
  rows[2].tool_call_id = "call_1";
  rows[2].tool_name = "skill_view";
  for (auto& m : after) rows.push_back(std::move(m));
  return rows;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_skill_stays_loaded_while_its_task_runs) {
  // no answer yet; an answer but no new user message; a user reply mid-task
  BOOST_TEST(plan_skill_unload(with_loaded_skill({}), false).empty());
  BOOST_TEST(plan_skill_unload(with_loaded_skill({row(4, msg_role::assistant, "published")}),
                               false)
                 .empty());
  auto calling = row(4, msg_role::assistant, "");
  calling.tool_calls.push_back({"call_2", "publish", "{}"});
  BOOST_TEST(plan_skill_unload(with_loaded_skill({calling, row(5, msg_role::user, "wait")}),
                               false)
                 .empty());
}

BOOST_AUTO_TEST_CASE(a_skill_is_unloaded_once_the_next_task_begins) {
  const auto rows = with_loaded_skill(
      {row(4, msg_role::assistant, "published"), row(5, msg_role::user, "thanks, now X")});
  const auto plan = plan_skill_unload(rows, false);
  BOOST_TEST_REQUIRE(plan.size() == 1u);
  BOOST_TEST(plan[0].index == 2u);
  BOOST_TEST(plan[0].original_id == 3);
  BOOST_TEST(plan[0].content == "[SKILL UNLOADED: blog-publisher; load again with skill_view]");
  const auto applied = apply_replacements(rows, plan);
  BOOST_TEST_REQUIRE(applied.status == replace_status::applied);
  BOOST_TEST(applied.live[2].tool_call_id == "call_1");
  BOOST_TEST(applied.archived_ids == (std::vector<int64_t>{3}));
  BOOST_TEST(plan_skill_unload(applied.live, true).empty());  // nothing left to unload
}

BOOST_AUTO_TEST_CASE(the_caller_can_end_the_task_explicitly) {
  const auto plan = plan_skill_unload(with_loaded_skill({}), true);
  BOOST_TEST(plan.size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_index_of_100_skills_costs_a_fraction_of_loading_them_all) {
  std::vector<skill> skills;
  int64_t smallest_full = -1, largest_line = 0;
  for (int k = 0; k < 100; ++k) {
    skills.push_back(parsed(generated_skill(k)));
    const int64_t full = estimate_text_tokens(loaded_skill_content(skills.back()));
    if (smallest_full < 0 || full < smallest_full) smallest_full = full;
    largest_line = std::max(largest_line, estimate_text_tokens("- " + skills.back().name + ": "
                                                               + skills.back().description));
  }
  const auto saving = skills_token_saving(skills);
  BOOST_TEST_MESSAGE("100 skills: all loaded up front = " << saving.all_loaded_tokens
                     << " tokens, index = " << saving.index_tokens << " tokens, saved = "
                     << saving.saved_tokens << " tokens per request, factor "
                     << saving.factor);
  BOOST_TEST(saving.saved_tokens == saving.all_loaded_tokens - saving.index_tokens);
  // Justification of the bound: an index line is at most 64 + 120 characters
  // of name and description (~50 tokens) while a usable SKILL.md (usage,
  // parameter schema, pitfalls) is thousands of characters; the generated ones
  // are at least smallest_full tokens each. The index costs 100 lines plus one
  // title line, so all-loaded / index >= smallest_full / (largest_line + 1).
  const double bound = static_cast<double>(smallest_full) / static_cast<double>(largest_line + 1);
  BOOST_TEST_MESSAGE("smallest skill " << smallest_full << " tokens, largest index line "
                     << largest_line << " tokens, bound " << bound);
  BOOST_TEST(saving.factor >= 10.0);
  BOOST_TEST(saving.factor >= bound);
}

BOOST_AUTO_TEST_CASE(no_skills_cost_only_the_title_and_save_nothing) {
  const auto s = skills_token_saving({});
  BOOST_TEST(s.all_loaded_tokens == 0);
  BOOST_TEST(s.index_tokens == estimate_text_tokens(k_skills_index_title));
}

// Property: any text, however broken, parses to a skill or to an error with a
// reason; it never throws, and a parsed name always obeys the name rule.
BOOST_AUTO_TEST_CASE(arbitrary_text_never_throws_and_valid_results_have_valid_names) {
  std::mt19937 rng(5);
  const std::string alphabet = "#-:.'\" >|\n\n  abcXYZ\xE6\x95\xB0()\t\r";
  int parsed_ok = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    const std::size_t len = rng() % 80;
    for (std::size_t i = 0; i < len; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
    skill_parse_result r;
    BOOST_CHECK_NO_THROW(r = parse_skill(text, round % 2 ? "folder" : ""));
    if (!r.ok()) {
      BOOST_TEST(!r.detail.empty());
      continue;
    }
    ++parsed_ok;
    BOOST_TEST(!r.value.name.empty());
    BOOST_TEST(r.value.name.size() <= k_skill_name_max_bytes);
    BOOST_TEST(r.value.name.find(' ') == std::string::npos);
    BOOST_TEST(r.value.description.find('\n') == std::string::npos);
  }
  BOOST_TEST(parsed_ok > 100);
}

BOOST_AUTO_TEST_SUITE_END() // skills_index_test
