// Skills on demand: the skills folder and the process's skill set; see skills_loader.hpp.
#include "actors/gateway/skills_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>

namespace mneme {

namespace {

namespace fs = std::filesystem;

std::mutex catalog_mutex;
std::shared_ptr<const skills_catalog> current_catalog; // the process's skill set

std::shared_ptr<const skills_catalog> catalog_of(const std::string& dir) {
  {
    std::lock_guard<std::mutex> guard{catalog_mutex};
    if (current_catalog && current_catalog->dir == dir)
      return current_catalog;
  }
  auto loaded = std::make_shared<const skills_catalog>(load_skills_dir(dir));
  std::lock_guard<std::mutex> guard{catalog_mutex};
  current_catalog = loaded;
  return loaded;
}

} // namespace

skills_catalog load_skills_dir(const std::string& dir) {
  skills_catalog out;
  out.dir = dir;
  if (dir.empty())
    return out;
  std::error_code ec;
  std::vector<fs::path> folders;
  for (fs::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec))
      folders.push_back(it->path());
  if (ec) {
    out.problems.push_back(dir + ": " + ec.message());
    return out;
  }
  std::sort(folders.begin(), folders.end());
  std::set<std::string> names;
  for (const auto& folder : folders) {
    auto file = folder / "SKILL.md";
    if (!fs::is_regular_file(file, ec))
      continue;
    auto size = fs::file_size(file, ec);
    if (ec || size > static_cast<uintmax_t>(skill_file_max_bytes)) {
      out.problems.push_back(file.string() + ": "
                             + (ec ? ec.message() : "larger than 1 MiB, skipped"));
      continue;
    }
    std::ifstream in{file, std::ios::binary};
    std::string text{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
    if (!in && !in.eof()) {
      out.problems.push_back(file.string() + ": cannot be read");
      continue;
    }
    auto parsed = parse_skill(text, folder.filename().string());
    if (!parsed.ok()) {
      out.problems.push_back(file.string() + ": " + std::string{to_string(parsed.error)}
                             + (parsed.detail.empty() ? "" : " (" + parsed.detail + ")"));
      continue;
    }
    if (!names.insert(parsed.value.name).second) {
      out.problems.push_back(file.string() + ": duplicate skill name '" + parsed.value.name
                             + "', skipped");
      continue;
    }
    out.skills.push_back(std::move(parsed.value));
  }
  std::sort(out.skills.begin(), out.skills.end(),
            [](const skill& a, const skill& b) { return a.name < b.name; });
  if (!out.skills.empty())
    out.index = build_skills_index(out.skills);
  return out;
}

void preload_skills(const std::string& dir, const std::shared_ptr<spdlog::logger>& log) {
  auto catalog = catalog_of(dir);
  if (!log || dir.empty())
    return;
  log->info("session=- event=skills_loaded dir={} skills={} problems={}", dir,
            catalog->skills.size(), catalog->problems.size());
  for (const auto& p : catalog->problems)
    log->warn("session=- event=skill_skipped problem={}", p);
}

std::string system_prompt_with_skills(const std::string& prompt, const std::string& dir) {
  if (dir.empty())
    return prompt;
  auto catalog = catalog_of(dir);
  if (catalog->index.empty())
    return prompt;
  if (prompt.empty())
    return catalog->index;
  return prompt + "\n\n" + catalog->index;
}

std::optional<skill> find_skill(const std::string& name) {
  std::lock_guard<std::mutex> guard{catalog_mutex};
  if (!current_catalog)
    return std::nullopt;
  for (const auto& s : current_catalog->skills)
    if (s.name == name)
      return s;
  return std::nullopt;
}

std::vector<skill> current_skills() {
  std::lock_guard<std::mutex> guard{catalog_mutex};
  return current_catalog ? current_catalog->skills : std::vector<skill>{};
}

} // namespace mneme
