// JSONL import on PostgreSQL; see pg_jsonl_import.hpp.
#include "store/pg/pg_jsonl_import.hpp"

#include <map>

#include <pqxx/pqxx>

#include "store/jsonl_import.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/store_errors.hpp"

namespace mneme {

caf::expected<session_record> pg_import_jsonl(pqxx::connection& conn, std::string_view jsonl,
                                              session_record into, time_ms now,
                                              const store_params& params,
                                              const pg_key_fence& fence) {
  auto plan = plan_session_import(jsonl, std::move(into), now, params);
  if (!plan)
    return std::move(plan.error());
  const auto& target = plan->into;
  return pg::guarded("import session", [&]() -> caf::expected<session_record> {
    pqxx::work w{conn};
    auto token = fence(w, target.session_key);
    if (!token)
      return std::move(token.error());
    if (!target.parent_id.empty())
      if (auto err = pg::require_session(w, target.parent_id))
        return err;
    if (!pg::insert_session(w, target))
      return bad_request("import: session '" + target.id + "' already exists");
    // Every row inserted live, learning the renumbering file id -> new id.
    std::map<int64_t, int64_t> new_id;
    for (const auto& r : plan->rows)
      new_id.emplace(r.m.id, pg::insert_message_row(w, import_message(r, target.id, new_id), 0, *token));
    auto states = import_states(plan->rows, new_id);
    for (size_t i = 0; i < states.size(); ++i) {
      const auto& st = states[i];
      const auto& m = plan->rows[i].m;
      w.exec_params0("UPDATE message_state SET active = $2, compacted = $3, archived_by = $4,"
                     " position = NULLIF($5::bigint, $1::bigint) WHERE id = $1",
                     st.id, int64_t{m.active ? 1 : 0}, int64_t{m.compacted ? 1 : 0},
                     st.archived_by, st.position);
    }
    auto rec = pg::decode_session(
      w.exec_params1("SELECT " MNEME_PG_SESSION_COLUMNS " FROM sessions WHERE id = $1",
                     target.id));
    w.commit();
    return rec;
  });
}

} // namespace mneme
