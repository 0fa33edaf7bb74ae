// The CAF vocabulary of mneme: inspect() for the transcript types, the atoms, the
// handles of actors sent in messages (messages/actor_handles.hpp), and the one type-ID
// block. Every type sent between actors is listed here. Modules append
// their atoms and types inside their own marked section of the block; ids are
// assigned by position, so nothing is persisted by id.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "caf/all.hpp"

#include "messages/errc.hpp"
#include "messages/lease_types.hpp"
#include "messages/transcript.hpp"

namespace mneme {

// msg_role is an enum: CAF 0.17 serializes enums by their underlying value.

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tool_call& x) {
  return f(caf::meta::type_name("mneme::tool_call"), x.id, x.name, x.arguments);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, message& x) {
  return f(caf::meta::type_name("mneme::message"), x.id, x.session_id, x.role, x.content,
           x.tool_call_id, x.tool_calls, x.tool_name, x.timestamp_ms, x.token_estimate,
           x.active, x.compacted, x.is_summary, x.replaced_first_id, x.replaced_last_id,
           x.idempotency_key);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_outcome& x) {
  return f(caf::meta::type_name("mneme::lease_outcome"), x.granted, x.token, x.took_over_from,
           x.owner_node, x.owner_url);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trigger_state& x) {
  return f(caf::meta::type_name("mneme::trigger_state"), x.cooldown_until_ms,
           x.cooldown_reason, x.anti_thrash_strikes, x.lock_until_ms, x.probe_pending,
           x.fallback_streak, x.compaction_count, x.last_prompt_tokens);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_record& x) {
  return f(caf::meta::type_name("mneme::session_record"), x.id, x.user_id, x.session_key,
           x.parent_id, x.model, x.started_at_ms, x.ended_at_ms, x.end_reason, x.triggers);
}

} // namespace mneme

CAF_BEGIN_TYPE_ID_BLOCK(mneme, caf::first_custom_type_id)
  // --- transcript vocabulary (messages/transcript.hpp)
  CAF_ADD_TYPE_ID(mneme, (mneme::msg_role))
  CAF_ADD_TYPE_ID(mneme, (mneme::tool_call))
  CAF_ADD_TYPE_ID(mneme, (mneme::message))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::message>))
  CAF_ADD_TYPE_ID(mneme, (mneme::trigger_state))
  CAF_ADD_TYPE_ID(mneme, (mneme::session_record))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::session_record>))

  // --- storage actor (actors/storage): add types and atoms below this line
  // (the storage value types live in their own std-only header; it uses no __COUNTER__)
#include "messages/storage_types.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::message_ids))
  CAF_ADD_TYPE_ID(mneme, (mneme::compaction_commit))
  CAF_ADD_TYPE_ID(mneme, (mneme::session_stats))
  CAF_ADD_TYPE_ID(mneme, (mneme::checkpoint_record))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::checkpoint_record>))
  CAF_ADD_TYPE_ID(mneme, (mneme::session_filter))
  CAF_ADD_ATOM(mneme, mneme, st_append_atom, "st_append")
  CAF_ADD_ATOM(mneme, mneme, st_flush_atom, "st_flush")
  CAF_ADD_ATOM(mneme, mneme, st_live_atom, "st_live")
  CAF_ADD_ATOM(mneme, mneme, st_range_atom, "st_range")
  CAF_ADD_ATOM(mneme, mneme, st_compact_atom, "st_compact")
  CAF_ADD_ATOM(mneme, mneme, st_new_session_atom, "st_newsess")
  CAF_ADD_ATOM(mneme, mneme, st_session_atom, "st_session")
  CAF_ADD_ATOM(mneme, mneme, st_list_atom, "st_list")
  CAF_ADD_ATOM(mneme, mneme, st_stats_atom, "st_stats")
  CAF_ADD_ATOM(mneme, mneme, st_end_atom, "st_end")
  CAF_ADD_ATOM(mneme, mneme, st_reset_atom, "st_reset")
  CAF_ADD_ATOM(mneme, mneme, st_checkpoint_atom, "st_ckpt")
  CAF_ADD_ATOM(mneme, mneme, st_checkpoints_atom, "st_ckpts")
  CAF_ADD_ATOM(mneme, mneme, st_rollback_atom, "st_rollbk")
  CAF_ADD_ATOM(mneme, mneme, st_put_triggers_atom, "st_trigput")
  CAF_ADD_ATOM(mneme, mneme, st_get_triggers_atom, "st_trigget")
  CAF_ADD_ATOM(mneme, mneme, st_export_atom, "st_export")
  CAF_ADD_ATOM(mneme, mneme, st_child_atom, "st_child")
  CAF_ADD_ATOM(mneme, mneme, st_wal_checkpoint_atom, "st_walckpt")

  // --- recall actor (actors/recall): add types and atoms below this line
  // (the recall value types live in their own std-only header; it uses no __COUNTER__)
