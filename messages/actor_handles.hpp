// The handles of the actors that travel inside messages: the session actor's interface
// (the supervisor answers sv_spawn_atom with one and sends the gateway a restarted one
// with gw_rebind_atom) and the part of the gateway the supervisor talks to (registered
// with sv_gateway_atom). A handle sent in a message needs a type ID, and the one type-ID
// block is in messages/mneme_types.hpp: this header is included inside that block (it
// uses no __COUNTER__) after the atoms and types it names. Include
// messages/mneme_types.hpp, never this header on its own. The other actors' interfaces
// live in their own headers (actors/*/..._actor.hpp). Declarations only: no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/replies_to.hpp"
#include "caf/typed_actor.hpp"

namespace mneme {

// The session actor (actors/session/session_actor.hpp): one per hosted session.
using session_actor = caf::typed_actor<
  // A turn: the user's text -> the model's answer (errc::compaction_exhausted,
  // the model's llm_* error, storage errors, errc::overloaded).
  caf::replies_to<ss_turn_atom, std::string>::with<turn_reply>,
  // An agent turn (SPEC §8.1; actors/session/session_agent.cpp): a user message or the
  // results of the pending tool calls, with tools and sampling fields. Besides the
  // errors above:
  // errc::bad_request naming a tool_results problem (nothing stored),
  // errc::tool_results_pending for a user message while calls wait (nothing stored),
  // errc::tool_round_cap when the results of the max_tool_rounds-th round arrive (the
  // results are stored, the model is not called).
  caf::replies_to<ss_turn_atom, turn_input>::with<turn_reply>,
  // The context service (issue 27 item 2; actors/session/session_context.cpp): an agent
  // that calls its model itself asks what to send (context), reports the answer and usage
  // (usage) or the model's refusal (model_error). Runs in the turn queue like a turn. Refusals:
  // errc::bad_request naming the row (nothing stored), errc::overloaded; the checks'
  // errors as a turn's (errc::compaction_exhausted, errc::context_unfittable, storage).
  caf::replies_to<ss_context_atom, context_request>::with<context_reply>,
  // Appends a row without calling the model (system prompt, tool rows, imports): its id.
  caf::replies_to<ss_append_atom, message>::with<int64_t>,
  // Compaction by trigger: T3/T4 (the gateway's hygiene check), T11 (engine request),
  // T12, T14 (focus = `/compress` text), T15. Locks refuse automatic triggers with
  // errc::compaction_locked; an aborted summary is errc::compaction_failed.
  caf::replies_to<ss_compact_atom, trigger, std::string>::with<compaction_report>,
  // The same with `fallback_only`: true asks for the local fallback summary without a
  // summarizer call (the gateway's T3 during its hygiene cooldown, policies/
  // hygiene_gate.hpp); with abort_on_summary_failure: true that is refused with
  // errc::compaction_locked. False is the three-argument form.
  caf::replies_to<ss_compact_atom, trigger, std::string, bool>::with<compaction_report>,
  // T13: local compaction around the live message at `center` index, +- radius.
  caf::replies_to<ss_local_atom, int64_t, int64_t>::with<compaction_report>,
  caf::replies_to<ss_state_atom>::with<session_snapshot>,
  // The live context as held in memory (what the next model call sees).
  caf::replies_to<ss_live_atom>::with<std::vector<message>>,
  // Skills on demand (SPEC §7; actors/session/session_skills.hpp): (name, true) loads
  // the skill into the live context, (name, false) replaces its live copy by the
  // unloaded marker; the id of the row written.
  caf::replies_to<ss_skill_atom, std::string, bool>::with<int64_t>,
  // Internal: the idle timer (generation).
  caf::reacts_to<ss_idle_atom, uint64_t>,
  // Eviction: true (and the actor quits normally) when no work is in flight.
  caf::replies_to<ss_evict_atom>::with<bool>>;

// The part of the gateway the supervisor talks to (actors/gateway/gateway_actor.hpp).
// gateway_actor converts to it.
using supervisor_gateway_actor = caf::typed_actor<
  // (session id, session key): the session ran out of compaction attempts.
  caf::reacts_to<gw_exhausted_atom, std::string, std::string>,
  // (session id, new actor): the session crashed and was restarted from the store.
  caf::reacts_to<gw_rebind_atom, std::string, session_actor>,
  // (parent id, child id, key): the key's session continued in a child session.
  caf::reacts_to<gw_child_atom, std::string, std::string, std::string>>;

} // namespace mneme
