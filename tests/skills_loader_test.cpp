// Tests of skills on demand at the gateway (actors/gateway/skills_loader.hpp): the
// skills folder is read with every problem reported by path, a new session's system
// prompt carries only the index, a skill is found by name once preloaded, and the
// token saving of the index against loading 100 skills up front (printed; recorded
// in docs/memory.md).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "actors/gateway/skills_loader.hpp"
#include "policies/token_estimate.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(skills_loader_test)

using namespace mneme;
namespace fs = std::filesystem;

namespace {

struct skills_folder : testing::temp_dir {
  skills_folder() : temp_dir("mneme-skills") {}
  void add(const std::string& folder, const std::string& text) {
    fs::create_directories(file(folder));
    std::ofstream{file(folder + "/SKILL.md")} << text;
  }
};

// A SKILL.md of a realistic size (~2.5 KB: front matter, purpose, steps, examples).
std::string skill_text(int i) {
  auto name = "skill-" + std::to_string(i);
  std::string text = "---\nname: " + name + "\ndescription: Handles task family " +
                     std::to_string(i) + " (files, reports and checks)\n---\n# " + name + "\n\n";
  for (int step = 1; step <= 12; ++step)
    text += std::to_string(step) + ". Read the input of step " + std::to_string(step) +
            " for family " + std::to_string(i) +
            ", check every field against the schema, and write the result with its sources"
            " and a one-line note on what changed.\n";
  text += "\n## Example\n\n```\nrun --family " + std::to_string(i) +
          " --check --write report.md\n```\n";
  text += std::string(600, ' ').replace(0, 30, "Notes: keep outputs deterministic.");
  return text;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_folder_is_read_and_every_skipped_file_is_reported_by_path) {
  skills_folder dir;
  dir.add("alpha", "---\nname: alpha\ndescription: First skill\n---\nBody A\n");
  dir.add("beta", "# Beta Tool\n\nDoes beta things.\n");
  dir.add("broken", "---\nname: broken\n"); // unterminated front matter
  dir.add("zz-again", "---\nname: alpha\ndescription: a second alpha\n---\nBody\n");
  fs::create_directories(dir.file("no-skill-file"));
  auto c = load_skills_dir(dir.path());
  BOOST_REQUIRE(c.skills.size() == 2u);
  BOOST_TEST(c.skills[0].name == "alpha");
  BOOST_TEST(c.skills[0].description == "First skill");
  BOOST_TEST(c.skills[1].name == "beta-tool");
  BOOST_REQUIRE(c.problems.size() == 2u);
  std::string all = c.problems[0] + "\n" + c.problems[1];
  BOOST_TEST(all.find(dir.file("broken/SKILL.md")) != std::string::npos);
  BOOST_TEST(all.find("duplicate skill name 'alpha'") != std::string::npos);
  BOOST_TEST(c.index == build_skills_index(c.skills));
}

BOOST_AUTO_TEST_CASE(a_missing_folder_gives_no_skills_and_one_problem) {
  auto c = load_skills_dir("/nonexistent/mneme/skills");
  BOOST_TEST(c.skills.empty());
  BOOST_TEST(c.problems.size() == 1u);
  BOOST_TEST(c.index.empty());
}

BOOST_AUTO_TEST_CASE(a_new_session_prompt_carries_the_index_and_no_skill_body) {
  skills_folder dir;
  dir.add("alpha", "---\nname: alpha\ndescription: First skill\n---\nSECRET BODY A\n");
  preload_skills(dir.path(), nullptr);
  auto prompt = system_prompt_with_skills("You are helpful.", dir.path());
  BOOST_TEST(prompt.find("You are helpful.\n\n") == 0u);
  BOOST_TEST(prompt.find("- alpha: First skill") != std::string::npos);
  BOOST_TEST(prompt.find("SECRET BODY A") == std::string::npos);
  BOOST_TEST(system_prompt_with_skills("", dir.path()) == load_skills_dir(dir.path()).index);
  BOOST_TEST(system_prompt_with_skills("You are helpful.", "") == "You are helpful.");
  auto found = find_skill("alpha");
  BOOST_REQUIRE(found);
  BOOST_TEST(loaded_skill_content(*found).find("SECRET BODY A") != std::string::npos);
  BOOST_TEST(!find_skill("gamma"));
}

BOOST_AUTO_TEST_CASE(the_index_of_100_skills_costs_a_small_fraction_of_loading_them_all) {
  skills_folder dir;
  for (int i = 0; i < 100; ++i)
    dir.add("skill-" + std::to_string(i), skill_text(i));
  auto c = load_skills_dir(dir.path());
  BOOST_REQUIRE(c.skills.size() == 100u);
  BOOST_REQUIRE(c.problems.empty());
  auto saving = skills_token_saving(c.skills);
  int64_t bytes = 0;
  for (auto& s : c.skills)
    bytes += static_cast<int64_t>(s.text.size());
  BOOST_TEST_MESSAGE("skills=100 skill_md_bytes_total=" << bytes
                     << " all_loaded_tokens=" << saving.all_loaded_tokens
                     << " index_tokens=" << saving.index_tokens
                     << " saved_tokens=" << saving.saved_tokens
                     << " factor=" << saving.factor);
  BOOST_TEST(saving.index_tokens == estimate_text_tokens(c.index));
  BOOST_TEST(saving.saved_tokens == saving.all_loaded_tokens - saving.index_tokens);
  BOOST_TEST(saving.index_tokens * 10 < saving.all_loaded_tokens); // > 10x smaller
}

BOOST_AUTO_TEST_SUITE_END() // skills_loader_test
