// Skills on demand: SKILL.md parsing, the index, loading and unloading; rules
// in skills_index.hpp.
#include "policies/skills_index.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "policies/token_estimate.hpp"

namespace mneme {

namespace {

constexpr std::string_view loaded_open = "[SKILL LOADED: ";
constexpr std::string_view end_open = "[END OF SKILL: ";

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string_view unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool is_heading(std::string_view line) {
  line = trim(line);
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  return hashes > 0 && hashes <= 6 && (hashes == line.size() || line[hashes] == ' ');
}

std::string slug(std::string_view s) {
  std::string out;
  bool dash = false;
  for (char c : trim(s)) {
    if (c == ' ' || c == '\t' || c == '/' || c == '\\') {
      dash = !out.empty();
      continue;
    }
    if (dash) out.push_back('-');
    dash = false;
    out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() > k_skill_name_max_bytes) return false;
  return std::none_of(n.begin(), n.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F || c == ' ' || c == '"' || c == '\'' || c == '(' || c == ')';
  });
}

struct front_matter {
  std::optional<std::string> name, description;
  std::size_t body_line = 0;  // first line after the block
  bool unterminated = false;
};

front_matter read_front_matter(const std::vector<std::string_view>& lines) {
  front_matter fm;
  if (lines.empty() || trim(lines[0]) != "---") return fm;
  std::size_t i = 1;
  for (; i < lines.size(); ++i) {
    const auto l = trim(lines[i]);
    if (l == "---" || l == "...") break;
    const std::size_t colon = lines[i].find(':');
    if (colon == std::string_view::npos || lines[i].front() == ' ') continue;
    const auto key = trim(lines[i].substr(0, colon));
    std::string value{unquote(lines[i].substr(colon + 1))};
    if (value.empty() || value == ">" || value == "|" || value == ">-" || value == "|-") {
      value.clear();
      while (i + 1 < lines.size() && !lines[i + 1].empty()
             && (lines[i + 1].front() == ' ' || lines[i + 1].front() == '\t')) {
        if (!value.empty()) value += ' ';
        value += std::string{trim(lines[++i])};
      }
    }
    if (key == "name") fm.name = value;
    else if (key == "description") fm.description = value;
  }
  if (i >= lines.size()) fm.unterminated = true;
  fm.body_line = i + 1;
  return fm;
}

} // namespace

