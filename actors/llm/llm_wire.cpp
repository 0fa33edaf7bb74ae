// OpenAI chat-completions wire format; see llm_wire.hpp.
#include "actors/llm/llm_wire.hpp"

#include <array>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "actors/llm/messages_api_wire.hpp" // anthropic_passthrough_field
#include "policies/content_blocks.hpp"
#include "policies/json_text.hpp"

namespace mneme::llm {

using nlohmann::json;

namespace {

// An Anthropic image block's `source` as an image_url URL: a data: URL of base64 data,
// the url of a url source; "" for any other source.
std::string image_url_of(const json& block) {
  if (!block.contains("source") || !block["source"].is_object())
    return {};
  const auto& src = block["source"];
  auto text = [&src](const char* k) {
    return src.contains(k) && src[k].is_string() ? src[k].get<std::string>() : std::string{};
  };
  if (text("type") == "base64" && !text("data").empty())
    return "data:" + text("media_type") + ";base64," + text("data");
  if (text("type") == "url")
    return text("url");
  return {};
}

// A user row holding content blocks (policies/content_blocks.hpp) as content parts: its
// text as text parts, its images as image_url parts; any other block (kept while the
// upstream spoke the Messages API) as its "[TYPE]" placeholder text.
json content_parts(const std::string& content) {
  json parts = json::array();
  for (const auto& piece : split_block_lines(content)) {
    if (!piece.block) {
      if (!piece.text.empty())
        parts.push_back({{"type", "text"}, {"text", piece.text}});
      continue;
    }
    auto block = json::parse(piece.text, nullptr, false);
    if (!block.is_object() || !block.contains("type") || block["type"] != piece.type) {
      parts.push_back({{"type", "text"}, {"text", block_line(piece.type, piece.text)}});
      continue; // text that only looks like a block line
    }
    std::string url;
    if (piece.type == "image")
      url = image_url_of(block);
    if (!url.empty())
      parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
    else
      parts.push_back({{"type", "text"}, {"text", "[" + piece.type + "]"}});
  }
  return parts;
}

} // namespace

json message_to_json(const message& m) {
  json j;
  j["role"] = std::string{to_string(m.role)};
  if (m.role == msg_role::assistant && m.has_tool_calls()) {
    j["content"] = m.content.empty() ? json(nullptr) : json(m.content);
    auto calls = json::array();
    for (const auto& c : m.tool_calls)
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    j["tool_calls"] = std::move(calls);
  } else if (m.role == msg_role::user && has_block_lines(m.content)) {
    j["content"] = content_parts(m.content);
  } else {
    j["content"] = m.content;
  }
  if (m.role == msg_role::tool) {
    j["tool_call_id"] = m.tool_call_id;
    if (!m.tool_name.empty())
      j["name"] = m.tool_name;
  }
  return j;
}

void append_message_json(std::string& out, const message& m) {
  // The members in nlohmann's (sorted) order: content, name, role, tool_call_id, tool_calls.
  out += "{\"content\":";
  bool calls = m.role == msg_role::assistant && m.has_tool_calls();
  if (calls && m.content.empty())
    out += "null";
  else if (m.role == msg_role::user && has_block_lines(m.content))
    out += content_parts(m.content).dump(-1, ' ', false, json::error_handler_t::replace);
  else
    append_json_string(out, m.content);
  bool tool = m.role == msg_role::tool;
  if (tool && !m.tool_name.empty()) {
    out += ",\"name\":";
    append_json_string(out, m.tool_name);
  }
  out += ",\"role\":";
  append_json_string(out, to_string(m.role));
  if (tool) {
    out += ",\"tool_call_id\":";
    append_json_string(out, m.tool_call_id);
  }
  if (calls) {
    out += ",\"tool_calls\":[";
    bool first = true;
    for (const auto& c : m.tool_calls) {
      if (!first)
        out.push_back(',');
      first = false;
      out += "{\"function\":{\"arguments\":";
      append_json_string(out, c.arguments);
      out += ",\"name\":";
      append_json_string(out, c.name);
      out += "},\"id\":";
      append_json_string(out, c.id);
      out += ",\"type\":\"function\"}";
    }
    out.push_back(']');
  }
  out.push_back('}');
}

namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos)
    return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}


