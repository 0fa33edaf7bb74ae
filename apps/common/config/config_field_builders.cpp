// Value readers and writers behind the configuration table; see config_field_builders.hpp.
#include "apps/common/config/config_field_builders.hpp"

#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "policies/credential_file.hpp"

namespace mneme::config_build {

namespace {

field_problem at(const YAML::Node& n, std::string suffix, std::string reason) {
  auto m = n.Mark();
  if (m.is_null())
    return {std::move(suffix), std::move(reason), 0, 0};
  return {std::move(suffix), std::move(reason), m.line + 1, m.column + 1};
}

// Reason for a container value that is not of the expected container kind.
std::string container_problem(const YAML::Node& n, bool want_map, const std::string& expected,
                              const std::string& empty_form) {
  if (n.IsNull())
    return "has no value (write " + empty_form + " for none, or remove the key)";
  if (want_map ? n.IsMap() : n.IsSequence())
    return {};
  return "expected " + expected + ", got " + node_kind(n);
}

} // namespace

std::string node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return "a single value";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

std::string describe(int_range r) {
  auto range = fmt::format("{}..{}", r.lo, r.hi);
  return r.zero_allowed ? "0 or " + range : range;
}

std::string describe(number_range r) {
  return format_config_number(r.lo) + ".." + format_config_number(r.hi);
}

std::string scalar_problem(const YAML::Node& n, const std::string& expected) {
  if (n.IsScalar())
    return {};
  if (n.IsNull())
    return "has no value (remove the key to keep the default)";
  return "expected " + expected + ", got " + node_kind(n);
}

yaml_scalar scalar_of(const YAML::Node& n) {
  const auto& tag = n.Tag();
  return {n.Scalar(), tag == "!" || tag == "tag:yaml.org,2002:str"};
}

std::vector<field_problem> one_problem(std::string reason) {
  return {field_problem{"", std::move(reason), 0, 0}};
}

std::string join_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (auto& c : choices)
    out += (out.empty() ? "" : "|") + c;
  return out;
}

string_check non_empty() {
  auto check = [](const std::string& v) {
    return v.empty() ? std::string{"must not be empty"} : std::string{};
  };
  return {check, "a non-empty string"};
}

string_check one_of(std::vector<std::string> choices) {
  auto check = [choices](const std::string& v) {
    for (auto& c : choices)
      if (c == v)
        return std::string{};
    return show_scalar({v, true}) + " is not one of " + join_choices(choices);
  };
  return {check, "one of " + join_choices(choices)};
}

string_check http_url_or(std::string allowed_word) {
  auto alt = allowed_word.empty() ? std::string{"\"\" (unset)"} : yaml_quote(allowed_word);
  auto check = [allowed_word, alt](const std::string& v) {
    if (v == allowed_word)
      return std::string{};
    for (std::string scheme : {"http://", "https://"})
      if (v.size() > scheme.size() && v.compare(0, scheme.size(), scheme) == 0)
        return std::string{};
    return show_scalar({v, true}) + " is not an http:// or https:// URL nor " + alt;
  };
  return {check, "an http:// or https:// URL, or " + alt};
}

std::vector<field_problem> read_int(const YAML::Node& n, int_range r, int64_t& out) {
  if (auto bad = scalar_problem(n, "an integer"); !bad.empty())
    return one_problem(bad);
  std::string why;
  auto v = parse_config_int(scalar_of(n), why);
  if (!v)
    return one_problem(why);
  bool inside = (*v >= r.lo && *v <= r.hi) || (r.zero_allowed && *v == 0);
  if (!inside)
    return one_problem(n.Scalar() + " is outside " + describe(r));
  out = *v;
  return {};
}

std::vector<field_problem> read_number(const YAML::Node& n, number_range r, double& out) {
  if (auto bad = scalar_problem(n, "a number"); !bad.empty())
    return one_problem(bad);
  std::string why;
  auto v = parse_config_number(scalar_of(n), why);
  if (!v)
    return one_problem(why);
  if (*v < r.lo || *v > r.hi)
    return one_problem(n.Scalar() + " is outside " + describe(r));
  out = *v;
  return {};
}