std::string_view to_string(skill_error e) {
  switch (e) {
    case skill_error::none: return "none";
    case skill_error::empty_text: return "empty_text";
    case skill_error::unterminated_front_matter: return "unterminated_front_matter";
    case skill_error::no_name: return "no_name";
    case skill_error::invalid_name: return "invalid_name";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, skill_error e) { return os << to_string(e); }

skill_parse_result parse_skill(std::string_view text, std::string_view fallback_name) {
  skill_parse_result r;
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  if (blank(body)) {
    r.error = skill_error::empty_text;
    r.detail = "the SKILL.md text is empty";
    return r;
  }
  const auto lines = lines_of(body);
  const front_matter fm = read_front_matter(lines);
  if (fm.unterminated) {
    r.error = skill_error::unterminated_front_matter;
    r.detail = "front matter opened with '---' is never closed";
    return r;
  }
  std::optional<std::string> name = fm.name, description = fm.description;
  // The first heading and the first paragraph after it (or after the front matter).
  std::string paragraph;
  bool heading_seen = false;
  for (std::size_t i = fm.body_line; i < lines.size(); ++i) {
    const auto l = trim(lines[i]);
    if (is_heading(l)) {
      if (!paragraph.empty()) break;
      if (!heading_seen && !name) {
        const std::size_t text_at = std::min(l.size(), l.find_first_not_of('#'));
        const std::string s = slug(l.substr(text_at));
        if (!s.empty()) name = s;
      }
      heading_seen = true;
      continue;
    }
    if (l.empty()) {
      if (!paragraph.empty()) break;
      continue;
    }
    if (!paragraph.empty()) paragraph += ' ';
    paragraph += std::string{l};
  }
  if (!name || name->empty()) {
    if (fallback_name.empty()) {
      r.error = skill_error::no_name;
      r.detail = "no name: key, no heading and no folder name";
      return r;
    }
    name = slug(fallback_name);
  }
  if (!valid_name(*name)) {
    r.error = skill_error::invalid_name;
    r.detail = "skill name '" + one_line_excerpt(*name, 80)
               + "' must be 1..64 bytes without spaces, quotes or parentheses";
    return r;
  }
  if (!description || blank(*description)) description = paragraph;
  r.value.name = *name;
  r.value.description = one_line_excerpt(*description, k_skill_description_chars);
  if (r.value.description.empty()) r.value.description = "(no description)";
  r.value.text = std::string{text};
  return r;
}

std::vector<std::string> duplicate_skill_names(const std::vector<skill>& skills) {
  std::map<std::string, int> seen;
  for (const auto& s : skills) ++seen[s.name];
  std::vector<std::string> out;
  for (const auto& [name, count] : seen)
    if (count > 1) out.push_back(name);
  return out;
}

std::string build_skills_index(const std::vector<skill>& skills) {
  std::map<std::string, const skill*> by_name;
  for (const auto& s : skills) by_name.emplace(s.name, &s);  // first one wins
  std::string out{k_skills_index_title};
  for (const auto& [name, s] : by_name) out += "\n- " + name + ": " + s->description;
  return out;
}

std::string loaded_skill_content(const skill& s) {
  return std::string{loaded_open} + s.name + "]\n" + s.text + "\n" + std::string{end_open}
         + s.name + "]";
}

std::optional<std::string> loaded_skill_name(std::string_view content) {
  if (content.substr(0, loaded_open.size()) != loaded_open) return std::nullopt;
  const std::size_t close = content.find("]\n", loaded_open.size());
  if (close == std::string_view::npos) return std::nullopt;
  std::string name{content.substr(loaded_open.size(), close - loaded_open.size())};
  const std::string tail = std::string{end_open} + name + "]";
  if (content.size() < tail.size() || content.substr(content.size() - tail.size()) != tail)
    return std::nullopt;
  return name;
}

std::string unloaded_skill_marker(std::string_view name) {
  return "[SKILL UNLOADED: " + std::string{name} + "; load again with skill_view]";
}

std::vector<row_replacement> plan_skill_unload(const std::vector<message>& live,
                                               bool task_ended) {
  // Walking backwards: has a final answer (no tool calls) followed by a real
  // user message been seen after the current row?
  bool user_after = false, task_over_after = false;
  std::vector<row_replacement> plan;
  for (std::size_t k = live.size(); k > 0; --k) {
    const std::size_t i = k - 1;
    const message& m = live[i];
    if (is_real_user_message(m)) user_after = true;
    if (m.role == msg_role::assistant && !m.has_tool_calls() && user_after)
      task_over_after = true;
    if (m.id == 0 || m.is_summary || !(task_ended || task_over_after)) continue;
    const auto name = loaded_skill_name(m.content);
    if (!name) continue;
    std::string marker = unloaded_skill_marker(*name);
    const int64_t reclaim = reclaim_of(m, marker);
    if (reclaim > 0) plan.push_back({i, m.id, std::move(marker), reclaim});
  }
  std::reverse(plan.begin(), plan.end());
  return plan;
}

skills_saving skills_token_saving(const std::vector<skill>& skills) {
  skills_saving s;
  for (const auto& k : skills) s.all_loaded_tokens += estimate_text_tokens(loaded_skill_content(k));
  s.index_tokens = estimate_text_tokens(build_skills_index(skills));
  s.saved_tokens = s.all_loaded_tokens - s.index_tokens;
  s.factor = s.index_tokens > 0 ? static_cast<double>(s.all_loaded_tokens)
                                      / static_cast<double>(s.index_tokens)
                                : 0.0;
  return s;
}

} // namespace mneme