#include "messages/recall_types.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::recall_hit_kind))
  CAF_ADD_TYPE_ID(mneme, (mneme::recall_request))
  CAF_ADD_TYPE_ID(mneme, (mneme::recall_hit))
  CAF_ADD_TYPE_ID(mneme, (mneme::recall_result))
  CAF_ADD_TYPE_ID(mneme, (mneme::recall_mode))
  CAF_ADD_TYPE_ID(mneme, (mneme::vector_skip))
  CAF_ADD_ATOM(mneme, mneme, rc_search_atom, "rc_search")

  // --- LLM client, summarizer and chat pools (actors/llm): add below this line
  // (inspect overloads in messages/llm_messages.hpp; it uses no __COUNTER__)
#include "messages/llm_messages.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::llm_purpose))
  CAF_ADD_TYPE_ID(mneme, (mneme::chat_request))
  CAF_ADD_TYPE_ID(mneme, (mneme::chat_answer))
  CAF_ADD_TYPE_ID(mneme, (mneme::llm_pool_stats))
  CAF_ADD_ATOM(mneme, mneme, llm_call_atom, "llm_call")
  CAF_ADD_ATOM(mneme, mneme, llm_done_atom, "llm_done")
  CAF_ADD_ATOM(mneme, mneme, llm_tick_atom, "llm_tick")
  CAF_ADD_ATOM(mneme, mneme, llm_stats_atom, "llm_stats")

  // --- session, gateway, supervisor (actors/session, gateway, supervisor)
  // (inspect overloads in messages/session_messages.hpp; it uses no __COUNTER__)
