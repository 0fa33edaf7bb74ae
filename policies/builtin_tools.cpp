// mneme's built-in tools; see builtin_tools.hpp.
#include "policies/builtin_tools.hpp"

#include <algorithm>

#include "policies/row_replacement.hpp"
#include "policies/skills_index.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme {

namespace {

constexpr builtin_tool every_tool[] = {builtin_tool::session_search, builtin_tool::memory,
                                       builtin_tool::skill_view};

constexpr size_t fact_key_max_bytes = 256;
constexpr size_t fact_value_max_bytes = 65536;

std::string invalid(std::string_view tool, std::string_view what) {
  return std::string{builtin_error_prefix} + std::string{tool} + ": " + std::string{what};
}

const tool_arg* find_arg(const tool_args& a, const std::string& name) {
  auto it = a.values.find(name);
  return it == a.values.end() ? nullptr : &it->second;
}

// A required non-empty string member; sets `error` otherwise.
bool required_string(const tool_args& a, std::string_view tool, const std::string& name,
                     std::string& out, std::string& error) {
  const auto* v = find_arg(a, name);
  if (!v) {
    error = invalid(tool, "argument '" + name + "' is missing");
    return false;
  }
  if (v->type != tool_arg::kind::string) {
    error = invalid(tool, "argument '" + name + "' must be a string");
    return false;
  }
  if (v->text.empty()) {
    error = invalid(tool, "argument '" + name + "' must not be empty");
    return false;
  }
  out = v->text;
  return true;
}

std::string row_line(const message& m) {
  auto who = m.role == msg_role::tool && !m.tool_name.empty() ? "tool " + m.tool_name
                                                              : std::string{to_string(m.role)};
  if (m.is_summary)
    who = "summary";
  return "  " + who + ": " + one_line_excerpt(m.content, builtin_row_chars) + "\n";
}

} // namespace

std::string_view tool_name_of(builtin_tool t) {
  switch (t) {
    case builtin_tool::session_search: return "session_search";
    case builtin_tool::memory: return "memory";
    case builtin_tool::skill_view: return "skill_view";
  }
  return "unknown";
}

std::string_view config_name_of(builtin_tool t) {
  return t == builtin_tool::skill_view ? "skills" : tool_name_of(t);
}

bool builtin_set::has(builtin_tool t) const {
  switch (t) {
    case builtin_tool::session_search: return session_search;
    case builtin_tool::memory: return memory;
    case builtin_tool::skill_view: return skills;
  }
  return false;
}

builtin_config parse_builtin_tools(const std::vector<std::string>& names) {
  builtin_config out;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& n = names[i];
    if (n == "session_search")
      out.set.session_search = true;
    else if (n == "memory")
      out.set.memory = true;
    else if (n == "skills")
      out.set.skills = true;
    else {
      out.error = "gateway.builtin_tools[" + std::to_string(i) + "]: unknown built-in tool '"
                  + n + "' (known: session_search, memory, skills)";
      out.set = {};
      return out;
    }
  }
  return out;
}

builtin_set resolve_builtin_tools(const builtin_set& configured, const builtin_availability& a) {
  builtin_set s = configured;
  s.session_search = s.session_search && a.recall;
  s.skills = s.skills && a.skills;
  return s;
}

builtin_set offer_builtins(const builtin_set& enabled,
                           const std::vector<std::string>& client_names) {
  builtin_set s = enabled;
  for (const auto& n : client_names) {
    if (n == tool_name_of(builtin_tool::session_search))
      s.session_search = false;
    else if (n == tool_name_of(builtin_tool::memory))
      s.memory = false;
    else if (n == tool_name_of(builtin_tool::skill_view))
      s.skills = false;
  }
  return s;
}

std::optional<builtin_tool> builtin_of(std::string_view call_name, const builtin_set& offered) {
  for (auto t : every_tool)
    if (offered.has(t) && call_name == tool_name_of(t))
      return t;
  return std::nullopt;
}

