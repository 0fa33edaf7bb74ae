// The MCP door's tools; see mcp_tools.hpp.
#include "apps/common/api/doors/mcp/mcp_tools.hpp"

#include <cstdint>
#include <optional>

namespace mneme::api::mcp {

namespace {

using json = nlohmann::json;

// The most conversations session_search returns, and the most facts memory lists.
constexpr int64_t search_max_limit = 10;
constexpr int64_t facts_max_limit = 200;

json string_schema(const char* description) {
  return {{"type", "string"}, {"description", description}};
}

json user_schema() {
  return string_schema("whose memory (admin tokens only); default: the token's own user");
}

json build_tools() {
  json tools = json::array();
  tools.push_back(
    {{"name", "session_search"},
     {"description", "Search the user's earlier conversations kept by mneme: the best "
                     "matching sessions, each with its first rows, the rows around the "
                     "match and its last rows."},
     {"inputSchema",
      {{"type", "object"},
       {"properties",
        {{"query", string_schema("what to look for")},
         {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", search_max_limit},
                    {"description", "how many conversations (default 3)"}}},
         {"include_inactive", {{"type", "boolean"},
                               {"description", "also search rows compacted away"}}},
         {"mode", {{"type", "string"},
                   {"enum", {"automatic", "fts", "vector", "hybrid"}},
                   {"description", "fts: words only; vector: meaning only; hybrid: both "
                                   "fused (default: hybrid when mneme has embeddings)"}}},
         {"user", user_schema()}}},
       {"required", {"query"}}}}});
  tools.push_back(
    {{"name", "memory"},
     {"description", "The user's facts (key -> value) kept by mneme: list them, search "
                     "them, set one, or remove one (its versions stay stored)."},
     {"inputSchema",
      {{"type", "object"},
       {"properties",
        {{"action", {{"type", "string"}, {"enum", {"list", "search", "set", "remove"}}}},
         {"key", string_schema("the fact's key (set, remove)")},
         {"value", string_schema("the fact's value (set)")},
         {"query", string_schema("words to look for (search)")},
         {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", facts_max_limit},
                    {"description", "how many facts (list, search)"}}},
         {"user", user_schema()}}},
       {"required", {"action"}}}}});
  tools.push_back({{"name", "skills_list"},
                   {"description", "The skills mneme offers: name and one line each."},
                   {"inputSchema", {{"type", "object"}, {"properties", json::object()}}}});
  tools.push_back(
    {{"name", "skill_view"},
     {"description", "One skill's full instructions (its SKILL.md)."},
     {"inputSchema",
      {{"type", "object"},
       {"properties", {{"name", string_schema("the skill's name, as skills_list gives it")}}},
       {"required", {"name"}}}}});
  tools.push_back(
    {{"name", "session_context"},
     {"description", "The live context of a mneme session key: its rows as the model sees "
                     "them (compaction summaries marked is_summary), tokens and thresholds."},
     {"inputSchema",
      {{"type", "object"},
       {"properties", {{"key", string_schema("the session key (or a session id)")}}},
       {"required", {"key"}}}}});
  return {{"tools", std::move(tools)}};
}

json array_of_objects(const char* description) {
  return {{"type", "array"}, {"items", {{"type", "object"}}}, {"description", description}};
}

// The outputSchema of each tool, by name (decision 6 of mcp_wire.hpp).
json output_schema(const std::string& tool) {
  if (tool == "session_search")
    return {{"type", "object"},
            {"properties", {{"hits", array_of_objects("the matching sessions, best first")}}}};
  if (tool == "memory")
    return {{"type", "object"},
            {"properties", {{"facts", array_of_objects("list, search: the facts found")}}},
            {"description", "list and search: {facts}; set and remove: the facts API's answer"}};
  if (tool == "skills_list")
    return {{"type", "object"},
            {"properties", {{"skills", array_of_objects("name and description of each skill")}}},
            {"required", {"skills"}}};
  if (tool == "skill_view")
    return {{"type", "object"},
            {"properties", {{"name", {{"type", "string"}}},
                            {"text", {{"type", "string"}, {"description", "the SKILL.md"}}}}},
            {"required", {"name", "text"}}};
  return {{"type", "object"},
          {"properties", {{"session", {{"type", "object"}}},
                          {"live", array_of_objects("the live rows, summaries is_summary")}}}};
}

json build_structured_tools() {
  json out = build_tools();
  for (auto& t : out["tools"])
    t["outputSchema"] = output_schema(t["name"].get<std::string>());
  return out;
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
         || c == '-' || c == '_' || c == '.' || c == '~';
}

// Reads the tool's arguments; the first problem is kept as the tool error.
class argument_reader {
 public:
  explicit argument_reader(const json& args) : args_(args) {}

