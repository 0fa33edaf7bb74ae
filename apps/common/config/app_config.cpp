// The strict configuration loader and the effective-configuration writer; see
// app_config.hpp. The walk is driven by the key table of config_schema.cpp.
#include "apps/common/config/app_config.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h> // not in yaml.h: the document counter below
#include <yaml-cpp/yaml.h>

#include "apps/common/config/config_checks.hpp"
#include "apps/common/config/config_field_builders.hpp"
#include "apps/common/config/config_schema.hpp"
#include "policies/utf8.hpp"

namespace mneme {

namespace {

using config_build::node_kind;

// Walks one YAML document against the key table, collecting every problem.
class config_reader {
public:
  explicit config_reader(field_context ctx) : ctx_(std::move(ctx)) {}

  void read_document(const YAML::Node& root) {
    if (root.IsNull())
      return;  // an empty document: every default
    if (!root.IsMap()) {
      add("", "expected a mapping of sections (compression:, model:, ...), got " +
                  node_kind(root), root.Mark());
      return;
    }
    read_section(root, "");
  }

  // Cross-key problems, placed at their key when the file sets it.
  void check_consistency() {
    for (auto& e : check_config_consistency(cfg_, rejected_)) {
      if (auto it = key_marks_.find(e.path); it != key_marks_.end() && !it->second.is_null()) {
        e.line = it->second.line + 1;
        e.column = it->second.column + 1;
      }
      errors_.push_back(std::move(e));
    }
  }

  void add(std::string path, std::string reason, const YAML::Mark& mark) {
    config_error e{std::move(path), std::move(reason), 0, 0};
    if (!mark.is_null()) {
      e.line = mark.line + 1;
      e.column = mark.column + 1;
    }
    errors_.push_back(std::move(e));
  }

  const app_config& config() const { return cfg_; }
  std::vector<config_error>& errors() { return errors_; }

private:
  void read_section(const YAML::Node& map, const std::string& prefix) {
    std::set<std::string> seen;
    for (const auto& entry : map) {  // `entry` is a value: bind nothing into an iterator
      const YAML::Node key = entry.first;
      const YAML::Node value = entry.second;
      if (!key.IsScalar()) {
        add(prefix, "a key must be a plain name, got " + node_kind(key), key.Mark());
        continue;
      }
      auto path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
      if (key.Scalar().find('.') != std::string::npos) {
        add(path, "unknown key (nest the sections instead of writing a dotted key)",
            key.Mark());
        continue;
      }
      if (!seen.insert(key.Scalar()).second) {
        add(path, "duplicate key", key.Mark());
        reject_under(path);
        continue;
      }
      if (auto* field = find_config_field(path))
        read_field(*field, key, value);
      else if (is_config_section(path))
        read_subsection(path, key, value);
      else
        add(path, unknown_key_reason(path), key.Mark());
    }
  }

  void read_field(const config_field& field, const YAML::Node& key, const YAML::Node& value) {
    key_marks_[field.path] = key.Mark();
    auto problems = field.read(value, ctx_, cfg_);
    if (problems.empty())
      return;
    rejected_.insert(field.path);
    for (auto& p : problems) {
      config_error e{field.path + p.suffix, p.reason, p.line, p.column};
      if (e.line == 0 && !key.Mark().is_null()) {
        e.line = key.Mark().line + 1;
        e.column = key.Mark().column + 1;
      }
      errors_.push_back(std::move(e));
    }
  }

  void read_subsection(const std::string& path, const YAML::Node& key,
                       const YAML::Node& value) {
    if (value.IsNull())
      return;  // `model:` with every key commented out: the defaults
    if (!value.IsMap()) {
      add(path, "expected a mapping, got " + node_kind(value), key.Mark());
      reject_under(path);
      return;
    }
    read_section(value, path);
  }

  // Marks every field at or below `path` as not taken from the file.
  void reject_under(const std::string& path) {
    for (auto& f : config_fields())
      if (f.path == path || f.path.compare(0, path.size() + 1, path + ".") == 0)
        rejected_.insert(f.path);
  }

  static std::string unknown_key_reason(const std::string& path) {
    auto near = closest_config_key(path);
    return near.empty() ? "unknown key" : "unknown key (did you mean " + near + "?)";
  }

  field_context ctx_;
  app_config cfg_;
  std::vector<config_error> errors_;
  std::set<std::string> rejected_;
  std::map<std::string, YAML::Mark> key_marks_;  // where each field read was set
};

// Counts a YAML stream's documents, reading no further than the second one. It replaces
// YAML::LoadAll, which never ends on some invalid UTF-8 (yaml-cpp 0.7 yields empty
// documents without advancing: tests/fuzz/corpus/config/regression-timeout-yaml-ff).
class document_counter final : public YAML::EventHandler {
public:
  explicit document_counter(std::string_view yaml) : in_{std::string{yaml}}, parser_{in_} {}

