// Builders for the rows of the configuration table (config_schema.cpp): one function per
// kind of value (boolean, integer range, number range, choice, string, file path,
// secret, ratio map, string list). Each binds a dotted path to one member of one
// section struct of app_config and enforces the kind's rules. Used only by
// config_schema.cpp; pure, any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/config/config_scalar.hpp"
#include "apps/common/config/config_schema.hpp"

namespace mneme::config_build {

// An inclusive integer range; `zero_allowed` adds 0 as a special value (off / none).
struct int_range {
  int64_t lo;
  int64_t hi;
  bool zero_allowed = false;
};

// An inclusive range of numbers.
struct number_range {
  double lo;
  double hi;
};

// Checks a string value: `check` returns "" when accepted, else the reason;
// `accepts` says in words what passes ("one of sqlite").
struct string_check {
  std::function<std::string(const std::string& value)> check;
  std::string accepts = "a string";
};

std::string describe(int_range r);
std::string describe(number_range r);

// "a single value", "a list", "a mapping" or "nothing": what a node is, for messages.
std::string node_kind(const YAML::Node& n);

// Reason when `n` is not a scalar ("" when it is); `expected` names the kind.
std::string scalar_problem(const YAML::Node& n, const std::string& expected);
yaml_scalar scalar_of(const YAML::Node& n);
std::vector<field_problem> one_problem(std::string reason);

// --- string checks
string_check non_empty();
string_check one_of(std::vector<std::string> choices);
std::string join_choices(const std::vector<std::string>& choices);  // "count|tokens"
// `allowed_word` ("builtin" or "") is accepted besides an http:// or https:// URL.
string_check http_url_or(std::string allowed_word);

// Reads the scalar and checks the range; returns problems or stores into `out`.
std::vector<field_problem> read_int(const YAML::Node& n, int_range r, int64_t& out);
std::vector<field_problem> read_number(const YAML::Node& n, number_range r, double& out);
std::vector<field_problem> read_bool(const YAML::Node& n, bool& out);
std::vector<field_problem> read_string(const YAML::Node& n, const string_check& check,
                                       std::string& out);
// Resolves a relative path against ctx.base_dir; the file must exist, be readable and not
// be writable by every user (policies/credential_file.hpp: these files hold credentials).
std::vector<field_problem> read_existing_file(const YAML::Node& n, const field_context& ctx,
                                              std::string& out);
std::vector<field_problem> read_ratio_map(const YAML::Node& n, number_range r,
                                          std::map<std::string, double>& out);
std::vector<field_problem> read_string_list(const YAML::Node& n, std::vector<std::string>& out);

std::string render_ratio_map(const std::map<std::string, double>& m);
std::string render_string_list(const std::vector<std::string>& v);
std::string render_secret(const std::string& s);

// ---- row builders: `section` selects the struct inside app_config, `member` the value.

template <class S, class T>
config_field integer(std::string path, S app_config::*section, T S::*member, int_range r) {
  config_field f{std::move(path), "an integer in " + describe(r), {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    int64_t v = 0;
    auto problems = read_int(n, r, v);
    if (problems.empty())
      (cfg.*section).*member = static_cast<T>(v);
    return problems;
  };
  f.render = [=](const app_config& cfg) { return std::to_string((cfg.*section).*member); };
  return f;
}

template <class S>
config_field number(std::string path, S app_config::*section, double S::*member,
                    number_range r) {
  config_field f{std::move(path), "a number in " + describe(r), {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    double v = 0;
    auto problems = read_number(n, r, v);
    if (problems.empty())
      (cfg.*section).*member = v;
    return problems;
  };
  f.render = [=](const app_config& cfg) {
    return format_config_number((cfg.*section).*member);
  };
  return f;
}

template <class S>
config_field boolean(std::string path, S app_config::*section, bool S::*member) {
  config_field f{std::move(path), "true or false", {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    bool v = false;
    auto problems = read_bool(n, v);
    if (problems.empty())
      (cfg.*section).*member = v;
    return problems;
  };
  f.render = [=](const app_config& cfg) {
    return std::string{(cfg.*section).*member ? "true" : "false"};
  };
  return f;
}

// An enum written as one of its names.
template <class S, class E>
config_field choice(std::string path, S app_config::*section, E S::*member,
                    std::vector<std::pair<std::string, E>> names) {
  std::vector<std::string> words;
  for (auto& [word, value] : names)
    words.push_back(word);
  auto check = one_of(words);
  config_field f{std::move(path), check.accepts, {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    std::string word;
    auto problems = read_string(n, check, word);
    if (problems.empty())
      for (auto& [name, value] : names)
        if (name == word)
          (cfg.*section).*member = value;
    return problems;
  };
  f.render = [=](const app_config& cfg) {
    for (auto& [name, value] : names)
      if (value == (cfg.*section).*member)
        return name;
    return std::string{"?"};
  };
  return f;
}

template <class S>
config_field text(std::string path, S app_config::*section, std::string S::*member,
                  string_check check = {}) {
  config_field f{std::move(path), check.accepts, {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    std::string v;
    auto problems = read_string(n, check, v);
    if (problems.empty())
      (cfg.*section).*member = std::move(v);
    return problems;
  };
  f.render = [=](const app_config& cfg) { return yaml_quote((cfg.*section).*member); };
  return f;
}

// A secret: read like any string, rendered masked.
template <class S>
config_field secret(std::string path, S app_config::*section, std::string S::*member) {
  auto f = text(std::move(path), section, member);
  f.accepts = "a string (shown masked)";
  f.render = [=](const app_config& cfg) { return render_secret((cfg.*section).*member); };
  return f;
}

// A path to a file that must exist when set ("" = unset).
template <class S>
config_field existing_file(std::string path, S app_config::*section, std::string S::*member) {
  config_field f{std::move(path), "a path to a readable file, or \"\"", {}, {}};
  f.read = [=](const YAML::Node& n, const field_context& ctx, app_config& cfg) {
    std::string v;
    auto problems = read_existing_file(n, ctx, v);
    if (problems.empty())
      (cfg.*section).*member = std::move(v);
    return problems;
  };
  f.render = [=](const app_config& cfg) { return yaml_quote((cfg.*section).*member); };
  return f;
}

template <class S>
config_field ratio_map(std::string path, S app_config::*section,
                       std::map<std::string, double> S::*member, number_range r) {
  config_field f{std::move(path), "a mapping of model-name substring to a ratio in " +
                                      describe(r), {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    std::map<std::string, double> v;
    auto problems = read_ratio_map(n, r, v);
    if (problems.empty())
      (cfg.*section).*member = std::move(v);
    return problems;
  };
  f.render = [=](const app_config& cfg) { return render_ratio_map((cfg.*section).*member); };
  return f;
}

template <class S>
config_field string_list(std::string path, S app_config::*section,
                         std::vector<std::string> S::*member) {
  config_field f{std::move(path), "a list of non-empty strings", {}, {}};
  f.read = [=](const YAML::Node& n, const field_context&, app_config& cfg) {
    std::vector<std::string> v;
    auto problems = read_string_list(n, v);
    if (problems.empty())
      (cfg.*section).*member = std::move(v);
    return problems;
  };
  f.render = [=](const app_config& cfg) {
    return render_string_list((cfg.*section).*member);
  };
  return f;
}

} // namespace mneme::config_build