  // A string argument: nullopt when absent (or after an error).
  std::optional<std::string> text(const char* name, bool required) {
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null()) {
      if (required)
        fail(std::string{"argument '"} + name + "' is required");
      return std::nullopt;
    }
    if (!it->is_string() || (required && it->get_ref<const std::string&>().empty())) {
      fail(std::string{"argument '"} + name + "' must be a non-empty string");
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  std::optional<int64_t> integer(const char* name, int64_t min, int64_t max) {
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null())
      return std::nullopt;
    if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
      fail(std::string{"argument '"} + name + "' must be an integer from "
           + std::to_string(min) + " to " + std::to_string(max));
      return std::nullopt;
    }
    return it->get<int64_t>();
  }

  std::optional<bool> flag(const char* name) {
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null())
      return std::nullopt;
    if (!it->is_boolean()) {
      fail(std::string{"argument '"} + name + "' must be true or false");
      return std::nullopt;
    }
    return it->get<bool>();
  }

  void fail(std::string why) {
    if (error.empty())
      error = std::move(why);
  }

  std::string error;

 private:
  const json& args_;
};

// "?a=1&b=x%20y" from the pairs whose value is set.
std::string query_of(std::initializer_list<std::pair<const char*, std::optional<std::string>>> ps) {
  std::string out;
  for (const auto& [name, value] : ps)
    if (value)
      out += (out.empty() ? "?" : "&") + std::string{name} + "=" + encode_component(*value);
  return out;
}

std::optional<std::string> number_text(std::optional<int64_t> n) {
  return n ? std::optional<std::string>{std::to_string(*n)} : std::nullopt;
}

std::optional<std::string> flag_text(std::optional<bool> b) {
  return b ? std::optional<std::string>{*b ? "true" : "false"} : std::nullopt;
}

tool_plan bad(std::string error) {
  tool_plan p;
  p.error = std::move(error);
  return p;
}

tool_plan request(std::string method, std::string target, std::string body = {}) {
  tool_plan p;
  p.action = tool_action::api_request;
  p.step = {std::move(method), std::move(target), std::move(body)};
  return p;
}

tool_plan plan_search(argument_reader& in) {
  auto query = in.text("query", true);
  auto limit = in.integer("limit", 1, search_max_limit);
  auto inactive = in.flag("include_inactive");
  auto mode = in.text("mode", false);
  auto user = in.text("user", false);
  if (!in.error.empty())
    return bad(in.error);
  if (mode && *mode != "automatic" && *mode != "fts" && *mode != "vector" && *mode != "hybrid")
    return bad("argument 'mode' must be one of automatic, fts, vector, hybrid");
  return request("GET", "/v1/search" + query_of({{"q", query},
                                                 {"limit", number_text(limit)},
                                                 {"include_inactive", flag_text(inactive)},
                                                 {"mode", mode},
                                                 {"user", user}}));
}

tool_plan plan_memory(argument_reader& in, const tool_caller& who) {
  auto action = in.text("action", true);
  auto user = in.text("user", false);
  auto limit = in.integer("limit", 1, facts_max_limit);
  if (!in.error.empty())
    return bad(in.error);
  auto owner = user ? *user : !who.token_user.empty() ? who.token_user : who.default_user;
  auto facts = "/v1/users/" + encode_component(owner) + "/facts";
  if (*action == "list" || *action == "search") {
    auto query = in.text("query", *action == "search");
    if (!in.error.empty())
      return bad(in.error);
    return request("GET", facts + query_of({{"q", query}, {"limit", number_text(limit)}}));
  }
  if (*action != "set" && *action != "remove")
    return bad("argument 'action' must be one of list, search, set, remove");
  auto key = in.text("key", true);
  auto value = *action == "set" ? in.text("value", true) : std::nullopt;
  if (!in.error.empty())
    return bad(in.error);
  auto target = facts + "/" + encode_component(*key);
  if (*action == "remove")
    return request("DELETE", target);
  return request("PUT", target, json{{"value", *value}}.dump());
}

} // namespace

const json& tools_list(bool structured) {
  static const json with_output = build_structured_tools();
  if (structured)
    return with_output;
  static const json tools = build_tools();
  return tools;
}

bool known_tool(std::string_view name) {
  for (const auto& t : tools_list()["tools"])
    if (t["name"].get_ref<const std::string&>() == name)
      return true;
  return false;
}

std::string encode_component(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

tool_plan plan_tool_call(std::string_view name, const json& arguments, const tool_caller& who) {
  argument_reader in{arguments};
  if (name == "session_search")
    return plan_search(in);
  if (name == "memory")
    return plan_memory(in, who);
  if (name == "skills_list") {
    tool_plan p;
    p.action = tool_action::list_skills;
    return p;
  }
  if (name == "skill_view") {
    auto skill = in.text("name", true);
    if (!skill)
      return bad(in.error);
    tool_plan p;
    p.action = tool_action::view_skill;
    p.skill_name = *skill;
    return p;
  }
  auto key = in.text("key", true); // session_context
  if (!key)
    return bad(in.error);
  return request("GET", "/v1/sessions/" + encode_component(*key));
}

} // namespace mneme::api::mcp
