// The OpenAI door's wire format; see openai_wire.hpp.
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"

#include <initializer_list>
#include <string_view>

#include "actors/llm/llm_wire.hpp"
#include "apps/common/api/doors/openai_chat/openai_fast_body.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/errc.hpp"

namespace mneme::api {

// Namespace-scope initializer lists: their arrays live as long as the program.
const std::initializer_list<std::string_view> openai_message_fields = {
  "role", "content", "name", "tool_calls", "tool_call_id",
  "refusal", "annotations", "audio", "function_call", "reasoning_content"};
const std::initializer_list<std::string_view> openai_call_fields = {"id", "type", "function",
                                                                     "index"};
const std::initializer_list<std::string_view> openai_function_fields = {"name", "arguments"};

namespace {

using json = nlohmann::json;

caf::error wire_refusal(std::string what) { return caf::make_error(errc::bad_request, std::move(what)); }

std::string wire_field(const std::string& where, const char* name) {
  return where.empty() ? std::string{name} : where + "." + name;
}

caf::error wire_text(const json& obj, const char* name, const std::string& where,
                      std::string& out, bool required) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) {
    if (required)
      return wire_refusal("missing field '" + wire_field(where, name) + "'");
    return {};
  }
  if (!it->is_string())
    return wire_refusal("field '" + wire_field(where, name) + "' must be a string, not "
               + it->type_name());
  out = it->get<std::string>();
  return {};
}

// The text of `content`: a string, null (empty), or an array of {"type":"text","text"}.
caf::error content_of(const json& j, const std::string& where, std::string& out) {
  auto it = j.find("content");
  if (it == j.end() || it->is_null())
    return {};
  if (it->is_string()) {
    out = it->get<std::string>();
    return {};
  }
  if (!it->is_array())
    return wire_refusal("field '" + where + ".content' must be a string, an array of text parts "
                   "or null, not " + it->type_name());
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& part = (*it)[i];
    auto at = where + ".content[" + std::to_string(i) + "]";
    std::string type;
    if (!part.is_object())
      return wire_refusal("field '" + at + "' must be an object, not " + part.type_name());
    if (auto err = string_field(part, "type", type, true, at + "."))
      return err;
    if (type != "text")
      return wire_refusal("field '" + at + ".type' is \"" + type
                     + "\": only text parts are supported");
    std::string text;
    if (auto err = string_field(part, "text", text, true, at + "."))
      return err;
    out += text;
  }
  return {};
}

caf::error tool_calls_of(const json& j, const std::string& where, std::vector<tool_call>& out) {
  auto it = j.find("tool_calls");
  if (it == j.end() || it->is_null())
    return {};
  if (!it->is_array())
    return wire_refusal("field '" + where + ".tool_calls' must be an array, not " + it->type_name());
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& c = (*it)[i];
    auto at = where + ".tool_calls[" + std::to_string(i) + "]";
    if (!c.is_object())
      return wire_refusal("field '" + at + "' must be an object, not " + c.type_name());
    if (auto err = only_fields(c, openai_call_fields, at + "."))
      return err;
    tool_call call;
    std::string type = "function";
    if (auto err = string_field(c, "id", call.id, true, at + "."))
      return err;
    if (auto err = string_field(c, "type", type, false, at + "."))
      return err;
    if (type != "function")
      return wire_refusal("field '" + at + ".type' must be \"function\", not \"" + type + "\"");
    auto fn = c.find("function");
    if (fn == c.end() || !fn->is_object())
      return wire_refusal("field '" + at + ".function' must be an object with name and arguments");
    if (auto err = only_fields(*fn, openai_function_fields, at + ".function."))
      return err;
    if (auto err = string_field(*fn, "name", call.name, true, at + ".function."))
      return err;
    if (auto err = string_field(*fn, "arguments", call.arguments, false, at + ".function."))
      return err;
    out.push_back(std::move(call));
  }
  return {};
}

} // namespace

caf::expected<message> decode_openai_message(const json& j, const std::string& where) {
  if (!j.is_object())
    return wire_refusal("field '" + where + "' must be an object, not " + j.type_name());
  if (auto err = only_fields(j, openai_message_fields, where + "."))
    return err;
  std::string role;
  if (auto err = string_field(j, "role", role, true, where + "."))
    return err;
  // OpenAI's newer name of the system role.
  auto parsed = role == "developer" ? std::optional<msg_role>{msg_role::system} : parse_role(role);
  if (!parsed)
    return wire_refusal("field '" + where + ".role': unknown role '" + role
                   + "' (system, developer, user, assistant or tool)");
  message m;
  m.role = *parsed;
  if (auto err = content_of(j, where, m.content))
    return err;
  if (auto err = tool_calls_of(j, where, m.tool_calls))
    return err;
  std::string name;
  if (auto err = string_field(j, "name", name, false, where + "."))
    return err;
  if (auto err = string_field(j, "tool_call_id", m.tool_call_id, false, where + "."))
    return err;
  if (m.role == msg_role::tool) {
    m.tool_name = std::move(name);
    if (m.tool_call_id.empty())
      return wire_refusal("field '" + where + ".tool_call_id' is missing or empty: a tool message "
                     "answers one call");
  } else if (!m.tool_call_id.empty()) {
    return wire_refusal("field '" + where + ".tool_call_id' belongs to tool messages only");
  }
  bool content_given = j.contains("content") && !j["content"].is_null();
  if (!content_given && !(m.role == msg_role::assistant && !m.tool_calls.empty()))
    return wire_refusal("field '" + where + ".content' is missing (only an assistant message "
                   "with tool_calls may go without)");
  return m;
}


