// Shared pieces of the PostgreSQL store; see pg_rows.hpp.
#include "store/pg/pg_rows.hpp"

#include <pqxx/pqxx>

#include "store/row_codec.hpp"
#include "store/session_ids.hpp"
#include "store/store_errors.hpp"

namespace mneme::pg {

pqxx::binarystring bytes(const std::string& s) {
  return pqxx::binarystring{s.data(), s.size()};
}

std::string text_of(const pqxx::field& f) {
  return pqxx::binarystring{f}.str();
}

std::string unknown_session(const std::string& id) {
  return "unknown session '" + id + "'";
}

session_record decode_session(const pqxx::row& r) {
  session_record s;
  s.id = r[0].as<std::string>();
  s.user_id = text_of(r[1]);
  s.session_key = text_of(r[2]);
  s.parent_id = r[3].as<std::string>();
  s.model = text_of(r[4]);
  s.started_at_ms = r[5].as<int64_t>();
  s.ended_at_ms = r[6].as<int64_t>();
  s.end_reason = text_of(r[7]);
  auto& t = s.triggers;
  t.cooldown_until_ms = r[8].as<int64_t>();
  t.cooldown_reason = text_of(r[9]);
  t.anti_thrash_strikes = static_cast<int32_t>(r[10].as<int64_t>());
  t.lock_until_ms = r[11].as<int64_t>();
  t.probe_pending = r[12].as<int64_t>() != 0;
  t.fallback_streak = static_cast<int32_t>(r[13].as<int64_t>());
  t.compaction_count = r[14].as<int64_t>();
  t.last_prompt_tokens = r[15].as<int64_t>();
  return s;
}

caf::expected<std::vector<message>> decode_messages(const pqxx::result& rows,
                                                    std::vector<int64_t>* archived_by) {
  std::vector<message> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    message m;
    m.id = r[0].as<int64_t>();
    m.session_id = r[1].as<std::string>();
    auto role = parse_role(r[2].as<std::string>());
    if (!role)
      return caf::make_error(errc::storage_corrupt,
                             "row " + std::to_string(m.id) + " has an unknown role");
    m.role = *role;
    m.content = text_of(r[3]);
    m.tool_call_id = text_of(r[4]);
    auto calls = decode_tool_calls(text_of(r[5]));
    if (!calls)
      return std::move(calls.error());
    m.tool_calls = std::move(*calls);
    m.tool_name = text_of(r[6]);
    m.timestamp_ms = r[7].as<int64_t>();
    m.token_estimate = r[8].as<int64_t>();
    m.active = r[9].as<int64_t>() != 0;
    m.compacted = r[10].as<int64_t>() != 0;
    m.is_summary = r[11].as<int64_t>() != 0;
    m.replaced_first_id = r[12].as<int64_t>();
    m.replaced_last_id = r[13].as<int64_t>();
    if (archived_by != nullptr)
      archived_by->push_back(r[14].as<int64_t>());
    out.push_back(std::move(m));
  }
  return out;
}

caf::error require_session(pqxx::transaction_base& t, const std::string& session_id) {
  if (!valid_session_id(session_id) || t.exec_prepared("session_open", session_id).empty())
    return not_found(unknown_session(session_id));
  return {};
}

caf::expected<std::vector<message>> live_rows(pqxx::transaction_base& t,
                                              const std::string& session_id) {
  return decode_messages(t.exec_prepared("live_context", session_id));
}

std::string bigint_array(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0)
      out += ',';
    out += std::to_string(ids[i]);
  }
  return out + "}";
}

bool insert_session(pqxx::transaction_base& t, const session_record& rec) {
  auto r = t.exec_prepared("session_insert", rec.id, bytes(rec.user_id), bytes(rec.session_key),
                           rec.parent_id, bytes(rec.model), rec.started_at_ms, rec.ended_at_ms,
                           bytes(rec.end_reason));
  return r.affected_rows() > 0;
}

int64_t insert_message_row(pqxx::transaction_base& t, const message& m, int64_t position,
                           int64_t fence_token) {
  auto r = t.exec_prepared("message_insert", m.session_id, std::string{to_string(m.role)},
                           bytes(m.content), bytes(m.tool_call_id),
                           bytes(encode_tool_calls(m.tool_calls)), bytes(m.tool_name),
                           m.timestamp_ms, m.token_estimate, int64_t{m.is_summary ? 1 : 0},
                           m.replaced_first_id, m.replaced_last_id, position, fence_token,
                           m.idempotency_key);
  return r[0][0].as<int64_t>();
}

} // namespace mneme::pg
