// The Anthropic door's wire format; see anthropic_wire.hpp.
#include "apps/common/api/doors/anthropic_messages/anthropic_wire.hpp"

#include <algorithm>
#include <initializer_list>

#include "actors/llm/messages_api_wire.hpp"
#include "apps/common/api/plumbing/json_duplicates.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "messages/errc.hpp"
#include "policies/content_blocks.hpp"
#include "policies/tool_loop.hpp"

namespace mneme::api {

namespace anthropic_codec {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

// The top-level fields the door uses; any other is accepted and named as ignored.
const std::initializer_list<std::string_view> used_fields = {
  "model",         "max_tokens",  "messages", "system", "stream", "tools",
  "tool_choice",   "stop_sequences", "temperature", "top_p", "top_k", "metadata"};

bool listed(std::initializer_list<std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

caf::error refusal(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

caf::error wrong_type(const std::string& field, const char* want, const ojson& got) {
  return refusal("field '" + field + "' must be " + want + ", not " + got.type_name());
}

// The string at obj[name] into `out`; a missing one is an error when `required`.
caf::error text_of(const ojson& obj, const char* name, const std::string& where, std::string& out,
                   bool required) {
  auto field = where.empty() ? std::string{name} : where + "." + name;
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null())
    return required ? refusal("missing field '" + field + "'") : caf::error{};
  if (!it->is_string())
    return wrong_type(field, "a string", *it);
  out = it->get<std::string>();
  return {};
}

void join_text(std::string& out, const std::string& piece) {
  if (!out.empty())
    out += '\n';
  out += piece;
}

// The `type` of block `at`.
caf::expected<std::string> block_type(const ojson& block, const std::string& at) {
  if (!block.is_object())
    return wrong_type(at, "an object", block);
  std::string type;
  if (auto err = text_of(block, "type", at, type, true))
    return err;
  return type;
}

caf::error unsupported_block(const std::string& at, const std::string& type, const char* where) {
  return refusal("field '" + at + ".type': content blocks of type \"" + type
                 + "\" are not supported in " + where
                 + " with mneme's OpenAI-compatible upstream (text, tool_use, tool_result, and "
                   "image in user messages; model.api: anthropic takes every block type)");
}

// How the blocks of one request are decoded: the upstream's kind, where the fields
// dropped on the way are named.
struct block_context {
  bool messages_api = false;
  std::vector<std::string>* ignored = nullptr;
};

// A block other than text/tool_use/tool_result at `at`, by content_blocks.hpp's table:
// kept as a block line of `out` (pass, image_part), named as ignored (drop), or refused.
caf::error other_block(const ojson& block, const std::string& at, const std::string& type,
                       block_place place, const block_context& ctx, const char* where,
                       std::string& out, bool& kept) {
  switch (anthropic_block_action(type, place, ctx.messages_api)) {
    case block_action::pass:
    case block_action::image_part:
      join_text(out, block_line(type, block.dump(-1, ' ', false, ojson::error_handler_t::replace)));
      kept = true;
      return {};
    case block_action::drop:
      if (ctx.ignored)
        ctx.ignored->push_back(at + ":" + type);
      return {};
    case block_action::refuse:
      break;
  }
  return unsupported_block(at, type, where);
}

// Text content: a string or an array of text blocks, joined. `where` names the field.
// With `ctx` (a tool_result's content), other block types go by content_blocks.hpp's
// table; without it (the system prompt) only text blocks are taken.
caf::error text_content(const ojson& v, const std::string& field, std::string& out,
                        const block_context* ctx = nullptr) {
  if (v.is_string()) {
    out = v.get<std::string>();
    return {};
  }
  if (!v.is_array())
    return wrong_type(field, "a string or an array of content blocks", v);
  for (size_t i = 0; i < v.size(); ++i) {
    auto at = field + "[" + std::to_string(i) + "]";
    auto type = block_type(v[i], at);
    if (!type)
      return type.error();
    if (*type != "text") {
      if (!ctx)
        return unsupported_block(at, *type, "text content");
      bool kept = false;
      if (auto err = other_block(v[i], at, *type, block_place::tool_result, *ctx,
                                 "a tool_result's content", out, kept))
        return err;
      continue;
    }
    std::string text;
    if (auto err = text_of(v[i], "text", at, text, true))
      return err;
    join_text(out, text);
  }
  return {};
}

caf::error decode_tool_result(const ojson& block, const std::string& at, const block_context& ctx,
                              message& out) {
  out.role = msg_role::tool;
  if (auto err = text_of(block, "tool_use_id", at, out.tool_call_id, true))
    return err;
  if (out.tool_call_id.empty())
    return refusal("field '" + at + ".tool_use_id' is empty");
  if (auto c = block.find("content"); c != block.end() && !c->is_null())
    if (auto err = text_content(*c, at + ".content", out.content, &ctx))
      return err;
  if (auto e = block.find("is_error"); e != block.end() && !e->is_null()) {
    if (!e->is_boolean())
      return wrong_type(at + ".is_error", "a boolean", *e);
    if (e->get<bool>())
      out.content = std::string{tool_error_prefix} + out.content;
  }
  return {};
}

caf::error decode_tool_use(const ojson& block, const std::string& at, tool_call& out) {
  if (auto err = text_of(block, "id", at, out.id, true))
    return err;
  if (auto err = text_of(block, "name", at, out.name, true))
    return err;
  auto input = block.find("input");
  if (input == block.end() || input->is_null()) {
    out.arguments = "{}";
    return {};
  }
  if (!input->is_object())
    return wrong_type(at + ".input", "an object", *input);
  out.arguments = input->dump(-1, ' ', false, ojson::error_handler_t::replace);
  return {};
}

// One message of `messages` -> its rows, appended to `out`.
caf::error decode_message(const ojson& m, const std::string& where, const block_context& ctx,
                          std::vector<message>& out) {
  if (!m.is_object())
    return wrong_type(where, "an object", m);
  std::string role;
  if (auto err = text_of(m, "role", where, role, true))
    return err;
  if (role != "user" && role != "assistant")
    return refusal("field '" + where + ".role': unknown role '" + role
                   + "' (user or assistant; the system prompt is the field 'system')");
  auto content = m.find("content");
  if (content == m.end() || content->is_null())
    return refusal("missing field '" + where + ".content'");
  message text_row;
  text_row.role = role == "user" ? msg_role::user : msg_role::assistant;
  if (content->is_string()) {
    text_row.content = content->get<std::string>();
    out.push_back(std::move(text_row));
    return {};
  }
  if (!content->is_array())
    return wrong_type(where + ".content", "a string or an array of content blocks", *content);
  bool has_text = false;
  for (size_t i = 0; i < content->size(); ++i) {
    const auto& block = (*content)[i];
    auto at = where + ".content[" + std::to_string(i) + "]";
    auto type = block_type(block, at);
    if (!type)
      return type.error();
    if (*type == "text") {
      std::string text;
      if (auto err = text_of(block, "text", at, text, true))
        return err;
      join_text(text_row.content, text);
      has_text = true;
    } else if (*type == "tool_result" && role == "user") {
      message result;
      if (auto err = decode_tool_result(block, at, ctx, result))
        return err;
      out.push_back(std::move(result));
    } else if (*type == "tool_use" && role == "assistant") {
      tool_call call;
      if (auto err = decode_tool_use(block, at, call))
        return err;
      text_row.tool_calls.push_back(std::move(call));
    } else if (*type == "tool_result" || *type == "tool_use") { // in the other role
      return unsupported_block(at, *type, role == "user" ? "a user message" : "an assistant message");
    } else {
      bool user = role == "user";
      if (auto err = other_block(block, at, *type, user ? block_place::user : block_place::assistant,
                                 ctx, user ? "a user message" : "an assistant message",
                                 text_row.content, has_text))
        return err;
    }
  }
  // A user message of tool results alone is those tool rows; an empty one is an empty
  // user message (kept, so the transcript keeps its shape).
  bool only_results = text_row.role == msg_role::user && !has_text && !content->empty();
  if (!only_results)
    out.push_back(std::move(text_row));
  return {};
}

caf::error decode_system(const ojson& body, std::vector<message>& out) {
  auto s = body.find("system");
  if (s == body.end() || s->is_null())
    return {};
  message sys;
  sys.role = msg_role::system;
  if (auto err = text_content(*s, "system", sys.content))
    return err;
  out.push_back(std::move(sys));
  return {};
}

// Anthropic's custom tools as OpenAI function tools; other tool types named as ignored.
caf::error decode_tools(const ojson& body, anthropic_request& out) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null())
    return {};
  if (!it->is_array())
    return wrong_type("tools", "an array", *it);
  json tools = json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& t = (*it)[i];
    auto at = "tools[" + std::to_string(i) + "]";
    if (!t.is_object())
      return wrong_type(at, "an object", t);
    std::string type = "custom";
    if (auto err = text_of(t, "type", at, type, false))
      return err;
    if (type != "custom") {
      out.ignored.push_back(at + ":" + type);
      continue;
    }
    std::string name, description;
    if (auto err = text_of(t, "name", at, name, true))
      return err;
    if (name.empty())
      return refusal("field '" + at + ".name' is empty");
    if (auto err = text_of(t, "description", at, description, false))
      return err;
    json fn = {{"name", name}};
    if (!description.empty())
      fn["description"] = description;
    auto schema = t.find("input_schema");
    if (schema == t.end() || schema->is_null())
      return refusal("missing field '" + at + ".input_schema'");
    if (!schema->is_object())
      return wrong_type(at + ".input_schema", "an object", *schema);
    fn["parameters"] = json::parse(schema->dump());
    tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  return decode_turn_tools(json{{"tools", std::move(tools)}}, out.turn);
}

// tool_choice into the upstream's form, in `extra`.
caf::error decode_tool_choice(const ojson& body, json& extra) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null())
    return {};
  if (!it->is_object())
    return wrong_type("tool_choice", "an object", *it);
  std::string type;
  if (auto err = text_of(*it, "type", "tool_choice", type, true))
    return err;
  if (type == "auto") {
    extra["tool_choice"] = "auto";
  } else if (type == "any") {
    extra["tool_choice"] = "required";
  } else if (type == "none") {
    extra["tool_choice"] = "none";
  } else if (type == "tool") {
    std::string name;
    if (auto err = text_of(*it, "name", "tool_choice", name, true))
      return err;
    extra["tool_choice"] = {{"type", "function"}, {"function", {{"name", name}}}};
  } else {
    return refusal("field 'tool_choice.type' must be \"auto\", \"any\", \"tool\" or \"none\", not \""
                   + type + "\"");
  }
  if (auto p = it->find("disable_parallel_tool_use"); p != it->end() && !p->is_null()) {
    if (!p->is_boolean())
      return wrong_type("tool_choice.disable_parallel_tool_use", "a boolean", *p);
    if (p->get<bool>() && type != "none")
      extra["parallel_tool_calls"] = false;
  }
  return {};
}

