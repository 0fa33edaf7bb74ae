// Implementation of scenario parsing (see scenario.hpp).
#include "apps/common/fakellm/scenario.hpp"

#include "apps/common/fakellm/embeddings_wire.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
// yaml-cpp 0.7's node headers trip GCC 12's -Wdangling-pointer inside the library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop

#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"

namespace mneme::fakellm {

namespace {

using json = nlohmann::json;

caf::error invalid(const std::string& path, const std::string& why) {
  return caf::make_error(errc::config_invalid, path + ": " + why);
}

std::string check_keys(const json& obj, const std::set<std::string>& allowed,
                       const std::string& path) {
  for (const auto& [k, v] : obj.items())
    if (allowed.count(k) == 0) return path + "." + k;
  return {};
}

// Reads an integer field when present. Returns an error text or empty.
std::string read_int(const json& obj, const char* key, int64_t& out) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (!it->is_number_integer()) return "must be an integer";
  out = it->get<int64_t>();
  return {};
}

std::string read_double(const json& obj, const char* key, double& out) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (!it->is_number()) return "must be a number";
  out = it->get<double>();
  if (!std::isfinite(out)) return "must be finite";
  return {};
}

const std::set<std::string> rule_keys{"kind",       "fraction",   "model",
                                      "purpose",    "start_s",    "end_s",
                                      "min_prompt_tokens", "max_count", "latency_ms",
                                      "jitter_ms",  "max_body_bytes", "silence_ms",
                                      "retry_after"};

caf::expected<fault_rule> parse_rule(const json& j, const std::string& path) {
  if (!j.is_object()) return invalid(path, "must be a mapping");
  if (auto bad_key = check_keys(j, rule_keys, path); !bad_key.empty())
    return invalid(bad_key, "unknown key");
  fault_rule r;
  auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string()) return invalid(path + ".kind", "is required (a string)");
  auto k = parse_fault_kind(kind->get<std::string>());
  if (!k) return invalid(path + ".kind", "unknown fault kind '" + kind->get<std::string>() + "'");
  r.kind = *k;
  if (auto m = j.find("model"); m != j.end()) {
    if (!m->is_string()) return invalid(path + ".model", "must be a string");
    r.model = m->get<std::string>();
  }
  if (auto p = j.find("purpose"); p != j.end()) {
    auto pf = p->is_string() ? parse_purpose_filter(p->get<std::string>()) : std::nullopt;
    if (!pf) return invalid(path + ".purpose", "must be any, chat, summary, compaction or embedding");
    r.purpose = *pf;
  }
  struct dfield { const char* key; double* out; };
  for (auto f : {dfield{"fraction", &r.fraction}, dfield{"start_s", &r.start_s}})
    if (auto e = read_double(j, f.key, *f.out); !e.empty()) return invalid(path + "." + f.key, e);
  if (j.count("end_s")) {
    double end = 0;
    if (auto e = read_double(j, "end_s", end); !e.empty()) return invalid(path + ".end_s", e);
    r.end_s = end;
  }
  struct ifield { const char* key; int64_t* out; };
  for (auto f : {ifield{"min_prompt_tokens", &r.min_prompt_tokens},
                 ifield{"max_count", &r.max_count}, ifield{"latency_ms", &r.latency_ms},
                 ifield{"jitter_ms", &r.jitter_ms}, ifield{"max_body_bytes", &r.max_body_bytes},
                 ifield{"silence_ms", &r.silence_ms}})
    if (auto e = read_int(j, f.key, *f.out); !e.empty()) return invalid(path + "." + f.key, e);
  if (auto ra = j.find("retry_after"); ra != j.end()) { // seconds or an HTTP-date
    if (ra->is_number_integer())
      r.retry_after = std::to_string(ra->get<int64_t>());
    else if (ra->is_string())
      r.retry_after = ra->get<std::string>();
    else
      return invalid(path + ".retry_after", "must be an integer or a string");
  }
  if (auto e = validate(r); !e.empty()) return invalid(path, e);
  return r;
}

// YAML -> JSON with scalar types inferred for plain (unquoted) scalars.
json yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      auto out = json::array();
      for (const auto& item : n) out.push_back(yaml_to_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      auto out = json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
      return out;
    }
    case YAML::NodeType::Scalar: break;
  }
  const auto& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "false") return s == "true";
  if (s == "~" || s == "null") return nullptr;
  try {
    size_t used = 0;
    auto i = std::stoll(s, &used);
    if (used == s.size()) return i;
    auto d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  return s;
}

} // namespace

