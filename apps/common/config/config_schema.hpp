// The table of every configuration key: its dotted path, what it accepts, how it is
// read from a YAML node into app_config and how it is written back as YAML text.
// The loader walks the file against this table; render_effective_config and
// configs/mneme.yaml follow its order. Adding a key = adding one row in
// config_schema.cpp (plus its line in configs/mneme.yaml, which a test enforces).
// Immutable after first use; any thread.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "apps/common/config/app_config.hpp"

namespace mneme {

// What a field reader may need beyond the node itself.
struct field_context {
  std::filesystem::path base_dir;  // relative *_file paths resolve against it; "" = as written
};

// One problem found while reading a field.
struct field_problem {
  std::string suffix;  // appended to the field's path: "" or ".gpt-5" (map key) or "[2]"
  std::string reason;
  int line = 0;        // 1-based; 0 = use the position of the field's key
  int column = 0;
};

struct config_field {
  std::string path;     // "compression.threshold"
  std::string accepts;  // "a number in 0.05..0.95"
  // Reads a present `value` into `cfg`. On any problem `cfg` is left unchanged.
  std::function<std::vector<field_problem>(const YAML::Node& value, const field_context& ctx,
                                           app_config& cfg)> read;
  // The field's current value as a YAML value (flow style for maps and lists).
  std::function<std::string(const app_config& cfg)> render;
};

// Every field, in the order of configs/mneme.yaml.
const std::vector<config_field>& config_fields();

// The field at `path`, or nullptr.
const config_field* find_config_field(std::string_view path);

// True for "compression", "auxiliary", "auxiliary.compression", "model", ...: a mapping
// that holds fields or further sections.
bool is_config_section(std::string_view path);

// The known key closest to `path` (same section, small spelling distance), or "".
std::string closest_config_key(std::string_view path);

} // namespace mneme
