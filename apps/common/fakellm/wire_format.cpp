// Implementation of the chat-completions wire format (see wire_format.hpp).
#include "apps/common/fakellm/wire_format.hpp"

#include <cassert>
#include <nlohmann/json.hpp>

#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme::fakellm {

namespace {

using json = nlohmann::json;

caf::error bad(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

// content: a string, null, or an array of {"type":"text","text":...} parts.
caf::expected<std::string> content_text(const json& c, const std::string& where) {
  if (c.is_null()) return std::string{};
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) return bad(where + ".content must be a string, null or an array of parts");
  std::string out;
  for (const auto& part : c) {
    if (!part.is_object()) return bad(where + ".content parts must be objects");
    auto t = part.find("text");
    if (t != part.end()) {
      if (!t->is_string()) return bad(where + ".content[].text must be a string");
      out += t->get<std::string>();
    }
  }
  return out;
}

caf::expected<std::string> optional_string(const json& obj, const char* key,
                                           const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string{};
  if (!it->is_string()) return bad(where + "." + key + " must be a string");
  return it->get<std::string>();
}

caf::expected<message> parse_message(const json& m, const std::string& where) {
  if (!m.is_object()) return bad(where + " must be an object");
  auto role_it = m.find("role");
  if (role_it == m.end() || !role_it->is_string()) return bad(where + ".role must be a string");
  auto role_text = role_it->get<std::string>();
  if (role_text == "developer") role_text = "system";
  auto role = parse_role(role_text);
  if (!role) return bad(where + ".role '" + role_text + "' is not system|user|assistant|tool");
  message out;
  out.role = *role;
  if (auto c = m.find("content"); c != m.end()) {
    auto text = content_text(*c, where);
    if (!text) return std::move(text.error());
    out.content = std::move(*text);
  }
  auto call_id = optional_string(m, "tool_call_id", where);
  if (!call_id) return std::move(call_id.error());
  out.tool_call_id = std::move(*call_id);
  auto name = optional_string(m, "name", where);
  if (!name) return std::move(name.error());
  out.tool_name = std::move(*name);
  if (auto calls = m.find("tool_calls"); calls != m.end() && !calls->is_null()) {
    if (!calls->is_array()) return bad(where + ".tool_calls must be an array");
    for (const auto& call : *calls) {
      if (!call.is_object()) return bad(where + ".tool_calls[] must be objects");
      tool_call tc;
      tc.id = call.value("id", "");
      if (auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
        tc.name = fn->value("name", "");
        tc.arguments = fn->value("arguments", "");
      }
      out.tool_calls.push_back(std::move(tc));
    }
  }
  return out;
}

json usage_json(const completion& c) {
  return {{"prompt_tokens", c.prompt_tokens},
          {"completion_tokens", c.completion_tokens},
          {"total_tokens", c.prompt_tokens + c.completion_tokens}};
}

json compaction_marker(const completion& c) {
  return {{"type", "compaction"},
          {"id", "cmp-" + c.id},
          {"encrypted_content", "fake-opaque-compaction-" + c.id},
          {"tokens_before", c.compacted_tokens_before},
          {"tokens_after", c.compacted_tokens_after}};
}

json chunk_json(const completion& c, json delta, json finish_reason) {
  return {{"id", c.id},
          {"object", "chat.completion.chunk"},
          {"created", c.created},
          {"model", c.model},
          {"choices", json::array({{{"index", 0}, {"delta", std::move(delta)},
                                    {"finish_reason", std::move(finish_reason)}}})}};
}

// Splits `s` into pieces of at most `n` bytes without splitting UTF-8 sequences.
std::vector<std::string> pieces(const std::string& s, size_t n) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    // At least one byte per piece, even when one character is longer than n.
    size_t len = std::max<size_t>(1, utf8_prefix_length(std::string_view{s}.substr(at), n));
    out.push_back(s.substr(at, len));
    at += len;
  }
  return out;
}

// Serializes without throwing: invalid UTF-8 (e.g. echoed from a raw request
// line) becomes U+FFFD instead of an exception on the server's loop thread.
std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

} // namespace