std::string string_or_empty(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string())
    return {};
  return obj[key].get<std::string>();
}

// `tools_json` as its document dumps it when it is a non-empty array, else "". A model
// call of a tool loop sends the same tools every round: the text is kept per thread
// (bounded; the whole cache is dropped when full) so a round does not parse and dump them
// again.
const std::string& normalized_tools(const std::string& tools_json) {
  static const std::string none;
  if (tools_json.empty())
    return none;
  constexpr size_t max_cached_bytes = 4 * 1024 * 1024;
  thread_local std::unordered_map<std::string, std::string> cache;
  thread_local size_t cached_bytes = 0;
  if (auto it = cache.find(tools_json); it != cache.end())
    return it->second;
  auto t = json::parse(tools_json, nullptr, false);
  std::string text;
  if (t.is_array() && !t.empty())
    text = t.dump(-1, ' ', false, json::error_handler_t::replace);
  if (cached_bytes + tools_json.size() + text.size() > max_cached_bytes) {
    cache.clear();
    cached_bytes = 0;
  }
  cached_bytes += tools_json.size() + text.size();
  return cache.emplace(tools_json, std::move(text)).first->second;
}

// The verbatim fields of an agent turn; `tools`: the request sends tools. The text was
// validated as JSON by the HTTP front; text that does not parse is left out rather than
// thrown.
void add_extra_fields(const chat_request& req, bool tools, json& j) {
  if (req.extra_json.empty())
    return;
  auto extra = json::parse(req.extra_json, nullptr, false);
  if (!extra.is_object())
    return;
  for (auto it = extra.begin(); it != extra.end(); ++it) {
    if (it.key() == anthropic_passthrough_field)
      continue; // for an upstream speaking the Messages API only
    bool tool_field = it.key() == "tool_choice" || it.key() == "parallel_tool_calls";
    if (tool_field && !tools)
      continue; // APIs refuse tool_choice without tools
    if (j.contains(it.key()))
      continue; // never overrides model, messages, stream, tools
    j[it.key()] = it.value();
  }
}

} // namespace

std::string content_text(const json& content) {
  if (content.is_string())
    return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.contains("text") && part["text"].is_string())
        out += part["text"].get<std::string>();
  return out;
}

std::string to_wire_json(const chat_request& req) {
  // Every member but "messages" and "tools" goes through a (small) document; those two,
  // the bulk of the body, are written directly at their place in the document's sorted
  // order (their members hold the place as null).
  json j;
  j["model"] = req.model;
  if (req.max_tokens)
    j["max_tokens"] = *req.max_tokens;
  if (req.temperature)
    j["temperature"] = *req.temperature;
  j["stream"] = req.stream;
  if (req.stream) // the token counts come on the stream's last chunk
    j["stream_options"] = {{"include_usage", true}};
  j["messages"] = nullptr;
  const auto& tools = normalized_tools(req.tools_json);
  if (!tools.empty())
    j["tools"] = nullptr;
  add_extra_fields(req, !tools.empty(), j);
  if (req.server_compact_threshold > 0)
    j["context_management"] = json::array(
      {{{"type", "compaction"}, {"compact_threshold", req.server_compact_threshold}}});
  size_t text_bytes = 0;
  for (const auto& m : req.messages)
    text_bytes += m.content.size() + 64;
  std::string out;
  out.reserve(text_bytes + 256);
  out.push_back('{');
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first)
      out.push_back(',');
    first = false;
    append_json_string(out, it.key());
    out.push_back(':');
    if (it.key() == "messages") {
      out.push_back('[');
      for (size_t i = 0; i < req.messages.size(); ++i) {
        if (i > 0)
          out.push_back(',');
        append_message_json(out, req.messages[i]);
      }
      out.push_back(']');
    } else if (it.key() == "tools" && !tools.empty()) {
      out += tools;
    } else {
      out += it.value().dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  out.push_back('}');
  return out;
}

