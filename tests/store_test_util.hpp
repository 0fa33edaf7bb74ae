// What the tests of stored data and of calls answering caf::expected share: err_of (the
// rendered error of a failed expected, for assertion messages), temp_dir (a fresh
// directory removed with its files; tests/temp_dir.hpp) and the transcript row builders
// msg and tool_result (tests/message_builders.hpp). Header-only; tests/*_test.cpp
// include it. It includes messages/errc.hpp and with it CAF; a pure policy test includes
// temp_dir.hpp or message_builders.hpp instead. A test is linked with mneme_core only
// when it names a header of store/, actors/, apps/ or messages/(errc|mneme_types) itself
// (CMakeLists.txt reads the test's own #include lines), not through this one.
#pragma once

#include <string>

#include "caf/expected.hpp"
#include "messages/errc.hpp"
#include "tests/message_builders.hpp"
#include "tests/temp_dir.hpp"

namespace mneme::testing {

// The rendered error of a failed expected, "" when it holds a value (assertion messages
// are built whether or not the assertion fails).
template <class T>
std::string err_of(const caf::expected<T>& x) {
  return x ? std::string{} : render_error(x.error());
}

} // namespace mneme::testing
