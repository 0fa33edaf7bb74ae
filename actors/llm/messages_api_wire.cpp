// Anthropic's Messages API wire format; see messages_api_wire.hpp.
#include "actors/llm/messages_api_wire.hpp"

#include <nlohmann/json.hpp>

#include "policies/content_blocks.hpp"
#include "policies/tool_loop.hpp"

namespace mneme::llm {

namespace {

using ojson = nlohmann::ordered_json;

constexpr auto messages_replace_invalid = ojson::error_handler_t::replace;

// The messages being built: consecutive blocks of one role land in one message.
class message_builder {
 public:
  void add(const char* role, ojson block) {
    if (messages_.empty() || messages_.back()["role"] != role)
      messages_.push_back({{"role", role}, {"content", ojson::array()}});
    messages_.back()["content"].push_back(std::move(block));
  }
  ojson take() { return std::move(messages_); }

 private:
  ojson messages_ = ojson::array();
};

ojson text_block(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

// A row's content as blocks: its text as text blocks (empty ones left out), its block
// lines (policies/content_blocks.hpp) as the blocks they keep, verbatim.
ojson content_blocks(const std::string& content) {
  auto out = ojson::array();
  for (const auto& piece : split_block_lines(content)) {
    if (!piece.block) {
      if (!piece.text.empty())
        out.push_back(text_block(piece.text));
      continue;
    }
    auto block = ojson::parse(piece.text, nullptr, false);
    if (block.is_object() && block.contains("type") && block["type"] == piece.type)
      out.push_back(std::move(block));
    else // text that only looks like a block line
      out.push_back(text_block(block_line(piece.type, piece.text)));
  }
  return out;
}

// The blocks of a user or assistant row's content, added to `out` as `role`.
template <class Builder>
void add_content(Builder& out, const char* role, const std::string& content) {
  if (content.empty())
    return;
  if (!has_block_lines(content)) {
    out.add(role, text_block(content));
    return;
  }
  for (auto& b : content_blocks(content))
    out.add(role, std::move(b));
}

// A call's arguments as a tool_use `input`, which must be an object.
ojson tool_input(const std::string& arguments) {
  if (arguments.find_first_not_of(" \t\r\n") == std::string::npos)
    return ojson::object();
  auto parsed = ojson::parse(arguments, nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object())
    return parsed;
  return {{"arguments", arguments}};
}

ojson tool_result_block(const message& m) {
  ojson b{{"type", "tool_result"}, {"tool_use_id", m.tool_call_id}};
  if (has_block_lines(m.content))
    b["content"] = content_blocks(m.content);
  else if (!m.content.empty())
    b["content"] = m.content;
  if (std::string_view{m.content}.substr(0, tool_error_prefix.size()) == tool_error_prefix)
    b["is_error"] = true;
  return b;
}

ojson encode_messages(const std::vector<message>& rows, std::string& system) {
  message_builder out;
  bool leading = true;
  for (const auto& m : rows) {
    if (m.role == msg_role::system && leading) {
      if (!m.content.empty())
        system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    leading = false;
    switch (m.role) {
      case msg_role::system:
      case msg_role::user:
        add_content(out, "user", m.content);
        break;
      case msg_role::assistant:
        add_content(out, "assistant", m.content);
        for (const auto& c : m.tool_calls)
          out.add("assistant", {{"type", "tool_use"},
                                {"id", c.id},
                                {"name", c.name},
                                {"input", tool_input(c.arguments)}});
        break;
      case msg_role::tool:
        out.add("user", tool_result_block(m));
        break;
    }
  }
  return out.take();
}

// OpenAI function tools -> Anthropic tools; entries of another shape are left out.
ojson encode_tools(const std::string& tools_json) {
  auto out = ojson::array();
  if (tools_json.empty())
    return out;
  auto tools = ojson::parse(tools_json, nullptr, false);
  if (!tools.is_array())
    return out;
  for (const auto& t : tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object())
      continue;
    const auto& fn = t["function"];
    if (!fn.contains("name") || !fn["name"].is_string())
      continue;
    ojson tool{{"name", fn["name"]}};
    if (fn.contains("description") && fn["description"].is_string())
      tool["description"] = fn["description"];
    tool["input_schema"] = fn.contains("parameters") && fn["parameters"].is_object()
                             ? fn["parameters"]
                             : ojson{{"type", "object"}};
    out.push_back(std::move(tool));
  }
  return out;
}

// OpenAI's tool_choice -> Anthropic's; null when it has no equivalent.
ojson encode_tool_choice(const ojson& choice) {
  if (choice.is_string()) {
    auto s = choice.get<std::string>();
    if (s == "auto")
      return {{"type", "auto"}};
    if (s == "required")
      return {{"type", "any"}};
    if (s == "none")
      return {{"type", "none"}};
    return nullptr;
  }
  if (choice.is_object() && choice.contains("function") && choice["function"].is_object()
      && choice["function"].contains("name") && choice["function"]["name"].is_string())
    return {{"type", "tool"}, {"name", choice["function"]["name"]}};
  return nullptr;
}

std::optional<int64_t> messages_int(const ojson& obj, const char* key) {
  if (obj.contains(key) && obj[key].is_number_integer())
    return obj[key].get<int64_t>();
  return std::nullopt;
}

// The sampling, stop and tool-choice fields of an agent turn's extra fields.
void add_messages_extra_fields(const ojson& extra, bool tools, ojson& body) {
  if (extra.contains("top_p") && extra["top_p"].is_number())
    body["top_p"] = extra["top_p"];
  if (extra.contains("top_k") && extra["top_k"].is_number_integer())
    body["top_k"] = extra["top_k"];
  if (extra.contains("stop")) {
    const auto& stop = extra["stop"];
    auto seqs = ojson::array();
    if (stop.is_string())
      seqs.push_back(stop);
    else if (stop.is_array())
      for (const auto& s : stop)
        if (s.is_string())
          seqs.push_back(s);
    if (!seqs.empty())
      body["stop_sequences"] = std::move(seqs);
  }
  if (extra.contains("user") && extra["user"].is_string())
    body["metadata"] = {{"user_id", extra["user"]}};
  if (!tools)
    return; // the API refuses tool_choice without tools
  ojson choice = extra.contains("tool_choice") ? encode_tool_choice(extra["tool_choice"])
                                               : ojson(nullptr);
  bool serial = extra.contains("parallel_tool_calls") && extra["parallel_tool_calls"] == false;
  if (serial && choice.is_null())
    choice = {{"type", "auto"}};
  if (serial && choice["type"] != "none")
    choice["disable_parallel_tool_use"] = true;
  if (!choice.is_null())
    body["tool_choice"] = std::move(choice);
}

// The Anthropic door's passed-on top-level fields, each unless the body has it already.
void add_passthrough_fields(const ojson& extra, ojson& body) {
  auto pass = extra.find(anthropic_passthrough_field);
  if (pass == extra.end() || !pass->is_object())
    return;
  auto fields = pass->find("fields");
  if (fields == pass->end() || !fields->is_object())
    return;
  for (auto it = fields->begin(); it != fields->end(); ++it)
    if (!body.contains(it.key()))
      body[it.key()] = it.value();
}

bool header_value_ok(const std::string& v) {
  if (v.empty())
    return false;
  for (unsigned char c : v)
    if (c < 0x20 || c > 0x7e)
      return false;
  return true;
}

std::string messages_string(const ojson& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string())
    return {};
  return obj[key].get<std::string>();
}

} // namespace

std::string messages_url(std::string_view base_url) {
  std::string url{base_url};
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  constexpr std::string_view v1 = "/v1";
  bool has_v1 = url.size() >= v1.size() && url.compare(url.size() - v1.size(), v1.size(), v1) == 0;
  return url + (has_v1 ? "/messages" : "/v1/messages");
}

std::string to_messages_wire_json(const chat_request& req, int64_t default_max_tokens) {
  auto extra = req.extra_json.empty() ? ojson::object()
                                      : ojson::parse(req.extra_json, nullptr, false);
  if (!extra.is_object())
    extra = ojson::object();
  ojson body;
  body["model"] = req.model;
  auto max_tokens = req.max_tokens ? req.max_tokens
                    : messages_int(extra, "max_tokens")
                      ? messages_int(extra, "max_tokens")
                      : messages_int(extra, "max_completion_tokens");
  body["max_tokens"] = max_tokens && *max_tokens > 0 ? *max_tokens : default_max_tokens;
  std::string system;
  auto messages = encode_messages(req.messages, system);
  if (!system.empty())
    body["system"] = system;
  body["messages"] = std::move(messages);
  auto tools = encode_tools(req.tools_json);
  bool has_tools = !tools.empty();
  if (has_tools)
    body["tools"] = std::move(tools);
  if (req.temperature)
    body["temperature"] = *req.temperature;
  else if (extra.contains("temperature") && extra["temperature"].is_number())
    body["temperature"] = extra["temperature"];
  add_messages_extra_fields(extra, has_tools, body);
  body["stream"] = req.stream;
  add_passthrough_fields(extra, body);
  return body.dump(-1, ' ', false, messages_replace_invalid);
}

std::vector<std::string> messages_client_headers(const chat_request& req) {
  std::vector<std::string> out;
  if (req.extra_json.find(anthropic_passthrough_field) == std::string::npos)
    return out;
  auto extra = ojson::parse(req.extra_json, nullptr, false);
  if (!extra.is_object() || !extra.contains(anthropic_passthrough_field))
    return out;
  const auto& pass = extra[anthropic_passthrough_field];
  if (!pass.is_object() || !pass.contains("headers") || !pass["headers"].is_object())
    return out;
  for (const char* name : {"anthropic-version", "anthropic-beta"}) {
    auto v = messages_string(pass["headers"], name);
    if (header_value_ok(v))
      out.push_back(std::string{name} + ": " + v);
  }
  return out;
}

std::string finish_reason_of_stop(std::string_view stop_reason) {
  if (stop_reason == "end_turn" || stop_reason == "stop_sequence")
    return "stop";
  if (stop_reason == "tool_use")
    return "tool_calls";
  if (stop_reason == "max_tokens")
    return "length";
  if (stop_reason == "refusal")
    return "content_filter";
  return std::string{stop_reason};
}

parsed_answer parse_messages_answer(std::string_view body, llm_purpose purpose) {
  parsed_answer out;
  auto doc = ojson::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    out.kind = llm_error_kind::malformed;
    out.detail = "answer is not a JSON object";
    return out;
  }
  if (!doc.contains("content") || !doc["content"].is_array()) {
    out.kind = llm_error_kind::malformed;
    out.detail = "answer has no content array";
    return out;
  }
  auto& ans = out.answer;
  auto stop_reason = messages_string(doc, "stop_reason");
  ans.finish_reason = finish_reason_of_stop(stop_reason);
  if (stop_reason == "stop_sequence")
    ans.stop_sequence = messages_string(doc, "stop_sequence");
  if (doc.contains("usage") && doc["usage"].is_object()) {
    const auto& u = doc["usage"];
    for (const char* k : {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"})
      ans.prompt_tokens += messages_int(u, k).value_or(0);
    ans.completion_tokens = messages_int(u, "output_tokens").value_or(0);
  }
  std::string text;
  bool had_reasoning = false;
  for (const auto& block : doc["content"]) {
    auto type = messages_string(block, "type");
    if (type == "text") {
      text += messages_string(block, "text");
    } else if (type == "tool_use") {
      tool_call tc;
      tc.id = messages_string(block, "id");
      tc.name = messages_string(block, "name");
      tc.arguments = block.contains("input") && !block["input"].is_null()
                       ? block["input"].dump(-1, ' ', false, messages_replace_invalid)
                       : std::string{"{}"};
      ans.tool_calls.push_back(std::move(tc));
    } else if (type == "thinking" || type == "redacted_thinking") {
      had_reasoning = true;
    }
  }
  ans.content = strip_reasoning_blocks(text);
  check_answer_content(out, purpose, had_reasoning);
  return out;
}

messages_api_error read_messages_api_error(std::string_view body) {
  messages_api_error out;
  auto doc = ojson::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("error")
      || !doc["error"].is_object())
    return out;
  const auto& err = doc["error"];
  out.found = true;
  out.type = messages_string(err, "type");
  out.message = messages_string(err, "message");
  return out;
}

} // namespace mneme::llm
