// The Conversations API of the Responses door (issue 43 item 4, docs/api.md
// "Conversations API") and GET /v1/responses/{id}/input_items (item 3), registered by
// conversations_routes.cpp.
//
// A conversation is a session key. POST /v1/conversations makes one: "conv_" and 128
// random bits from the kernel (store/os_random.hpp), its record (the `conversation`
// object: created_at, metadata) stored beside the door's responses
// (store/response_records.hpp), its initial items appended to the key's session. Any
// other session key (opened by the door, the chat door, the sessions API) is a
// conversation too, without metadata, created when its session was; a "conv_" id without
// its record is unknown (404). `responses.create` with `conversation` runs on that key's
// session (responses_door.hpp).
// Items are the session's stored rows (policies/conversation_items.hpp: which rows, their
// ids, what deleting one does). DELETE of a conversation marks its record deleted: the id
// is then answered 404 here and refused by `responses.create`; its rows stay, nothing is
// erased (the sessions API still reaches the key). A plain session key has no record to
// delete (400).
// Scopes: a user token reaches only its user's conversations and responses; another
// user's is answered exactly like an unknown id (404).
// Concurrency: an item delete or add holds the conversation's key as a response on it
// does (doors/door_conversation.hpp "One conversation per key"): while a response is on
// its way it is refused at once, changing nothing (errc::session_busy: 429
// rate_limit_error + Retry-After, as the door answers a second response), and a response
// arriving meanwhile is refused so; the rows it reads to plan are read under the hold.
//
// Counters (GET /metrics, docs/api.md): every request of these routes once, by route
// (`op`), and those answered with an error (4xx/5xx in OpenAI's shape; a request
// forwarded to the node serving its key is counted there as an error only if it fails
// there): mneme_door_conversation_requests_total{door="responses",op} and
// mneme_door_conversation_errors_total{door="responses",op}, every op rendered from 0.
//
// Threads: every member but metrics_text() runs in the request's actor; metrics_text()
// from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/logger.h>

#include "apps/common/api/doors/door_conversation.hpp"
#include "apps/common/api/doors/door_request.hpp"

namespace mneme::api {

struct conversations_config {
  conversation_config conversation;     // gateway, storage, timeouts, visibility
  std::string default_user = "default"; // the owner of a conversation an admin creates
  std::function<time_ms()> clock = system_clock_ms;
  std::shared_ptr<spdlog::logger> log;  // null = no logging
  // The Responses door's conversations: an item delete or add holds its key against
  // them (door_conversations::hold_key), so it never runs beside a response on the key.
  // nullopt: not held (tests of this door alone).
  std::optional<door_conversations> responses;
};

class conversations_door {
 public:
  explicit conversations_door(conversations_config cfg);

  void create(const door_request_ptr& r);                          // POST /v1/conversations
  void fetch(const door_request_ptr& r, const std::string& id);    // GET .../{id}
  void update(const door_request_ptr& r, const std::string& id);   // POST .../{id}
  void remove(const door_request_ptr& r, const std::string& id);   // DELETE .../{id}
  void list_items(const door_request_ptr& r, const std::string& id);  // GET .../{id}/items
  void add_items(const door_request_ptr& r, const std::string& id);   // POST .../{id}/items
  void fetch_item(const door_request_ptr& r, const std::string& id, const std::string& item);
  void remove_item(const door_request_ptr& r, const std::string& id, const std::string& item);
  // GET /v1/responses/{id}/input_items
  void input_items(const door_request_ptr& r, const std::string& response_id);
  std::string metrics_text() const;

  // The routes as counted (the `op` label; conversation_op_names).
  enum class op : uint8_t {
    create, get, update, remove, items_list, items_add, item_get, item_delete, input_items
  };
  static constexpr size_t op_count = 9;

  struct shared; // conversations_state.hpp

 private:
  std::shared_ptr<shared> s_;
};

class route_registry; // plumbing/route_registry.hpp
struct api_state;     // plumbing/api_state.hpp
// Adds the rows of this API (conversations_routes.cpp); called by the Responses door's
// routes (responses_routes.cpp) with that door's conversations.
void add_openai_conversations_routes(route_registry& r, const api_state& s,
                                     const door_conversations& responses);

} // namespace mneme::api
