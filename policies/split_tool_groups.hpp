// Tool-call groups of a transcript (SPEC §3 "never split a tool call from its
// results"): which tool row answers which assistant call, where a cut would
// separate them, which tool rows answer nothing, and which calls got no answer.
// A building block of policies/split; pure, standard library only, any thread.
//
// Matching rule: a tool row answers the nearest earlier assistant message that
// declares a call with the same id. A tool row with no such earlier call (or an
// empty tool_call_id) is an orphan. A group is an assistant with tool_calls
// plus every tool row that answers it; it spans [assistant, last answer].
//
// Cut convention: "cut at c" puts rows [0, c) on one side and [c, n) on the
// other. cut_splits_group(c) is true when some group spans across c.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

class tool_group_map {
 public:
  explicit tool_group_map(const std::vector<message>& live);

  std::size_t size() const { return answered_.size(); }

  // REQUIRES: c <= size(). Cuts at 0 and at size() never split a group.
  bool cut_splits_group(std::size_t c) const;

  // For a tool row: the index of the assistant whose call it answers;
  // nullopt for an orphan tool row and for every non-tool row.
  // REQUIRES: i < size().
  std::optional<std::size_t> owner_of(std::size_t i) const;

  // For an assistant row: answered(i)[k] tells whether its k-th call has a
  // tool row answering it anywhere later in the transcript. Empty for rows
  // without calls. REQUIRES: i < size().
  const std::vector<bool>& answered(std::size_t i) const;

  // The assistant whose calls are still pending: the last assistant with
  // tool_calls when every row after it is a tool row (its tools may still be
  // running, so a missing answer is not yet an unanswered call).
  std::optional<std::size_t> pending_assistant() const { return pending_; }

 private:
  std::vector<std::optional<std::size_t>> owner_;  // per row
  std::vector<std::vector<bool>> answered_;         // per row, per call
  std::vector<bool> splits_;                        // per cut position, size n + 1
  std::optional<std::size_t> pending_;
};

} // namespace mneme
