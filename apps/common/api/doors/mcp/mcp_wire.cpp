// The MCP door's wire; see mcp_wire.hpp.
#include "apps/common/api/doors/mcp/mcp_wire.hpp"

#include <algorithm>

#include "apps/common/api/plumbing/json_duplicates.hpp"

namespace mneme::api::mcp {

bool spoken_version(std::string_view v) {
  return std::find(mcp_versions.begin(), mcp_versions.end(), v) != mcp_versions.end();
}

std::string negotiate_version(std::string_view requested) {
  return std::string{spoken_version(requested) ? requested : mcp_versions.front()};
}

bool batch_allowed(std::string_view header) {
  // Versions are dates (YYYY-MM-DD): their text orders as they do.
  return header.empty() || header <= last_batch_version;
}

std::string spoken_versions_text() {
  std::string out;
  for (auto v : mcp_versions)
    out += (out.empty() ? "" : ", ") + std::string{v};
  return out;
}

bool origin_allowed(std::string_view origin, bool has_bearer_token) {
  if (has_bearer_token)
    return true;
  auto scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos)
    return false; // "null" (a sandboxed page, a file) or not an origin
  auto host = origin.substr(scheme_end + 3);
  if (host.rfind("[::1]", 0) == 0)
    return host.size() == 5 || host[5] == ':';
  host = host.substr(0, host.find(':'));
  if (host == "localhost")
    return true;
  // 127.0.0.0/8: "127." and then digits and dots only.
  if (host.rfind("127.", 0) != 0)
    return false;
  return host.find_first_not_of("0123456789.") == std::string_view::npos;
}

namespace {

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

rpc_message invalid(json id, std::string why) {
  rpc_message m;
  m.id = valid_id(id) ? std::move(id) : json{};
  m.error = std::move(why);
  return m;
}

} // namespace

rpc_message classify(const json& m) {
  if (!m.is_object())
    return invalid({}, "a JSON-RPC message is an object");
  json id = m.contains("id") ? m["id"] : json{};
  auto version = m.find("jsonrpc");
  if (version == m.end() || *version != "2.0")
    return invalid(id, "field 'jsonrpc' must be \"2.0\"");
  auto method = m.find("method");
  if (method == m.end()) {
    if ((m.contains("result") || m.contains("error")) && valid_id(id)) {
      rpc_message r;
      r.kind = message_kind::response;
      r.id = id;
      return r;
    }
    return invalid(id, "field 'method' is missing");
  }
  if (!method->is_string() || method->get_ref<const std::string&>().empty())
    return invalid(id, "field 'method' must be a non-empty string");
  if (m.contains("id") && !valid_id(id))
    return invalid({}, "field 'id' must be a string or an integer");
  auto params = m.find("params");
  if (params != m.end() && !params->is_object())
    return invalid(id, "field 'params' must be an object");
  rpc_message r;
  r.kind = m.contains("id") ? message_kind::request : message_kind::notification;
  r.id = id;
  r.method = method->get<std::string>();
  r.params = params != m.end() ? *params : json{};
  return r;
}

post_body decode_post(std::string_view body) {
  post_body out;
  std::string duplicate;
  auto doc = parse_noting_duplicate_keys<json>(body, duplicate, false);
  if (doc.is_discarded()) {
    out.parse_failure = body.empty() ? "the body is empty" : "the body is not valid JSON";
    return out;
  }
  if (!duplicate.empty()) {
    out.parse_failure = duplicate_key_message(duplicate);
    return out;
  }
  if (!doc.is_array()) {
    out.messages.push_back(classify(doc));
    return out;
  }
  out.batch = true;
  for (const auto& m : doc)
    out.messages.push_back(classify(m));
  return out;
}

mcp_method method_of(std::string_view name) {
  if (name == "initialize")
    return mcp_method::initialize;
  if (name == "ping")
    return mcp_method::ping;
  if (name == "tools/list")
    return mcp_method::tools_list;
  if (name == "tools/call")
    return mcp_method::tools_call;
  return mcp_method::unknown;
}

json result_message(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json error_message(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

initialize_answer answer_initialize(const json& params, std::string_view server_version) {
  initialize_answer a;
  if (!params.is_object() || !params.contains("protocolVersion")
      || !params["protocolVersion"].is_string()) {
    a.error = "initialize: params.protocolVersion must be a string";
    return a;
  }
  a.result = {
    {"protocolVersion", negotiate_version(params["protocolVersion"].get<std::string>())},
    {"capabilities", {{"tools", {{"listChanged", false}}}}},
    {"serverInfo", {{"name", "mneme"}, {"version", std::string{server_version}}}},
    {"instructions",
     "mneme's memory of your conversations: session_search recalls earlier sessions, "
     "memory keeps facts, skills_list and skill_view read skills, session_context shows "
     "the live context of a session key with its summaries."}};
  return a;
}

tool_call_params decode_tool_call(const json& params) {
  tool_call_params p;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    p.error = "tools/call: params.name must be a string";
    return p;
  }
  p.name = params["name"].get<std::string>();
  if (params.contains("arguments") && !params["arguments"].is_null()) {
    if (!params["arguments"].is_object()) {
      p.error = "tools/call: params.arguments must be an object";
      return p;
    }
    p.arguments = params["arguments"];
  }
  return p;
}

json tool_result(std::string text, bool is_error, json structured) {
  json out{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
           {"isError", is_error}};
  if (structured.is_object())
    out["structuredContent"] = std::move(structured);
  return out;
}

json structured_tool_result(const json& value, bool structured) {
  auto text = value.is_null() ? std::string{}
                              : value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!structured)
    return tool_result(std::move(text), false);
  json object = value.is_object() ? value
                : value.is_null() ? json::object()
                                  : json{{"result", value}};
  return tool_result(std::move(text), false, std::move(object));
}

bool structured_output(std::string_view header) {
  return !header.empty() && spoken_version(header) && header >= first_structured_version;
}

} // namespace mneme::api::mcp
