// The throw-away PostgreSQL cluster; see pg_test_cluster.hpp.
#include "testing/pg_test_cluster.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <pwd.h>
#include <unistd.h>

#include "testing/loopback_port.hpp"

namespace mneme::testing {

namespace {

std::string shell_quoted_body(const std::string& s) {
  std::string out;
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out;
}

// The last 2,000 bytes of a log file.
std::string log_tail(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  auto text = ss.str();
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

} // namespace

pg_test_cluster& pg_test_cluster::shared() {
  static std::unique_ptr<pg_test_cluster> cluster{new pg_test_cluster()};
  return *cluster;
}

pg_test_cluster::~pg_test_cluster() { cleanup(); }

std::string pg_test_cluster::fresh_url() {
  auto schema = "t" + std::to_string(++schemas_);
  psql("CREATE SCHEMA " + schema);
  // public holds the cluster's extensions (pg_trgm, created once at start).
  return base_url() + "?options=-csearch_path%3D" + schema + "%2Cpublic";
}

std::string pg_test_cluster::base_url() const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/mneme";
}

void pg_test_cluster::psql(const std::string& sql) {
  auto cmd = bin("psql") + " -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "
             + std::to_string(port_) + " -U postgres -d mneme -c \"" + sql + "\"";
  if (run(cmd) != 0)
    fail("psql failed: " + sql);
}

pg_test_cluster::pg_test_cluster() {
  if (const char* b = std::getenv("MNEME_PG_BIN"))
    bin_dir_ = b;
  if (!std::filesystem::exists(bin_dir_ + "/initdb"))
    fail("no initdb in " + bin_dir_ + " (install Debian's postgresql: .ci/setup)");
  char tmpl[] = "/tmp/mneme-pg-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    fail("cannot create a temporary directory");
  dir_ = tmpl;
  data_ = dir_ + "/data";
  log_ = dir_ + "/server.log";
  as_postgres_ = ::geteuid() == 0;
  if (as_postgres_) {
    auto* pw = ::getpwnam("postgres");
    if (pw == nullptr)
      fail("running as root, but there is no postgres user to run the server");
    if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      fail("cannot hand " + dir_ + " to the postgres user");
  }
  if (run(bin("initdb") + " -D " + data_ + " -A trust -U postgres -E UTF8 --locale=C"
          " --no-sync > " + dir_ + "/initdb.log 2>&1") != 0)
    fail("initdb failed: " + log_tail(dir_ + "/initdb.log"));
  // Two programs may start clusters at once: a port taken between the probe and the
  // start is retried with another.
  for (int attempt = 0; attempt < 5; ++attempt) {
    port_ = free_loopback_port();
    auto opts = "-p " + std::to_string(port_) + " -k " + dir_
                + " -c listen_addresses=127.0.0.1 -c max_connections=40";
    if (run(bin("pg_ctl") + " -D " + data_ + " -l " + log_ + " -w -t 30 -o '" + opts
            + "' start > /dev/null 2>&1") == 0) {
      started_ = true;
      if (run(bin("createdb") + " -h 127.0.0.1 -p " + std::to_string(port_)
              + " -U postgres mneme") != 0)
        fail("createdb failed");
      psql("CREATE EXTENSION pg_trgm SCHEMA public");
      return;
    }
  }
  fail("pg_ctl start failed 5 times: " + log_tail(log_));
}

void pg_test_cluster::restart() {
  // restart reuses the options of the last start (postmaster.opts): same port.
  if (run(bin("pg_ctl") + " -D " + data_ + " -l " + log_ + " -m fast -w -t 30 restart"
          + " > /dev/null 2>&1") != 0)
    throw std::runtime_error("PostgreSQL test cluster did not restart: " + log_tail(log_));
}

std::string pg_test_cluster::bin(const std::string& name) const { return bin_dir_ + "/" + name; }

int pg_test_cluster::run(const std::string& cmd) const {
  auto line =
    as_postgres_ ? "runuser -u postgres -- sh -c '" + shell_quoted_body(cmd) + "'" : cmd;
  return std::system(line.c_str());
}

void pg_test_cluster::cleanup() {
  if (started_)
    run(bin("pg_ctl") + " -D " + data_ + " -m immediate -w stop > /dev/null 2>&1");
  started_ = false;
  std::error_code ec;
  if (!dir_.empty())
    std::filesystem::remove_all(dir_, ec);
}

void pg_test_cluster::fail(const std::string& why) {
  auto text = why;
  cleanup();
  throw std::runtime_error("PostgreSQL test cluster could not start: " + text);
}

} // namespace mneme::testing
