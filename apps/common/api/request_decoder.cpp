// Request decoding; see request_decoder.hpp.
#include "apps/common/api/request_decoder.hpp"

#include <charconv>
#include <initializer_list>

#include "policies/utf8.hpp"

namespace mneme::api {

namespace {

using json = nlohmann::json;

caf::error bad(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

const char* type_name_of(const json& j) {
  return j.type_name(); // "null", "object", "array", "string", "boolean", "number"
}

// Rejects keys outside `known`.
caf::error only_fields(const json& obj, std::initializer_list<std::string_view> known,
                       std::string_view where = "") {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (auto k : known)
      ok = ok || it.key() == k;
    if (!ok)
      return bad("unknown field '" + std::string{where} + it.key() + "'");
  }
  return {};
}

// `out` = obj[name] when present; a wrong type is an error naming the field.
caf::error string_field(const json& obj, const std::string& name, std::string& out,
                        bool required, std::string_view where = "") {
  auto it = obj.find(name);
  if (it == obj.end()) {
    if (required)
      return bad("missing field '" + std::string{where} + name + "'");
    return {};
  }
  if (!it->is_string())
    return bad("field '" + std::string{where} + name + "' must be a string, not "
               + type_name_of(*it));
  out = it->get<std::string>();
  return {};
}

caf::error int_field(const json& obj, const std::string& name, std::optional<int64_t>& out) {
  auto it = obj.find(name);
  if (it == obj.end())
    return {};
  if (!it->is_number_integer())
    return bad("field '" + name + "' must be an integer, not "
               + (it->is_number() ? std::string{"a fraction"} : type_name_of(*it)));
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return bad("field '" + name + "' is out of range");
  out = it->get<int64_t>();
  return {};
}

caf::error decode_tool_calls(const json& obj, std::vector<tool_call>& out) {
  auto it = obj.find("tool_calls");
  if (it == obj.end())
    return {};
  if (!it->is_array())
    return bad(std::string{"field 'tool_calls' must be an array, not "} + type_name_of(*it));
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& c = (*it)[i];
    auto where = "tool_calls[" + std::to_string(i) + "].";
    if (!c.is_object())
      return bad("field 'tool_calls[" + std::to_string(i) + "]' must be an object, not "
                 + type_name_of(c));
    if (auto err = only_fields(c, {"id", "name", "arguments"}, where))
      return err;
    tool_call call;
    if (auto err = string_field(c, "id", call.id, true, where))
      return err;
    if (auto err = string_field(c, "name", call.name, true, where))
      return err;
    if (auto err = string_field(c, "arguments", call.arguments, false, where))
      return err;
    out.push_back(std::move(call));
  }
  return {};
}

} // namespace

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    auto at = pos;
    if (next_code_point(text, pos) == replacement_character) {
      // U+FFFD written out (EF BF BD) is well-formed; a replaced byte advanced by one.
      if (pos - at == 1)
        return at;
    }
  }
  return std::nullopt;
}

caf::expected<nlohmann::json> parse_object(std::string_view body, bool empty_is_object) {
  if (empty_is_object && body.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return json::object();
  if (auto at = first_invalid_utf8(body))
    return bad("the body is not valid UTF-8 (byte " + std::to_string(*at) + ")");
  json j;
  try {
    j = json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    return bad("the body is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const std::exception&) {
    return bad("the body is not valid JSON");
  }
  if (!j.is_object())
    return bad(std::string{"the body must be a JSON object, not "} + type_name_of(j));
  return j;
}

caf::expected<append_request> decode_append(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"user", "role", "content", "tool_call_id", "tool_name",
                                  "tool_calls"}))
    return err;
  append_request out;
  std::string role;
  if (auto err = string_field(*j, "user", out.user, false))
    return err;
  if (auto err = string_field(*j, "role", role, true))
    return err;
  auto parsed = parse_role(role);
  if (!parsed)
    return bad("field 'role': unknown role '" + role + "' (system, user, assistant or tool)");
  out.row.role = *parsed;
  if (auto err = string_field(*j, "content", out.row.content, true))
    return err;
  if (auto err = string_field(*j, "tool_call_id", out.row.tool_call_id, false))
    return err;
  if (auto err = string_field(*j, "tool_name", out.row.tool_name, false))
    return err;
  if (auto err = decode_tool_calls(*j, out.row.tool_calls))
    return err;
  return out;
}

