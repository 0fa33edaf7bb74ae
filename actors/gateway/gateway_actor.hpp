// The gateway (ARCHITECTURE; SPEC §2 T3/T4/T14, §5.3 reset, §8 channel commands): owns
// the map session key -> session, spawns or rehydrates a session (through the
// supervisor) on the key's first message, runs the hygiene check (T3 message cap, T4
// token estimate — count and local estimate only, no API) before handing a turn over
// (with a per-key hygiene failure cooldown, policies/hygiene_gate.hpp: T3 fallback-only,
// T4 skipped while it runs),
// routes channel commands, evicts idle session actors (they rehydrate from the store
// on the next message) and performs the reset after compaction exhaustion.
//
// Channel commands (a message whose text starts with one of them):
//   /compress [focus]   T14: compact now, the focus steers the summary
//   /rollback NAME      restore the live context of checkpoint NAME (the session actor
//                       is restarted from the store)
//   /search QUERY       recall over the user's own sessions (errc::not_found without
//                       recall, i.e. with an in-memory database)
// The reset (errc::compaction_exhausted from a turn, or gw_exhausted_atom from the
// supervisor, whichever comes first; done once): the storage actor starts a new session
// under the same key whose live context is the head plus the latest summary, without a
// row that cannot fit (policies/reset_plan.hpp); the old actor stops. Nothing is
// deleted. The unanswered message is then re-run once in the new session
// (gateway.replay_after_reset) and the reply carries policies/exhaustion_notice.hpp's
// notice and every compaction the turn tried; without the re-run, or when it fails,
// the answer is the error (errc::compaction_exhausted or the re-run's) whose context is
// (text, turn_reply) with that notice (messages/mneme_types.hpp turn_reply_of).
// A turn's reply lists the compactions the hygiene check ran before it first.
//
// Child sessions (compression.in_place: false): a compaction may end the key's session
// and continue in a child; the gateway follows (parent -> child) when a turn reply names
// the child, when the supervisor forwards the session's notice, and before a reset or a
// /compress reply, where it asks the session which id it holds.
// Messages for a key wait (in order) while its session is being opened or reset.
// Metrics (gateway_config::metrics, may be null): every inbound gw_message_atom counts
// as a turn (channel commands too) with its latency from arrival to reply, an error
// reply as a turn error; /search its recall latency; a reset an exhaustion reset.
// Thread: a CAF event-based actor; talk to it only by messages.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "caf/all.hpp"

#include "actors/gateway_params.hpp"
#include "actors/lease/lease_actor.hpp"
#include "actors/recall/recall_actor.hpp"
#include "actors/session/session_actor.hpp"
#include "actors/storage/storage_actor.hpp"
#include "actors/supervisor/supervisor_actor.hpp"

