// The fake LLM's Anthropic Messages wire format; see messages_wire.hpp.
#include "apps/common/fakellm/messages_wire.hpp"

#include <cassert>

#include <nlohmann/json.hpp>

#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme::fakellm {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

caf::error refused(std::string what) { return caf::make_error(errc::bad_request, std::move(what)); }

std::string dump_ordered(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

// A string, or an array of text blocks (other blocks refused).
caf::expected<std::string> blocks_text(const ojson& v, const std::string& where) {
  if (v.is_string())
    return v.get<std::string>();
  if (!v.is_array())
    return refused(where + " must be a string or an array of text blocks");
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto& b = v[i];
    if (b.is_object() && b.contains("type") && b["type"].is_string() && b["type"] != "text") {
      out += "[" + b["type"].get<std::string>() + "]"; // image, search_result, ...: taken
      continue;
    }
    if (!b.is_object() || b.value("type", "") != "text" || !b.contains("text")
        || !b["text"].is_string())
      return refused(where + "[" + std::to_string(i) + "] must be a text block");
    out += b["text"].get<std::string>();
  }
  return out;
}

caf::error parse_messages_row(const ojson& m, const std::string& where, std::vector<message>& out) {
  if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
    return refused(where + ".role must be a string");
  auto role = m["role"].get<std::string>();
  if (role != "user" && role != "assistant")
    return refused(where + ".role '" + role + "' is not user|assistant");
  if (!m.contains("content"))
    return refused(where + ".content is required");
  const auto& content = m["content"];
  message text_row;
  text_row.role = role == "user" ? msg_role::user : msg_role::assistant;
  if (content.is_string()) {
    text_row.content = content.get<std::string>();
    out.push_back(std::move(text_row));
    return {};
  }
  if (!content.is_array())
    return refused(where + ".content must be a string or an array of blocks");
  bool any_text = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const auto& b = content[i];
    auto at = where + ".content[" + std::to_string(i) + "]";
    auto type = b.is_object() ? b.value("type", "") : std::string{};
    if (type == "text" && b.contains("text") && b["text"].is_string()) {
      text_row.content += (any_text ? "\n" : "") + b["text"].get<std::string>();
      any_text = true;
    } else if (type == "tool_use" && role == "assistant") {
      if (!b.contains("id") || !b["id"].is_string() || !b.contains("name")
          || !b["name"].is_string() || !b.contains("input") || !b["input"].is_object())
        return refused(at + " must have a string id and name and an object input");
      text_row.tool_calls.push_back(
        {b["id"].get<std::string>(), b["name"].get<std::string>(), dump_ordered(b["input"])});
    } else if (type == "tool_result" && role == "user") {
      if (!b.contains("tool_use_id") || !b["tool_use_id"].is_string())
        return refused(at + ".tool_use_id must be a string");
      message tool;
      tool.role = msg_role::tool;
      tool.tool_call_id = b["tool_use_id"].get<std::string>();
      if (b.contains("content")) {
        auto text = blocks_text(b["content"], at + ".content");
        if (!text)
          return std::move(text.error());
        tool.content = std::move(*text);
      }
      out.push_back(std::move(tool));
    } else if (type == "tool_use" || type == "tool_result" || type.empty()) {
      return refused(at + ".type '" + type + "' is not a block the " + role + " may send");
    } else {
      // image, document, thinking, ...: Anthropic takes them; the fake reads a placeholder.
      text_row.content += (any_text ? "\n[" : "[") + type + "]";
      any_text = true;
    }
  }
  if (any_text || !text_row.tool_calls.empty())
    out.push_back(std::move(text_row));
  return {};
}

std::string fake_stop_reason(const completion& c) {
  if (c.finish_reason == "tool_calls")
    return "tool_use";
  if (c.finish_reason == "length")
    return "max_tokens";
  return c.stop_sequence.empty() ? "end_turn" : "stop_sequence";
}

