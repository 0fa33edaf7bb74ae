// mneme's built-in tools (issue 29 item 7, seed 004): the memory tools the model itself
// calls inside a tool loop, executed by the session without a round trip to the client.
// Pure functions, standard library only (and the std-only messages/transcript.hpp); no
// I/O, no clock; safe from any thread. The session actor (actors/session/
// session_builtin_tools.cpp) parses a call's JSON arguments into tool_args and turns
// the validated requests into recall, facts and skill operations; everything it decides
// comes from here.
//
// The tools (names as the model sees them; config names in gateway.builtin_tools):
//   session_search {query, limit?}          config `session_search`: recall over the
//       user's earlier sessions (anchored view with bookends, as GET /v1/search);
//       limit 1..10 conversations, default 3
//   memory {action, key?, value?, query?}    config `memory`: the user's facts, as the
//       facts API allows: get (key), set (key, value), delete (key: a tombstone, the
//       version stays stored), search (query; empty lists the newest facts)
//   skill_view {name}                        config `skills`: loads the skill's SKILL.md
//       as the call's result; it leaves the live context when the loop ends
//
// Decisions:
//   1. Enabled set (resolve_builtin_tools): the configured names (default all three)
//      minus what is unavailable: session_search needs recall (a database file, not
//      ":memory:"), skills need gateway.skills_dir, memory is always available.
//   2. Offered set (offer_builtins): a client tool with a builtin's name wins: that
//      builtin is not offered and a call of that name is the client's (pending).
//   3. A call is builtin when its name is an offered builtin (builtin_of).
//   4. Bad arguments never fail the turn: the call's result is an error text for the
//      model, starting with builtin_error_prefix, naming the field.
//   5. Every result is cut to the configured bytes (bound_result), on a UTF-8 boundary,
//      with a last line saying so.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/row_replacement.hpp"

