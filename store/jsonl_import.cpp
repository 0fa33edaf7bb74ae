// Import of a session from its JSONL export; see jsonl_import.hpp.
#include "store/jsonl_import.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/key_namespace.hpp"
#include "store/row_codec.hpp"
#include "store/session_ids.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

using json = nlohmann::json;

using file_row = import_row;

// The export's fields, in its order (store/jsonl_export.hpp).
constexpr const char* export_fields[] = {
  "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
  "timestamp_ms", "token_estimate", "active", "compacted", "is_summary",
  "replaced_first_id", "replaced_last_id", "archived_by", "state"};

caf::error line_error(size_t line, const std::string& what) {
  return bad_request("import: line " + std::to_string(line) + ": " + what);
}

// Reads field `name` of `row` into `out`; false when it is missing or of
// another type.
bool read(const json& row, const char* name, std::string& out) {
  auto it = row.find(name);
  if (it == row.end() || !it->is_string())
    return false;
  out = it->get<std::string>();
  return true;
}

bool read(const json& row, const char* name, int64_t& out) {
  auto it = row.find(name);
  if (it == row.end() || !it->is_number_integer())
    return false;
  out = it->get<int64_t>();
  return true;
}

bool read(const json& row, const char* name, bool& out) {
  auto it = row.find(name);
  if (it == row.end() || !it->is_boolean())
    return false;
  out = it->get<bool>();
  return true;
}

caf::expected<file_row> parse_line(std::string_view text, size_t line) {
  auto row = json::parse(text.begin(), text.end(), nullptr, false);
  if (row.is_discarded())
    return line_error(line, "not valid JSON");
  if (!row.is_object())
    return line_error(line, "not a JSON object");
  for (auto it = row.begin(); it != row.end(); ++it)
    if (std::find_if(std::begin(export_fields), std::end(export_fields),
                     [&](const char* f) { return it.key() == f; })
        == std::end(export_fields))
      return line_error(line, "unknown field '" + it.key() + "'");
  file_row r;
  auto& m = r.m;
  std::string role;
  std::string state;
  int64_t ts = 0;
  // Each field with the type the export writes.
  struct {
    const char* name;
    bool ok;
  } checks[] = {
    {"id", read(row, "id", m.id)},
    {"session_id", read(row, "session_id", m.session_id)},
    {"role", read(row, "role", role)},
    {"content", read(row, "content", m.content)},
    {"tool_call_id", read(row, "tool_call_id", m.tool_call_id)},
    {"tool_name", read(row, "tool_name", m.tool_name)},
    {"timestamp_ms", read(row, "timestamp_ms", ts)},
    {"token_estimate", read(row, "token_estimate", m.token_estimate)},
    {"active", read(row, "active", m.active)},
    {"compacted", read(row, "compacted", m.compacted)},
    {"is_summary", read(row, "is_summary", m.is_summary)},
    {"replaced_first_id", read(row, "replaced_first_id", m.replaced_first_id)},
    {"replaced_last_id", read(row, "replaced_last_id", m.replaced_last_id)},
    {"archived_by", read(row, "archived_by", r.archived_by)},
    {"state", read(row, "state", state)},
  };
  for (const auto& c : checks)
    if (!c.ok)
      return line_error(line, std::string{"field '"} + c.name + "' is missing or not a "
                                + (std::string_view{c.name} == "active"
                                       || std::string_view{c.name} == "compacted"
                                       || std::string_view{c.name} == "is_summary"
                                     ? "boolean"
                                     : "value of the export's type"));
  m.timestamp_ms = ts;
  auto parsed_role = parse_role(role);
  if (!parsed_role)
    return line_error(line, "unknown role '" + role + "'");
  m.role = *parsed_role;
  auto calls = row.find("tool_calls");
  if (calls == row.end() || !calls->is_array())
    return line_error(line, "field 'tool_calls' is missing or not an array");
  for (const auto& c : *calls) {
    if (!c.is_object() || c.size() != 3 || !c.contains("id") || !c.contains("name")
        || !c.contains("arguments") || !c["id"].is_string() || !c["name"].is_string()
        || !c["arguments"].is_string())
      return line_error(line, "a tool call is not {\"id\",\"name\",\"arguments\"} strings");
    m.tool_calls.push_back(tool_call{c["id"].get<std::string>(), c["name"].get<std::string>(),
                                     c["arguments"].get<std::string>()});
  }
  if (m.id <= 0)
    return line_error(line, "id must be > 0");
  if (m.active && m.compacted)
    return line_error(line, "a row cannot be both active and compacted");
  if (state != to_string(m.state()))
    return line_error(line, "state '" + state + "' contradicts the flags (they say '"
                              + std::string{to_string(m.state())} + "')");
  if (r.archived_by < 0)
    return line_error(line, "archived_by must be >= 0");
  return r;
}