std::string strip_reasoning_blocks(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> tags{{
    {"<think>", "</think>"},
    {"<thinking>", "</thinking>"},
    {"<reasoning>", "</reasoning>"},
  }};
  std::string out{text};
  for (const auto& [open, close] : tags) {
    for (auto pos = out.find(open); pos != std::string::npos; pos = out.find(open, pos)) {
      auto end = out.find(close, pos + open.size());
      if (end == std::string::npos) {
        out.erase(pos);
        break;
      }
      out.erase(pos, end + close.size() - pos);
    }
  }
  // A stray closing tag means the opening one was cut off: the thinking came first.
  for (const auto& [open, close] : tags) {
    auto end = out.rfind(close);
    if (end != std::string::npos)
      out.erase(0, end + close.size());
  }
  return std::string{trim(out)};
}

parsed_answer parse_chat_answer(std::string_view body, llm_purpose purpose) {
  parsed_answer out;
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    out.kind = llm_error_kind::malformed;
    out.detail = "answer is not a JSON object";
    return out;
  }
  if (!doc.contains("choices") || !doc["choices"].is_array() || doc["choices"].empty()
      || !doc["choices"][0].is_object() || !doc["choices"][0].contains("message")
      || !doc["choices"][0]["message"].is_object()) {
    out.kind = llm_error_kind::malformed;
    out.detail = "answer has no choices[0].message";
    return out;
  }
  const auto& choice = doc["choices"][0];
  const auto& msg = choice["message"];
  auto& ans = out.answer;
  ans.server_compacted = doc.contains("compaction") && doc["compaction"].is_object()
                         && string_or_empty(doc["compaction"], "type") == "compaction";
  ans.finish_reason = string_or_empty(choice, "finish_reason");
  // vLLM names the stop string that ended the answer in stop_reason (a token id, a
  // number, when a stop token did; null at the end of the text).
  if (ans.finish_reason == "stop")
    ans.stop_sequence = string_or_empty(choice, "stop_reason");
  if (doc.contains("usage")) {
    ans.prompt_tokens = json_int_or_zero(doc["usage"], "prompt_tokens");
    ans.completion_tokens = json_int_or_zero(doc["usage"], "completion_tokens");
  }
  if (msg.contains("tool_calls") && msg["tool_calls"].is_array()) {
    for (const auto& c : msg["tool_calls"]) {
      if (!c.is_object())
        continue;
      tool_call tc;
      tc.id = string_or_empty(c, "id");
      if (c.contains("function") && c["function"].is_object()) {
        tc.name = string_or_empty(c["function"], "name");
        const auto& args = c["function"].contains("arguments") ? c["function"]["arguments"]
                                                                : json();
        tc.arguments = args.is_string() ? args.get<std::string>()
                       : args.is_null() ? std::string{}
                                        : args.dump(-1, ' ', false, json::error_handler_t::replace);
      }
      ans.tool_calls.push_back(std::move(tc));
    }
  }
  ans.content = strip_reasoning_blocks(msg.contains("content") ? content_text(msg["content"])
                                                               : std::string{});
  check_answer_content(out, purpose,
                       !string_or_empty(msg, "reasoning_content").empty()
                         || !string_or_empty(msg, "reasoning").empty());
  return out;
}

void check_answer_content(parsed_answer& out, llm_purpose purpose, bool had_reasoning) {
  const auto& ans = out.answer;
  bool tool_answer = purpose == llm_purpose::chat && !ans.tool_calls.empty();
  if (!ans.content.empty() || tool_answer)
    return;
  out.kind = llm_error_kind::empty_answer;
  out.detail = had_reasoning ? "answer holds reasoning only, content is empty"
                             : "answer content is empty";
  out.detail += " (finish_reason=" + ans.finish_reason + ")";
}

int error_status_in_body(std::string_view body) {
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("error")
      || doc.contains("choices"))
    return 0;
  const auto& err = doc["error"];
  if (!err.is_object() || !err.contains("code"))
    return 0;
  const auto& code = err["code"];
  int status = 0;
  if (code.is_number_integer())
    status = code.get<int>();
  else if (code.is_string()) {
    const auto& s = code.get_ref<const std::string&>();
    if (s.size() == 3 && std::isdigit(static_cast<unsigned char>(s[0])))
      status = std::atoi(s.c_str());
  }
  return status >= 400 && status <= 599 ? status : 0;
}

int64_t json_int_or_zero(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key))
    return 0;
  const auto& v = obj[key];
  return v.is_number_integer() ? v.get<int64_t>() : 0;
}

} // namespace mneme::llm