ojson fake_stop_sequence(const completion& c) {
  return c.stop_sequence.empty() || fake_stop_reason(c) != "stop_sequence" ? ojson(nullptr)
                                                                         : ojson(c.stop_sequence);
}

std::string fake_message_id(const completion& c) {
  constexpr std::string_view chat_prefix = "chatcmpl-";
  std::string_view id = c.id;
  if (id.substr(0, chat_prefix.size()) == chat_prefix)
    id.remove_prefix(chat_prefix.size());
  return "msg_" + std::string{id};
}

ojson messages_usage(const completion& c, bool with_input) {
  ojson u;
  if (with_input)
    u["input_tokens"] = c.prompt_tokens;
  u["output_tokens"] = c.completion_tokens;
  return u;
}

std::vector<std::string> text_pieces(const std::string& s, size_t n) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t len = utf8_prefix_length(std::string_view{s}.substr(at), n);
    if (len == 0) { // one character longer than n: it is sent whole, never split
      len = 1;
      while (at + len < s.size() && (static_cast<unsigned char>(s[at + len]) & 0xC0) == 0x80)
        ++len;
    }
    out.push_back(s.substr(at, len));
    at += len;
  }
  return out;
}

std::string named_event(const ojson& data) {
  return "event: " + data["type"].get<std::string>() + "\ndata: " + dump_ordered(data) + "\n\n";
}

} // namespace

caf::expected<chat_call> parse_messages_call(std::string_view body) {
  auto doc = ojson::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded())
    return refused("request body is not valid JSON");
  if (!doc.is_object())
    return refused("request body must be a JSON object");
  chat_call call;
  if (!doc.contains("model") || !doc["model"].is_string() || doc["model"].get<std::string>().empty())
    return refused("model must be a non-empty string");
  call.model = doc["model"].get<std::string>();
  if (!doc.contains("max_tokens") || !doc["max_tokens"].is_number_integer()
      || doc["max_tokens"].get<int64_t>() < 1)
    return refused("max_tokens: field required (an integer >= 1)");
  call.max_tokens = doc["max_tokens"].get<int64_t>();
  if (doc.contains("system")) {
    auto system = blocks_text(doc["system"], "system");
    if (!system)
      return std::move(system.error());
    message m;
    m.role = msg_role::system;
    m.content = std::move(*system);
    call.messages.push_back(std::move(m));
  }
  if (!doc.contains("messages") || !doc["messages"].is_array() || doc["messages"].empty())
    return refused("messages must be a non-empty array");
  const auto& msgs = doc["messages"];
  for (size_t i = 0; i < msgs.size(); ++i)
    if (auto err = parse_messages_row(msgs[i], "messages[" + std::to_string(i) + "]", call.messages))
      return err;
  if (doc.contains("tools")) {
    const auto& tools = doc["tools"];
    if (!tools.is_array())
      return refused("tools must be an array");
    for (size_t i = 0; i < tools.size(); ++i) {
      const auto& t = tools[i];
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
        return refused("tools[" + std::to_string(i) + "] must be an object with a string name");
      offered_tool tool;
      tool.name = t["name"].get<std::string>();
      tool.schema_bytes = static_cast<int64_t>(dump_ordered(t).size());
      if (t.contains("input_schema") && t["input_schema"].is_object())
        tool.parameters_json = dump_ordered(t["input_schema"]);
      call.tools.push_back(std::move(tool));
    }
  }
  if (doc.contains("stream")) {
    if (!doc["stream"].is_boolean())
      return refused("stream must be a boolean");
    call.stream = doc["stream"].get<bool>();
  }
  if (doc.contains("stop_sequences") && !doc["stop_sequences"].is_null()) {
    const auto& seqs = doc["stop_sequences"];
    if (!seqs.is_array())
      return refused("stop_sequences: an array of strings");
    for (const auto& s : seqs) {
      if (!s.is_string())
        return refused("stop_sequences: an array of strings");
      call.stop.push_back(s.get<std::string>());
    }
  }
  return call;
}

