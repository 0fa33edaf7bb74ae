// The compaction half of the Responses door's wire format; see responses_compact_wire.hpp.
#include "apps/common/api/doors/openai_responses/responses_compact_wire.hpp"

#include <cstdlib>

#include "messages/errc.hpp"

namespace mneme::api {

namespace {

using json = nlohmann::json;

caf::error cw_refusal(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

// A positive integer of `obj[name]`, 0 when absent; -1 when present and not one.
int64_t cw_positive(const json& obj, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null())
    return 0;
  if (!it->is_number_integer() || it->get<int64_t>() < 1)
    return -1;
  return it->get<int64_t>();
}

// The range an id "cmp_<first>_<last>" names; false when it names none.
bool cw_range_of_id(const std::string& id, int64_t& first, int64_t& last) {
  if (id.rfind("cmp_", 0) != 0)
    return false;
  auto cut = id.find('_', 4);
  if (cut == std::string::npos)
    return false;
  char* end = nullptr;
  auto a = std::strtoll(id.c_str() + 4, &end, 10);
  if (end != id.c_str() + cut)
    return false;
  auto b = std::strtoll(id.c_str() + cut + 1, &end, 10);
  if (*end != '\0' || end == id.c_str() + cut + 1)
    return false;
  first = a;
  last = b;
  return true;
}

json cw_text_message(const char* role, const char* part, const std::string& text) {
  return {{"type", "message"},
          {"role", role},
          {"content", json::array({{{"type", part}, {"text", text}}})}};
}

} // namespace

std::string compaction_item_id(int64_t first, int64_t last) {
  return "cmp_" + std::to_string(first) + "_" + std::to_string(last);
}

caf::expected<message> decode_compaction_item(const json& item, const std::string& at) {
  message m;
  m.role = msg_role::user;
  m.is_summary = true;
  auto text = item.find("encrypted_content");
  if (text == item.end() || !text->is_string())
    return cw_refusal("field '" + at + ".encrypted_content' must be a string (the summary)");
  m.content = text->get<std::string>();
  auto rows = item.find("replaced_rows");
  if (rows != item.end() && rows->is_object()) {
    m.replaced_first_id = cw_positive(*rows, "first_id");
    m.replaced_last_id = cw_positive(*rows, "last_id");
  } else if (auto id = item.find("id"); id != item.end() && id->is_string()) {
    cw_range_of_id(id->get<std::string>(), m.replaced_first_id, m.replaced_last_id);
  }
  if (m.replaced_first_id < 1 || m.replaced_last_id < m.replaced_first_id)
    return cw_refusal("field '" + at
                      + "': a compaction item mneme did not write (its replaced_rows, or an id "
                        "cmp_<first>_<last>, names the rows it replaced)");
  return m;
}

caf::error decode_context_management(const json& body, turn_options& out) {
  auto cm = body.find("context_management");
  if (cm == body.end() || cm->is_null())
    return {};
  if (!cm->is_array())
    return cw_refusal(std::string{"field 'context_management' must be an array, not "}
                      + cm->type_name());
  for (size_t i = 0; i < cm->size(); ++i) {
    const auto& e = (*cm)[i];
    auto at = "context_management[" + std::to_string(i) + "]";
    auto type = e.is_object() ? e.find("type") : e.end();
    if (!e.is_object() || type == e.end() || !type->is_string())
      return cw_refusal("field '" + at + "' must be an object with a string type");
    if (*type != "compaction")
      return cw_refusal("field '" + at + ".type' is \"" + type->get<std::string>()
                        + "\": only compaction is supported");
    auto n = cw_positive(e, "compact_threshold");
    if (n < 0)
      return cw_refusal("field '" + at + ".compact_threshold' must be an integer of 1 or more");
    out.compact_threshold = n;
  }
  return {};
}

json window_items(const std::vector<message>& window) {
  auto out = json::array();
  for (const auto& m : window) {
    if (m.is_summary) {
      out.push_back({{"type", "compaction"},
                     {"id", compaction_item_id(m.replaced_first_id, m.replaced_last_id)},
                     {"encrypted_content", m.content},
                     {"created_by", "mneme"},
                     {"replaced_rows",
                      {{"first_id", m.replaced_first_id}, {"last_id", m.replaced_last_id}}}});
      continue;
    }
    switch (m.role) {
      case msg_role::system: out.push_back(cw_text_message("system", "input_text", m.content)); break;
      case msg_role::user: out.push_back(cw_text_message("user", "input_text", m.content)); break;
      case msg_role::assistant:
        if (!m.content.empty() || m.tool_calls.empty())
          out.push_back(cw_text_message("assistant", "output_text", m.content));
        for (const auto& c : m.tool_calls)
          out.push_back(
            {{"type", "function_call"}, {"call_id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
        break;
      case msg_role::tool:
        out.push_back(
          {{"type", "function_call_output"}, {"call_id", m.tool_call_id}, {"output", m.content}});
        break;
    }
  }
  return out;
}

json to_compacted_object(const compacted_answer& a) {
  return {{"id", a.id},
          {"object", "response.compaction"},
          {"created_at", a.created_at},
          {"output", window_items(a.window)},
          {"usage",
           {{"input_tokens", a.input_tokens},
            {"input_tokens_details", {{"cached_tokens", 0}}},
            {"output_tokens", a.output_tokens},
            {"output_tokens_details", {{"reasoning_tokens", 0}}},
            {"total_tokens", a.input_tokens + a.output_tokens}}}};
}

} // namespace mneme::api