caf::expected<chat_call> parse_chat_call(std::string_view body) {
  auto doc = json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded()) return bad("request body is not valid JSON");
  if (!doc.is_object()) return bad("request body must be a JSON object");
  chat_call call;
  auto model = doc.find("model");
  if (model == doc.end() || !model->is_string() || model->get<std::string>().empty())
    return bad("model must be a non-empty string");
  call.model = model->get<std::string>();
  auto msgs = doc.find("messages");
  if (msgs == doc.end() || !msgs->is_array() || msgs->empty())
    return bad("messages must be a non-empty array");
  for (size_t i = 0; i < msgs->size(); ++i) {
    auto m = parse_message((*msgs)[i], "messages[" + std::to_string(i) + "]");
    if (!m) return std::move(m.error());
    call.messages.push_back(std::move(*m));
  }
  if (auto tools = doc.find("tools"); tools != doc.end() && !tools->is_null()) {
    if (!tools->is_array()) return bad("tools must be an array");
    for (size_t i = 0; i < tools->size(); ++i) {
      const auto& t = (*tools)[i];
      auto where = "tools[" + std::to_string(i) + "]";
      auto fn = t.is_object() ? t.find("function") : t.end();
      if (!t.is_object() || fn == t.end() || !fn->is_object() || !fn->contains("name")
          || !(*fn)["name"].is_string())
        return bad(where + " must be an object with function.name");
      offered_tool tool;
      tool.name = (*fn)["name"].get<std::string>();
      tool.schema_bytes = static_cast<int64_t>(dump(t).size());
      if (auto p = fn->find("parameters"); p != fn->end() && p->is_object())
        tool.parameters_json = dump(*p);
      call.tools.push_back(std::move(tool));
    }
  }
  if (auto s = doc.find("stream"); s != doc.end() && !s->is_null()) {
    if (!s->is_boolean()) return bad("stream must be a boolean");
    call.stream = s->get<bool>();
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    auto it = doc.find(key);
    if (it == doc.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1)
      return bad(std::string(key) + " must be a positive integer");
    call.max_tokens = it->get<int64_t>();
  }
  if (auto st = doc.find("stop"); st != doc.end() && !st->is_null()) {
    if (st->is_string()) {
      call.stop.push_back(st->get<std::string>());
    } else if (st->is_array()) {
      for (const auto& s : *st) {
        if (!s.is_string()) return bad("stop must be a string or an array of strings");
        call.stop.push_back(s.get<std::string>());
      }
    } else {
      return bad("stop must be a string or an array of strings");
    }
  }
  if (auto cm = doc.find("context_management"); cm != doc.end() && !cm->is_null()) {
    if (!cm->is_array()) return bad("context_management must be an array");
    for (size_t i = 0; i < cm->size(); ++i) {
      const auto& entry = (*cm)[i];
      auto where = "context_management[" + std::to_string(i) + "]";
      if (!entry.is_object() || !entry.contains("type") || !entry["type"].is_string())
        return bad(where + " must be an object with a string type");
      if (entry["type"] != "compaction") continue;
      auto t = entry.find("compact_threshold");
      if (t == entry.end() || !t->is_number_integer() || t->get<int64_t>() < 1)
        return bad(where + ".compact_threshold must be a positive integer");
      call.compact_threshold = t->get<int64_t>();
    }
  }
  return call;
}

namespace {

json tool_calls_json(const completion& c) {
  auto calls = json::array();
  for (const auto& tc : c.tool_calls)
    calls.push_back({{"id", tc.id},
                     {"type", "function"},
                     {"function", {{"name", tc.name}, {"arguments", tc.arguments}}}});
  return calls;
}

// The deltas of tool calls as OpenAI streams them: per call, a first fragment with index,
// id, type and name and empty arguments, then the arguments in pieces with the index only.
std::vector<json> tool_call_deltas(const completion& c, size_t piece_bytes) {
  std::vector<json> out;
  for (size_t i = 0; i < c.tool_calls.size(); ++i) {
    const auto& tc = c.tool_calls[i];
    out.push_back({{"index", i},
                   {"id", tc.id},
                   {"type", "function"},
                   {"function", {{"name", tc.name}, {"arguments", ""}}}});
    for (auto& p : pieces(tc.arguments, piece_bytes))
      out.push_back({{"index", i}, {"function", {{"arguments", std::move(p)}}}});
  }
  return out;
}

} // namespace