// A number field within [0, 1] into `value`; `present` says whether it was sent.
caf::error unit_number(const ojson& body, const char* name, bool& present, double& value) {
  auto it = body.find(name);
  present = it != body.end() && !it->is_null();
  if (!present)
    return {};
  if (!it->is_number())
    return wrong_type(name, "a number", *it);
  value = it->get<double>();
  if (value < 0.0 || value > 1.0)
    return refusal(std::string{"field '"} + name + "' must be between 0 and 1");
  return {};
}

caf::error decode_sampling(const ojson& body, anthropic_body kind, turn_options& opt) {
  auto mt = body.find("max_tokens");
  if (mt == body.end() || mt->is_null()) {
    if (kind == anthropic_body::messages)
      return refusal("missing field 'max_tokens'");
  } else {
    if (!mt->is_number_integer())
      return wrong_type("max_tokens", "an integer", *mt);
    auto n = mt->get<int64_t>();
    if (n < 1)
      return refusal("field 'max_tokens' must be 1 or more, not " + std::to_string(n));
    opt.has_max_tokens = true;
    opt.max_tokens = n;
  }
  if (auto err = unit_number(body, "temperature", opt.has_temperature, opt.temperature))
    return err;
  json extra = json::object();
  bool present = false;
  double top_p = 0;
  if (auto err = unit_number(body, "top_p", present, top_p))
    return err;
  if (present)
    extra["top_p"] = top_p;
  if (auto k = body.find("top_k"); k != body.end() && !k->is_null()) {
    if (!k->is_number_integer() || k->get<int64_t>() < 0)
      return refusal("field 'top_k' must be an integer of 0 or more");
    extra["top_k"] = k->get<int64_t>();
  }
  if (auto s = body.find("stop_sequences"); s != body.end() && !s->is_null()) {
    if (!s->is_array())
      return wrong_type("stop_sequences", "an array of strings", *s);
    json stop = json::array();
    for (size_t i = 0; i < s->size(); ++i) {
      if (!(*s)[i].is_string())
        return wrong_type("stop_sequences[" + std::to_string(i) + "]", "a string", (*s)[i]);
      stop.push_back((*s)[i].get<std::string>());
    }
    if (!stop.empty())
      extra["stop"] = std::move(stop);
  }
  if (auto md = body.find("metadata"); md != body.end() && !md->is_null()) {
    if (!md->is_object())
      return wrong_type("metadata", "an object", *md);
    std::string user;
    if (auto err = text_of(*md, "user_id", "metadata", user, false))
      return err;
    if (!user.empty())
      extra["user"] = user;
  }
  if (auto err = decode_tool_choice(body, extra))
    return err;
  if (!extra.empty())
    opt.extra_json = extra.dump(-1, ' ', false, json::error_handler_t::replace);
  return {};
}

