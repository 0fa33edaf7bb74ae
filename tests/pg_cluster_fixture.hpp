// A throw-away PostgreSQL cluster for the tests that run a store on PostgreSQL
// (issue 26): `initdb` into a fresh temporary directory and `pg_ctl start` on a
// free loopback port, as the `postgres` user when the test runs as root (the
// directory is then owned by postgres). One cluster per test program, started by
// the first test that asks (pg_test_cluster::shared()) and stopped and removed at
// program exit. Every test gets a schema of its own (fresh_url(): search_path is that
// schema, then public, where pg_trgm is installed once), so tests never see each
// other's rows and no database has to be created per test.
//
// A cluster that cannot start throws std::runtime_error naming the reason and the
// tail of the server log: the test that needed it fails loudly, never skips.
// The binaries come from MNEME_PG_BIN or /usr/lib/postgresql/15/bin (Debian's
// `postgresql` package, installed by .ci/setup).
// Thread: the test's main thread.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace mneme::testing {

// A loopback TCP port nobody listens on right now (bound, read, released: another
// process may take it before the caller binds it, which the callers tolerate by
// failing loudly).
inline int free_loopback_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
      || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0)
      ::close(fd);
    throw std::runtime_error("no free loopback port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

class pg_test_cluster {
public:
  // The program's cluster, started on first use.
  static pg_test_cluster& shared() {
    static std::unique_ptr<pg_test_cluster> cluster{new pg_test_cluster()};
    return *cluster;
  }

  pg_test_cluster(const pg_test_cluster&) = delete;
  pg_test_cluster& operator=(const pg_test_cluster&) = delete;

  ~pg_test_cluster() { cleanup(); }

  int port() const { return port_; }

  // A URL whose connections work in a new, empty schema of the cluster's database.
  std::string fresh_url() {
    auto schema = "t" + std::to_string(++schemas_);
    psql("CREATE SCHEMA " + schema);
    // public holds the cluster's extensions (pg_trgm, created once at start).
    return base_url() + "?options=-csearch_path%3D" + schema + "%2Cpublic";
  }

  std::string base_url() const {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/mneme";
  }

  // Runs `sql` with psql against the test database; throws on failure.
  void psql(const std::string& sql) {
    auto cmd = bin("psql") + " -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "
               + std::to_string(port_) + " -U postgres -d mneme -c \"" + sql + "\"";
    if (run(cmd) != 0)
      fail("psql failed: " + sql);
  }

private:
  pg_test_cluster() {
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
      fail("initdb failed: " + tail(dir_ + "/initdb.log"));
    // Two test programs may start clusters at once: a port taken between the probe
    // and the start is retried with another.
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
    fail("pg_ctl start failed 5 times: " + tail(log_));
  }

  std::string bin(const std::string& name) const { return bin_dir_ + "/" + name; }

  // Runs a shell command, as postgres when this process is root.
  int run(const std::string& cmd) const {
    auto line = as_postgres_ ? "runuser -u postgres -- sh -c '" + escape(cmd) + "'" : cmd;
    return std::system(line.c_str());
  }

  static std::string escape(const std::string& s) {
    std::string out;
    for (char c : s)
      out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
    return out;
  }


  static std::string tail(const std::string& path) {
    std::ifstream in{path};
    std::stringstream ss;
    ss << in.rdbuf();
    auto text = ss.str();
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  void cleanup() {
    if (started_)
      run(bin("pg_ctl") + " -D " + data_ + " -m immediate -w stop > /dev/null 2>&1");
    started_ = false;
    std::error_code ec;
    if (!dir_.empty())
      std::filesystem::remove_all(dir_, ec);
  }

  // Stops and removes what was started, then throws the reason.
  [[noreturn]] void fail(const std::string& why) {
    auto text = why;
    cleanup();
    throw std::runtime_error("PostgreSQL test cluster could not start: " + text);
  }

  std::string bin_dir_ = "/usr/lib/postgresql/15/bin";
  std::string dir_;
  std::string data_;
  std::string log_;
  bool as_postgres_ = false;
  bool started_ = false;
  int port_ = 0;
  int schemas_ = 0;
};

} // namespace mneme::testing
