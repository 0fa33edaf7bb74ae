// The rows of a PostgreSQL group commit in one statement; see pg_group_rows.hpp.
#include "store/pg/pg_group_rows.hpp"

#include <pqxx/pqxx>

#include "store/row_codec.hpp"

namespace mneme::pg {

namespace {

// The columns of group_rows, in the order of the statement's unnest.
enum column : int {
  c_id, c_session, c_role, c_content, c_tool_call_id, c_tool_calls, c_tool_name,
  c_timestamp, c_tokens, c_summary, c_first, c_last, c_position, c_fence, c_idempotency_key
};

constexpr const char* insert_rows_sql =
  "WITH r AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[],"
  "   $5::bytea[], $6::bytea[], $7::bytea[], $8::bigint[], $9::bigint[], $10::bigint[],"
  "   $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::text[])"
  "   AS u(id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp_ms,"
  "        token_estimate, is_summary, replaced_first_id, replaced_last_id, position,"
  "        fence_token, idempotency_key)),"
  " m AS (INSERT INTO messages(id, session_id, role, content, tool_call_id, tool_calls,"
  "   tool_name, timestamp_ms, token_estimate, is_summary, replaced_first_id,"
  "   replaced_last_id, fence_token, idempotency_key) OVERRIDING SYSTEM VALUE"
  "   SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name,"
  "   timestamp_ms, token_estimate, is_summary, replaced_first_id, replaced_last_id,"
  "   NULLIF(fence_token, 0), idempotency_key FROM r ORDER BY id RETURNING id)"
  " INSERT INTO message_state(id, session_id, position)"
  " SELECT r.id, r.session_id, NULLIF(r.position, 0) FROM r JOIN m ON m.id = r.id"
  " ORDER BY r.id";

void separate(std::string& array) {
  if (array.size() > 1)
    array += ',';
}

void add_number(std::string& array, int64_t v) {
  separate(array);
  array += std::to_string(v);
}

// A text element, quoted; it ends at a NUL, as a text parameter did (PostgreSQL text
// holds none).
void add_text(std::string& array, const std::string& v) {
  separate(array);
  array += '"';
  for (char c : v) {
    if (c == '\0')
      break;
    if (c == '"' || c == '\\')
      array += '\\';
    array += c;
  }
  array += '"';
}

// A bytea element in hex ("\\x..." inside the array literal): any bytes.
void add_bytes(std::string& array, const std::string& v) {
  static const char digits[] = "0123456789abcdef";
  separate(array);
  array += "\"\\\\x";
  for (unsigned char c : v) {
    array += digits[c >> 4];
    array += digits[c & 0xF];
  }
  array += '"';
}

} // namespace

std::deque<int64_t> reserve_message_ids(pqxx::transaction_base& t, int64_t n) {
  std::deque<int64_t> ids;
  if (n < 1)
    return ids;
  auto r = t.exec_params("SELECT nextval(pg_get_serial_sequence('messages', 'id'))"
                         " FROM generate_series(1, $1) ORDER BY 1",
                         n);
  for (const auto& row : r)
    ids.push_back(row[0].as<int64_t>());
  return ids;
}

void group_rows::add(int64_t id, const message& m, int64_t position, int64_t fence_token) {
  add_number(columns_[c_id], id);
  add_text(columns_[c_session], m.session_id);
  add_text(columns_[c_role], std::string{to_string(m.role)});
  add_bytes(columns_[c_content], m.content);
  add_bytes(columns_[c_tool_call_id], m.tool_call_id);
  add_bytes(columns_[c_tool_calls], encode_tool_calls(m.tool_calls));
  add_bytes(columns_[c_tool_name], m.tool_name);
  add_number(columns_[c_timestamp], m.timestamp_ms);
  add_number(columns_[c_tokens], m.token_estimate);
  add_number(columns_[c_summary], m.is_summary ? 1 : 0);
  add_number(columns_[c_first], m.replaced_first_id);
  add_number(columns_[c_last], m.replaced_last_id);
  add_number(columns_[c_position], position);
  add_number(columns_[c_fence], fence_token);
  add_text(columns_[c_idempotency_key], m.idempotency_key);
  ++rows_;
}

void group_rows::insert(pqxx::transaction_base& t) {
  if (rows_ == 0)
    return;
  std::vector<std::string> params;
  params.reserve(column_count);
  for (auto& c : columns_)
    params.push_back(c + '}');
  t.exec_params(insert_rows_sql, pqxx::prepare::make_dynamic_params(params));
  clear();
}

void group_rows::clear() {
  rows_ = 0;
  for (auto& c : columns_)
    c.assign(1, '{');
}

} // namespace mneme::pg
