// mneme: the daemon and command-line tool. Every subcommand lives in its own
// cmd_<name>.cpp and registers itself through command_registry.hpp; this file only
// builds the CLI11 app from the registry, parses, and runs the chosen command.
// Exit codes: 0 success, 1 the command failed, 2 bad arguments or bad input.
#include <iostream>
#include <map>

#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

std::map<std::string, command_entry>& registry() {
  static std::map<std::string, command_entry> entries;
  return entries;
}

} // namespace mneme::cli

int main(int argc, char** argv) {
  using namespace mneme::cli;
  CLI::App app{"mneme: hosts long-running LLM chat sessions and compacts them without "
               "deleting a word"};
  app.set_version_flag("--version", std::string{"mneme "} + MNEME_VERSION);
  app.require_subcommand(1);
  std::map<const CLI::App*, command_action> actions;
  for (auto& [name, entry] : registry()) {
    auto* cmd = app.add_subcommand(name, entry.summary);
    actions[cmd] = entry.setup(*cmd);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, version or the usage error
    return code == 0 ? exit_ok : exit_usage;
  }
  for (auto* chosen : app.get_subcommands())
    if (auto it = actions.find(chosen); it != actions.end() && it->second)
      return it->second();
  return exit_usage;
}