namespace mneme {

using gateway_actor = caf::typed_actor<
  // One inbound message of a channel: (session key, user id, text).
  caf::replies_to<gw_message_atom, std::string, std::string, std::string>::with<turn_reply>,
  // An agent turn (SPEC §8.1): (session key, user id, input). A user message runs like
  // gw_message_atom (channel commands included, when it sends no tools); tool_results
  // continue the key's tool loop. Refusals: see session_actor.hpp.
  caf::replies_to<gw_turn_atom, std::string, std::string, turn_input>::with<turn_reply>,
  // The context service (issue 27 item 2; gateway_context.cpp): (key, user, request).
  // `context` opens the key's session like gw_append_atom (created for `user` when the
  // key has none); `usage` and `model_error` need a session under the key
  // (errc::not_found otherwise). Refusals: see session_actor.hpp.
  caf::replies_to<gw_context_atom, std::string, std::string, context_request>::with<
    context_reply>,
  // A compaction asked through the gateway (T11 engine, T12 CLI, T15 ACP): (key, trigger,
  // focus). The key's session must exist (errc::not_found otherwise).
  caf::replies_to<gw_command_atom, std::string, trigger, std::string>::with<compaction_report>,
  // The session behind a key.
  caf::replies_to<gw_state_atom, std::string>::with<session_snapshot>,
  // Daemon operations (mneme serve). Every one but gw_append_atom needs a session that
  // exists under the key (errc::not_found otherwise); the key -> session mapping comes
  // from the store, so keys of an earlier process work.
  // Appends a row without a model call: (key, user, row) -> its id. Opens (creates or
  // rehydrates) the key's session like gw_message_atom; the row's session_id is set here.
  caf::replies_to<gw_append_atom, std::string, std::string, message>::with<int64_t>,
  // The same with an Idempotency-Key: (key, user, row, idempotency key) -> the row's id
  // and session, replayed when an earlier request with that key stored the same row
  // within gateway.idempotency_window_seconds (nothing written). Refusals:
  // idempotency_in_flight, idempotency_key_reused (gateway_appends.cpp).
  caf::replies_to<gw_idem_atom, std::string, std::string, message, std::string>::with<
    idempotent_append>,
  // A door request's Idempotency-Key (doors/door_conversation.cpp): (key, idempotency
  // key, limit) -> the rows stored under it within the window (message_store::
  // idempotent_rows, at most `limit`; none: a new request), read under the key's
  // in-flight mark, which stays until (key, idempotency key) releases it. Refusals:
  // idempotency_in_flight (marked by another request: nothing read, nothing marked).
  caf::replies_to<gw_idem_atom, std::string, std::string, int64_t>::with<std::vector<message>>,
  caf::reacts_to<gw_idem_atom, std::string, std::string>,
  // The live context the next model call sees.
  caf::replies_to<gw_live_atom, std::string>::with<std::vector<message>>,
  // T13 around a stored message: (key, message id, radius); errc::not_found when the id
  // is not a live row of the key's session, errc::bad_request for a negative radius.
  caf::replies_to<gw_local_atom, std::string, int64_t, int64_t>::with<compaction_report>,
  // A named checkpoint of the key's current session: (key, name).
  caf::replies_to<gw_checkpoint_atom, std::string, std::string>::with<checkpoint_record>,
  // Restores checkpoint (key, name) like the `/rollback NAME` command: the restored
  // live rows.
  caf::replies_to<gw_rollback_atom, std::string, std::string>::with<std::vector<message>>,
  // Rolls back every row of the key's session after a row id (key, last kept id, label
  // that retires later checkpoints): a client's branch (the OpenAI door). The live rows.
  caf::replies_to<gw_rollback_atom, std::string, int64_t, std::string>::with<std::vector<message>>,
  // The same operations for a caller that may reach only one user's sessions (the HTTP
  // API's user tokens): a trailing `owner`, the user the key's session must belong to
  // ("" = any). Decided on the session the operation then works on, in one step of the
  // gateway: another user's session is errc::foreign_session and nothing is done.
  caf::replies_to<gw_command_atom, std::string, trigger, std::string, std::string>::with<
    compaction_report>,
  caf::replies_to<gw_state_atom, std::string, std::string>::with<session_snapshot>,
  caf::replies_to<gw_live_atom, std::string, std::string>::with<std::vector<message>>,
  caf::replies_to<gw_local_atom, std::string, int64_t, int64_t, std::string>::with<
    compaction_report>,
  caf::replies_to<gw_checkpoint_atom, std::string, std::string, std::string>::with<
    checkpoint_record>,
  caf::replies_to<gw_rollback_atom, std::string, std::string, std::string>::with<
    std::vector<message>>,
  caf::replies_to<gw_rollback_atom, std::string, int64_t, std::string, std::string>::with<
    std::vector<message>>,
  // From the supervisor.
  caf::reacts_to<gw_exhausted_atom, std::string, std::string>,
  caf::reacts_to<gw_rebind_atom, std::string, session_actor>,
  // (parent id, child id, key): the key's session continued in a child session
  // (compression.in_place: false); the key routes to the child from now on.
  caf::reacts_to<gw_child_atom, std::string, std::string, std::string>,
  // Eviction sweep: generation 0 = sweep now (tests, admin), else the timer's tick.
  caf::reacts_to<gw_evict_atom, uint64_t>,
  // A sweep now, answered once every session it asked to leave has answered: how many
  // left memory (0 = the sweep found no idle session, or they all had work in flight).
  caf::replies_to<gw_evict_atom>::with<int64_t>,
  // Node mode: lease renewal, generation 0 = renew now (tests), else the timer's tick.
  caf::reacts_to<gw_lease_atom, uint64_t>>;

// The part of the storage actor the gateway talks to. storage_actor converts to it.
using gateway_storage_actor = caf::typed_actor<
  caf::replies_to<st_append_atom, message>::with<int64_t>,
  caf::replies_to<st_idem_atom, std::string, std::string, int64_t,
                  int64_t>::with<std::vector<message>>,
  caf::replies_to<st_new_session_atom, session_record, int64_t>::with<session_record>,
  caf::replies_to<st_list_atom, session_filter>::with<std::vector<session_record>>,
  caf::replies_to<st_session_atom, std::string>::with<session_record>,
  caf::replies_to<st_reset_atom, std::string, int32_t, int64_t, std::string,
                  int64_t>::with<session_record>,
  caf::replies_to<st_checkpoint_atom, std::string, std::string, int64_t>::with<checkpoint_record>,
  caf::replies_to<st_rollback_atom, std::string, std::string>::with<std::vector<message>>,
  caf::replies_to<st_rollback_atom, std::string, int64_t, std::string>::with<std::vector<message>>,
  caf::reacts_to<st_fence_atom, std::string, int64_t>>;

// The part of the supervisor the gateway talks to. supervisor_actor converts to it.
using gateway_supervisor_actor = caf::typed_actor<
  caf::replies_to<sv_spawn_atom, std::string>::with<session_actor>,
  caf::reacts_to<sv_gateway_atom, supervisor_gateway_actor>>;

struct gateway_config {
  compression_params compression;
  model_params model;
  gateway_params gateway;
  std::chrono::milliseconds storage_timeout{30000};
  std::chrono::milliseconds turn_timeout{330000};   // > a session's own LLM timeouts
  std::function<time_ms()> clock = system_clock_ms; // test seam
  recall_actor recall;                               // answers /search; null = unavailable
  std::chrono::milliseconds search_timeout{35000};   // > the recall reader's own 30 s
  std::shared_ptr<spdlog::logger> log;              // null = no logging
  std::shared_ptr<runtime_metrics> metrics;         // null = not counted
  // Node mode (gateway.node_id, PostgreSQL): the lease actor; null = one daemon per
  // database, no leases.
  lease_actor leases;
};

// Spawns the gateway and registers it with the supervisor.
gateway_actor spawn_gateway(caf::actor_system& sys, gateway_config cfg,
                            gateway_storage_actor storage, gateway_supervisor_actor supervisor);

} // namespace mneme
