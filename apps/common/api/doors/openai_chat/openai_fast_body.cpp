// The OpenAI door's one-pass body reader; see openai_fast_body.hpp.
#include "apps/common/api/doors/openai_chat/openai_fast_body.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>

#include "apps/common/api/plumbing/json_duplicates.hpp"

namespace mneme::api {

// A named namespace, not an anonymous one: the product's unity batches put several
// sources in one translation unit.
namespace fast_body_detail {

using json = nlohmann::json;

// The keys a message, a tool call and a call's function may hold (openai_wire.cpp's
// message_fields, call_fields and function_fields, in this order); -1 for any other.
int field_index(const std::string& k, std::initializer_list<const char*> fields) {
  int i = 0;
  for (const char* f : fields) {
    if (k == f)
      return i;
    ++i;
  }
  return -1;
}

enum msg_field { f_role, f_content, f_name, f_tool_calls, f_tool_call_id, f_first_ignored };
enum call_field { c_id, c_type, c_function, c_index };
enum function_field { fn_name, fn_arguments };

int message_field(const std::string& k) {
  return field_index(k, {"role", "content", "name", "tool_calls", "tool_call_id", "refusal",
                         "annotations", "audio", "function_call", "reasoning_content"});
}

// One message's members as they arrive; checked at its end (finish_message).
struct message_parts {
  unsigned seen = 0; // bit per msg_field met
  std::string role;
  bool content_given = false; // a string; null counts as absent
  std::string content;
  std::string name;
  std::string tool_call_id;
  std::vector<tool_call> calls;
};

struct call_parts {
  unsigned seen = 0;    // bit per call_field met
  unsigned fn_seen = 0; // bit per function_field met
  tool_call call;
};

// The SAX reader (the interface of json::sax_parse). Every handler answers false to
// decline, which stops the parse. Invariant: `where` says which value comes next or
// which container is open; `rest_depth` counts the containers open inside a forwarded
// top-level value; `skip_depth` the arrays open inside an ignored message field.
class reader {
public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  reader(json& rest, std::vector<message>& out)
      : rest_builder_(rest, duplicate_, false), out_(out) {}

  bool null() { return scalar(kind::null, nullptr); }
  bool boolean(bool v) {
    return where_ == at::rest_value ? forward_scalar(v) : scalar(kind::other, nullptr);
  }
  bool number_integer(number_integer_t v) {
    return where_ == at::rest_value ? forward_scalar(v) : scalar(kind::number, nullptr);
  }
  bool number_unsigned(number_unsigned_t v) {
    return where_ == at::rest_value ? forward_scalar(v) : scalar(kind::number, nullptr);
  }
  bool number_float(number_float_t v, const string_t& s) {
    if (where_ == at::rest_value) {
      if (!rest_builder_.number_float(v, s))
        return false;
      return value_done();
    }
    return scalar(kind::number, nullptr);
  }
  bool string(string_t& v) {
    if (where_ == at::rest_value) {
      if (!rest_builder_.string(v))
        return false;
      return value_done();
    }
    return scalar(kind::text, &v);
  }
  bool binary(binary_t&) { return false; }

  bool key(string_t& k) {
    switch (where_) {
    case at::top:
      if (k == "messages") {
        if (saw_messages_)
          return false; // a duplicate: the full decoder names it
        saw_messages_ = true;
        where_ = at::messages_value;
        return true;
      }
      where_ = at::rest_value;
      rest_depth_ = 0;
      return rest_builder_.key(k);
    case at::rest_value:
      return rest_builder_.key(k);
    case at::message:
      return member(message_field(k), msg_.seen, pending_);
    case at::call:
      return member(field_index(k, {"id", "type", "function", "index"}), call_.seen, pending_);
    case at::function:
      return member(field_index(k, {"name", "arguments"}), call_.fn_seen, pending_);
    default:
      return false;
    }
  }

  bool start_object(std::size_t) {
    switch (where_) {
    case at::start:
      where_ = at::top;
      return rest_builder_.start_object(0);
    case at::rest_value:
      ++rest_depth_;
      return rest_builder_.start_object(0);
    case at::messages:
      msg_ = message_parts{};
      where_ = at::message;
      return true;
    case at::calls:
      call_ = call_parts{};
      where_ = at::call;
      return true;
    case at::call:
      if (pending_ != c_function)
        return false;
      where_ = at::function;
      return true;
    default:
      return false; // an object in a message field, an ignored field or the array
    }
  }

  bool end_object() {
    switch (where_) {
    case at::rest_value:
      return closed_forwarded(rest_builder_.end_object());
    case at::top:
      where_ = at::done;
      return rest_builder_.end_object();
    case at::message:
      where_ = at::messages;
      return finish_message();
    case at::call:
      if (!(call_.seen & (1u << c_id)) || !(call_.seen & (1u << c_function)))
        return false;
      msg_.calls.push_back(std::move(call_.call));
      where_ = at::calls;
      return true;
    case at::function:
      if (!(call_.fn_seen & (1u << fn_name)))
        return false;
      where_ = at::call;
      return true;
    default:
      return false;
    }
  }

