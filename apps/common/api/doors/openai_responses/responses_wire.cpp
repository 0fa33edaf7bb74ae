// The Responses door's wire format; see responses_wire.hpp.
#include "apps/common/api/doors/openai_responses/responses_wire.hpp"

#include "apps/common/api/doors/openai_responses/responses_compact_wire.hpp"

#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/errc.hpp"

namespace mneme::api {

namespace {

using json = nlohmann::json;

caf::error rw_refusal(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

std::string rw_type_error(const std::string& field, const char* wanted, const json& v) {
  return "field '" + field + "' must be " + wanted + ", not " + v.type_name();
}

// obj[name] when present and not null: nullptr otherwise.
const json* rw_given(const json& obj, const char* name) {
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

caf::error rw_text(const json& obj, const char* name, const std::string& where,
                   std::string& out, bool required) {
  auto field = where + name;
  auto v = rw_given(obj, name);
  if (!v)
    return required ? rw_refusal("missing field '" + field + "'") : caf::error{};
  if (!v->is_string())
    return rw_refusal(rw_type_error(field, "a string", *v));
  out = v->get<std::string>();
  return {};
}

caf::error rw_bool(const json& obj, const char* name, bool& out) {
  auto v = rw_given(obj, name);
  if (!v)
    return {};
  if (!v->is_boolean())
    return rw_refusal(rw_type_error(name, "a boolean", *v));
  out = v->get<bool>();
  return {};
}

// The text of a content: a string, or text parts (input_text, output_text, text) joined.
caf::error rw_content(const json& content, const std::string& field, std::string& out) {
  if (content.is_string()) {
    out = content.get<std::string>();
    return {};
  }
  if (!content.is_array())
    return rw_refusal(rw_type_error(field, "a string or an array of text parts", content));
  for (size_t j = 0; j < content.size(); ++j) {
    const auto& part = content[j];
    auto at = field + "[" + std::to_string(j) + "]";
    if (!part.is_object())
      return rw_refusal(rw_type_error(at, "an object", part));
    std::string type;
    if (auto err = rw_text(part, "type", at + ".", type, true))
      return err;
    if (type != "input_text" && type != "output_text" && type != "text")
      return rw_refusal("field '" + at + ".type' is \"" + type
                        + "\": only text parts (input_text, output_text) are supported");
    std::string text;
    if (auto err = rw_text(part, "text", at + ".", text, true))
      return err;
    out += text;
  }
  return {};
}

caf::error rw_message_item(const json& item, const std::string& at, std::vector<message>& out) {
  std::string role;
  if (auto err = rw_text(item, "role", at + ".", role, true))
    return err;
  auto parsed = role == "developer" ? std::optional<msg_role>{msg_role::system} : parse_role(role);
  if (!parsed || *parsed == msg_role::tool)
    return rw_refusal("field '" + at + ".role': unknown role '" + role
                      + "' (user, system, developer or assistant)");
  auto content = rw_given(item, "content");
  if (!content)
    return rw_refusal("missing field '" + at + ".content'");
  message m;
  m.role = *parsed;
  if (auto err = rw_content(*content, at + ".content", m.content))
    return err;
  out.push_back(std::move(m));
  return {};
}

caf::error rw_call_item(const json& item, const std::string& at, std::vector<message>& out) {
  tool_call call;
  if (auto err = rw_text(item, "call_id", at + ".", call.id, true))
    return err;
  if (auto err = rw_text(item, "name", at + ".", call.name, true))
    return err;
  if (auto err = rw_text(item, "arguments", at + ".", call.arguments, false))
    return err;
  if (call.id.empty())
    return rw_refusal("field '" + at + ".call_id' is empty");
  // A call belongs to the assistant message right before it (its text and calls are one
  // model answer); after anything else it opens an assistant message of its own.
  if (out.empty() || out.back().role != msg_role::assistant)
    out.push_back(message{}), out.back().role = msg_role::assistant;
  out.back().tool_calls.push_back(std::move(call));
  return {};
}

caf::error rw_output_item(const json& item, const std::string& at, std::vector<message>& out) {
  message m;
  m.role = msg_role::tool;
  if (auto err = rw_text(item, "call_id", at + ".", m.tool_call_id, true))
    return err;
  if (m.tool_call_id.empty())
    return rw_refusal("field '" + at + ".call_id' is empty");
  auto output = rw_given(item, "output");
  if (!output)
    return rw_refusal("missing field '" + at + ".output'");
  if (auto err = rw_content(*output, at + ".output", m.content))
    return err;
  for (auto it = out.rbegin(); it != out.rend() && m.tool_name.empty(); ++it)
    for (const auto& c : it->tool_calls)
      if (c.id == m.tool_call_id)
        m.tool_name = c.name;
  out.push_back(std::move(m));
  return {};
}

// A Responses function tool as a chat-completions one; nullopt-like error otherwise.
caf::error rw_tool(const json& t, const std::string& at, json& chat_tool) {
  if (!t.is_object())
    return rw_refusal(rw_type_error(at, "an object", t));
  std::string type;
  if (auto err = rw_text(t, "type", at + ".", type, true))
    return err;
  if (type != "function")
    return rw_refusal("field '" + at + ".type' is \"" + type
                      + "\": only function tools are supported");
  json fn = json::object();
  for (const char* k : {"name", "description", "parameters", "strict"})
    if (auto v = rw_given(t, k))
      fn[k] = *v;
  chat_tool = {{"type", "function"}, {"function", std::move(fn)}};
  return {};
}

caf::error rw_tool_choice(const json& c, json& chat_choice) {
  if (c.is_string()) {
    chat_choice = c;
    return {};
  }
  if (!c.is_object())
    return rw_refusal(rw_type_error("tool_choice", "a string or an object", c));
  std::string type;
  if (auto err = rw_text(c, "type", "tool_choice.", type, true))
    return err;
  if (type != "function")
    return rw_refusal("field 'tool_choice.type' is \"" + type
                      + "\": only none, auto, required or a function is supported");
  std::string name;
  if (auto err = rw_text(c, "name", "tool_choice.", name, true))
    return err;
  chat_choice = {{"type", "function"}, {"function", {{"name", name}}}};
  return {};
}

// text.format as a chat response_format (null for plain text).
caf::error rw_text_format(const json& text, json& response_format) {
  if (!text.is_object())
    return rw_refusal(rw_type_error("text", "an object", text));
  auto f = rw_given(text, "format");
  if (!f)
    return {};
  if (!f->is_object())
    return rw_refusal(rw_type_error("text.format", "an object", *f));
  std::string type;
  if (auto err = rw_text(*f, "type", "text.format.", type, true))
    return err;
  if (type == "text")
    return {};
  if (type == "json_object") {
    response_format = {{"type", "json_object"}};
    return {};
  }
  if (type != "json_schema")
    return rw_refusal("field 'text.format.type' is \"" + type
                      + "\": text, json_object or json_schema");
  json schema = json::object();
  for (const char* k : {"name", "schema", "strict", "description"})
    if (auto v = rw_given(*f, k))
      schema[k] = *v;
  response_format = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
  return {};
}

// The request's sampling and tool fields, checked and translated into the chat shape the
// turn decoders read, and the fields a response object repeats.
caf::error rw_turn_fields(const json& j, responses_request& out) {
  json chat = json::object();
  auto& echo = out.echo;
  echo["tools"] = json::array();
  if (auto tools = rw_given(j, "tools")) {
    if (!tools->is_array())
      return rw_refusal(rw_type_error("tools", "an array", *tools));
    json chat_tools = json::array();
    for (size_t i = 0; i < tools->size(); ++i) {
      json t;
      if (auto err = rw_tool((*tools)[i], "tools[" + std::to_string(i) + "]", t))
        return err;
      chat_tools.push_back(std::move(t));
    }
    chat["tools"] = std::move(chat_tools);
    echo["tools"] = *tools;
  }
  echo["tool_choice"] = "auto";
  if (auto c = rw_given(j, "tool_choice")) {
    if (auto err = rw_tool_choice(*c, chat["tool_choice"]))
      return err;
    echo["tool_choice"] = *c;
  }
  echo["max_output_tokens"] = nullptr;
  if (auto m = rw_given(j, "max_output_tokens")) {
    if (!m->is_number_integer() || m->get<int64_t>() < 1)
      return rw_refusal("field 'max_output_tokens' must be an integer of 1 or more");
    chat["max_tokens"] = *m;
    echo["max_output_tokens"] = *m;
  }
  echo["temperature"] = 1.0;
  echo["top_p"] = 1.0;
  echo["parallel_tool_calls"] = true;
  for (const char* k : {"temperature", "top_p", "parallel_tool_calls"})
    if (auto v = rw_given(j, k)) {
      chat[k] = *v;
      echo[k] = *v;
    }
  echo["text"] = {{"format", {{"type", "text"}}}};
  if (auto text = rw_given(j, "text")) {
    json format;
    if (auto err = rw_text_format(*text, format))
      return err;
    if (!format.is_null())
      chat["response_format"] = std::move(format);
    echo["text"] = *text;
  }
  if (auto err = decode_turn_tools(chat, out.turn))
    return err;
  return decode_turn_sampling(chat, out.turn.options);
}

} // namespace

caf::expected<std::vector<message>> decode_response_items(const json& items,
                                                          const std::string& where) {
  std::vector<message> out;
  if (items.is_string()) {
    message m;
    m.role = msg_role::user;
    m.content = items.get<std::string>();
    out.push_back(std::move(m));
    return out;
  }
  if (!items.is_array())
    return rw_refusal(rw_type_error(where, "a string or an array of items", items));
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    auto at = where + "[" + std::to_string(i) + "]";
    if (!item.is_object())
      return rw_refusal(rw_type_error(at, "an object", item));
    std::string type;
    if (auto err = rw_text(item, "type", at + ".", type, false))
      return err;
    if (type.empty() && item.contains("role"))
      type = "message";
    caf::error err;
    if (type == "message")
      err = rw_message_item(item, at, out);
    else if (type == "function_call")
      err = rw_call_item(item, at, out);
    else if (type == "function_call_output")
      err = rw_output_item(item, at, out);
    else if (type == "compaction") { // mneme's compacted window, resent
      auto summary = decode_compaction_item(item, at);
      if (!summary)
        return summary.error();
      out.push_back(std::move(*summary));
    } else if (type == "reasoning")
      continue; // mneme's answers carry none; a transcript from elsewhere may
    else if (type.empty())
      return rw_refusal("missing field '" + at + ".type'");
    else
      return rw_refusal("field '" + at + ".type' is \"" + type
                        + "\": only message, function_call, function_call_output and "
                          "compaction items are supported");
    if (err)
      return err;
  }
  if (out.empty())
    return rw_refusal("field '" + where + "' holds no message");
  return out;
}

caf::expected<responses_request> decode_responses_request(std::string_view body) {
  auto j = parse_object(body);
  if (!j)
    return j.error();
  responses_request out;
  auto input = rw_given(*j, "input");
  if (!input)
    return rw_refusal("missing field 'input'");
  auto items = decode_response_items(*input, "input");
  if (!items)
    return items.error();
  out.input = std::move(*items);
  out.referenced_response = referenced_response_id(*input);
  for (auto [name, field] : {std::pair{"model", &out.model},
                             std::pair{"instructions", &out.instructions},
                             std::pair{"previous_response_id", &out.previous_response_id},
                             std::pair{"prompt_cache_key", &out.prompt_cache_key},
                             std::pair{"user", &out.user}})
    if (auto err = rw_text(*j, name, "", *field, false))
      return err;
  if (auto err = rw_bool(*j, "stream", out.stream))
    return err;
  if (auto err = rw_bool(*j, "store", out.store))
    return err;
  bool background = false;
  if (auto err = rw_bool(*j, "background", background))
    return err;
  if (background)
    return rw_refusal("field 'background': background responses are not supported");
  if (auto c = rw_given(*j, "conversation")) {
    if (c->is_object()) {
      if (auto err = rw_text(*c, "id", "conversation.", out.conversation, true))
        return err;
    } else if (c->is_string()) {
      out.conversation = c->get<std::string>();
    } else {
      return rw_refusal(rw_type_error("conversation", "a string or an object", *c));
    }
  }
  out.echo["metadata"] = json::object();
  if (auto md = rw_given(*j, "metadata")) {
    if (!md->is_object())
      return rw_refusal(rw_type_error("metadata", "an object", *md));
    out.echo["metadata"] = *md;
  }
  if (auto inc = rw_given(*j, "include"); inc && !inc->is_array())
    return rw_refusal(rw_type_error("include", "an array", *inc));
  out.echo["instructions"] = out.instructions.empty() ? json(nullptr) : json(out.instructions);
  out.echo["user"] = out.user.empty() ? json(nullptr) : json(out.user);
  out.echo["store"] = out.store;
  if (auto err = rw_turn_fields(*j, out))
    return err;
  if (auto err = decode_context_management(*j, out.turn.options))
    return err;
  return out;
}

std::string referenced_response_id(const json& input) {
  if (!input.is_array())
    return {};
  for (auto it = input.rbegin(); it != input.rend(); ++it) {
    if (!it->is_object())
      continue;
    auto id = it->find("id");
    if (id == it->end() || !id->is_string())
      continue;
    const auto& text = id->get_ref<const std::string&>();
    if (text.rfind("msg_", 0) == 0 && text.size() > 4)
      return "resp_" + text.substr(4);
    if (text.rfind("fc_", 0) == 0) {
      auto cut = text.rfind('_');
      if (cut > 3)
        return "resp_" + text.substr(3, cut - 3);
    }
  }
  return {};
}

std::string response_message_id(const std::string& response_id) {
  auto rest = response_id.rfind("resp_", 0) == 0 ? response_id.substr(5) : response_id;
  return "msg_" + rest;
}

std::string response_call_id(const std::string& response_id, size_t index) {
  auto rest = response_id.rfind("resp_", 0) == 0 ? response_id.substr(5) : response_id;
  return "fc_" + rest + "_" + std::to_string(index);
}

json response_output(const responses_answer& a) {
  auto out = json::array();
  if (!a.content.empty() || a.tool_calls.empty())
    out.push_back({{"type", "message"},
                   {"id", response_message_id(a.id)},
                   {"status", "completed"},
                   {"role", "assistant"},
                   {"content", json::array({{{"type", "output_text"},
                                             {"text", a.content},
                                             {"annotations", json::array()}}})}});
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    const auto& c = a.tool_calls[i];
    out.push_back({{"type", "function_call"},
                   {"id", response_call_id(a.id, i)},
                   {"call_id", c.id},
                   {"name", c.name},
                   {"arguments", c.arguments},
                   {"status", "completed"}});
  }
  return out;
}

json to_response_object(const responses_answer& a) {
  json r = {{"id", a.id},
            {"object", "response"},
            {"created_at", a.created_at},
            {"status", a.status},
            {"error", a.error},
            {"incomplete_details", nullptr},
            {"model", a.model}};
  if (a.status == "incomplete" || a.incomplete_by_length)
    r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  for (auto it = a.echo.begin(); it != a.echo.end(); ++it)
    r[it.key()] = it.value();
  if (a.status == "completed" || a.status == "incomplete")
    r["output"] = response_output(a);
  else if (a.status == "cancelled" && a.partial_output.is_array())
    r["output"] = a.partial_output;
  else
    r["output"] = json::array();
  r["previous_response_id"] =
    a.previous_response_id.empty() ? json(nullptr) : json(a.previous_response_id);
  r["conversation"] = a.conversation.empty() ? json(nullptr) : json{{"id", a.conversation}};
  r["reasoning"] = {{"effort", nullptr}, {"summary", nullptr}};
  r["truncation"] = "disabled";
  if (a.status == "in_progress") {
    r["usage"] = nullptr;
  } else {
    r["usage"] = {{"input_tokens", a.usage.input_tokens},
                  {"input_tokens_details", {{"cached_tokens", 0}}},
                  {"output_tokens", a.usage.output_tokens},
                  {"output_tokens_details", {{"reasoning_tokens", 0}}},
                  {"total_tokens", a.usage.input_tokens + a.usage.output_tokens}};
  }
  return r;
}

std::string response_event_bytes(const json& payload) {
  return "event: " + payload.value("type", std::string{"message"}) + "\ndata: "
         + payload.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

} // namespace mneme::api
