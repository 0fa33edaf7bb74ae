// A throw-away PostgreSQL cluster for the tests and the benchmarks that run a store on
// PostgreSQL (issue 26): `initdb` into a fresh temporary directory and `pg_ctl start`
// on a free loopback port, as the `postgres` user when the program runs as root (the
// directory is then owned by postgres). One cluster per program, started by the first
// caller that asks (pg_test_cluster::shared()) and stopped and removed at program exit.
// Every caller gets a schema of its own (fresh_url(): search_path is that schema, then
// public, where pg_trgm is installed once), so tests never see each other's rows and
// no database has to be created per test.
//
// A cluster that cannot start throws std::runtime_error naming the reason and the
// tail of the server log: the test that needed it fails loudly, never skips.
// The binaries come from MNEME_PG_BIN or /usr/lib/postgresql/15/bin (Debian's
// `postgresql` package, installed by .ci/setup).
// Thread: the program's main thread.
#pragma once

#include <string>

namespace mneme::testing {

class pg_test_cluster {
public:
  // The program's cluster, started on first use.
  static pg_test_cluster& shared();

  pg_test_cluster(const pg_test_cluster&) = delete;
  pg_test_cluster& operator=(const pg_test_cluster&) = delete;

  ~pg_test_cluster();

  int port() const { return port_; }

  // A URL whose connections work in a new, empty schema of the cluster's database.
  std::string fresh_url();

  std::string base_url() const;

  // Runs `sql` with psql against the test database; throws on failure.
  void psql(const std::string& sql);

  // Stops the server at once (`pg_ctl -m fast`: every connection is cut, open
  // transactions roll back) and starts it again on the same port, as an operator's
  // restart does; throws std::runtime_error when it does not come back within 30 s.
  void restart();

private:
  pg_test_cluster();

  std::string bin(const std::string& name) const;
  // Runs a shell command, as postgres when this process is root.
  int run(const std::string& cmd) const;
  void cleanup();
  // Stops and removes what was started, then throws the reason.
  [[noreturn]] void fail(const std::string& why);

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
