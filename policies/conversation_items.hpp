// The items of the Conversations API (docs/api.md "Conversations API"; the Responses
// door's conversations_door.cpp): which stored rows of a session are a conversation's
// items, their ids, one page of a list, the rows a response took as input, and what
// deleting one item does. Pure, standard library only, any thread.
//
// Items of a row (in this order), the ids derived from the row's id so an item keeps
// its id for the life of its row:
//   - "msg_<row>"       a `message`: a system, user or assistant row with text (an
//                       assistant row that only calls tools has none);
//   - "fc_<row>_<k>"    a `function_call`: the k-th call (from 0) of an assistant row;
//   - "fco_<row>"       a `function_call_output`: a tool row.
// The rows that are items: the visible rows of policies/history_match.hpp (not rolled
// back, not a summary, not the daemon's system prompt, not a built-in tool round), live
// or archived: a compaction keeps the items a client added.
//
// Deleting an item deletes its row (every item of the row): the row is rolled back
// (kept, searchable with include_inactive), and the rows after it, rolled back with it
// by one rollback, are appended again as new rows (new ids; the originals stay rolled
// back). Refused, with the reason, when that would change what a compaction replaced
// or leave a function call without its output before later rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

enum class conversation_item_kind : uint8_t { message, function_call, function_call_output };

struct conversation_item_ref {
  int64_t row_id = 0;
  conversation_item_kind kind = conversation_item_kind::message;
  size_t call_index = 0; // function_call only
  friend bool operator==(const conversation_item_ref& a, const conversation_item_ref& b) {
    return a.row_id == b.row_id && a.kind == b.kind && a.call_index == b.call_index;
  }
};

std::string conversation_item_id(const conversation_item_ref& ref);
// The reference an id names; nullopt for anything else (a response's own output ids,
// "msg_<32 hex>", name no row: a row id has 18 decimal digits at most).
std::optional<conversation_item_ref> parse_conversation_item_id(std::string_view id);

// The items of one row, in order (none for a row without text, calls or output role).
std::vector<conversation_item_ref> conversation_items_of(const message& row);

// One page of a list in OpenAI's cursor shape: `after` an item id of the list ("" =
// from the start), `limit` items, ascending or descending.
struct item_page_request {
  std::string after;
  int64_t limit = 20;
  bool ascending = false;
};
struct item_page {
  std::vector<size_t> indexes; // into the list, in the page's order
  bool has_more = false;
  bool after_found = true;     // false: `after` is not an id of the list
};
// `ids`: the list's item ids, ascending.
item_page page_of_items(const std::vector<std::string>& ids, const item_page_request& rq);

// The rows a stored response took as input, from the visible rows of its session before
// its answer row (ascending): after `previous_answer_id` when it continued a previous
// response of the session (> 0); else, when it continued a conversation, after the
// conversation's last assistant row; else (a whole transcript) all of them.
std::vector<message> response_input_rows(const std::vector<message>& visible_before_answer,
                                         int64_t previous_answer_id, bool continued_conversation);

struct item_deletion {
  std::string refusal;            // "" = allowed; else why not (for a 400)
  int64_t rollback_mark = 0;      // roll back every row with id > mark
  std::vector<message> reappend;  // the later live rows, to append again in order (id 0)
};
// `rows`: the session's rows with id >= the item's row id, ascending, every state.
// REQUIRES: rows.front().id is the item's row (else the refusal says it is not found).
item_deletion plan_item_deletion(const std::vector<message>& rows);

} // namespace mneme
