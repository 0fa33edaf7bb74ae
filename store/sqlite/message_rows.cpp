// Decoding of SQLite's message rows; see message_rows.hpp.
#include "store/sqlite/message_rows.hpp"

#include "caf/make_message.hpp"

#include "messages/errc.hpp"
#include "store/row_codec.hpp"
#include "store/sqlite/db_connection.hpp"

namespace mneme {

caf::expected<message> decode_message(const statement& row, int64_t* archived_by) {
  message m;
  m.id = row.column_int(0);
  m.session_id = row.column_text(1);
  auto role = parse_role(row.column_text(2));
  if (!role)
    return caf::make_error(errc::storage_corrupt,
                           "row " + std::to_string(m.id) + " has an unknown role");
  m.role = *role;
  m.content = row.column_text(3);
  m.tool_call_id = row.column_text(4);
  auto calls = decode_tool_calls(row.column_text(5));
  if (!calls)
    return std::move(calls.error());
  m.tool_calls = std::move(*calls);
  m.tool_name = row.column_text(6);
  m.timestamp_ms = row.column_int(7);
  m.token_estimate = row.column_int(8);
  m.active = row.column_int(9) != 0;
  m.compacted = row.column_int(10) != 0;
  m.is_summary = row.column_int(11) != 0;
  m.replaced_first_id = row.column_int(12);
  m.replaced_last_id = row.column_int(13);
  if (archived_by != nullptr)
    *archived_by = row.column_int(14);
  return m;
}

} // namespace mneme