caf::expected<ojson> parse_body(std::string_view body) {
  if (auto at = first_invalid_utf8(body))
    return refusal("the body is not valid UTF-8 (byte " + std::to_string(*at) + ")");
  std::string duplicate;
  auto j = parse_noting_duplicate_keys<ojson>(body, duplicate, false);
  if (j.is_discarded())
    return refusal("the body is not valid JSON");
  if (!duplicate.empty())
    return refusal(duplicate_key_message(duplicate));
  if (!j.is_object())
    return refusal(std::string{"the body must be a JSON object, not "} + j.type_name());
  return j;
}

caf::expected<anthropic_request> decode_request(std::string_view body, anthropic_body kind,
                                                bool messages_api) {
  auto j = parse_body(body);
  if (!j)
    return j.error();
  anthropic_request out;
  for (auto it = j->begin(); it != j->end(); ++it) {
    if (listed(used_fields, it.key()))
      continue;
    if (messages_api && it.key() != "thinking")
      out.passthrough[it.key()] = it.value();
    else
      out.ignored.push_back(it.key());
  }
  if (auto err = text_of(*j, "model", "", out.model, kind == anthropic_body::messages))
    return err;
  if (auto err = decode_system(*j, out.messages))
    return err;
  auto msgs = j->find("messages");
  if (msgs == j->end() || msgs->is_null())
    return refusal("missing field 'messages'");
  if (!msgs->is_array())
    return wrong_type("messages", "an array", *msgs);
  if (msgs->empty())
    return refusal("field 'messages' is empty");
  block_context ctx{messages_api, &out.ignored};
  for (size_t i = 0; i < msgs->size(); ++i)
    if (auto err = decode_message((*msgs)[i], "messages[" + std::to_string(i) + "]", ctx,
                                  out.messages))
      return err;
  if (auto s = j->find("stream"); s != j->end() && !s->is_null()) {
    if (!s->is_boolean())
      return wrong_type("stream", "a boolean", *s);
    out.stream = s->get<bool>() && kind == anthropic_body::messages;
  }
  if (auto err = decode_tools(*j, out))
    return err;
  if (auto err = decode_sampling(*j, kind, out.turn.options))
    return err;
  return out;
}

} // namespace
} // namespace anthropic_codec