namespace mneme {

enum class builtin_tool : uint8_t { session_search, memory, skill_view };

inline constexpr std::string_view builtin_error_prefix = "[builtin tool error] ";
inline constexpr int64_t default_builtin_result_max_bytes = 16384;
inline constexpr int32_t builtin_search_default_limit = 3;  // as GET /v1/search
inline constexpr int32_t builtin_search_max_limit = 10;
inline constexpr size_t builtin_row_chars = 400;            // per row of a search view
inline constexpr int64_t builtin_facts_list_limit = 50;

// The name the model sees.
std::string_view tool_name_of(builtin_tool t);
// The gateway.builtin_tools name.
std::string_view config_name_of(builtin_tool t);

struct builtin_set {
  bool session_search = false;
  bool memory = false;
  bool skills = false;
  bool has(builtin_tool t) const;
  bool any() const { return session_search || memory || skills; }
  static builtin_set all() { return {true, true, true}; }
};

// gateway.builtin_tools as a set; the error names the first unknown entry
// ("gateway.builtin_tools[1]: unknown built-in tool 'x' (...)").
struct builtin_config {
  builtin_set set;
  std::string error;
};
builtin_config parse_builtin_tools(const std::vector<std::string>& names);

struct builtin_availability {
  bool recall = false; // a database file (recall readers run)
  bool skills = false; // gateway.skills_dir is set
};

// Decision 1.
builtin_set resolve_builtin_tools(const builtin_set& configured, const builtin_availability& a);

// Decision 2: `enabled` minus the builtins a client tool of `client_names` shadows.
builtin_set offer_builtins(const builtin_set& enabled,
                           const std::vector<std::string>& client_names);

// Decision 3.
std::optional<builtin_tool> builtin_of(std::string_view call_name, const builtin_set& offered);

// The OpenAI function-tool schema of a builtin (a JSON object, one line).
std::string_view tool_schema_json(builtin_tool t);

// The tools array sent to the model: the client's array (JSON text; "" or "[]" = none)
// followed by the schemas of `offered`, in enum order. "" when both are empty.
std::string merge_tools_json(std::string_view client_array, const builtin_set& offered);

// A call's arguments as the session parsed them: object == false when the text was not
// a JSON object; each top-level member by kind.
struct tool_arg {
  enum class kind : uint8_t { string, integer, other } type = kind::other;
  std::string text;
  int64_t number = 0;
};
struct tool_args {
  bool object = false;
  std::map<std::string, tool_arg> values;
};

enum class memory_action : uint8_t { get, set, remove, search };

// One validated builtin call; `error` (non-empty) is the result text for the model.
struct builtin_request {
  builtin_tool tool = builtin_tool::session_search;
  std::string error;
  std::string query;        // session_search, memory search
  int32_t limit = builtin_search_default_limit;
  // session_search: "" (the search's default, hybrid when embeddings are on) or one of
  // builtin_search_modes, as GET /v1/search's `mode` spells it.
  std::string mode;
  memory_action action = memory_action::search;
  std::string key;          // memory get/set/delete
  std::string value;        // memory set
  std::string name;         // skill_view
  bool ok() const { return error.empty(); }
};

// session_search's `mode` values (messages/recall_types.hpp recall_mode).
inline constexpr std::string_view builtin_search_modes[] = {"automatic", "fts", "vector",
                                                            "hybrid"};

// Decision 4. Checks: arguments an object; session_search.query a non-empty string,
// limit an integer 1..10, mode one of builtin_search_modes; memory.action one of get/set/delete/search, key 1..256 bytes
// for get/set/delete, value 1..65536 bytes for set, query a string; skill_view.name a
// non-empty string.
builtin_request validate_builtin_call(builtin_tool t, const tool_args& args);

// Decision 5: `text` when it fits, else its first bytes (UTF-8 whole) and a last line
// "[cut: N of M bytes shown]" within `max_bytes`. REQUIRES: max_bytes >= 64.
std::string bound_result(const std::string& text, int64_t max_bytes);

// One anchored view of a search, as the recall readers return it (messages/recall_types
// without CAF): the hit's session and kind, the snippet, the bookends and the window.
struct search_view {
  std::string session_id;
  std::string kind;
  std::string snippet;
  std::vector<message> first;
  std::vector<message> window;
  std::vector<message> last;
};

// The text of a session_search result: a first line counting the conversations, then
// per view its snippet (first, so a short quote shows the match), session and kind, first rows, the window around the hit and the last
// rows, each row "role: text" cut to builtin_row_chars. Unbounded (see bound_result).
std::string render_search_result(std::string_view query, const std::vector<search_view>& views);

struct fact_line {
  std::string key;
  std::string value;
};

// The text of a memory result: get/set/delete one fact ("fact 'k' = v", "fact 'k' set to
// v", "fact 'k' deleted"), search the list ("N facts:" and "- key: value" lines).
std::string render_memory_result(const builtin_request& r, const std::vector<fact_line>& facts);

// A builtin's result for a failure of the operation (not found, storage error).
std::string builtin_failure(std::string_view what);

// The skill_view text of `s` as the call's result: loaded_skill_content (policies/
// skills_index.hpp) with the SKILL.md text cut so that the whole fits `max_bytes` (the
// markers stay whole, so the loaded copy is still recognised and unloaded).
std::string skill_view_result(const std::string& name, const std::string& text,
                              int64_t max_bytes);

// The skill_view results to unload once a loop ended with a text answer: every live,
// stored `tool` row of tool_name skill_view that still holds a loaded skill, replaced by
// unloaded_skill_marker. Skills loaded through the API (system rows) are left alone.
std::vector<row_replacement> plan_skill_view_unload(const std::vector<message>& live);

// The calls of `calls` that are builtins of `offered`, and the others, in call order.
struct call_split {
  std::vector<tool_call> builtin;
  std::vector<tool_call> client;
};
call_split split_calls(const std::vector<tool_call>& calls, const builtin_set& offered);

} // namespace mneme
