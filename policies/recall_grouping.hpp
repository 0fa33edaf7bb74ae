// Recall over conversations, not over their pieces (issue 25 item 7): what one
// result slot of a search is, and how many slots a caller may ask for. Pure
// functions, standard library only, any thread. Used by store/sqlite/sqlite_recall.cpp (the
// grouping) and by the search route of the HTTP API and the CLI (the limit).
//
// A conversation is a lineage of sessions linked by parent id: a session, the
// child it continued in (`in_place: false`) and the session an exhaustion reset
// started (both record parent_id = the session they came from), transitively.
// Its id is the id of its root: the first session, the one with no parent.
// A search keeps one hit per conversation (its best; the hit names the session
// holding it), because the child and the reset session start with verbatim
// copies of the parent's head and tail: without grouping one conversation
// filled several of the at most 10 slots with the same rows.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

namespace mneme {

// Longest parent chain followed before the walk stops (a corrupt or imported
// lineage must not loop a search): the session reached then counts as the root.
inline constexpr int recall_max_lineage_depth = 10000;

// The id of the conversation holding `session_id`: the walk up parent_of until
// a session with no parent (parent_of answers nullopt or an empty id), a parent
// already visited (a cycle: the walk stops before repeating it) or
// recall_max_lineage_depth steps.
std::string conversation_root(const std::string& session_id,
                              const std::function<std::optional<std::string>(
                                const std::string&)>& parent_of);

// The conversation of each session one search meets, each looked up once
// (conversation_root with `parent_of`). Used by every recall backend.
class conversation_cache {
public:
  using parent_lookup = std::function<std::optional<std::string>(const std::string&)>;
  explicit conversation_cache(parent_lookup parent_of) : parent_of_(std::move(parent_of)) {}
  const std::string& root_of(const std::string& session_id);

private:
  parent_lookup parent_of_;
  std::unordered_map<std::string, std::string> roots_;
};

// A requested number of result slots: values above the maximum are clamped to
// it and the answer says so (a client asking for 50 gets the 10 best
// conversations, not an error). Values below 1 stay the caller's bad request.
struct recall_limit {
  int32_t sessions = 0;
  bool clamped = false;
};

// REQUIRES: requested >= 1, max_sessions >= 1.
recall_limit clamp_recall_limit(int64_t requested, int32_t max_sessions);

} // namespace mneme
