// Tool pairing of what is sent to the model (SPEC §3: no tool row may reference a
// call id that is not in context, and no assistant may keep an unanswered call).
// The stored live context can hold an unanswered call (a caller that crashed
// mid-tool and then sent a new turn) or, from an imported file, a tool row whose
// call is gone; OpenAI-compatible APIs answer 400 to either. The session therefore
// repairs every chat request it builds: nothing invented is stored, the rows stay
// as they are, and the model sees a valid transcript. These are the same fixes
// the split plans as orphan_fixes (policies/split.hpp).
// Pure: standard library only, no I/O; safe from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// The content of a stub answer to a call that has no result.
inline constexpr std::string_view unanswered_call_stub =
  "[no result was recorded for this tool call]";

struct pairing_repair {
  int64_t dropped_results = 0; // tool rows left out (not answering a call of the row before)
  int64_t stubbed_calls = 0;   // stub tool rows added for unanswered calls
  bool changed() const { return dropped_results + stubbed_calls > 0; }
};

// `rows` (in order) made valid for OpenAI-compatible APIs, where the calls of an
// assistant row are answered by the tool rows directly after it:
//   - a tool row is kept only inside the run of tool rows directly after an
//     assistant row, answering one of that row's calls not answered yet in the run;
//     every other tool row is left out (its call is gone, it answers a call twice,
//     or it arrived after another row, e.g. a late result behind a new user turn);
//   - each call of an assistant row left without an answer in that run gets a tool
//     row (id 0, tool_call_id and tool_name of the call, content
//     unanswered_call_stub) at the end of the run, in the order of the calls.
// Call ids are matched per assistant row, so a backend that reuses ids ("call_0")
// across turns is repaired correctly. Everything else is kept, in order. `what`,
// when given, receives the counts.
std::vector<message> repair_tool_pairing(const std::vector<message>& rows,
                                         pairing_repair* what = nullptr);

} // namespace mneme
