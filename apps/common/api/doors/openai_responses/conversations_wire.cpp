// The Conversations API's wire format; see conversations_wire.hpp.
#include "apps/common/api/doors/openai_responses/conversations_wire.hpp"

#include "apps/common/api/doors/openai_responses/responses_wire.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/errc.hpp"

namespace mneme::api {

namespace {

using json = nlohmann::json;

caf::error cw_refusal(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

// obj[name] when present and not null: nullptr otherwise.
const json* cw_given(const json& obj, const char* name) {
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

caf::error check_metadata(const json& md) {
  if (!md.is_object())
    return cw_refusal(std::string{"field 'metadata' must be an object, not "} + md.type_name());
  if (md.size() > conversation_metadata_max_pairs)
    return cw_refusal("field 'metadata' holds " + std::to_string(md.size())
                      + " pairs: at most " + std::to_string(conversation_metadata_max_pairs));
  for (auto it = md.begin(); it != md.end(); ++it) {
    auto field = "field 'metadata." + it.key() + "'";
    if (it.key().empty() || it.key().size() > conversation_metadata_max_key)
      return cw_refusal(field + ": a key holds 1 to "
                        + std::to_string(conversation_metadata_max_key) + " characters");
    if (!it->is_string())
      return cw_refusal(field + " must be a string, not " + it->type_name());
    if (it->get_ref<const std::string&>().size() > conversation_metadata_max_value)
      return cw_refusal(field + " holds more than "
                        + std::to_string(conversation_metadata_max_value) + " characters");
  }
  return {};
}

caf::expected<std::vector<message>> items_field(const json& j, bool required) {
  auto items = cw_given(j, "items");
  if (!items) {
    if (required)
      return cw_refusal("missing field 'items'");
    return std::vector<message>{};
  }
  if (!items->is_array())
    return cw_refusal(std::string{"field 'items' must be an array of items, not "}
                      + items->type_name());
  if (items->size() > conversation_items_max_per_request)
    return cw_refusal("field 'items' holds " + std::to_string(items->size())
                      + " items: at most "
                      + std::to_string(conversation_items_max_per_request) + " per request");
  if (items->empty())
    return required ? caf::expected<std::vector<message>>{cw_refusal("field 'items' is empty")}
                    : std::vector<message>{};
  return decode_response_items(*items, "items");
}

} // namespace

caf::expected<conversation_create> decode_conversation_create(std::string_view body) {
  conversation_create out;
  auto j = parse_object(body, true); // an empty body: an empty conversation
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"items", "metadata"}))
    return err;
  auto items = items_field(*j, false);
  if (!items)
    return items.error();
  out.items = std::move(*items);
  if (auto md = cw_given(*j, "metadata")) {
    if (auto err = check_metadata(*md))
      return err;
    out.metadata = *md;
  }
  return out;
}

caf::expected<json> decode_conversation_update(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"metadata"}))
    return err;
  auto md = cw_given(*j, "metadata");
  if (!md)
    return cw_refusal("missing field 'metadata'");
  if (auto err = check_metadata(*md))
    return err;
  return *md;
}

caf::expected<std::vector<message>> decode_conversation_items(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  if (auto err = only_fields(*j, {"items"}))
    return err;
  return items_field(*j, true);
}

caf::expected<item_page_request> decode_item_page(const query_params& q) {
  item_page_request out;
  if (auto after = q.find("after"))
    out.after = *after;
  if (auto limit = q.find("limit")) {
    auto n = parse_int_param("limit", *limit, 1, 100);
    if (!n)
      return n.error();
    out.limit = *n;
  }
  if (auto order = q.find("order")) {
    if (*order != "asc" && *order != "desc")
      return cw_refusal("query parameter 'order' is '" + *order + "': asc or desc");
    out.ascending = *order == "asc";
  }
  return out;
}

json conversation_object(const std::string& id, int64_t created_at_s, const json& metadata) {
  return {{"id", id},
          {"object", "conversation"},
          {"created_at", created_at_s},
          {"metadata", metadata.is_object() ? metadata : json::object()}};
}

json conversation_deleted_object(const std::string& id) {
  return {{"id", id}, {"object", "conversation.deleted"}, {"deleted", true}};
}

json conversation_item_json(const message& row, const conversation_item_ref& ref) {
  auto id = conversation_item_id(ref);
  switch (ref.kind) {
    case conversation_item_kind::function_call: {
      const auto& call = row.tool_calls.at(ref.call_index);
      return {{"type", "function_call"}, {"id", id},          {"call_id", call.id},
              {"name", call.name},       {"arguments", call.arguments},
              {"status", "completed"}};
    }
    case conversation_item_kind::function_call_output:
      return {{"type", "function_call_output"}, {"id", id}, {"call_id", row.tool_call_id},
              {"output", row.content}, {"status", "completed"}};
    case conversation_item_kind::message: break;
  }
  bool assistant = row.role == msg_role::assistant;
  json part = {{"type", assistant ? "output_text" : "input_text"}, {"text", row.content}};
  if (assistant)
    part["annotations"] = json::array();
  return {{"type", "message"},
          {"id", id},
          {"status", "completed"},
          {"role", std::string{to_string(row.role)}},
          {"content", json::array({part})}};
}

item_list items_of_rows(const std::vector<message>& rows) {
  item_list out;
  for (const auto& row : rows)
    for (const auto& ref : conversation_items_of(row)) {
      out.ids.push_back(conversation_item_id(ref));
      out.items.push_back(conversation_item_json(row, ref));
    }
  return out;
}

json item_list_page(const item_list& list, const item_page& page) {
  auto data = json::array();
  for (auto i : page.indexes)
    data.push_back(list.items[i]);
  json first = page.indexes.empty() ? json(nullptr) : json(list.ids[page.indexes.front()]);
  json last = page.indexes.empty() ? json(nullptr) : json(list.ids[page.indexes.back()]);
  return {{"object", "list"},
          {"data", std::move(data)},
          {"first_id", std::move(first)},
          {"last_id", std::move(last)},
          {"has_more", page.has_more}};
}

} // namespace mneme::api