// Splits, parses and cross-checks every line before anything is written.
caf::expected<std::vector<file_row>> parse_file(std::string_view jsonl) {
  std::vector<file_row> rows;
  size_t line = 0;
  size_t at = 0;
  while (at < jsonl.size()) {
    ++line;
    auto end = jsonl.find('\n', at);
    if (end == std::string_view::npos)
      end = jsonl.size();
    auto text = jsonl.substr(at, end - at);
    at = end + 1;
    if (text.empty())
      return line_error(line, "empty line");
    auto r = parse_line(text, line);
    if (!r)
      return std::move(r.error());
    if (!rows.empty()) {
      if (r->m.id <= rows.back().m.id)
        return line_error(line, "ids must ascend (" + std::to_string(r->m.id) + " after "
                                  + std::to_string(rows.back().m.id) + ")");
      if (r->m.session_id != rows.front().m.session_id)
        return line_error(line, "session_id '" + r->m.session_id + "' differs from line 1's '"
                                  + rows.front().m.session_id + "'");
    }
    rows.push_back(std::move(*r));
  }
  if (rows.empty())
    return bad_request("import: the JSONL has no rows");
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < rows.size(); ++i)
    index.emplace(rows[i].m.id, i);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    for (auto ref : {r.m.replaced_first_id, r.m.replaced_last_id})
      if (ref != 0 && (ref >= r.m.id || index.count(ref) == 0))
        return line_error(i + 1, "provenance names row " + std::to_string(ref)
                                   + ", which is not an earlier row of the file");
    if (r.archived_by != 0
        && (r.archived_by <= r.m.id || index.count(r.archived_by) == 0))
      return line_error(i + 1, "archived_by names row " + std::to_string(r.archived_by)
                                 + ", which is not a later row of the file");
  }
  return rows;
}

} // namespace

caf::expected<import_plan> plan_session_import(std::string_view jsonl, session_record into,
                                              time_ms now, const store_params& params) {
  auto rows = parse_file(jsonl);
  if (!rows)
    return std::move(rows.error());
  if (into.id.empty())
    into.id = rows->front().m.session_id;
  if (!valid_session_id(into.id))
    return bad_request("import: session id must be 1..128 characters of [A-Za-z0-9._:-]");
  if (into.user_id.empty() || into.user_id.size() > 512)
    return bad_request("import: user_id must be 1..512 bytes");
  if (into.session_key.empty())
    into.session_key = into.id;
  if (into.session_key.find(key_namespace_separator) == std::string::npos) // into its user's
    into.session_key = stored_key(into.user_id, into.session_key);        // namespace
  if (into.started_at_ms <= 0)
    into.started_at_ms = rows->front().m.timestamp_ms > 0 ? rows->front().m.timestamp_ms : now;
  if (into.ended_at_ms < 0)
    into.ended_at_ms = 0;
  if (into.ended_at_ms == 0)
    into.end_reason.clear();
  into.triggers = trigger_state{};
  // Validation as for an append, line by line, before anything is written.
  for (size_t i = 0; i < rows->size(); ++i) {
    auto probe = (*rows)[i].m;
    probe.session_id = into.id;
    probe.active = true;
    probe.compacted = false;
    if (auto err = validate_new_message(probe, params))
      return line_error(i + 1, render_error(err));
  }
  return import_plan{std::move(into), std::move(*rows)};
}

message import_message(const import_row& r, const std::string& session_id,
                       const std::map<int64_t, int64_t>& new_id) {
  auto m = r.m;
  m.session_id = session_id;
  // Provenance names earlier rows (checked by the plan), already inserted.
  auto mapped = [&](int64_t old) { return old == 0 ? 0 : new_id.at(old); };
  m.replaced_first_id = mapped(m.replaced_first_id);
  m.replaced_last_id = mapped(m.replaced_last_id);
  return m;
}

std::vector<import_state> import_states(const std::vector<import_row>& rows,
                                        const std::map<int64_t, int64_t>& new_id) {
  // A row that archived others sits where the first of them (in live order) sat;
  // the archived rows precede it in id order.
  std::vector<import_state> out;
  out.reserve(rows.size());
  std::map<int64_t, int64_t> first_archived_position; // old archiver id -> min position
  for (const auto& r : rows) {
    auto id = new_id.at(r.m.id);
    auto it = first_archived_position.find(r.m.id);
    auto pos = it == first_archived_position.end() ? id : it->second;
    if (r.archived_by != 0) {
      auto& slot = first_archived_position.try_emplace(r.archived_by, pos).first->second;
      slot = std::min(slot, pos);
    }
    out.push_back({id, r.archived_by == 0 ? 0 : new_id.at(r.archived_by), pos});
  }
  return out;
}

} // namespace mneme
