// The exposition's families made contiguous; see metric_families.hpp.
#include "policies/metric_families.hpp"

#include <unordered_map>
#include <vector>

namespace mneme {

namespace {

struct mf_family {
  std::string help, type;
  std::vector<std::string_view> samples;
};

// The metric name of a sample line: up to '{' or ' '.
std::string_view mf_sample_name(std::string_view line) {
  auto end = line.find_first_of("{ ");
  return line.substr(0, end);
}

bool mf_belongs(std::string_view sample, std::string_view family) {
  if (sample == family)
    return true;
  if (sample.size() <= family.size() || sample.substr(0, family.size()) != family)
    return false;
  auto suffix = sample.substr(family.size());
  return suffix == "_bucket" || suffix == "_sum" || suffix == "_count" || suffix == "_total"
         || suffix == "_created";
}

} // namespace

std::string merge_metric_families(std::string_view text) {
  std::vector<std::string> order;
  std::unordered_map<std::string, mf_family> families;
  std::string current;
  auto family_of = [&](const std::string& name) -> mf_family& {
    auto [it, fresh] = families.try_emplace(name);
    if (fresh)
      order.push_back(name);
    return it->second;
  };
  size_t at = 0;
  while (at < text.size()) {
    auto eol = text.find('\n', at);
    auto line = text.substr(at, eol == std::string_view::npos ? std::string_view::npos : eol - at);
    at = eol == std::string_view::npos ? text.size() : eol + 1;
    if (line.empty())
      continue;
    bool help = line.rfind("# HELP ", 0) == 0;
    bool type = line.rfind("# TYPE ", 0) == 0;
    if (help || type) {
      auto rest = line.substr(7);
      current = std::string{rest.substr(0, rest.find(' '))};
      auto& f = family_of(current);
      auto& slot = help ? f.help : f.type;
      if (slot.empty())
        slot = std::string{line};
      continue;
    }
    if (line[0] == '#')
      continue;
    auto name = mf_sample_name(line);
    if (current.empty() || !mf_belongs(name, current))
      current = std::string{name};
    family_of(current).samples.push_back(line);
  }
  std::string out;
  out.reserve(text.size());
  for (const auto& name : order) {
    const auto& f = families[name];
    for (const auto* l : {&f.help, &f.type})
      if (!l->empty())
        out.append(*l).push_back('\n');
    for (auto s : f.samples)
      out.append(s).push_back('\n');
  }
  return out;
}

} // namespace mneme
