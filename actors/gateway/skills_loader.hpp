// Skills on demand (SPEC §7, procedural memory): reading gateway.skills_dir and the
// process's skill set. The folder holds one sub-folder per skill with a SKILL.md
// (`<skills_dir>/<name>/SKILL.md`), parsed by policies/skills_index.hpp.
//
// Decisions where the SPEC is silent:
//   - The folder is read once per process, at the gateway's start
//     (preload_skills, on the spawning thread, so no scheduler thread reads
//     files); sub-folders without SKILL.md are skipped; a SKILL.md that does not
//     parse or repeats a name is skipped and reported (warn) with its path; the
//     first of a repeated name is kept (folders are read in name order).
//   - A new session's system row is `system_prompt`, a blank line, then the
//     skills index (name + one line each); with no skills it is the prompt
//     alone. With an empty prompt and skills, the index alone.
//   - A missing or unreadable folder is a warning, not a start-up failure: the
//     sessions simply get no index.
//   - SKILL.md files larger than skill_file_max_bytes are skipped.
//
// Thread: preload_skills and load_skills_dir block (file reads): call them from
// the thread that spawns the gateway. The lookups read an immutable snapshot
// and are safe from any thread (a mutex guards the pointer swap).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "policies/skills_index.hpp"

namespace mneme {

inline constexpr int64_t skill_file_max_bytes = 1 << 20;

struct skills_catalog {
  std::string dir;
  std::vector<skill> skills;          // valid, unique names, sorted by name
  std::vector<std::string> problems;  // "<path>: <what>" per skipped file
  std::string index;                  // build_skills_index(skills), "" when none
};

// Reads every `<dir>/<name>/SKILL.md`. Blocks.
skills_catalog load_skills_dir(const std::string& dir);

// Loads `dir` (once per dir and process) and makes it the process's skill set;
// logs what was loaded and every problem. An empty dir clears the set. Blocks.
void preload_skills(const std::string& dir, const std::shared_ptr<spdlog::logger>& log);

// The system row text of a new session: `prompt` plus the index of the skills of
// `dir` (loaded now when preload_skills did not run for it).
std::string system_prompt_with_skills(const std::string& prompt, const std::string& dir);

// A skill of the process's skill set by name.
std::optional<skill> find_skill(const std::string& name);
// Every skill of the process's skill set, sorted by name (empty when none is loaded).
std::vector<skill> current_skills();

} // namespace mneme