#include "messages/session_messages.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::trigger))
  CAF_ADD_TYPE_ID(mneme, (mneme::compaction_report))
  CAF_ADD_TYPE_ID(mneme, (mneme::turn_reply))
  CAF_ADD_TYPE_ID(mneme, (mneme::session_snapshot))
  CAF_ADD_TYPE_ID(mneme, (mneme::supervisor_stats))
  CAF_ADD_ATOM(mneme, mneme, ss_turn_atom, "ss_turn")
  CAF_ADD_ATOM(mneme, mneme, ss_append_atom, "ss_append")
  CAF_ADD_ATOM(mneme, mneme, ss_compact_atom, "ss_compact")
  CAF_ADD_ATOM(mneme, mneme, ss_local_atom, "ss_local")
  CAF_ADD_ATOM(mneme, mneme, ss_state_atom, "ss_state")
  CAF_ADD_ATOM(mneme, mneme, ss_idle_atom, "ss_idle")
  CAF_ADD_ATOM(mneme, mneme, ss_evict_atom, "ss_evict")
  CAF_ADD_ATOM(mneme, mneme, sv_spawn_atom, "sv_spawn")
  CAF_ADD_ATOM(mneme, mneme, sv_exhaust_atom, "sv_exhaust")
  CAF_ADD_ATOM(mneme, mneme, sv_stats_atom, "sv_stats")
  CAF_ADD_ATOM(mneme, mneme, sv_gateway_atom, "sv_gateway")
  CAF_ADD_ATOM(mneme, mneme, gw_message_atom, "gw_msg")
  CAF_ADD_ATOM(mneme, mneme, gw_command_atom, "gw_cmd")
  CAF_ADD_ATOM(mneme, mneme, gw_exhausted_atom, "gw_exhaust")
  CAF_ADD_ATOM(mneme, mneme, gw_rebind_atom, "gw_rebind")
  CAF_ADD_ATOM(mneme, mneme, gw_evict_atom, "gw_evict")
  CAF_ADD_ATOM(mneme, mneme, gw_state_atom, "gw_state")
  CAF_ADD_ATOM(mneme, mneme, ss_live_atom, "ss_live")
  CAF_ADD_ATOM(mneme, mneme, gw_append_atom, "gw_append")
  CAF_ADD_ATOM(mneme, mneme, gw_live_atom, "gw_live")
  CAF_ADD_ATOM(mneme, mneme, gw_local_atom, "gw_local")
  CAF_ADD_ATOM(mneme, mneme, gw_checkpoint_atom, "gw_ckpt")
  CAF_ADD_ATOM(mneme, mneme, gw_rollback_atom, "gw_rollbk")
  CAF_ADD_ATOM(mneme, mneme, sv_child_atom, "sv_child")
  CAF_ADD_ATOM(mneme, mneme, gw_child_atom, "gw_child")

  // --- special paths (issue 7: pruning, eviction, micro-compaction, external modes):
  // add below this line
  CAF_ADD_ATOM(mneme, mneme, ss_prune_atom, "ss_prune")
  CAF_ADD_ATOM(mneme, mneme, ss_skill_atom, "ss_skill")
  CAF_ADD_ATOM(mneme, mneme, st_replace_atom, "st_replace")
  CAF_ADD_TYPE_ID(mneme, (mneme::replacement_commit))

  // --- memory tiers (issue 7: facts, cold storage, skills): add below this line
  CAF_ADD_TYPE_ID(mneme, (mneme::fact_record))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::fact_record>))
  CAF_ADD_TYPE_ID(mneme, (mneme::fact_query))
  CAF_ADD_ATOM(mneme, mneme, st_fact_put_atom, "st_factput")
  CAF_ADD_ATOM(mneme, mneme, st_fact_del_atom, "st_factdel")
  CAF_ADD_ATOM(mneme, mneme, st_facts_atom, "st_facts")
  CAF_ADD_ATOM(mneme, mneme, st_import_atom, "st_import")

  // --- agent turns (issue 29: tools, tool loops): add below this line
  CAF_ADD_TYPE_ID(mneme, (mneme::tool_result_input))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::tool_result_input>))
  CAF_ADD_TYPE_ID(mneme, (mneme::turn_options))
  CAF_ADD_TYPE_ID(mneme, (mneme::turn_input))
  CAF_ADD_ATOM(mneme, mneme, gw_turn_atom, "gw_turn")
  CAF_ADD_ATOM(mneme, mneme, st_tools_put_atom, "st_toolput")
  CAF_ADD_ATOM(mneme, mneme, st_tools_get_atom, "st_toolget")

  // --- context service (issue 27 item 2): add below this line
  // (inspect overloads in messages/context_service.hpp; it uses no __COUNTER__)
