// Strict reading of soak scenarios; see soak_scenario.hpp.
#include "apps/common/soak/soak_scenario.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <vector>

// yaml-cpp 0.7's node headers trip GCC 12's -Wdangling-pointer inside the library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop

#include "apps/common/config/config_scalar.hpp"
#include "caf/make_message.hpp"
#include "messages/errc.hpp"

namespace mneme::soak {

namespace {

// Collects every problem of one document with its key path.
class reader {
 public:
  std::vector<std::string> errors;

  void fail(const std::string& path, const std::string& why) {
    errors.push_back(path + ": " + why);
  }

  // Every key of `node` must be in `allowed`; returns false when `node` is no mapping.
  bool mapping(const YAML::Node& node, const std::string& path,
               const std::set<std::string>& allowed) {
    if (!node.IsMap()) {
      fail(path, "must be a mapping");
      return false;
    }
    for (const auto& kv : node) {
      auto key = kv.first.as<std::string>();
      if (allowed.count(key) == 0)
        fail(path.empty() ? key : path + "." + key, "unknown key");
    }
    return true;
  }

  std::optional<yaml_scalar> scalar(const YAML::Node& n, const std::string& path) {
    if (!n.IsScalar()) {
      fail(path, "must be a scalar");
      return std::nullopt;
    }
    return yaml_scalar{n.Scalar(), n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str"};
  }

  // `out` = the scalar at parent[key] when present, parsed by `parse` and within
  // lo..hi; otherwise an error naming the path (`out` unchanged).
  template <class T, class Parse, class Format>
  void bounded(const YAML::Node& parent, const char* key, const std::string& path, T& out,
               T lo, T hi, Parse parse, Format format) {
    auto n = parent[key];
    if (!n)
      return;
    auto p = join(path, key);
    auto s = scalar(n, p);
    if (!s)
      return;
    std::string why;
    auto v = parse(*s, why);
    if (!v)
      return fail(p, why);
    if (*v < lo || *v > hi)
      return fail(p, format(*v) + " is outside " + format(lo) + ".." + format(hi));
    out = *v;
  }

  void integer(const YAML::Node& parent, const char* key, const std::string& path,
               int64_t& out, int64_t lo, int64_t hi) {
    bounded(parent, key, path, out, lo, hi,
            [](const yaml_scalar& x, std::string& why) { return parse_config_int(x, why); },
            [](int64_t v) { return std::to_string(v); });
  }

  void number(const YAML::Node& parent, const char* key, const std::string& path, double& out,
              double lo, double hi) {
    bounded(parent, key, path, out, lo, hi,
            [](const yaml_scalar& x, std::string& why) { return parse_config_number(x, why); },
            [](double v) { return format_config_number(v); });
  }

  void boolean(const YAML::Node& parent, const char* key, const std::string& path, bool& out) {
    auto n = parent[key];
    if (!n)
      return;
    auto p = join(path, key);
    auto s = scalar(n, p);
    if (!s)
      return;
    std::string why;
    auto v = parse_config_bool(*s, why);
    if (!v)
      return fail(p, why);
    out = *v;
  }

  void range(const YAML::Node& parent, const char* key, const std::string& path,
             int_range& out, int64_t lo, int64_t hi) {
    auto n = parent[key];
    if (!n)
      return;
    auto p = join(path, key);
    if (!mapping(n, p, {"min", "max"}))
      return;
    int_range r = out;
    integer(n, "min", p, r.min, lo, hi);
    integer(n, "max", p, r.max, lo, hi);
    if (r.min > r.max)
      return fail(p, "min " + std::to_string(r.min) + " is above max " + std::to_string(r.max));
    out = r;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string{key} : path + "." + key;
  }
};

const std::set<std::string> top_keys{"name",  "users",   "duration_s", "seed",      "think_ms",
                                     "mix",   "config",  "fake_llm",   "invariants"};
const std::set<std::string> mix_keys{"chinese_share", "tool_small_share", "tool_large_share",
                                     "tool_large_kb", "user_chars",       "marker_every",
                                     "tools_offered_share", "tool_result_large_share"};
const std::set<std::string> invariant_keys{
  "max_live_tokens", "max_compactions_per_hour", "rss_max_growth",
  "check_every_s",   "drain_s",                  "require_fallback_in_outage",
  "live_bound_factor"}; // deprecated: accepted with a warning, decides nothing

} // namespace

caf::expected<soak_scenario> parse_soak_scenario(std::string_view yaml, std::string origin) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string{yaml});
  } catch (const YAML::Exception& e) {
    return caf::make_error(errc::config_invalid, origin + ": not YAML: " + e.what());
  }
  reader r;
  soak_scenario s;
  s.origin = origin;
  s.name = std::filesystem::path(origin).stem().string();
  if (!root.IsMap()) {
    return caf::make_error(errc::config_invalid,
                           origin + ": a scenario is a mapping of keys (see docs/soak.md)");
  }
  r.mapping(root, "", top_keys);
  if (auto n = root["name"]) {
    if (auto v = r.scalar(n, "name"); v && !v->text.empty())
      s.name = v->text;
    else if (v)
      r.fail("name", "must not be empty");
  }
  r.integer(root, "users", "", s.users, 1, 100000);
  r.number(root, "duration_s", "", s.duration_s, 1, 30 * 24 * 3600.0);
  int64_t seed = static_cast<int64_t>(s.seed);
  r.integer(root, "seed", "", seed, 0, std::numeric_limits<int64_t>::max());
  s.seed = static_cast<uint64_t>(seed);
  r.range(root, "think_ms", "", s.think_ms, 0, 3'600'000);
  if (auto mix = root["mix"]; mix && r.mapping(mix, "mix", mix_keys)) {
    r.number(mix, "chinese_share", "mix", s.mix.chinese_share, 0, 1);
    r.number(mix, "tool_small_share", "mix", s.mix.tool_small_share, 0, 1);
    r.number(mix, "tool_large_share", "mix", s.mix.tool_large_share, 0, 1);
    r.range(mix, "tool_large_kb", "mix", s.mix.tool_large_kb, 1, 4096);
    r.range(mix, "user_chars", "mix", s.mix.user_chars, 40, 1'000'000);
    r.integer(mix, "marker_every", "mix", s.mix.marker_every, 0, 1'000'000);
    r.number(mix, "tools_offered_share", "mix", s.mix.tools_offered_share, 0, 1);
    r.number(mix, "tool_result_large_share", "mix", s.mix.tool_result_large_share, 0, 1);
    if (s.mix.tool_small_share + s.mix.tool_large_share > 1)
      r.fail("mix", "tool_small_share + tool_large_share is above 1");
  }
  if (auto cfg = root["config"]) {
    if (!cfg.IsMap() && !cfg.IsNull())
      r.fail("config", "must be a mapping of mneme configuration keys");
    else if (cfg.IsMap()) {
      YAML::Emitter out;
      out << cfg;
      s.config_yaml = out.c_str();
    }
  }
  if (auto fake = root["fake_llm"]) {
    YAML::Emitter out;
    out << fake;
    auto parsed = fakellm::parse_scenario_yaml(out.c_str(), "fake_llm");
    if (parsed)
      s.fake_llm = std::move(*parsed);
    else
      r.errors.push_back(render_error(parsed.error()));
  }
  if (auto inv = root["invariants"]; inv && r.mapping(inv, "invariants", invariant_keys)) {
    auto& b = s.invariants;
    if (inv["live_bound_factor"])
      s.warnings.push_back("invariants.live_bound_factor: deprecated and ignored (the live"
                           " bound is the model window; set invariants.max_live_tokens to"
                           " bound it otherwise); remove the key");
    r.integer(inv, "max_live_tokens", "invariants", b.max_live_tokens, 0, 1'000'000'000);
    r.integer(inv, "max_compactions_per_hour", "invariants", b.max_compactions_per_hour, 1,
              1'000'000);
    r.number(inv, "rss_max_growth", "invariants", b.rss_max_growth, 0, 100);
    r.number(inv, "check_every_s", "invariants", b.check_every_s, 0.5, 3600);
    r.number(inv, "drain_s", "invariants", b.drain_s, 1, 3600);
    r.boolean(inv, "require_fallback_in_outage", "invariants", b.require_fallback_in_outage);
  }
  if (!r.errors.empty()) {
    std::string all;
    for (const auto& e : r.errors)
      all += (all.empty() ? "" : "\n") + origin + ": " + e;
    return caf::make_error(errc::config_invalid, all);
  }
  return s;
}

caf::expected<soak_scenario> load_soak_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return caf::make_error(errc::config_invalid, path + ": cannot read the scenario file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_soak_scenario(buf.str(), path);
}

std::vector<outage_window> outage_windows(const soak_scenario& s) {
  std::vector<outage_window> out;
  for (const auto& rule : s.fake_llm.plan.rules) {
    if (rule.kind == fakellm::fault_kind::latency || !rule.end_s)
      continue;
    out.push_back({rule.start_s, *rule.end_s, std::string{to_string(rule.kind)},
                   std::string{to_string(rule.purpose)}, rule.fraction});
  }
  return out;
}

} // namespace mneme::soak
