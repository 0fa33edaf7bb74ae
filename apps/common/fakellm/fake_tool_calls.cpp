// The fake LLM's tool calls; see fake_tool_calls.hpp.
#include "apps/common/fakellm/fake_tool_calls.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fault_plan.hpp"
#include "policies/skills_index.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme::fakellm {

namespace {

using json = nlohmann::json;

constexpr uint64_t decide_salt = 0x71;
constexpr uint64_t count_salt = 0x72;
constexpr uint64_t pick_salt = 0x73;
constexpr size_t max_parallel_calls = 3;

// FNV-1a over the roles, contents and tool fields of the messages.
uint64_t messages_hash(const std::vector<message>& msgs) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  for (const auto& m : msgs) {
    mix(std::string{to_string(m.role)});
    mix(m.content);
    mix(m.tool_call_id);
    for (const auto& c : m.tool_calls)
      mix(c.id);
  }
  return h;
}

int64_t rounds_since_user(const std::vector<message>& msgs) {
  int64_t rounds = 0;
  for (auto it = msgs.rbegin(); it != msgs.rend(); ++it) {
    if (it->role == msg_role::user)
      break;
    if (it->role == msg_role::assistant && it->has_tool_calls())
      ++rounds;
  }
  return rounds;
}

json value_for(const json& schema, const std::string& name, int depth);

json object_for(const json& schema, int depth) {
  json out = json::object();
  if (!schema.is_object() || depth > 8)
    return out;
  auto props = schema.find("properties");
  auto required = schema.find("required");
  if (required == schema.end() || !required->is_array())
    return out;
  for (const auto& r : *required) {
    if (!r.is_string())
      continue;
    auto name = r.get<std::string>();
    json prop = props != schema.end() && props->is_object() && props->contains(name)
                  ? (*props)[name]
                  : json::object();
    out[name] = value_for(prop, name, depth + 1);
  }
  return out;
}

json value_for(const json& schema, const std::string& name, int depth) {
  if (!schema.is_object())
    return nullptr;
  if (auto e = schema.find("enum"); e != schema.end() && e->is_array() && !e->empty())
    return (*e)[0];
  std::string type;
  if (auto t = schema.find("type"); t != schema.end()) {
    if (t->is_string())
      type = t->get<std::string>();
    else if (t->is_array() && !t->empty() && (*t)[0].is_string())
      type = (*t)[0].get<std::string>();
  }
  auto minimum = schema.find("minimum");
  bool has_min = minimum != schema.end() && minimum->is_number();
  if (type == "string")
    return name + "-" + std::to_string(depth);
  if (type == "integer")
    return has_min ? json(static_cast<int64_t>(minimum->get<double>())) : json(1);
  if (type == "number")
    return has_min ? json(minimum->get<double>()) : json(1.5);
  if (type == "boolean")
    return true;
  if (type == "array")
    return json::array();
  if (type == "object")
    return object_for(schema, depth);
  return nullptr;
}

bool is_builtin_name(const std::string& name) {
  return name == "session_search" || name == "memory" || name == "skill_view";
}

bool offers(const chat_call& call, const std::string& name) {
  return std::any_of(call.tools.begin(), call.tools.end(),
                     [&](const offered_tool& t) { return t.name == name; });
}

std::string lower_ascii(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string trimmed(std::string s) {
  auto b = s.find_first_not_of(" \t\r\n\"'");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r\n\"'");
  return s.substr(b, e - b + 1);
}

// The text after `phrase` in `text` (found case-insensitively) up to the first of
// `stops` or the end of the line; nullopt when the phrase is absent or nothing follows.
std::optional<std::string> after_phrase(const std::string& text, const std::string& phrase,
                                        const std::string& stops) {
  auto at = lower_ascii(text).find(phrase);
  if (at == std::string::npos)
    return std::nullopt;
  auto begin = at + phrase.size();
  auto end = text.find_first_of(stops + "\n", begin);
  auto out = trimmed(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  if (out.empty())
    return std::nullopt;
  return out;
}

// The skill names of the skills index in the system rows.
std::vector<std::string> indexed_skills(const std::vector<message>& msgs) {
  std::vector<std::string> names;
  for (const auto& m : msgs) {
    if (m.role != msg_role::system)
      continue;
    auto at = m.content.find(k_skills_index_title);
    if (at == std::string::npos)
      continue;
    size_t pos = m.content.find('\n', at);
    while (pos != std::string::npos && m.content.compare(pos, 3, "\n- ") == 0) {
      auto colon = m.content.find(": ", pos + 3);
      auto eol = m.content.find('\n', pos + 3);
      if (colon == std::string::npos || (eol != std::string::npos && colon > eol))
        break;
      names.push_back(m.content.substr(pos + 3, colon - pos - 3));
      pos = eol;
    }
  }
  return names;
}

bool has_word(const std::string& text, const std::string& word) {
  auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  };
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool left = at == 0 || !is_word(text[at - 1]);
    auto end = at + word.size();
    bool right = end >= text.size() || !is_word(text[end]);
    if (left && right)
      return true;
  }
  return false;
}

