// Registry of the subcommands of the `mneme` program. Each cmd_<name>.cpp in this folder
// registers one command with MNEME_COMMAND at static-initialization time; main.cpp adds
// every registered command to the CLI11 app, parses, and runs the chosen one. A new
// command is a new file, never an edit of main.cpp. Only this program links these files;
// registration happens before main, dispatch on the main thread.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace mneme::cli {

// What runs when the command was chosen; returns the process exit code.
using command_action = std::function<int()>;

// Declares the command's options and nested subcommands on `cmd` (already created with
// the command's name and summary) and returns its action. Parsed option values reach
// the action through state the setup captures (e.g. a shared_ptr to an options struct).
using command_setup = std::function<command_action(CLI::App& cmd)>;

struct command_entry {
  std::string summary;
  command_setup setup;
};

// Exit codes shared by every command.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // the command ran and failed
inline constexpr int exit_usage = 2;    // bad arguments or bad input (e.g. an invalid config)

// Every registered command by name (sorted, so help output is stable).
std::map<std::string, command_entry>& registry();

struct registrar {
  registrar(const std::string& name, std::string summary, command_setup setup) {
    registry()[name] = command_entry{std::move(summary), std::move(setup)};
  }
};

} // namespace mneme::cli

#define MNEME_COMMAND_CAT2(a, b) a##b
#define MNEME_COMMAND_CAT(a, b) MNEME_COMMAND_CAT2(a, b)
#define MNEME_COMMAND(name, summary, setup)                                      \
  static ::mneme::cli::registrar MNEME_COMMAND_CAT(mneme_command_reg_, __COUNTER__) { \
    name, summary, setup                                                         \
  }
