// Skills on demand inside a session (SPEC §7): the ss_skill_atom handler. Internal to
// actors/session (included by session_actor.cpp only).
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

#include <string>

#include "actors/session/session_state.hpp"

namespace mneme::session_detail {

caf::result<int64_t> on_skill(session_ptr self, const std::string& name, bool load);

} // namespace mneme::session_detail