std::string messages_body(const completion& c) {
  ojson content = ojson::array();
  if (!c.reasoning_content.empty())
    content.push_back({{"type", "thinking"}, {"thinking", c.reasoning_content},
                       {"signature", "fake"}});
  if (!c.content.empty() || c.tool_calls.empty())
    content.push_back({{"type", "text"}, {"text", c.content}});
  for (const auto& tc : c.tool_calls) {
    auto input = ojson::parse(tc.arguments, nullptr, false);
    content.push_back({{"type", "tool_use"}, {"id", tc.id}, {"name", tc.name},
                       {"input", input.is_object() ? input : ojson::object()}});
  }
  ojson body{{"id", fake_message_id(c)},       {"type", "message"},
             {"role", "assistant"},       {"model", c.model},
             {"content", std::move(content)}, {"stop_reason", fake_stop_reason(c)},
             {"stop_sequence", fake_stop_sequence(c)}};
  if (c.report_usage)
    body["usage"] = messages_usage(c, true);
  return dump_ordered(body);
}

std::vector<std::string> messages_events(const completion& c, size_t piece_bytes) {
  assert(piece_bytes > 0);
  std::vector<std::string> out;
  ojson start_usage{{"input_tokens", c.report_usage ? c.prompt_tokens : 0}, {"output_tokens", 1}};
  out.push_back(named_event({{"type", "message_start"},
                       {"message", {{"id", fake_message_id(c)}, {"type", "message"},
                                    {"role", "assistant"}, {"model", c.model},
                                    {"content", ojson::array()}, {"stop_reason", nullptr},
                                    {"stop_sequence", nullptr}, {"usage", start_usage}}}}));
  out.push_back(named_event({{"type", "ping"}}));
  size_t index = 0;
  if (!c.reasoning_content.empty()) {
    out.push_back(named_event({{"type", "content_block_start"}, {"index", index},
                         {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}));
    out.push_back(named_event({{"type", "content_block_delta"}, {"index", index},
                         {"delta", {{"type", "thinking_delta"}, {"thinking", c.reasoning_content}}}}));
    out.push_back(named_event({{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  if (!c.content.empty() || c.tool_calls.empty()) {
    out.push_back(named_event({{"type", "content_block_start"}, {"index", index},
                         {"content_block", {{"type", "text"}, {"text", ""}}}}));
    for (const auto& p : text_pieces(c.content, piece_bytes))
      out.push_back(named_event({{"type", "content_block_delta"}, {"index", index},
                           {"delta", {{"type", "text_delta"}, {"text", p}}}}));
    out.push_back(named_event({{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  for (const auto& tc : c.tool_calls) {
    out.push_back(named_event({{"type", "content_block_start"}, {"index", index},
                         {"content_block", {{"type", "tool_use"}, {"id", tc.id},
                                            {"name", tc.name}, {"input", ojson::object()}}}}));
    auto input = ojson::parse(tc.arguments, nullptr, false);
    auto text = input.is_object() ? dump_ordered(input) : std::string{"{}"};
    for (const auto& p : text_pieces(text, std::max<size_t>(1, piece_bytes / 4)))
      out.push_back(named_event({{"type", "content_block_delta"}, {"index", index},
                           {"delta", {{"type", "input_json_delta"}, {"partial_json", p}}}}));
    out.push_back(named_event({{"type", "content_block_stop"}, {"index", index}}));
    ++index;
  }
  ojson delta{{"type", "message_delta"},
              {"delta", {{"stop_reason", fake_stop_reason(c)},
                         {"stop_sequence", fake_stop_sequence(c)}}}};
  if (c.report_usage)
    delta["usage"] = messages_usage(c, false);
  out.push_back(named_event(delta));
  out.push_back(named_event({{"type", "message_stop"}}));
  return out;
}

std::string messages_error_body(std::string_view type, std::string_view message) {
  ojson body{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  return dump_ordered(body);
}

std::string messages_error_event(std::string_view type, std::string_view message) {
  return "event: error\ndata: " + messages_error_body(type, message) + "\n\n";
}

} // namespace mneme::fakellm