namespace {

// The request's fields other than `messages` (which `j` may still hold: they are not
// read here). `j` is changed: nulls of optional fields dropped, max_tokens set.
caf::expected<openai_chat_request> decode_chat_fields(json& j, openai_chat_request out) {
  if (auto err = wire_text(j, "model", "", out.model, false))
    return err;
  if (auto err = wire_text(j, "user", "", out.user, false))
    return err;
  if (auto s = j.find("stream"); s != j.end() && !s->is_null()) {
    if (!s->is_boolean())
      return wire_refusal(std::string{"field 'stream' must be a boolean, not "} + s->type_name());
    out.stream = s->get<bool>();
  }
  if (auto so = j.find("stream_options"); so != j.end() && so->is_object())
    if (auto u = so->find("include_usage"); u != so->end() && u->is_boolean())
      out.include_usage = u->get<bool>();
  if (auto md = j.find("metadata"); md != j.end() && md->is_object())
    if (auto sid = md->find("session_id"); sid != md->end() && !sid->is_null()) {
      if (!sid->is_string()) // a session named by a number would pass through statelessly
        return wire_refusal(std::string{"field 'metadata.session_id' must be a string, not "}
                            + sid->type_name());
      out.metadata_session_id = sid->get<std::string>();
    }
  if (auto n = j.find("n"); n != j.end() && !n->is_null()
                             && !(n->is_number_integer() && n->get<int64_t>() == 1))
    return wire_refusal("field 'n': only 1 choice per request is supported");
  // max_completion_tokens is the newer name of max_tokens.
  if (auto mct = j.find("max_completion_tokens"); mct != j.end() && !mct->is_null()
                                                  && !j.contains("max_tokens"))
    j["max_tokens"] = *mct;
  for (const char* ignored : {"tool_choice", "stop", "response_format", "seed", "top_p",
                              "temperature", "max_tokens", "parallel_tool_calls", "tools"})
    if (auto it = j.find(ignored); it != j.end() && it->is_null())
      j.erase(it); // SDKs may send null for "not set"
  if (auto err = decode_turn_tools(j, out.turn))
    return err;
  if (auto err = decode_turn_sampling(j, out.turn.options))
    return err;
  return out;
}

} // namespace

caf::expected<openai_chat_request> decode_openai_chat_fully(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  openai_chat_request out;
  auto msgs = j->find("messages");
  if (msgs == j->end())
    return wire_refusal("missing field 'messages'");
  if (!msgs->is_array())
    return wire_refusal(std::string{"field 'messages' must be an array, not "} + msgs->type_name());
  if (msgs->empty())
    return wire_refusal("field 'messages' is empty");
  out.messages.reserve(msgs->size());
  for (size_t i = 0; i < msgs->size(); ++i) {
    auto m = decode_openai_message((*msgs)[i], "messages[" + std::to_string(i) + "]");
    if (!m)
      return m.error();
    out.messages.push_back(std::move(*m));
  }
  return decode_chat_fields(*j, std::move(out));
}

caf::expected<openai_chat_request> decode_openai_chat(std::string_view body) {
  if (!first_invalid_utf8(body))
    if (auto fast = fast_openai_body(body)) {
      openai_chat_request out;
      out.messages = std::move(fast->messages);
      return decode_chat_fields(fast->rest, std::move(out));
    }
  return decode_openai_chat_fully(body);
}

namespace {

json wire_calls_json(const std::vector<tool_call>& calls) {
  auto out = json::array();
  for (const auto& c : calls)
    out.push_back({{"id", c.id},
                   {"type", "function"},
                   {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  return out;
}

json wire_usage(const openai_usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens}};
}

json wire_head(const openai_answer& a, const char* object) {
  return {{"id", a.id}, {"object", object}, {"created", a.created}, {"model", a.model}};
}

} // namespace

json to_chat_completion(const openai_answer& a) {
  json msg = {{"role", "assistant"}};
  msg["content"] = a.tool_calls.empty() || !a.content.empty() ? json(a.content) : json(nullptr);
  if (!a.tool_calls.empty())
    msg["tool_calls"] = wire_calls_json(a.tool_calls);
  msg["refusal"] = nullptr;
  auto out = wire_head(a, "chat.completion");
  out["choices"] = json::array({{{"index", 0},
                                 {"message", std::move(msg)},
                                 {"logprobs", nullptr},
                                 {"finish_reason", a.finish_reason.empty() ? "stop"
                                                                           : a.finish_reason}}});
  out["usage"] = wire_usage(a.usage);
  return out;
}

json chat_chunk(const openai_answer& a, json delta, const std::string& finish_reason,
                bool include_usage) {
  auto out = wire_head(a, "chat.completion.chunk");
  out["choices"] = json::array({{{"index", 0},
                                 {"delta", std::move(delta)},
                                 {"logprobs", nullptr},
                                 {"finish_reason", finish_reason.empty() ? json(nullptr)
                                                                         : json(finish_reason)}}});
  if (include_usage)
    out["usage"] = nullptr;
  return out;
}

json usage_chunk(const openai_answer& a) {
  auto out = wire_head(a, "chat.completion.chunk");
  out["choices"] = json::array();
  out["usage"] = wire_usage(a.usage);
  return out;
}

json models_json(const std::string& model, int64_t created) {
  return {{"object", "list"},
          {"data", json::array({{{"id", model},
                                 {"object", "model"},
                                 {"created", created},
                                 {"owned_by", "mneme"}}})}};
}

std::string sse_data(const json& payload) {
  return "data: " + payload.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

} // namespace mneme::api