caf::expected<turn_request> decode_turn(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"user", "content"}))
    return err;
  turn_request out;
  if (auto err = string_field(*j, "user", out.user, false))
    return err;
  if (auto err = string_field(*j, "content", out.content, true))
    return err;
  if (out.content.empty())
    return bad("field 'content' is empty");
  return out;
}

caf::expected<compact_request> decode_compact(std::string_view body) {
  auto j = parse_object(body, true);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"around_id", "radius", "focus"}))
    return err;
  compact_request out;
  if (auto err = int_field(*j, "around_id", out.around_id))
    return err;
  std::optional<int64_t> radius;
  if (auto err = int_field(*j, "radius", radius))
    return err;
  if (radius && *radius < 0)
    return bad("field 'radius' must be 0 or more, not " + std::to_string(*radius));
  if (radius && !out.around_id)
    return bad("field 'radius' needs field 'around_id'");
  if (out.around_id && *out.around_id <= 0)
    return bad("field 'around_id' must be a message id (1 or more)");
  out.radius = radius.value_or(default_local_radius);
  if (auto err = string_field(*j, "focus", out.focus, false))
    return err;
  return out;
}

caf::expected<name_request> decode_name(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"name"}))
    return err;
  name_request out;
  if (auto err = string_field(*j, "name", out.name, true))
    return err;
  if (out.name.empty())
    return bad("field 'name' is empty");
  return out;
}

caf::expected<checkpoint_request> decode_checkpoint(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"name", "replace"}))
    return err;
  checkpoint_request out;
  if (auto err = string_field(*j, "name", out.name, true))
    return err;
  if (out.name.empty())
    return bad("field 'name' is empty");
  if (auto it = j->find("replace"); it != j->end()) {
    if (!it->is_boolean())
      return bad("field 'replace' must be true or false");
    out.replace = it->get<bool>();
  }
  return out;
}

caf::expected<fact_put_request> decode_fact_put(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"value", "source_session"}))
    return err;
  fact_put_request out;
  if (auto err = string_field(*j, "value", out.value, true))
    return err;
  if (out.value.empty())
    return bad("field 'value' is empty");
  if (auto err = string_field(*j, "source_session", out.source_session, false))
    return err;
  return out;
}

caf::expected<facts_inject_request> decode_facts_inject(std::string_view body,
                                                        int64_t max_limit) {
  auto j = parse_object(body, true);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"user", "q", "limit"}))
    return err;
  facts_inject_request out;
  if (auto err = string_field(*j, "user", out.user, false))
    return err;
  if (auto err = string_field(*j, "q", out.query, false))
    return err;
  std::optional<int64_t> limit;
  if (auto err = int_field(*j, "limit", limit))
    return err;
  if (limit && (*limit < 1 || *limit > max_limit))
    return bad("field 'limit' must be within 1.." + std::to_string(max_limit) + ", not "
               + std::to_string(*limit));
  out.limit = limit.value_or(out.limit);
  return out;
}

caf::expected<int64_t> parse_int_param(std::string_view name, std::string_view text,
                                       int64_t min, int64_t max) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return bad("parameter '" + std::string{name} + "' must be an integer, not '"
               + std::string{text} + "'");
  if (v < min || v > max)
    return bad("parameter '" + std::string{name} + "' must be within " + std::to_string(min)
               + ".." + std::to_string(max) + ", not " + std::to_string(v));
  return v;
}

caf::expected<bool> parse_bool_param(std::string_view name, std::string_view text) {
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  return bad("parameter '" + std::string{name} + "' must be true or false, not '"
             + std::string{text} + "'");
}

} // namespace mneme::api
