// How a command of the `mneme` program fails: a message for standard error and whether
// the caller gave something wrong (bad arguments or input: exit 2) or the command ran
// and failed (exit 1). Shared by the helpers under apps/common/cli and the commands in
// apps/mneme. Plain values; any thread.
#pragma once

#include <optional>
#include <string>

#include "caf/error.hpp"

namespace mneme::cli {

struct failure {
  bool bad_input = false;   // true: the caller's fault (exit 2); false: exit 1
  std::string message;      // one line, names what was wrong

  static failure input(std::string m) { return {true, std::move(m)}; }
  static failure failed(std::string m) { return {false, std::move(m)}; }
};

// A failure that is absent on success.
using maybe_failure = std::optional<failure>;

// An error of the store or the runtime as a failure: unknown session or checkpoint,
// bad request and invalid configuration are the caller's fault; everything else
// (storage, LLM, compaction) is a failure of the command. `what` prefixes the message.
failure failure_of(const caf::error& err, const std::string& what);

// Prints "mneme COMMAND: message" on standard error and returns the exit code: 2 for
// bad input, 1 otherwise (the codes of apps/mneme/command_registry.hpp).
int report_failure(const std::string& command, const failure& f);

} // namespace mneme::cli