std::string_view tool_schema_json(builtin_tool t) {
  switch (t) {
    case builtin_tool::session_search:
      return R"({"type":"function","function":{"name":"session_search","description":)"
             R"("Search the user's earlier conversations (full text, and by meaning when )"
             R"(embeddings are on). Returns per conversation )"
             R"(its first rows, the rows around the best hit and its last rows.",)"
             R"("parameters":{"type":"object","properties":{"query":{"type":"string",)"
             R"("description":"words to find; OR, NOT, \"phrases\" and prefix* work"},)"
             R"("limit":{"type":"integer","minimum":1,"maximum":10,"description":)"
             R"("conversations, default 3"},"mode":{"type":"string","enum":["automatic",)"
             R"("fts","vector","hybrid"],"description":"fts: words only; vector: meaning )"
             R"(only; hybrid: both fused, the default when embeddings are on"}},)"
             R"("required":["query"]}}})";
    case builtin_tool::memory:
      return R"({"type":"function","function":{"name":"memory","description":)"
             R"("The user's long-lived facts (key -> value), kept across sessions: get, set, )"
             R"(delete one by key, or search them (an empty query lists the newest).",)"
             R"("parameters":{"type":"object","properties":{"action":{"type":"string",)"
             R"("enum":["search","get","set","delete"]},"key":{"type":"string"},)"
             R"("value":{"type":"string"},"query":{"type":"string"}},"required":["action"]}}})";
    case builtin_tool::skill_view:
      return R"({"type":"function","function":{"name":"skill_view","description":)"
             R"("Load the full instructions of a skill from the skills index before using it; )"
             R"(they stay until the task is answered.",)"
             R"("parameters":{"type":"object","properties":{"name":{"type":"string",)"
             R"("description":"the skill's name as in the index"}},"required":["name"]}}})";
  }
  return "{}";
}

std::string merge_tools_json(std::string_view client_array, const builtin_set& offered) {
  std::string schemas;
  for (auto t : every_tool)
    if (offered.has(t))
      schemas += (schemas.empty() ? "" : ",") + std::string{tool_schema_json(t)};
  auto first = client_array.find_first_not_of(" \t\r\n");
  auto last = client_array.find_last_not_of(" \t\r\n");
  bool client_empty = true;
  if (first != std::string_view::npos && client_array[first] == '[' && client_array[last] == ']') {
    auto inner = client_array.find_first_not_of(" \t\r\n", first + 1);
    client_empty = inner == last;
  }
  if (schemas.empty())
    return client_empty ? std::string{} : std::string{client_array};
  if (client_empty)
    return "[" + schemas + "]";
  return std::string{client_array.substr(0, last)} + "," + schemas + "]";
}

builtin_request validate_builtin_call(builtin_tool t, const tool_args& args) {
  builtin_request r;
  r.tool = t;
  const auto tool = tool_name_of(t);
  if (!args.object) {
    r.error = invalid(tool, "arguments must be a JSON object");
    return r;
  }
  switch (t) {
    case builtin_tool::session_search: {
      if (!required_string(args, tool, "query", r.query, r.error))
        return r;
      if (const auto* l = find_arg(args, "limit")) {
        if (l->type != tool_arg::kind::integer || l->number < 1
            || l->number > builtin_search_max_limit) {
          r.error = invalid(tool, "argument 'limit' must be an integer 1..10");
          return r;
        }
        r.limit = static_cast<int32_t>(l->number);
      }
      if (const auto* m = find_arg(args, "mode")) {
        bool known = m->type == tool_arg::kind::string
                     && std::find(std::begin(builtin_search_modes), std::end(builtin_search_modes),
                                  m->text)
                          != std::end(builtin_search_modes);
        if (!known) {
          r.error = invalid(tool, "argument 'mode' must be one of automatic, fts, vector, hybrid"
                                  " (got '" + one_line_excerpt(m->type == tool_arg::kind::string
                                                                 ? m->text : std::string{"?"}, 40)
                                    + "')");
          return r;
        }
        r.mode = m->text;
      }
      return r;
    }
    case builtin_tool::memory: {
      std::string action;
      if (!required_string(args, tool, "action", action, r.error))
        return r;
      if (action == "get")
        r.action = memory_action::get;
      else if (action == "set")
        r.action = memory_action::set;
      else if (action == "delete")
        r.action = memory_action::remove;
      else if (action == "search")
        r.action = memory_action::search;
      else {
        r.error = invalid(tool, "argument 'action' must be one of search, get, set, delete (got '"
                                  + one_line_excerpt(action, 40) + "')");
        return r;
      }
      if (r.action == memory_action::search) {
        if (const auto* q = find_arg(args, "query")) {
          if (q->type != tool_arg::kind::string) {
            r.error = invalid(tool, "argument 'query' must be a string");
            return r;
          }
          r.query = q->text;
        }
        return r;
      }
      if (!required_string(args, tool, "key", r.key, r.error))
        return r;
      if (r.key.size() > fact_key_max_bytes) {
        r.error = invalid(tool, "argument 'key' is longer than 256 bytes");
        return r;
      }
      if (r.action == memory_action::set) {
        if (!required_string(args, tool, "value", r.value, r.error))
          return r;
        if (r.value.size() > fact_value_max_bytes) {
          r.error = invalid(tool, "argument 'value' is longer than 65536 bytes");
          return r;
        }
      }
      return r;
    }
    case builtin_tool::skill_view:
      required_string(args, tool, "name", r.name, r.error);
      return r;
  }
  return r;
}

