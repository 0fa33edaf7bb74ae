// Request decoding; see request_decoder.hpp.
#include "apps/common/api/plumbing/request_decoder.hpp"

#include <charconv>
#include <initializer_list>

#include "apps/common/api/plumbing/json_duplicates.hpp"
#include "policies/utf8.hpp"
#include "store/session_tools.hpp"

namespace mneme::api {

namespace {

using json = nlohmann::json;

caf::error bad(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

const char* type_name_of(const json& j) {
  return j.type_name(); // "null", "object", "array", "string", "boolean", "number"
}

} // namespace

// Rejects keys outside `known`.
caf::error only_fields(const json& obj, std::initializer_list<std::string_view> known,
                       std::string_view where) {
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
                        bool required, std::string_view where) {
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

namespace {

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

caf::error bool_field(const json& obj, const std::string& name, bool& out,
                      std::string_view where = "") {
  auto it = obj.find(name);
  if (it == obj.end())
    return {};
  if (!it->is_boolean())
    return bad("field '" + std::string{where} + name + "' must be a boolean, not "
               + type_name_of(*it));
  out = it->get<bool>();
  return {};
}

// A number field in [lo, hi]; `present` tells whether it was sent.
caf::error number_field(const json& obj, const std::string& name, double lo, double hi,
                        double& out, bool& present) {
  auto it = obj.find(name);
  if (it == obj.end())
    return {};
  if (!it->is_number())
    return bad("field '" + name + "' must be a number, not " + type_name_of(*it));
  auto v = it->get<double>();
  if (!(v >= lo && v <= hi))
    return bad("field '" + name + "' must be between " + nlohmann::json(lo).dump() + " and "
               + nlohmann::json(hi).dump());
  out = v;
  present = true;
  return {};
}

caf::error decode_tool_results(const json& obj, std::vector<tool_result_input>& out) {
  const auto& arr = obj["tool_results"];
  if (!arr.is_array())
    return bad(std::string{"field 'tool_results' must be an array, not "} + type_name_of(arr));
  if (arr.empty())
    return bad("field 'tool_results' is empty");
  for (size_t i = 0; i < arr.size(); ++i) {
    const auto& r = arr[i];
    auto where = "tool_results[" + std::to_string(i) + "].";
    if (!r.is_object())
      return bad("field 'tool_results[" + std::to_string(i) + "]' must be an object, not "
                 + type_name_of(r));
    if (auto err = only_fields(r, {"tool_call_id", "content", "is_error"}, where))
      return err;
    tool_result_input res;
    if (auto err = string_field(r, "tool_call_id", res.tool_call_id, true, where))
      return err;
    if (res.tool_call_id.empty())
      return bad("field '" + where + "tool_call_id' is empty");
    if (auto err = string_field(r, "content", res.content, true, where))
      return err;
    if (auto err = bool_field(r, "is_error", res.is_error, where))
      return err;
    out.push_back(std::move(res));
  }
  return {};
}

// One OpenAI function tool: {"type":"function","function":{"name":..., "parameters":{}}}.
caf::error check_tool(const json& t, const std::string& where) {
  if (!t.is_object())
    return bad("field '" + where + "' must be an object, not " + type_name_of(t));
  std::string type;
  if (auto err = string_field(t, "type", type, true, where + "."))
    return err;
  if (type != "function")
    return bad("field '" + where + ".type' must be \"function\", not \"" + type + "\"");
  auto fn = t.find("function");
  if (fn == t.end())
    return bad("missing field '" + where + ".function'");
  if (!fn->is_object())
    return bad("field '" + where + ".function' must be an object, not " + type_name_of(*fn));
  std::string name;
  if (auto err = string_field(*fn, "name", name, true, where + ".function."))
    return err;
  if (name.empty())
    return bad("field '" + where + ".function.name' is empty");
  std::string description;
  if (auto err = string_field(*fn, "description", description, false, where + ".function."))
    return err;
  auto params = fn->find("parameters");
  if (params != fn->end() && !params->is_object())
    return bad("field '" + where + ".function.parameters' must be an object, not "
               + type_name_of(*params));
  return {};
}

caf::error decode_tools(const json& obj, turn_input& in) {
  auto it = obj.find("tools");
  if (it == obj.end())
    return {};
  if (!it->is_array())
    return bad(std::string{"field 'tools' must be an array, not "} + type_name_of(*it));
  for (size_t i = 0; i < it->size(); ++i)
    if (auto err = check_tool((*it)[i], "tools[" + std::to_string(i) + "]"))
      return err;
  in.set_tools = true;
  in.tools_json = it->dump(-1, ' ', false, json::error_handler_t::replace);
  if (in.tools_json.size() > session_tools_max_bytes)
    return bad("field 'tools' is " + std::to_string(in.tools_json.size())
               + " bytes, more than the limit of " + std::to_string(session_tools_max_bytes));
  return {};
}

caf::error check_tool_choice(const json& c) {
  if (c.is_string()) {
    auto v = c.get<std::string>();
    if (v == "none" || v == "auto" || v == "required")
      return {};
    return bad("field 'tool_choice' must be \"none\", \"auto\", \"required\" or an object, "
               "not \"" + v + "\"");
  }
  if (!c.is_object())
    return bad(std::string{"field 'tool_choice' must be a string or an object, not "}
               + type_name_of(c));
  std::string type;
  if (auto err = string_field(c, "type", type, true, "tool_choice."))
    return err;
  auto fn = c.find("function");
  if (fn == c.end())
    return {};
  if (!fn->is_object())
    return bad(std::string{"field 'tool_choice.function' must be an object, not "}
               + type_name_of(*fn));
  std::string name;
  return string_field(*fn, "name", name, true, "tool_choice.function.");
}

caf::error check_stop(const json& s) {
  if (s.is_string())
    return {};
  if (!s.is_array())
    return bad(std::string{"field 'stop' must be a string or an array of strings, not "}
               + type_name_of(s));
  if (s.size() > 4)
    return bad("field 'stop' holds " + std::to_string(s.size()) + " strings, at most 4");
  for (size_t i = 0; i < s.size(); ++i)
    if (!s[i].is_string())
      return bad("field 'stop[" + std::to_string(i) + "]' must be a string, not "
                 + type_name_of(s[i]));
  return {};
}

// temperature and max_tokens into their own members; the rest, checked, into extra_json.
caf::error decode_sampling(const json& obj, turn_options& opt) {
  if (auto err = number_field(obj, "temperature", 0.0, 2.0, opt.temperature, opt.has_temperature))
    return err;
  std::optional<int64_t> max_tokens;
  if (auto err = int_field(obj, "max_tokens", max_tokens))
    return err;
  if (max_tokens && *max_tokens < 1)
    return bad("field 'max_tokens' must be 1 or more, not " + std::to_string(*max_tokens));
  opt.has_max_tokens = max_tokens.has_value();
  opt.max_tokens = max_tokens.value_or(0);
  json extra = json::object();
  double top_p = 0;
  bool has_top_p = false;
  if (auto err = number_field(obj, "top_p", 0.0, 1.0, top_p, has_top_p))
    return err;
  if (has_top_p)
    extra["top_p"] = obj["top_p"];
  if (auto it = obj.find("tool_choice"); it != obj.end()) {
    if (auto err = check_tool_choice(*it))
      return err;
    extra["tool_choice"] = *it;
  }
  if (auto it = obj.find("response_format"); it != obj.end()) {
    if (!it->is_object())
      return bad(std::string{"field 'response_format' must be an object, not "}
                 + type_name_of(*it));
    std::string type;
    if (auto err = string_field(*it, "type", type, true, "response_format."))
      return err;
    extra["response_format"] = *it;
  }
  if (auto it = obj.find("stop"); it != obj.end()) {
    if (auto err = check_stop(*it))
      return err;
    extra["stop"] = *it;
  }
  std::optional<int64_t> seed;
  if (auto err = int_field(obj, "seed", seed))
    return err;
  if (seed)
    extra["seed"] = *seed;
  bool parallel = false;
  if (auto err = bool_field(obj, "parallel_tool_calls", parallel))
    return err;
  if (obj.contains("parallel_tool_calls"))
    extra["parallel_tool_calls"] = parallel;
  if (!extra.empty())
    opt.extra_json = extra.dump(-1, ' ', false, json::error_handler_t::replace);
  return {};
}

} // namespace

caf::error decode_turn_tools(const nlohmann::json& obj, turn_input& in) {
  return decode_tools(obj, in);
}

caf::error decode_turn_sampling(const nlohmann::json& obj, turn_options& opt) {
  return decode_sampling(obj, opt);
}

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
  std::string duplicate;
  try {
    j = parse_noting_duplicate_keys<json>(body, duplicate);
  } catch (const json::parse_error& e) {
    return bad("the body is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const std::exception&) {
    return bad("the body is not valid JSON");
  }
  if (!duplicate.empty())
    return bad(duplicate_key_message(duplicate));
  if (!j.is_object())
    return bad(std::string{"the body must be a JSON object, not "} + type_name_of(j));
  return j;
}

caf::expected<nlohmann::json> parse_fields(std::string_view body,
                                           std::initializer_list<std::string_view> known,
                                           bool empty_is_object) {
  auto j = parse_object(body, empty_is_object);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, known))
    return err;
  return j;
}

caf::expected<append_request> decode_append(std::string_view body) {
  auto j =
    parse_fields(body, {"user", "role", "content", "tool_call_id", "tool_name", "tool_calls"});
  if (!j)
    return j.error();
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
  if (j->contains("tool_call_id") && out.row.role != msg_role::tool) // it answers a call
    return bad("field 'tool_call_id' is only for role 'tool', not '" + role + "'");
  if (auto err = string_field(*j, "tool_name", out.row.tool_name, false))
    return err;
  if (auto err = decode_tool_calls(*j, out.row.tool_calls))
    return err;
  return out;
}

caf::expected<turn_request> decode_turn(std::string_view body) {
  auto j = parse_fields(body, {"user", "content", "tool_results", "abandon_pending", "tools",
                               "tool_choice", "temperature", "top_p", "max_tokens",
                               "response_format", "stop", "seed", "parallel_tool_calls", "stream"});
  if (!j)
    return j.error();
  turn_request out;
  auto& in = out.input;
  if (auto err = string_field(*j, "user", out.user, false))
    return err;
  bool has_content = j->contains("content");
  bool has_results = j->contains("tool_results");
  if (has_content && has_results)
    return bad("fields 'content' and 'tool_results' exclude each other");
  if (!has_content && !has_results)
    return bad("missing field 'content' (or 'tool_results' to continue a tool loop)");
  if (has_content) {
    if (auto err = string_field(*j, "content", in.content, true))
      return err;
    if (in.content.empty())
      return bad("field 'content' is empty");
  } else if (auto err = decode_tool_results(*j, in.tool_results)) {
    return err;
  }
  if (auto err = bool_field(*j, "abandon_pending", in.abandon_pending))
    return err;
  if (auto err = bool_field(*j, "stream", out.stream))
    return err;
  if (in.abandon_pending && has_results)
    return bad("field 'abandon_pending' goes with 'content', not with 'tool_results'");
  if (auto err = decode_tools(*j, in))
    return err;
  if (auto err = decode_sampling(*j, in.options))
    return err;
  return out;
}

caf::expected<compact_request> decode_compact(std::string_view body) {
  auto j = parse_fields(body, {"around_id", "radius", "focus"}, true);
  if (!j)
    return j.error();
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
  auto j = parse_fields(body, {"name"});
  if (!j)
    return j.error();
  name_request out;
  if (auto err = string_field(*j, "name", out.name, true))
    return err;
  if (out.name.empty())
    return bad("field 'name' is empty");
  return out;
}

caf::expected<checkpoint_request> decode_checkpoint(std::string_view body) {
  auto j = parse_fields(body, {"name", "replace"});
  if (!j)
    return j.error();
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
  auto j = parse_fields(body, {"value", "source_session"});
  if (!j)
    return j.error();
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
  auto j = parse_fields(body, {"user", "q", "limit"}, true);
  if (!j)
    return j.error();
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
