// The compaction endpoint's wire format; see compaction_wire.hpp.
#include "apps/common/fakellm/compaction_wire.hpp"

#include <nlohmann/json.hpp>

#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"

namespace mneme::fakellm {

namespace {

using json = nlohmann::json;

caf::error bad(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

caf::expected<std::string> item_text(const json& c, const std::string& where) {
  if (c.is_null()) return std::string{};
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) return bad(where + " must be a string or an array of parts");
  std::string out;
  for (const auto& part : c) {
    if (!part.is_object()) return bad(where + " parts must be objects");
    if (auto t = part.find("text"); t != part.end()) {
      if (!t->is_string()) return bad(where + "[].text must be a string");
      out += t->get<std::string>();
    }
  }
  return out;
}

std::string string_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

caf::expected<message> parse_item(const json& item, const std::string& where) {
  if (!item.is_object()) return bad(where + " must be an object");
  auto type = item.value("type", std::string{"message"});
  message m;
  if (type == "function_call") {
    m.role = msg_role::assistant;
    m.tool_calls.push_back(tool_call{string_field(item, "call_id"), string_field(item, "name"),
                                     string_field(item, "arguments")});
    return m;
  }
  if (type == "function_call_output") {
    m.role = msg_role::tool;
    m.tool_call_id = string_field(item, "call_id");
    auto text = item_text(item.contains("output") ? item["output"] : json(), where + ".output");
    if (!text) return std::move(text.error());
    m.content = std::move(*text);
    return m;
  }
  if (type != "message") return bad(where + ".type '" + type + "' is not supported");
  auto role_text = string_field(item, "role");
  if (role_text == "developer") role_text = "system";
  auto role = parse_role(role_text);
  if (!role || *role == msg_role::tool)
    return bad(where + ".role must be system, developer, user or assistant");
  m.role = *role;
  auto text = item_text(item.contains("content") ? item["content"] : json(), where + ".content");
  if (!text) return std::move(text.error());
  m.content = std::move(*text);
  return m;
}

} // namespace

caf::expected<compaction_call> parse_compaction_call(std::string_view body) {
  auto doc = json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded()) return bad("request body is not valid JSON");
  if (!doc.is_object()) return bad("request body must be a JSON object");
  compaction_call call;
  auto model = doc.find("model");
  if (model == doc.end() || !model->is_string() || model->get<std::string>().empty())
    return bad("model must be a non-empty string");
  call.model = model->get<std::string>();
  auto input = doc.find("input");
  if (input == doc.end() || !input->is_array() || input->empty())
    return bad("input must be a non-empty array");
  for (size_t i = 0; i < input->size(); ++i) {
    auto m = parse_item((*input)[i], "input[" + std::to_string(i) + "]");
    if (!m) return std::move(m.error());
    call.input.push_back(std::move(*m));
  }
  if (auto it = doc.find("instructions"); it != doc.end() && !it->is_null()) {
    if (!it->is_string()) return bad("instructions must be a string");
    call.instructions = it->get<std::string>();
  }
  return call;
}

std::string compaction_body(const compaction_result& r) {
  json doc = {
    {"id", r.id},
    {"object", "response.compaction"},
    {"created_at", r.created},
    {"model", r.model},
    {"output",
     json::array({{{"type", "message"},
                   {"role", "assistant"},
                   {"content", json::array({{{"type", "output_text"}, {"text", r.summary}}})}},
                  {{"type", "compaction"},
                   {"id", "cmp-" + r.id},
                   {"encrypted_content", "fake-opaque-compaction-" + r.id}}})},
    {"usage",
     {{"input_tokens", r.input_tokens},
      {"output_tokens", r.output_tokens},
      {"total_tokens", r.input_tokens + r.output_tokens}}}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace mneme::fakellm
