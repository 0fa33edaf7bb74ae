// A fresh temporary directory for one test's files (a database, a configuration, a
// report, a program's stderr), removed with everything in it when the object goes.
// Standard library and Boost.Test only, so any test may include it, the pure policy
// tests too; tests/store_test_util.hpp includes it for the store tests. Header-only;
// tests/*_test.cpp include it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <boost/test/unit_test.hpp>

namespace mneme::testing {

// The directory <system temp>/<prefix>-XXXXXX. Declare it before whatever writes into
// it (a store, an actor system, a child process), so that closes first.
class temp_dir {
public:
  explicit temp_dir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    BOOST_REQUIRE_MESSAGE(::mkdtemp(tmpl.data()) != nullptr, "cannot create " << tmpl);
    path_ = tmpl;
  }
  ~temp_dir() {
    std::error_code ignored; // a test's leftovers must not fail the next test
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  // The path of `name` inside the directory (nothing is created).
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

} // namespace mneme::testing