std::string hex8(uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, h >>= 4)
    out[static_cast<size_t>(i)] = digits[h & 0xf];
  return out;
}

} // namespace

std::string schema_arguments(const std::string& parameters_json, const std::string& tool_name) {
  (void)tool_name;
  if (parameters_json.empty())
    return "{}";
  auto schema = json::parse(parameters_json, nullptr, false);
  if (schema.is_discarded())
    return "{}";
  return object_for(schema, 0).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<tool_call> builtin_tool_call(const chat_call& call) {
  if (call.messages.empty() || call.messages.back().role != msg_role::user)
    return std::nullopt;
  const auto& text = call.messages.back().content;
  tool_call c;
  c.id = "call_" + hex8(messages_hash(call.messages)) + "_b";
  if (offers(call, "session_search")) {
    if (auto q = after_phrase(text, "earlier about ", "?.")) {
      c.name = "session_search";
      c.arguments = json{{"query", *q}}.dump(-1, ' ', false, json::error_handler_t::replace);
      return c;
    }
  }
  if (offers(call, "memory")) {
    if (auto kv = after_phrase(text, "remember that my ", ".!\n")) {
      auto is = lower_ascii(*kv).find(" is ");
      if (is != std::string::npos && is > 0 && is + 4 < kv->size()) {
        c.name = "memory";
        c.arguments = json{{"action", "set"}, {"key", trimmed(kv->substr(0, is))},
                           {"value", trimmed(kv->substr(is + 4))}}
                        .dump(-1, ' ', false, json::error_handler_t::replace);
        return c;
      }
    }
    if (auto k = after_phrase(text, "what is my ", "?.")) {
      c.name = "memory";
      c.arguments = json{{"action", "get"}, {"key", *k}}.dump(-1, ' ', false,
                                                               json::error_handler_t::replace);
      return c;
    }
    if (auto q = after_phrase(text, "remember about ", "?.")) {
      c.name = "memory";
      c.arguments = json{{"action", "search"}, {"query", *q}}.dump(
        -1, ' ', false, json::error_handler_t::replace);
      return c;
    }
  }
  if (offers(call, "skill_view")) {
    for (const auto& name : indexed_skills(call.messages)) {
      if (has_word(text, name)) {
        c.name = "skill_view";
        c.arguments = json{{"name", name}}.dump(-1, ' ', false, json::error_handler_t::replace);
        return c;
      }
    }
  }
  return std::nullopt;
}

std::vector<tool_call> fake_tool_calls(const chat_call& call, const tool_call_settings& s) {
  std::vector<tool_call> out;
  if (call.tools.empty())
    return out;
  if (auto b = builtin_tool_call(call)) // rule 0; rule 2 may add the client's calls
    out.push_back(std::move(*b));
  if (rounds_since_user(call.messages) >= s.max_rounds)
    return out;
  std::vector<const offered_tool*> tools; // rules 1-2 call the client's tools only
  for (const auto& t : call.tools)
    if (!is_builtin_name(t.name))
      tools.push_back(&t);
  if (tools.empty())
    return out;
  auto h = messages_hash(call.messages);
  if (uniform01(s.seed, h, 0, decide_salt) >= s.fraction)
    return out;
  size_t most = std::min(max_parallel_calls, tools.size());
  auto count = 1 + static_cast<size_t>(uniform01(s.seed, h, 1, count_salt) * most);
  count = std::min(count, most);
  auto first = static_cast<size_t>(uniform01(s.seed, h, 2, pick_salt) * tools.size());
  for (size_t k = 0; k < count; ++k) {
    const auto& tool = *tools[(first + k) % tools.size()];
    tool_call c;
    c.id = "call_" + hex8(h) + "_" + std::to_string(k);
    c.name = tool.name;
    c.arguments = schema_arguments(tool.parameters_json, tool.name);
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<std::string> quote_tool_results(const std::vector<message>& msgs) {
  if (msgs.empty() || msgs.back().role != msg_role::tool)
    return std::nullopt;
  auto begin = msgs.size();
  while (begin > 0 && msgs[begin - 1].role == msg_role::tool)
    --begin;
  std::string text = "Tool results: ";
  for (auto i = begin; i < msgs.size(); ++i) {
    const auto& m = msgs[i];
    if (i > begin)
      text += "; ";
    text += (m.tool_name.empty() ? m.tool_call_id : m.tool_name) + ": ";
    if (m.content.size() <= tool_quote_chars) {
      text += m.content;
      continue;
    }
    text += std::string{utf8_prefix(m.content, tool_quote_chars)} + "...";
  }
  return text;
}

} // namespace mneme::fakellm
