// Skills on demand (SPEC §7, procedural memory; seed 004 "JIT" skills): the
// system prompt carries only an index (name + one line per skill); loading a
// skill puts its full SKILL.md text into the session; it leaves the live
// context when the task ends. Pure, standard library only, any thread: the
// caller (the gateway at start-up) reads the skills folder and passes the file
// texts in; the session actor builds the loaded message and plans unloading.
//
// Parsing a SKILL.md (parse_skill), decisions:
//   1. Front matter: the text (after an optional UTF-8 BOM) starts with a line
//      "---" and the block ends at the next line "---" or "..."; an
//      unterminated block is an error. Keys read: `name:` and `description:`
//      (surrounding quotes removed; a value of ">" or "|" or nothing continues
//      on the following indented lines, joined by spaces). Other keys ignored.
//   2. Otherwise (or for a key the front matter lacks): name = the first
//      Markdown heading ("# Title"), slugged: ASCII letters lowercased, runs
//      of whitespace and '/' become '-'; description = the first paragraph
//      after that heading (or after the front matter) that is not a heading.
//   3. Still no name: the fallback name (the skill's folder name), slugged.
//   4. A name must be 1..64 bytes with no whitespace, control character,
//      quote, '(' or ')', else the skill is rejected (invalid_name).
//   5. description = one_line_excerpt(..., 120 chars); empty becomes
//      "(no description)".
// Index (build_skills_index): a fixed first line, then "- name: description"
// per skill sorted by name; a name seen twice keeps its first skill (the
// caller reports duplicate_skill_names at start-up).
// Loaded skill: a row whose content is loaded_skill_content(skill):
//   [SKILL LOADED: name]\n<full SKILL.md text>\n[END OF SKILL: name]
// (usually the tool row answering a skill_view(name) call).
// Unloading (plan_skill_unload): a loaded-skill row leaves the live context
// once its task has ended, i.e. the model gave an answer without tool calls
// after it AND a real user message came after that answer (the next task has
// begun); or at once for every loaded skill when the caller says the task
// ended (task_ended). The live copy becomes
//   [SKILL UNLOADED: name; load again with skill_view]
// through apply_replacements (policies/row_replacement.hpp): the original row
// is archived and stays searchable, pairing is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/row_replacement.hpp"

namespace mneme {

inline constexpr std::size_t k_skill_name_max_bytes = 64;
inline constexpr std::size_t k_skill_description_chars = 120;
inline constexpr std::string_view k_skills_index_title =
    "Skills available on demand (call skill_view(name) to load one before using it):";

struct skill {
  std::string name;
  std::string description;  // one line
  std::string text;         // the full SKILL.md text
};

enum class skill_error : uint8_t {
  none,
  empty_text,                 // nothing but whitespace
  unterminated_front_matter,  // "---" opened, never closed
  no_name,                    // no name key, no heading, no fallback
  invalid_name,               // see rule 4
};

std::string_view to_string(skill_error e);
std::ostream& operator<<(std::ostream& os, skill_error e);

struct skill_parse_result {
  skill_error error = skill_error::none;
  std::string detail;  // what was wrong, for the start-up message
  skill value;         // valid only when error == none
  bool ok() const { return error == skill_error::none; }
};

skill_parse_result parse_skill(std::string_view text, std::string_view fallback_name = {});

// Names that occur more than once, sorted, each once.
std::vector<std::string> duplicate_skill_names(const std::vector<skill>& skills);

std::string build_skills_index(const std::vector<skill>& skills);

std::string loaded_skill_content(const skill& s);

// The skill name of a loaded-skill content; nullopt for any other text.
std::optional<std::string> loaded_skill_name(std::string_view content);

std::string unloaded_skill_marker(std::string_view name);

std::vector<row_replacement> plan_skill_unload(const std::vector<message>& live,
                                               bool task_ended);

// Tokens of putting every skill's full text into the session up front versus
// the index alone (SPEC §7 "report the token saving").
struct skills_saving {
  int64_t all_loaded_tokens = 0;  // sum of loaded_skill_content estimates
  int64_t index_tokens = 0;       // estimate of build_skills_index
  int64_t saved_tokens = 0;       // all_loaded - index
  double factor = 0;              // all_loaded / index (0 when the index is empty)
};

skills_saving skills_token_saving(const std::vector<skill>& skills);

} // namespace mneme
