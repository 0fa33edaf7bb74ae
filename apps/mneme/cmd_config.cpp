// `mneme config check FILE`: loads a configuration file with the strict loader and
// prints the effective configuration (defaults filled in, secrets masked) on stdout,
// exit 0; or every error, one per line as FILE:LINE:COLUMN: key.path: reason, on
// stderr, exit 2. A missing or unreadable file is exit 2 as well.
// `mneme config keys`: every key the loader knows with what it accepts, one per line.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "apps/common/config/app_config.hpp"
#include "apps/common/config/config_schema.hpp"
#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

namespace {

int run_config_check(const std::string& path) {
  auto result = load_config_file(path);
  if (!result.ok()) {
    std::cerr << result.describe_errors();
    std::cerr << path << ": configuration rejected (" << result.errors.size()
              << (result.errors.size() == 1 ? " error" : " errors") << ")" << std::endl;
    return exit_usage;
  }
  std::cout << render_effective_config(*result.config) << std::flush;
  return exit_ok;
}

int run_config_keys() {
  size_t width = 0;
  for (auto& f : config_fields())
    width = std::max(width, f.path.size());
  for (auto& f : config_fields())
    std::cout << f.path << std::string(width + 2 - f.path.size(), ' ') << f.accepts << "\n";
  std::cout << std::flush;
  return exit_ok;
}

command_action setup_config(CLI::App& cmd) {
  cmd.require_subcommand(1);
  auto file = std::make_shared<std::string>();
  auto* check = cmd.add_subcommand(
    "check", "Validate FILE; print the effective configuration (exit 0) or every error (exit 2)");
  check->add_option("FILE", *file, "YAML configuration file")->required();
  auto* keys = cmd.add_subcommand("keys", "List every configuration key with what it accepts");
  return [&cmd, check, keys, file] {
    if (cmd.got_subcommand(check))
      return run_config_check(*file);
    if (cmd.got_subcommand(keys))
      return run_config_keys();
    return exit_usage;
  };
}

} // namespace

MNEME_COMMAND("config", "Inspect and validate configuration files", setup_config);

} // namespace mneme::cli