std::vector<field_problem> read_bool(const YAML::Node& n, bool& out) {
  if (auto bad = scalar_problem(n, "true or false"); !bad.empty())
    return one_problem(bad);
  std::string why;
  auto v = parse_config_bool(scalar_of(n), why);
  if (!v)
    return one_problem(why);
  out = *v;
  return {};
}

std::vector<field_problem> read_string(const YAML::Node& n, const string_check& check,
                                       std::string& out) {
  if (auto bad = scalar_problem(n, "a string"); !bad.empty())
    return one_problem(bad);
  std::string v = n.Scalar();
  if (check.check)
    if (auto bad = check.check(v); !bad.empty())
      return one_problem(bad);
  out = std::move(v);
  return {};
}

std::vector<field_problem> read_existing_file(const YAML::Node& n, const field_context& ctx,
                                              std::string& out) {
  std::string written;
  if (auto problems = read_string(n, {}, written); !problems.empty())
    return problems;
  if (written.empty()) {
    out.clear();
    return {};
  }
  std::filesystem::path p{written};
  if (p.is_relative() && !ctx.base_dir.empty())
    p = (ctx.base_dir / p).lexically_normal();
  std::error_code ec;
  auto status = std::filesystem::status(p, ec);
  if (!std::filesystem::exists(status))
    return one_problem(p.string() + " does not exist");
  if (!std::filesystem::is_regular_file(status))
    return one_problem(p.string() + " is not a regular file");
  if (auto bad = credential_file_problem(static_cast<unsigned>(status.permissions()));
      !bad.empty())
    return one_problem(p.string() + " " + bad);
  if (!std::ifstream{p})
    return one_problem(p.string() + " cannot be read");
  out = p.string();
  return {};
}

std::vector<field_problem> read_ratio_map(const YAML::Node& n, number_range r,
                                          std::map<std::string, double>& out) {
  auto expected = "a mapping of model-name substring to ratio";
  if (auto bad = container_problem(n, true, expected, "{}"); !bad.empty())
    return one_problem(bad);
  std::vector<field_problem> problems;
  std::map<std::string, double> result;
  for (const auto& entry : n) {  // `entry` is a value: bind nothing into an iterator
    const YAML::Node key = entry.first;
    if (!key.IsScalar() || key.Scalar().empty()) {
      problems.push_back(at(key, "", "a model-name substring must be a non-empty string"));
      continue;
    }
    auto suffix = "." + key.Scalar();
    if (result.count(key.Scalar()) != 0) {
      problems.push_back(at(key, suffix, "duplicate key"));
      continue;
    }
    double ratio = 0;
    for (auto& p : read_number(entry.second, r, ratio)) {
      auto located = at(key, suffix, p.reason);
      problems.push_back(located);
    }
    result[key.Scalar()] = ratio;
  }
  if (problems.empty())
    out = std::move(result);
  return problems;
}

std::vector<field_problem> read_string_list(const YAML::Node& n, std::vector<std::string>& out) {
  if (auto bad = container_problem(n, false, "a list of strings", "[]"); !bad.empty())
    return one_problem(bad);
  std::vector<field_problem> problems;
  std::vector<std::string> result;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node& item = n[i];
    auto suffix = fmt::format("[{}]", i);
    if (auto bad = scalar_problem(item, "a string"); !bad.empty())
      problems.push_back(at(item, suffix, bad));
    else if (item.Scalar().empty())
      problems.push_back(at(item, suffix, "must not be empty"));
    else
      result.push_back(item.Scalar());
  }
  if (problems.empty())
    out = std::move(result);
  return problems;
}

std::string render_ratio_map(const std::map<std::string, double>& m) {
  std::string out;
  for (auto& [key, ratio] : m)
    out += (out.empty() ? "" : ", ") + yaml_quote(key) + ": " + format_config_number(ratio);
  return "{" + out + "}";
}

std::string render_string_list(const std::vector<std::string>& v) {
  std::string out;
  for (auto& s : v)
    out += (out.empty() ? "" : ", ") + yaml_quote(s);
  return "[" + out + "]";
}

std::string render_secret(const std::string& s) {
  return s.empty() ? "\"\"" : "\"***\"";
}

} // namespace mneme::config_build
