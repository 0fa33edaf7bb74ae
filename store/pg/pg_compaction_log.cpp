// The compaction log on PostgreSQL; see pg_compaction_log.hpp.
#include "store/pg/pg_compaction_log.hpp"

#include <algorithm>

#include "store/compaction_log.hpp"
#include "store/pg/pg_rows.hpp"

namespace mneme::pg {

int64_t insert_compaction_log(pqxx::transaction_base& t, const compaction_log_entry& e) {
  return t
    .exec_params1(
      "INSERT INTO compaction_log(session_id, at_ms, trigger, origin, mode, outcome,"
      " tokens_before, tokens_after, first_id, last_id, rows_replaced, summary_id,"
      " summarizer_model, duration_ms, summary_tokens, identifiers_in, identifiers_kept,"
      " attempt, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
      " $14, $15, $16, $17, $18, $19) RETURNING id",
      e.session_id, e.at_ms, e.trigger, e.origin, e.mode, e.outcome, e.tokens_before,
      e.tokens_after, e.first_id, e.last_id, e.rows_replaced, e.summary_id,
      bytes(e.summarizer_model), e.duration_ms, e.summary_tokens, e.identifiers_in,
      e.identifiers_kept, e.attempt, bytes(stored_detail(e)))[0]
    .as<int64_t>();
}

std::vector<compaction_log_entry> compaction_log_of(pqxx::transaction_base& t,
                                                   const std::string& session_id,
                                                   int64_t limit) {
  auto rows = t.exec_params(
    "SELECT id, session_id, at_ms, trigger, origin, mode, outcome, tokens_before,"
    " tokens_after, first_id, last_id, rows_replaced, summary_id, summarizer_model,"
    " duration_ms, summary_tokens, identifiers_in, identifiers_kept, attempt, detail"
    " FROM compaction_log WHERE session_id = $1 ORDER BY id DESC LIMIT $2",
    session_id, limit);
  std::vector<compaction_log_entry> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    compaction_log_entry e;
    int i = 0;
    e.id = r[i++].as<int64_t>();
    e.session_id = r[i++].as<std::string>();
    e.at_ms = r[i++].as<int64_t>();
    e.trigger = r[i++].as<std::string>();
    e.origin = r[i++].as<std::string>();
    e.mode = r[i++].as<std::string>();
    e.outcome = r[i++].as<std::string>();
    for (auto* v : {&e.tokens_before, &e.tokens_after, &e.first_id, &e.last_id,
                    &e.rows_replaced, &e.summary_id})
      *v = r[i++].as<int64_t>();
    e.summarizer_model = text_of(r[i++]);
    for (auto* v : {&e.duration_ms, &e.summary_tokens, &e.identifiers_in, &e.identifiers_kept})
      *v = r[i++].as<int64_t>();
    e.attempt = r[i++].as<int32_t>();
    e.detail = text_of(r[i++]);
    out.push_back(std::move(e));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

} // namespace mneme::pg
