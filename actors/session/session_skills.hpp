// Skills on demand inside a session (SPEC §7): the ss_skill_atom handler and the unload
// commit the built-in skill_view tool shares. Internal to actors/session (included by
// session_actor.cpp and session_builtin_tools.cpp).
//   - load (name, true): the skill of the process's skill set
//     (actors/gateway/skills_loader.hpp) is appended as a system row whose content
//     is loaded_skill_content(skill), through the session's own ss_append_atom (so
//     it is ordered with every other append); the reply is the row's id. A skill
//     already loaded in the live context is not loaded twice: the reply is the id
//     of the live copy. Unknown name: errc::not_found naming it.
//   - unload (name, false): every live copy of that skill is replaced by
//     unloaded_skill_marker(name) in one row replacement commit (st_replace_atom;
//     the original is archived and stays searchable); the reply is the id of the
//     last marker row. No live copy: errc::not_found. While a compaction or
//     another path's pipeline runs: errc::compaction_in_flight (the caller
//     retries); the live transcript changes only after the store acknowledged.
// Thread: the session actor, inside its handlers.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "actors/session/session_state.hpp"
#include "policies/row_replacement.hpp"

namespace mneme::session_detail {

caf::result<int64_t> on_skill(session_ptr self, const std::string& name, bool load);

// Replaces the planned loaded-skill rows by their markers in one row replacement commit
// (as an unload does; the originals are archived), then done(id of the last marker) or
// done(error). `name` is for the log line. REQUIRES: !st.compacting, plan not empty.
void commit_skill_unload(session_ptr self, std::vector<row_replacement> plan,
                         const std::string& name,
                         std::function<void(caf::expected<int64_t>)> done);

} // namespace mneme::session_detail
