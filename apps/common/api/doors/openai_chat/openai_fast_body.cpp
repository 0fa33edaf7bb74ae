// The OpenAI door's fast body reader (simdjson); see openai_fast_body.hpp.
#include "apps/common/api/doors/openai_chat/openai_fast_body.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include <simdjson.h>

#include "apps/common/api/doors/openai_chat/openai_wire.hpp"

namespace mneme::api {

// A named namespace, not an anonymous one: the product's unity batches put several
// sources in one translation unit.
namespace fast_body_detail {

using json = nlohmann::json;
using simdjson::dom::element;
using simdjson::dom::element_type;

// Where `k` is in `fields` (openai_wire.hpp's openai_message_fields, openai_call_fields,
// openai_function_fields); -1 when it is not.
int field_index(std::string_view k, std::initializer_list<std::string_view> fields) {
  int i = 0;
  for (auto f : fields) {
    if (k == f)
      return i;
    ++i;
  }
  return -1;
}

// Indexes into those lists (their order); a message's fields from f_first_ignored on are
// the SDK fields the door ignores.
enum msg_field { f_role, f_content, f_name, f_tool_calls, f_tool_call_id, f_first_ignored };
enum call_field { c_id, c_type, c_function, c_index };
enum function_field { fn_name, fn_arguments };

// A key of a message, call or function: known and met once (its bit in `seen`).
bool first_time(int index, unsigned& seen) {
  if (index < 0 || (seen & (1u << index)))
    return false;
  seen |= 1u << index;
  return true;
}

bool text_of(element v, std::string& out) {
  std::string_view s;
  if (v.get_string().get(s))
    return false;
  out.assign(s.data(), s.size());
  return true;
}

// An ignored message field: scalars, or arrays of them at any depth (no object).
bool ignorable(element v) {
  if (v.type() == element_type::OBJECT)
    return false;
  if (v.type() != element_type::ARRAY)
    return true;
  for (element item : simdjson::dom::array(v))
    if (!ignorable(item))
      return false;
  return true;
}

// {"name", "arguments"}: strings; name required.
bool read_function(element v, tool_call& call) {
  simdjson::dom::object fields;
  if (v.get_object().get(fields))
    return false;
  unsigned seen = 0;
  for (auto [key, value] : fields) {
    int i = field_index(key, openai_function_fields);
    if (!first_time(i, seen) || !text_of(value, i == fn_name ? call.name : call.arguments))
      return false;
  }
  return (seen & (1u << fn_name)) != 0;
}

// {"id", "type": "function", "function", "index"}: id and function required.
bool read_call(element v, std::vector<tool_call>& calls) {
  simdjson::dom::object fields;
  if (v.get_object().get(fields))
    return false;
  tool_call call;
  unsigned seen = 0;
  for (auto [key, value] : fields) {
    int i = field_index(key, openai_call_fields);
    if (!first_time(i, seen))
      return false;
    bool ok = false;
    switch (i) {
    case c_id:
      ok = text_of(value, call.id);
      break;
    case c_type: {
      std::string_view t;
      ok = !value.get_string().get(t) && t == "function";
      break;
    }
    case c_function:
      ok = read_function(value, call);
      break;
    default: // c_index
      ok = value.is_number() || value.is_null();
    }
    if (!ok)
      return false;
  }
  if (!(seen & (1u << c_id)) || !(seen & (1u << c_function)))
    return false;
  calls.push_back(std::move(call));
  return true;
}

// One element of `messages`, by decode_openai_message's rules (openai_wire.cpp).
bool read_message(element v, std::vector<message>& out) {
  simdjson::dom::object fields;
  if (v.get_object().get(fields))
    return false;
  unsigned seen = 0;
  std::string role, content, name, tool_call_id;
  bool content_given = false; // a string; null counts as absent
  std::vector<tool_call> calls;
  for (auto [key, value] : fields) {
    int i = field_index(key, openai_message_fields);
    if (!first_time(i, seen))
      return false;
    bool ok = false;
    switch (i) {
    case f_role:
      ok = text_of(value, role);
      break;
    case f_content:
      ok = value.is_null() || (content_given = text_of(value, content));
      break;
    case f_name:
      ok = text_of(value, name);
      break;
    case f_tool_call_id:
      ok = text_of(value, tool_call_id);
      break;
    case f_tool_calls:
      if (value.is_null()) {
        ok = true;
      } else if (value.type() == element_type::ARRAY) {
        ok = true;
        for (element call : simdjson::dom::array(value))
          if (!read_call(call, calls)) {
            ok = false;
            break;
          }
      }
      break;
    default:
      ok = ignorable(value);
    }
    if (!ok)
      return false;
  }
  if (!(seen & (1u << f_role)))
    return false;
  auto parsed = role == "developer" ? std::optional<msg_role>{msg_role::system} : parse_role(role);
  if (!parsed)
    return false;
  bool has_calls = !calls.empty();
  bool has_call_id = !tool_call_id.empty();
  if ((*parsed == msg_role::tool) != has_call_id)
    return false;
  if (!content_given && !(*parsed == msg_role::assistant && has_calls))
    return false;
  message m;
  m.role = *parsed;
  m.content = std::move(content);
  m.tool_calls = std::move(calls);
  m.tool_call_id = std::move(tool_call_id);
  if (m.role == msg_role::tool)
    m.tool_name = std::move(name);
  out.push_back(std::move(m));
  return true;
}

// `v` as nlohmann's parser builds it (a non-negative integer unsigned, a negative one
// signed, a number with a fraction or an exponent a double; "-0" is simdjson's int64 0,
// here unsigned where nlohmann's is signed: equal, and dumped "0", either way); false for
// a key met twice in one object.
bool to_json(element v, json& out) {
  switch (v.type()) {
  case element_type::OBJECT: {
    out = json::object();
    for (auto [key, value] : simdjson::dom::object(v)) {
      std::string k{key};
      if (out.contains(k))
        return false;
      if (!to_json(value, out[k]))
        return false;
    }
    return true;
  }
  case element_type::ARRAY:
    out = json::array();
    for (element item : simdjson::dom::array(v)) {
      out.emplace_back();
      if (!to_json(item, out.back()))
        return false;
    }
    return true;
  case element_type::INT64: {
    int64_t n = int64_t(v);
    if (n >= 0)
      out = json::number_unsigned_t(n);
    else
      out = json::number_integer_t(n);
    return true;
  }
  case element_type::UINT64:
    out = json::number_unsigned_t(uint64_t(v));
    return true;
  case element_type::DOUBLE:
    out = json::number_float_t(double(v));
    return true;
  case element_type::STRING:
    out = std::string{std::string_view(v)};
    return true;
  case element_type::BOOL:
    out = bool(v);
    return true;
  case element_type::NULL_VALUE:
    out = nullptr;
    return true;
  }
  return false;
}

// A thread's parser is reused so that its buffers are allocated once (their pages
// faulted in once); one that grew past this for a larger body is replaced after it, so a
// thread keeps at most ~14 bytes of address space per byte of it, a few MiB resident.
constexpr size_t kept_parser_bytes = 1024 * 1024;

} // namespace fast_body_detail

std::optional<openai_fast_body> fast_openai_body(std::string_view body) {
  using namespace fast_body_detail;
  thread_local simdjson::dom::parser parser;
  struct shrink_after {
    size_t size;
    ~shrink_after() {
      if (size > kept_parser_bytes)
        parser = simdjson::dom::parser{};
    }
  } shrink{body.size()};
  element doc;
  if (parser.parse(body.data(), body.size(), true).get(doc))
    return std::nullopt; // the full decoder names whatever this was
  simdjson::dom::object top;
  if (doc.get_object().get(top))
    return std::nullopt;
  openai_fast_body out;
  out.rest = json::object();
  bool saw_messages = false;
  try {
    for (auto [key, value] : top) {
      if (key == "messages") {
        simdjson::dom::array rows;
        if (saw_messages || value.get_array().get(rows))
          return std::nullopt; // a duplicate or a wrong type: the full decoder names it
        saw_messages = true;
        out.messages.reserve(rows.size());
        for (element row : rows)
          if (!read_message(row, out.messages))
            return std::nullopt;
        continue;
      }
      std::string k{key};
      if (out.rest.contains(k) || !to_json(value, out.rest[k]))
        return std::nullopt;
    }
  } catch (...) {
    return std::nullopt; // an allocation failed: the full decoder's to answer
  }
  if (!saw_messages || out.messages.empty()) // "messages is empty" is the full decoder's
    return std::nullopt;
  return out;
}

} // namespace mneme::api