caf::expected<scenario> parse_scenario(const json& doc, const std::string& root) {
  if (!doc.is_object()) return invalid(root, "must be a mapping");
  if (auto bad_key = check_keys(doc, {"seed", "window_tokens", "answer_tokens",
                                         "report_usage", "native_compaction_models",
                                         "tool_call_fraction", "tool_rounds", "embedding_mode",
                                         "faults"}, root);
      !bad_key.empty())
    return invalid(bad_key, "unknown key");
  scenario s;
  if (auto it = doc.find("seed"); it != doc.end()) {
    bool ok = it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0);
    if (!ok) return invalid(root + ".seed", "must be a non-negative integer");
    s.plan.seed = it->get<uint64_t>();
  }
  if (auto it = doc.find("tool_call_fraction"); it != doc.end()) {
    if (!it->is_number() || it->get<double>() < 0.0 || it->get<double>() > 1.0)
      return invalid(root + ".tool_call_fraction", "must be a number between 0 and 1");
    s.tool_call_fraction = it->get<double>();
  }
  for (auto [key, out] : {std::pair{"window_tokens", &s.window_tokens},
                          std::pair{"answer_tokens", &s.answer_tokens},
                          std::pair{"tool_rounds", &s.tool_rounds}}) {
    auto it = doc.find(key);
    if (it == doc.end()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1)
      return invalid(root + "." + key, "must be a positive integer");
    *out = it->get<int64_t>();
  }
  if (auto it = doc.find("embedding_mode"); it != doc.end()) {
    fake_embedding_mode mode{};
    if (!it->is_string() || !parse_fake_embedding_mode(it->get<std::string>(), mode))
      return invalid(root + ".embedding_mode", "must be bag_of_words or paraphrase");
    s.embedding_mode = mode;
  }
  if (auto it = doc.find("report_usage"); it != doc.end()) {
    if (!it->is_boolean()) return invalid(root + ".report_usage", "must be true or false");
    s.report_usage = it->get<bool>();
  }
  if (auto it = doc.find("native_compaction_models"); it != doc.end()) {
    if (!it->is_array())
      return invalid(root + ".native_compaction_models", "must be a list of strings");
    std::vector<std::string> models;
    for (size_t i = 0; i < it->size(); ++i) {
      const auto& m = (*it)[i];
      if (!m.is_string() || m.get<std::string>().empty())
        return invalid(root + ".native_compaction_models[" + std::to_string(i) + "]",
                       "must be a non-empty string");
      models.push_back(m.get<std::string>());
    }
    s.native_compaction_models = std::move(models);
  }
  if (auto it = doc.find("faults"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) return invalid(root + ".faults", "must be a list");
    for (size_t i = 0; i < it->size(); ++i) {
      auto r = parse_rule((*it)[i], root + ".faults[" + std::to_string(i) + "]");
      if (!r) return std::move(r.error());
      s.plan.rules.push_back(std::move(*r));
    }
  }
  return s;
}

caf::expected<scenario> parse_scenario_json(std::string_view text, const std::string& root) {
  auto doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return invalid(root, "is not valid JSON");
  return parse_scenario(doc, root);
}

caf::expected<scenario> parse_scenario_yaml(std::string_view text, const std::string& root) {
  try {
    auto node = YAML::Load(std::string(text));
    if (!node.IsDefined() || node.IsNull()) return scenario{};
    return parse_scenario(yaml_to_json(node), root);
  } catch (const YAML::Exception& e) {
    return invalid(root, std::string("is not valid YAML: ") + e.what());
  }
}

caf::expected<scenario> load_scenario_file(const std::string& yaml_path) {
  std::ifstream in(yaml_path);
  if (!in) return invalid(yaml_path, "cannot be opened");
  std::stringstream text;
  text << in.rdbuf();
  return parse_scenario_yaml(text.str(), yaml_path);
}

json to_json(const scenario& s) {
  json doc = {{"seed", s.plan.seed}};
  if (s.window_tokens) doc["window_tokens"] = *s.window_tokens;
  if (s.answer_tokens) doc["answer_tokens"] = *s.answer_tokens;
  if (s.report_usage) doc["report_usage"] = *s.report_usage;
  if (s.native_compaction_models) doc["native_compaction_models"] = *s.native_compaction_models;
  if (s.tool_call_fraction) doc["tool_call_fraction"] = *s.tool_call_fraction;
  if (s.tool_rounds) doc["tool_rounds"] = *s.tool_rounds;
  if (s.embedding_mode) doc["embedding_mode"] = std::string(to_string(*s.embedding_mode));
  auto faults = json::array();
  const fault_rule defaults;
  for (const auto& r : s.plan.rules) {
    json j = {{"kind", to_string(r.kind)}, {"fraction", r.fraction},
              {"purpose", to_string(r.purpose)}, {"start_s", r.start_s}};
    if (!r.model.empty()) j["model"] = r.model;
    if (r.end_s) j["end_s"] = *r.end_s;
    if (r.min_prompt_tokens) j["min_prompt_tokens"] = r.min_prompt_tokens;
    if (r.max_count) j["max_count"] = r.max_count;
    if (r.kind == fault_kind::latency) {
      j["latency_ms"] = r.latency_ms;
      j["jitter_ms"] = r.jitter_ms;
    }
    if (r.kind == fault_kind::payload_too_large) j["max_body_bytes"] = r.max_body_bytes;
    if (r.kind == fault_kind::trickle) j["silence_ms"] = r.silence_ms;
    if (!r.retry_after.empty()) j["retry_after"] = r.retry_after;
    faults.push_back(std::move(j));
  }
  doc["faults"] = std::move(faults);
  return doc;
}

} // namespace mneme::fakellm