std::string apply_stop_sequences(std::string& text, const std::vector<std::string>& stops) {
  auto best = std::string::npos;
  std::string matched;
  for (const auto& s : stops) {
    if (s.empty()) continue;
    auto at = text.find(s);
    if (at != std::string::npos && (best == std::string::npos || at < best)) {
      best = at;
      matched = s;
    }
  }
  if (best != std::string::npos) text.resize(best);
  return matched;
}

std::string completion_body(const completion& c) {
  json msg = {{"role", "assistant"}, {"content", c.content}};
  if (!c.tool_calls.empty()) {
    if (c.content.empty()) msg["content"] = nullptr;
    msg["tool_calls"] = tool_calls_json(c);
  }
  if (!c.reasoning_content.empty()) msg["reasoning_content"] = c.reasoning_content;
  json doc = {{"id", c.id},
              {"object", "chat.completion"},
              {"created", c.created},
              {"model", c.model},
              {"choices", json::array({{{"index", 0}, {"message", std::move(msg)},
                                        {"finish_reason", c.finish_reason}}})},
              {"usage", usage_json(c)}};
  if (!c.stop_sequence.empty()) doc["choices"][0]["stop_reason"] = c.stop_sequence;
  if (!c.report_usage) doc.erase("usage");
  if (c.server_compacted) doc["compaction"] = compaction_marker(c);
  return dump(doc);
}

std::vector<std::string> completion_events(const completion& c, size_t piece_bytes) {
  assert(piece_bytes > 0);
  std::vector<std::string> out;
  out.push_back(sse(chunk_json(c, {{"role", "assistant"}, {"content", ""}}, nullptr)));
  for (auto& p : pieces(c.reasoning_content, piece_bytes))
    out.push_back(sse(chunk_json(c, {{"reasoning_content", std::move(p)}}, nullptr)));
  for (auto& p : pieces(c.content, piece_bytes))
    out.push_back(sse(chunk_json(c, {{"content", std::move(p)}}, nullptr)));
  for (auto& delta : tool_call_deltas(c, piece_bytes))
    out.push_back(sse(chunk_json(c, {{"tool_calls", json::array({std::move(delta)})}}, nullptr)));
  auto last = chunk_json(c, json::object(), c.finish_reason);
  if (!c.stop_sequence.empty()) last["choices"][0]["stop_reason"] = c.stop_sequence;
  if (c.report_usage) last["usage"] = usage_json(c);
  if (c.server_compacted) last["compaction"] = compaction_marker(c);
  out.push_back(sse(last));
  out.push_back("data: [DONE]\n\n");
  return out;
}

std::string error_body(std::string_view message, std::string_view type, std::string_view code) {
  json err = {{"message", message}, {"type", type}, {"param", nullptr}};
  err["code"] = code.empty() ? json(nullptr) : json(code);
  return dump(json{{"error", std::move(err)}});
}

std::string overflow_body(int64_t window_tokens, int64_t prompt_tokens) {
  auto text = "This model's maximum context length is " + std::to_string(window_tokens) +
              " tokens. However, your messages resulted in " + std::to_string(prompt_tokens) +
              " tokens. Please reduce the length of the messages.";
  return error_body(text, "invalid_request_error", "context_length_exceeded");
}

std::string output_too_large_body(int64_t window_tokens, int64_t prompt_tokens,
                                  int64_t max_tokens) {
  auto text = "max_tokens is too large: " + std::to_string(max_tokens) +
              ". This model's maximum context length is " + std::to_string(window_tokens) +
              " tokens and your messages use " + std::to_string(prompt_tokens) +
              " tokens, so the requested output does not fit.";
  return error_body(text, "invalid_request_error", "max_tokens_exceeded");
}

std::string long_context_429_body() {
  json doc = {{"type", "error"},
              {"error",
               {{"type", "rate_limit_error"},
                {"message", "Extra usage is required for long context requests. This request "
                            "exceeds the long context rate limit for your organization."}}}};
  return dump(doc);
}

} // namespace mneme::fakellm
