// How the read commands of the `mneme` program (sessions, show, search) print their
// answer: the JSON document itself with --json, else the command's human rendering of
// it. An answer whose shape the rendering cannot read (a daemon of another version) is
// a failure of the command, never a crash. Main thread only.
#pragma once

#include <functional>
#include <iostream>
#include <string>

#include "apps/common/api/json_codec.hpp"
#include "apps/common/cli/cli_failure.hpp"
#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

// Prints `doc` as asked and returns the exit code.
inline int print_answer(const std::string& command, const api::json& doc, bool as_json,
                        const std::function<std::string(const api::json&)>& render) {
  if (as_json) {
    std::cout << api::dump_json(doc) << "\n";
    return exit_ok;
  }
  try {
    std::cout << render(doc);
  } catch (const api::json::exception& e) {
    return report_failure(command,
                          failure::failed(std::string{"unexpected answer: "} + e.what()));
  }
  return exit_ok;
}

} // namespace mneme::cli