caf::expected<anthropic_request> decode_anthropic_request(std::string_view body,
                                                          anthropic_body kind,
                                                          bool upstream_messages_api) {
  return anthropic_codec::decode_request(body, kind, upstream_messages_api);
}

void add_upstream_passthrough(anthropic_request& r, const std::string& anthropic_version,
                              const std::string& anthropic_beta) {
  using json = nlohmann::json;
  json pass = json::object();
  if (!r.passthrough.empty())
    pass["fields"] = json::parse(r.passthrough.dump(-1, ' ', false, json::error_handler_t::replace));
  json headers = json::object();
  if (!anthropic_version.empty())
    headers["anthropic-version"] = anthropic_version;
  if (!anthropic_beta.empty())
    headers["anthropic-beta"] = anthropic_beta;
  if (!headers.empty())
    pass["headers"] = std::move(headers);
  if (pass.empty())
    return;
  auto& opt = r.turn.options;
  auto extra = opt.extra_json.empty() ? json::object() : json::parse(opt.extra_json, nullptr, false);
  if (!extra.is_object())
    extra = json::object();
  extra[llm::anthropic_passthrough_field] = std::move(pass);
  opt.extra_json = extra.dump(-1, ' ', false, json::error_handler_t::replace);
}

nlohmann::json anthropic_error_json(const std::string& type, const std::string& message) {
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

nlohmann::ordered_json tool_input_of(const std::string& arguments) {
  auto input = nlohmann::ordered_json::parse(arguments, nullptr, false);
  if (input.is_discarded() || !input.is_object())
    return nlohmann::ordered_json::object();
  return input;
}

namespace {

nlohmann::ordered_json anthropic_usage_json(const anthropic_usage& u) {
  return {{"input_tokens", u.input_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", 0},
          {"output_tokens", u.output_tokens}};
}

nlohmann::ordered_json anthropic_head(const anthropic_answer& a) {
  return {{"id", a.id}, {"type", "message"}, {"role", "assistant"}, {"model", a.model}};
}

} // namespace

nlohmann::ordered_json to_anthropic_message(const anthropic_answer& a) {
  auto out = anthropic_head(a);
  auto content = nlohmann::ordered_json::array();
  if (!a.text.empty() || a.tool_calls.empty())
    content.push_back({{"type", "text"}, {"text", a.text}});
  for (const auto& c : a.tool_calls)
    content.push_back(
      {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", tool_input_of(c.arguments)}});
  out["content"] = std::move(content);
  out["stop_reason"] = a.stop_reason.empty() ? "end_turn" : a.stop_reason;
  out["stop_sequence"] = a.stop_reason == "stop_sequence" ? nlohmann::ordered_json(a.stop_sequence)
                                                          : nlohmann::ordered_json(nullptr);
  out["usage"] = anthropic_usage_json(a.usage);
  return out;
}

std::string anthropic_sse(const nlohmann::json& payload) {
  return "event: " + payload.value("type", std::string{"message"}) + "\ndata: "
         + payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

nlohmann::json message_start_event(const anthropic_answer& head) {
  auto msg = anthropic_head(head);
  msg["content"] = nlohmann::ordered_json::array();
  msg["stop_reason"] = nullptr;
  msg["stop_sequence"] = nullptr;
  msg["usage"] = anthropic_usage_json(head.usage);
  return {{"type", "message_start"},
          {"message", nlohmann::json::parse(msg.dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace))}};
}

nlohmann::json message_delta_event(const std::string& stop_reason,
                                   const std::string& stop_sequence, int64_t output_tokens) {
  auto matched = stop_reason == "stop_sequence" ? nlohmann::json(stop_sequence)
                                                : nlohmann::json(nullptr);
  return {{"type", "message_delta"},
          {"delta", {{"stop_reason", stop_reason}, {"stop_sequence", std::move(matched)}}},
          {"usage", {{"output_tokens", output_tokens}}}};
}

} // namespace mneme::api