  // The number of documents, at most 2; second_mark() is where the second began.
  int count_up_to_two() {
    int documents = 0;
    while (documents < 2 && parser_.HandleNextDocument(*this))
      ++documents;
    return documents;
  }
  const YAML::Mark& second_mark() const { return second_mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++started_ == 2)
      second_mark_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

private:
  std::istringstream in_;
  YAML::Parser parser_;
  int started_ = 0;
  YAML::Mark second_mark_ = YAML::Mark::null_mark();
};

config_result load(std::string_view yaml, std::string origin, field_context ctx) {
  config_result result;
  result.origin = std::move(origin);
  config_reader reader{std::move(ctx)};
  try {
    // YAML is Unicode: a file that is not UTF-8 is refused before yaml-cpp reads it.
    auto invalid_byte = first_invalid_utf8_byte(yaml);
    document_counter counter{yaml};
    int documents = invalid_byte == std::string_view::npos ? counter.count_up_to_two() : 0;
    if (invalid_byte != std::string_view::npos)
      reader.add("", fmt::format("is not valid UTF-8 (byte {})", invalid_byte),
                 YAML::Mark::null_mark());
    else if (documents > 1)
      reader.add("", "holds more than one YAML document; expected one", counter.second_mark());
    else if (documents == 1)
      reader.read_document(YAML::Load(std::string{yaml}));
    reader.check_consistency();
  } catch (const YAML::Exception& e) {
    reader.add("", "invalid YAML: " + e.msg, e.mark);
  } catch (const std::exception& e) {
    reader.add("", std::string{"cannot read the configuration: "} + e.what(),
               YAML::Mark::null_mark());
  }
  result.errors = std::move(reader.errors());
  if (result.errors.empty())
    result.config = reader.config();
  return result;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in{path};
  while (std::getline(in, part, '.'))
    parts.push_back(part);
  return parts;
}

} // namespace

std::string to_string(const config_error& e) {
  return e.path.empty() ? e.reason : e.path + ": " + e.reason;
}

std::string config_result::describe_errors() const {
  std::string out;
  for (auto& e : errors) {
    out += origin;
    if (e.line > 0)
      out += fmt::format(":{}:{}", e.line, e.column);
    out += ": " + to_string(e) + "\n";
  }
  return out;
}

config_result load_config_text(std::string_view yaml, std::string origin) {
  return load(yaml, std::move(origin), field_context{});
}

std::optional<app_config> config_or_defaults(const std::string& path, std::ostream& err) {
  if (path.empty())
    return app_config{};
  auto loaded = load_config_file(path);
  if (!loaded.ok()) {
    err << loaded.describe_errors();
    return std::nullopt;
  }
  return std::move(*loaded.config);
}

config_result load_config_file(const std::string& path) {
  auto fail = [&](std::string reason) {
    config_result r;
    r.origin = path;
    r.errors.push_back(config_error{"", std::move(reason), 0, 0});
    return r;
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return fail("is a directory, not a configuration file");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return fail(std::string{"cannot open the file: "} + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return fail(std::string{"cannot read the file: "} + std::strerror(errno));
  auto base = std::filesystem::absolute(path, ec).parent_path();
  return load(text.str(), path, field_context{base});
}

std::string render_effective_config(const app_config& cfg) {
  std::string out = "# mneme effective configuration: defaults filled in, secrets masked\n";
  std::vector<std::string> open;  // the sections the previous key sat in
  for (auto& field : config_fields()) {
    auto parts = split_path(field.path);
    std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < open.size() && common < sections.size() && open[common] == sections[common])
      ++common;
    if (common == 0 && !open.empty())
      out += "\n";
    for (size_t depth = common; depth < sections.size(); ++depth)
      out += std::string(2 * depth, ' ') + sections[depth] + ":\n";
    out += std::string(2 * sections.size(), ' ') + parts.back() + ": " + field.render(cfg) +
           "\n";
    open = std::move(sections);
  }
  return out;
}

std::vector<std::string> config_key_paths() {
  std::vector<std::string> paths;
  for (auto& f : config_fields())
    paths.push_back(f.path);
  return paths;
}

std::optional<std::string> config_value_text(const app_config& cfg, std::string_view path) {
  if (auto* field = find_config_field(path))
    return field->render(cfg);
  return std::nullopt;
}

} // namespace mneme
