// The wire format of the Conversations API of the Responses door (docs/api.md
// "Conversations API"): the bodies of POST /v1/conversations, POST
// /v1/conversations/{id} and POST /v1/conversations/{id}/items decoded, a list's query,
// and the answers — the `conversation` object, items, OpenAI's list — built from stored
// rows (policies/conversation_items.hpp names the items). Errors are errc::bad_request
// naming the field. Pure functions; safe from any thread; they never throw.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "apps/common/api/plumbing/route_table.hpp"
#include "messages/transcript.hpp"
#include "policies/conversation_items.hpp"

namespace mneme::api {

// OpenAI's limits on metadata: 16 pairs, keys of 64 characters, string values of 512.
inline constexpr size_t conversation_metadata_max_pairs = 16;
inline constexpr size_t conversation_metadata_max_key = 64;
inline constexpr size_t conversation_metadata_max_value = 512;
// Items one POST may add (OpenAI's limit for a create and for an items create).
inline constexpr size_t conversation_items_max_per_request = 20;

struct conversation_create {
  std::vector<message> items;                      // `items` as session messages
  nlohmann::json metadata = nlohmann::json::object();
};

// POST /v1/conversations: `items` (Responses input items, responses_wire.hpp) and
// `metadata`, both optional; any other field is refused naming it.
caf::expected<conversation_create> decode_conversation_create(std::string_view body);
// POST /v1/conversations/{id}: `metadata` (required).
caf::expected<nlohmann::json> decode_conversation_update(std::string_view body);
// POST /v1/conversations/{id}/items: `items` (required, 1..20).
caf::expected<std::vector<message>> decode_conversation_items(std::string_view body);

// A list's query: `after`, `limit` (1..100, default 20), `order` (asc | desc, default
// desc); `include` is accepted and ignored (no item carries what it asks for).
caf::expected<item_page_request> decode_item_page(const query_params& q);

// {"id","object":"conversation","created_at","metadata"}
nlohmann::json conversation_object(const std::string& id, int64_t created_at_s,
                                   const nlohmann::json& metadata);
// {"id","object":"conversation.deleted","deleted":true}
nlohmann::json conversation_deleted_object(const std::string& id);

// The item `ref` of `row` (a `message` with input_text parts — output_text for the
// assistant —, a `function_call`, a `function_call_output`).
nlohmann::json conversation_item_json(const message& row, const conversation_item_ref& ref);

// Every item of `rows` (in order) with its id.
struct item_list {
  std::vector<std::string> ids;
  std::vector<nlohmann::json> items;
};
item_list items_of_rows(const std::vector<message>& rows);

// {"object":"list","data","first_id","last_id","has_more"}: one page of `list`.
nlohmann::json item_list_page(const item_list& list, const item_page& page);

} // namespace mneme::api