std::string bound_result(const std::string& text, int64_t max_bytes) {
  const auto max = static_cast<size_t>(std::max<int64_t>(64, max_bytes));
  if (text.size() <= max)
    return text;
  auto note = [&](size_t shown) {
    return "\n[cut: " + std::to_string(shown) + " of " + std::to_string(text.size())
           + " bytes shown]";
  };
  // The note's length depends on `shown`: size it for the largest value first.
  auto room = max - std::min(max, note(max).size());
  auto shown = utf8_prefix_length(text, room);
  return text.substr(0, shown) + note(shown);
}

std::string render_search_result(std::string_view query, const std::vector<search_view>& views) {
  std::string out = "Found " + std::to_string(views.size())
                    + (views.size() == 1 ? " earlier conversation" : " earlier conversations")
                    + " for \"" + one_line_excerpt(query, 200) + "\".\n";
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& v = views[i];
    out += "[" + std::to_string(i + 1) + "] " + one_line_excerpt(v.snippet, builtin_row_chars)
           + " (session " + v.session_id + ", " + v.kind + ")\n";
    if (!v.first.empty()) {
      out += " first:\n";
      for (const auto& m : v.first)
        out += row_line(m);
    }
    out += " around the hit:\n";
    for (const auto& m : v.window)
      out += row_line(m);
    if (!v.last.empty()) {
      out += " last:\n";
      for (const auto& m : v.last)
        out += row_line(m);
    }
  }
  return out;
}

std::string render_memory_result(const builtin_request& r, const std::vector<fact_line>& facts) {
  switch (r.action) {
    case memory_action::get:
      if (facts.empty())
        return "No fact '" + r.key + "' is remembered.";
      return "fact '" + r.key + "' = " + facts.front().value;
    case memory_action::set:
      return "fact '" + r.key + "' set to " + r.value;
    case memory_action::remove:
      return "fact '" + r.key + "' deleted";
    case memory_action::search: {
      std::string out = std::to_string(facts.size()) + (facts.size() == 1 ? " fact" : " facts")
                        + (r.query.empty() ? "" : " matching \"" + one_line_excerpt(r.query, 200) + "\"")
                        + ":";
      for (const auto& f : facts)
        out += "\n- " + f.key + ": " + one_line_excerpt(f.value, 500);
      return out;
    }
  }
  return {};
}

std::string builtin_failure(std::string_view what) {
  return std::string{builtin_error_prefix} + std::string{what};
}

std::string skill_view_result(const std::string& name, const std::string& text,
                              int64_t max_bytes) {
  skill s;
  s.name = name;
  const auto frame = loaded_skill_content(s).size();
  const auto max = static_cast<size_t>(std::max<int64_t>(64, max_bytes));
  s.text = text.size() + frame <= max ? text : bound_result(text, static_cast<int64_t>(
                                                                    max > frame + 64 ? max - frame : 64));
  return loaded_skill_content(s);
}

std::vector<row_replacement> plan_skill_view_unload(const std::vector<message>& live) {
  std::vector<row_replacement> plan;
  for (size_t i = 0; i < live.size(); ++i) {
    const auto& m = live[i];
    if (m.role != msg_role::tool || m.tool_name != tool_name_of(builtin_tool::skill_view)
        || m.id == 0)
      continue;
    auto name = loaded_skill_name(m.content);
    if (!name)
      continue;
    row_replacement r;
    r.index = i;
    r.original_id = m.id;
    r.content = unloaded_skill_marker(*name);
    r.tokens_reclaimed =
      std::max<int64_t>(1, estimate_text_tokens(m.content) - estimate_text_tokens(r.content));
    plan.push_back(std::move(r));
  }
  return plan;
}

call_split split_calls(const std::vector<tool_call>& calls, const builtin_set& offered) {
  call_split s;
  for (const auto& c : calls)
    (builtin_of(c.name, offered) ? s.builtin : s.client).push_back(c);
  return s;
}

} // namespace mneme
