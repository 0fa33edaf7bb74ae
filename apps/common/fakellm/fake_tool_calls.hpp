// How the fake LLM answers like an agent model (issue 29 item 5): when a chat request
// offers tools, a scenario fraction of its answers call one or more of them (parallel
// calls included) with arguments that follow each tool's JSON schema; an answer to
// tool results quotes them. Pure functions of the request and the settings; no I/O, no
// clock. Deterministic: the decision hashes the scenario seed with the request's
// messages, so the same request under the same seed gets the same answer whatever the
// order requests arrive in. Safe from any thread.
//
// Rules:
//   0. mneme's built-in tools (issue 29 item 7; policies/builtin_tools.hpp), when offered
//      and the last message is the user's (no round yet), are called deterministically
//      by what the user wrote (case-insensitive; the first rule that matches):
//        "earlier about X"           -> session_search {"query": X} (X ends at '?', '.'
//                                       or the end of the line)
//        "remember that my K is V"   -> memory {"action":"set","key":K,"value":V}
//        "what is my K?"             -> memory {"action":"get","key":K}
//        "remember about X"          -> memory {"action":"search","query":X} (X ends at
//                                       '?', '.' or the end of the line)
//        a skill name of the skills index in a system row (a whole word of the user's
//        text)                       -> skill_view {"name": name}
//      Rules 1-2 never pick a built-in tool: the random calls go to the client's tools
//      and join a rule-0 call in the same answer (a mixed answer).
//   1. No tools offered, a summary request, or max_tool_rounds assistant rows with
//      tool calls already after the last user message -> no calls.
//   2. Otherwise calls with probability tool_call_fraction; then 1..min(3, tools)
//      distinct tools, starting at a hashed index; ids "call_<hash>_<k>", unique per
//      request content.
//   3. Arguments: a JSON object with every `required` property of the tool's
//      `parameters`, filled by type (string: its first enum value or "<name>-<k>",
//      integer: its minimum or 1, number: its minimum or 1.5, boolean: true, array: [],
//      object: the same rule recursively, anything else: null); optional properties
//      are left out.
//   4. A request whose last message is a tool result is answered (when rule 2 makes
//      no call) with a text quoting every trailing result: "Tool results: NAME: TEXT; ...",
//      each text cut at tool_quote_chars.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/fakellm/wire_format.hpp"
#include "messages/transcript.hpp"

namespace mneme::fakellm {

inline constexpr double default_tool_call_fraction = 0.5;
inline constexpr int64_t default_fake_tool_rounds = 3;
inline constexpr size_t tool_quote_chars = 200;

struct tool_call_settings {
  uint64_t seed = 1;
  double fraction = default_tool_call_fraction;  // scenario key tool_call_fraction
  int64_t max_rounds = default_fake_tool_rounds; // scenario key tool_rounds
};

// Rule 0: the built-in call the user's message asks for, if any.
std::optional<tool_call> builtin_tool_call(const chat_call& call);

// Rules 0-3: the calls of the answer to `call`; empty = answer text.
std::vector<tool_call> fake_tool_calls(const chat_call& call, const tool_call_settings& s);

// Rule 3 for one tool's `parameters` (JSON text; "" = no parameters): the arguments.
std::string schema_arguments(const std::string& parameters_json, const std::string& tool_name);

// Rule 4: the quoting text when the last message is a tool result, else nullopt.
std::optional<std::string> quote_tool_results(const std::vector<message>& msgs);

} // namespace mneme::fakellm
