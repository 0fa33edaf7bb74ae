// A fresh temporary directory for one test's database file, removed with
// everything in it when the object goes. Declare it before the store that uses
// it, so the store closes (and SQLite removes its -wal/-shm) first. Header-only;
// tests/*_test.cpp include it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <boost/test/unit_test.hpp>

namespace mneme::testing {

class temp_db_dir {
public:
  // `prefix`: the directory's name before its random suffix, in the system's
  // temporary directory.
  explicit temp_db_dir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    BOOST_REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~temp_db_dir() {
    std::error_code ignored; // a test's leftovers must not fail the next test
    std::filesystem::remove_all(path_, ignored);
  }
  temp_db_dir(const temp_db_dir&) = delete;
  temp_db_dir& operator=(const temp_db_dir&) = delete;

  const std::string& path() const { return path_; }
  std::string db_path() const { return path_ + "/r.db"; }

private:
  std::string path_;
};

} // namespace mneme::testing
