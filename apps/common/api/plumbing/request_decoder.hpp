// Decoding of the daemon's request bodies and query parameters (docs/api.md) into plain
// values, with an exact error for each kind of bad input: a body that is not UTF-8
// (with the byte offset), not JSON (with the parser's position), not an object, a
// missing field, a field of the wrong type, an unknown field, an unknown role, a value
// out of range. Every error is errc::bad_request naming the field. Pure functions;
// safe from any thread; they never throw.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "caf/expected.hpp"

#include "messages/agent_turn.hpp"
#include "messages/errc.hpp"
#include "messages/transcript.hpp"
#include "policies/facts_context.hpp"

namespace mneme::api {

// POST /v1/sessions/{key}/messages
struct append_request {
  std::string user;   // empty = gateway.default_user
  message row;        // role, content, tool_call_id, tool_name, tool_calls
};

// POST /v1/sessions/{key}/turns (docs/api.md "Agent turns"): a user message (`content`,
// not empty) or the results of the pending tool calls (`tool_results`, not empty), never
// both; `tools`, `tool_choice` and the sampling fields validated by type and range.
struct turn_request {
  std::string user;
  turn_input input;
  bool stream = false; // answer as text/event-stream (apps/common/api/routes/turn_stream.hpp)
};

inline constexpr int64_t default_local_radius = 5;

// POST /v1/sessions/{key}/compact
struct compact_request {
  std::optional<int64_t> around_id; // set: T13 around this message id, else T12 whole
  int64_t radius = default_local_radius;
  std::string focus;
};

// POST /v1/sessions/{key}/checkpoints and /rollback
struct name_request {
  std::string name; // not empty
};

// POST /v1/sessions/{key}/checkpoints
struct checkpoint_request {
  std::string name;     // not empty
  bool replace = false; // an existing checkpoint of that name moves to now (else 409)
};

// PUT /v1/users/{user}/facts/{key}
struct fact_put_request {
  std::string value;           // not empty (the store checks its length)
  std::string source_session;  // optional: the session the fact came from
};

// POST /v1/sessions/{key}/facts: which of the user's facts go into the session.
struct facts_inject_request {
  std::string user;            // empty = the session's user (or gateway.default_user)
  std::string query;           // "q": empty = the newest facts, else a full-text search
  int64_t limit = static_cast<int64_t>(facts_context_max_facts); // 1..max_limit
};

// Byte offset of the first byte that is not part of well-formed UTF-8, or nullopt.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// The body as a JSON object (an empty body is an empty object when `empty_is_object`).
caf::expected<nlohmann::json> parse_object(std::string_view body, bool empty_is_object = false);
// parse_object, then only the `known` fields (only_fields).
caf::expected<nlohmann::json> parse_fields(std::string_view body,
                                           std::initializer_list<std::string_view> known,
                                           bool empty_is_object = false);

// The `tools` of a turn body (OpenAI function tools, checked) into in.set_tools and
// in.tools_json, and its sampling fields (temperature, max_tokens, top_p, tool_choice,
// response_format, stop, seed, parallel_tool_calls) into `opt`; shared with the OpenAI
// door. An empty error when every present field is valid.
caf::error decode_turn_tools(const nlohmann::json& obj, turn_input& in);
caf::error decode_turn_sampling(const nlohmann::json& obj, turn_options& opt);

caf::expected<append_request> decode_append(std::string_view body);
caf::expected<turn_request> decode_turn(std::string_view body);
caf::expected<compact_request> decode_compact(std::string_view body);
caf::expected<name_request> decode_name(std::string_view body);
caf::expected<checkpoint_request> decode_checkpoint(std::string_view body);
caf::expected<fact_put_request> decode_fact_put(std::string_view body);
// `max_limit`: the store's largest fact query (an empty body takes every default).
caf::expected<facts_inject_request> decode_facts_inject(std::string_view body,
                                                        int64_t max_limit);

// A query parameter as an integer in [min, max]; `text` is the raw value.
caf::expected<int64_t> parse_int_param(std::string_view name, std::string_view text,
                                       int64_t min, int64_t max);
// "true" / "false" only.
caf::expected<bool> parse_bool_param(std::string_view name, std::string_view text);

// Field readers shared by the decoders of other routes (context_service.cpp): each
// answers errc::bad_request naming the field ("field 'where.name' must be ...") or no
// error; `where` prefixes the names of nested fields.
// Rejects keys of `obj` outside `known`.
caf::error only_fields(const nlohmann::json& obj, std::initializer_list<std::string_view> known,
                       std::string_view where = "");
// `out` = obj[name] when present (a string); `required`: missing is an error.
caf::error string_field(const nlohmann::json& obj, const std::string& name, std::string& out,
                        bool required, std::string_view where = "");
// `out` = obj[name] when present (an integer that fits int64).
caf::error int_field(const nlohmann::json& obj, const std::string& name,
                     std::optional<int64_t>& out);

} // namespace mneme::api