#include "messages/context_service.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::context_request))
  CAF_ADD_TYPE_ID(mneme, (mneme::context_reply))
  CAF_ADD_ATOM(mneme, mneme, ss_context_atom, "ss_ctx")
  CAF_ADD_ATOM(mneme, mneme, gw_context_atom, "gw_ctx")

  // --- nodes (issue 26 item 4: leases, fencing, forwarding): add below this line
  CAF_ADD_TYPE_ID(mneme, (mneme::lease_outcome))
  CAF_ADD_ATOM(mneme, mneme, st_fence_atom, "st_fence")
  CAF_ADD_ATOM(mneme, mneme, ls_acquire_atom, "ls_acquire")
  CAF_ADD_ATOM(mneme, mneme, ls_renew_atom, "ls_renew")
  CAF_ADD_ATOM(mneme, mneme, ls_release_atom, "ls_release")
  CAF_ADD_ATOM(mneme, mneme, gw_lease_atom, "gw_lease")

  // --- the compaction log
  CAF_ADD_TYPE_ID(mneme, (mneme::compaction_log_entry))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::compaction_log_entry>))
  CAF_ADD_ATOM(mneme, mneme, st_clog_put_atom, "st_clogput")
  CAF_ADD_ATOM(mneme, mneme, st_clog_atom, "st_clog")
  // --- the Responses door's response records
  CAF_ADD_TYPE_ID(mneme, (mneme::response_record))
  CAF_ADD_ATOM(mneme, mneme, st_resp_put_atom, "st_respput")
  CAF_ADD_ATOM(mneme, mneme, st_resp_get_atom, "st_respget")
  CAF_ADD_ATOM(mneme, mneme, st_resp_del_atom, "st_respdel")
  // --- embeddings and vector recall (issue 48): add below this line
  CAF_ADD_TYPE_ID(mneme, (std::vector<float>))
  CAF_ADD_ATOM(mneme, mneme, em_query_atom, "em_query")
  // (plain values and inspect overloads in messages/embedding_rows.hpp; no __COUNTER__)
#include "messages/embedding_rows.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::embed_candidates))
  CAF_ADD_TYPE_ID(mneme, (mneme::embed_write))
  CAF_ADD_TYPE_ID(mneme, (mneme::embed_progress))
  CAF_ADD_TYPE_ID(mneme, (std::vector<mneme::stored_vector>))
  CAF_ADD_TYPE_ID(mneme, (std::vector<std::vector<float>>))
  CAF_ADD_ATOM(mneme, mneme, st_emrows_atom, "st_emrows")
  CAF_ADD_ATOM(mneme, mneme, st_emput_atom, "st_emput")
  CAF_ADD_ATOM(mneme, mneme, st_emstate_atom, "st_emstate")
  CAF_ADD_ATOM(mneme, mneme, st_emload_atom, "st_emload")
  CAF_ADD_ATOM(mneme, mneme, em_tick_atom, "em_tick")
  CAF_ADD_ATOM(mneme, mneme, em_done_atom, "em_done")
  CAF_ADD_ATOM(mneme, mneme, em_stats_atom, "em_stats")
  // --- idempotent writes (issue 47 item 8): add below this line
  CAF_ADD_TYPE_ID(mneme, (mneme::idempotent_append))
  CAF_ADD_ATOM(mneme, mneme, st_idem_atom, "st_idem")
  CAF_ADD_ATOM(mneme, mneme, gw_idem_atom, "gw_idem")

  // --- actor handles sent in messages (after every atom and type they name)
  // (the interfaces in messages/actor_handles.hpp; it uses no __COUNTER__)
#include "messages/actor_handles.hpp"
  CAF_ADD_TYPE_ID(mneme, (mneme::session_actor))
  CAF_ADD_TYPE_ID(mneme, (mneme::supervisor_gateway_actor))

CAF_END_TYPE_ID_BLOCK(mneme)

namespace mneme {

// Registers the mneme type-ID block and the error renderer on an actor system
// config. Call once per actor_system_config before constructing the system.
void register_mneme_types(caf::actor_system_config& cfg);

// The turn reply an error carries after its text, as an exhausted turn does
// (errc::compaction_exhausted with (text, turn_reply): the compactions it tried, the
// notice); nullopt when it carries none.
std::optional<turn_reply> turn_reply_of(const caf::error& err);

} // namespace mneme
