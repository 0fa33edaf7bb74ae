// Failures of CLI commands; see cli_failure.hpp.
#include "apps/common/cli/cli_failure.hpp"

#include <iostream>

#include "messages/errc.hpp"

namespace mneme::cli {

failure failure_of(const caf::error& err, const std::string& what) {
  bool input = false;
  if (err.category() == caf::atom("mneme")) {
    switch (static_cast<errc>(err.code())) {
      case errc::bad_request:
      case errc::config_invalid:
      case errc::not_found:
        input = true;
        break;
      default:
        break;
    }
  }
  return {input, what + ": " + render_error(err)};
}

int report_failure(const std::string& command, const failure& f) {
  std::cerr << "mneme " << command << ": " << f.message << "\n";
  return f.bad_input ? 2 : 1;
}

} // namespace mneme::cli