  bool start_array(std::size_t) {
    switch (where_) {
    case at::rest_value:
      ++rest_depth_;
      return rest_builder_.start_array(0);
    case at::messages_value:
      where_ = at::messages;
      return true;
    case at::message:
      if (pending_ == f_tool_calls) {
        where_ = at::calls;
        return true;
      }
      if (pending_ >= f_first_ignored) {
        where_ = at::skip;
        skip_depth_ = 1;
        return true;
      }
      return false;
    case at::skip:
      ++skip_depth_;
      return true;
    default:
      return false;
    }
  }

  bool end_array() {
    switch (where_) {
    case at::rest_value:
      return closed_forwarded(rest_builder_.end_array());
    case at::messages:
      where_ = at::top;
      return !out_.empty(); // "messages is empty" is the full decoder's to say
    case at::calls:
      where_ = at::message;
      return true;
    case at::skip:
      if (--skip_depth_ == 0)
        where_ = at::message;
      return true;
    default:
      return false;
    }
  }

  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

  // The whole body was one object with a non-empty messages array and no key twice.
  bool complete() const { return where_ == at::done && saw_messages_ && duplicate_.empty(); }

private:
  enum class at { start, top, rest_value, messages_value, messages, message, skip, calls, call,
                  function, done };
  enum class kind { null, text, number, other };

  // A key of a message, call or function: known and met once (its bit in `seen`).
  static bool member(int index, unsigned& seen, int& pending) {
    if (index < 0 || (seen & (1u << index)))
      return false;
    seen |= 1u << index;
    pending = index;
    return true;
  }

  template <class Value>
  bool forward_scalar(Value v) {
    bool ok;
    if constexpr (std::is_same_v<Value, bool>)
      ok = rest_builder_.boolean(v);
    else if constexpr (std::is_same_v<Value, number_integer_t>)
      ok = rest_builder_.number_integer(v);
    else
      ok = rest_builder_.number_unsigned(v);
    return ok && value_done();
  }

  // A container of a forwarded value was closed (`forwarded`: the builder took it).
  bool closed_forwarded(bool forwarded) {
    if (!forwarded)
      return false;
    --rest_depth_;
    return value_done();
  }

  // A forwarded top-level value may have ended.
  bool value_done() {
    if (rest_depth_ == 0)
      where_ = at::top;
    return true;
  }

  bool scalar(kind k, string_t* text) {
    switch (where_) {
    case at::rest_value:
      if (!rest_builder_.null())
        return false;
      return value_done();
    case at::skip:
      return true;
    case at::message:
      return message_scalar(k, text);
    case at::call:
      switch (pending_) {
      case c_id:
        if (k != kind::text)
          return false;
        call_.call.id = std::move(*text);
        return true;
      case c_type:
        return k == kind::text && *text == "function";
      case c_index:
        return k == kind::number || k == kind::null;
      default:
        return false; // function must be an object
      }
    case at::function:
      if (k != kind::text)
        return false;
      (pending_ == fn_name ? call_.call.name : call_.call.arguments) = std::move(*text);
      return true;
    default:
      return false;
    }
  }

  bool message_scalar(kind k, string_t* text) {
    switch (pending_) {
    case f_role:
      if (k != kind::text)
        return false;
      msg_.role = std::move(*text);
      return true;
    case f_content:
      if (k == kind::null)
        return true;
      if (k != kind::text)
        return false;
      msg_.content = std::move(*text);
      msg_.content_given = true;
      return true;
    case f_name:
    case f_tool_call_id:
      if (k != kind::text)
        return false;
      (pending_ == f_name ? msg_.name : msg_.tool_call_id) = std::move(*text);
      return true;
    case f_tool_calls:
      return k == kind::null;
    default:
      return true; // an ignored field holding a scalar
    }
  }

  // decode_openai_message's rules (openai_wire.cpp), on the parts read.
  bool finish_message() {
    if (!(msg_.seen & (1u << f_role)))
      return false;
    auto role = msg_.role == "developer" ? std::optional<msg_role>{msg_role::system}
                                         : parse_role(msg_.role);
    if (!role)
      return false;
    bool has_calls = !msg_.calls.empty();
    bool has_call_id = !msg_.tool_call_id.empty();
    if ((*role == msg_role::tool) != has_call_id)
      return false;
    if (!msg_.content_given && !(*role == msg_role::assistant && has_calls))
      return false;
    message m;
    m.role = *role;
    m.content = std::move(msg_.content);
    m.tool_calls = std::move(msg_.calls);
    m.tool_call_id = std::move(msg_.tool_call_id);
    if (m.role == msg_role::tool)
      m.tool_name = std::move(msg_.name);
    out_.push_back(std::move(m));
    return true;
  }

  std::string duplicate_;
  json_duplicates_detail::noting_builder<json> rest_builder_;
  std::vector<message>& out_;
  at where_ = at::start;
  bool saw_messages_ = false;
  int rest_depth_ = 0;
  int skip_depth_ = 0;
  int pending_ = -1;
  message_parts msg_;
  call_parts call_;
};

} // namespace fast_body_detail

std::optional<openai_fast_body> fast_openai_body(std::string_view body) {
  using nlohmann::json;
  openai_fast_body out;
  out.messages.reserve(64);
  fast_body_detail::reader r{out.rest, out.messages};
  bool parsed = false;
  try {
    parsed = json::sax_parse(body.begin(), body.end(), &r);
  } catch (...) {
    return std::nullopt; // the full decoder names whatever this was
  }
  if (!parsed || !r.complete())
    return std::nullopt;
  return out;
}

} // namespace mneme::api
