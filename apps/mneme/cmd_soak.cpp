// `mneme soak [--scenario NAME|FILE] [--report DIR] [--config FILE] [--db FILE]
// [--users N] [--duration SECONDS] [--server URL[,URL...] [--token T] [--fakellm URL2]
// [--no-faults] [--connections N]]`: the soak runner (SPEC §8). Simulated users drive
// one in-process runtime through the gateway against the in-process fake LLM with the
// scenario's faults, or with --server a running daemon over its HTTP API (faults set on
// the fake LLM at --fakellm), or several nodes on one PostgreSQL database (--server with
// comma-separated URLs: each user's calls go to the nodes in turn); the invariants are
// checked while it runs and at the end;
// the report (report.json, report.md, plots) goes to DIR. Exit 0 when every invariant
// held, 1 on a violation, 2 on bad input (also: the daemon unreachable or refusing the
// token at the start). Scenarios: configs/soak/*.yaml, documented in docs/soak.md.
//
// A scenario NAME (no '/', no .yaml) is looked up as configs/soak/NAME.yaml in the
// source tree this binary was built from, then under ./configs/soak.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "apps/common/soak/soak_runner.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "apps/mneme/command_registry.hpp"
#include "messages/errc.hpp"
#include "policies/http_url.hpp"

namespace mneme::cli {

namespace {

namespace fs = std::filesystem;

struct soak_cli {
  std::string scenario = "quick";
  std::string report_dir = "soak-report";
  std::string config_file;
  std::string db;
  int64_t users = 0;        // 0 = the scenario's
  double duration_s = 0;    // 0 = the scenario's
  std::vector<std::string> server;   // one URL, or one per node
  std::string token;
  std::string fakellm;
  bool no_faults = false;
  int64_t connections = 16;
};

// The scenario file for NAME or FILE; empty when a NAME is not found.
std::string resolve_scenario(const std::string& arg) {
  bool is_path = arg.find('/') != std::string::npos
                 || fs::path(arg).extension() == ".yaml" || fs::path(arg).extension() == ".yml";
  if (is_path)
    return arg;
  for (const fs::path& dir : {fs::path(MNEME_SOURCE_DIR) / "configs" / "soak",
                             fs::path("configs") / "soak"}) {
    auto candidate = dir / (arg + ".yaml");
    std::error_code ec;
    if (fs::exists(candidate, ec))
      return candidate.string();
  }
  return {};
}

int run_soak_command(const soak_cli& cli) {
  if (cli.server.empty() && (!cli.token.empty() || !cli.fakellm.empty() || cli.no_faults)) {
    std::cerr << "mneme soak: --token, --fakellm and --no-faults go with --server URL\n";
    return exit_usage;
  }
  auto path = resolve_scenario(cli.scenario);
  if (path.empty()) {
    std::cerr << "mneme soak: no scenario named '" << cli.scenario << "' (looked for "
              << cli.scenario << ".yaml in " << MNEME_SOURCE_DIR
              << "/configs/soak and ./configs/soak)\n";
    return exit_usage;
  }
  auto sc = soak::load_soak_scenario(path);
  if (!sc) {
    std::cerr << render_error(sc.error()) << "\n";
    return exit_usage;
  }
  for (const auto& w : sc->warnings)
    std::cerr << "mneme soak: warning: " << path << ": " << w << "\n";
  soak::soak_options opt;
  opt.report_dir = cli.report_dir;
  opt.config_file = cli.config_file;
  opt.db = cli.db;
  if (cli.users > 0)
    opt.users = cli.users;
  if (cli.duration_s > 0)
    opt.duration_s = cli.duration_s;
  opt.progress_tty = isatty(STDOUT_FILENO) != 0;
  if (cli.server.empty())
    return soak::run_soak(std::move(*sc), opt, std::cout, std::cerr);
  soak::server_options so;
  // Split here, not by CLI11 (whose delimiter drops empty entries): "a,,b" is a mistake.
  std::vector<std::string> urls;
  for (const auto& arg : cli.server)
    for (size_t from = 0;;) {
      const auto comma = arg.find(',', from);
      urls.push_back(arg.substr(from, comma == std::string::npos ? comma : comma - from));
      if (comma == std::string::npos)
        break;
      from = comma + 1;
    }
  for (const auto& url : urls) {
    if (url.empty() || !parse_http_url(url)) {
      std::cerr << "mneme soak: --server: "
                << (url.empty() ? std::string{"an empty URL (two commas, or one at an end)"}
                                : "'" + url + "' is not an http://HOST:PORT URL")
                << "\n";
      return exit_usage;
    }
    for (const auto& seen : so.urls)
      if (seen == url) {
        std::cerr << "mneme soak: --server names " << url << " twice\n";
        return exit_usage;
      }
    so.urls.push_back(url);
  }
  so.token = cli.token;
  so.fakellm_url = cli.fakellm;
  so.no_faults = cli.no_faults;
  so.connections = cli.connections;
  return soak::run_soak_server(std::move(*sc), opt, so, std::cout, std::cerr);
}

command_action setup_soak(CLI::App& cmd) {
  auto cli = std::make_shared<soak_cli>();
  cmd.add_option("--scenario", cli->scenario,
                 "scenario NAME (configs/soak/NAME.yaml) or FILE (default: quick)");
  cmd.add_option("--report", cli->report_dir, "report directory (default: soak-report)");
  cmd.add_option("--config", cli->config_file,
                 "base YAML configuration; the scenario's config block wins");
  cmd.add_option("--db", cli->db, "database file (default: a fresh temporary file, kept)");
  cmd.add_option("--users", cli->users, "simulated users (default: the scenario's)")
    ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  cmd.add_option("--duration", cli->duration_s,
                 "driving time in seconds (default: the scenario's)")
    ->check(CLI::Range(1.0, 30.0 * 24 * 3600));
  cmd.add_option("--server", cli->server,
                 "drive a running daemon at URL (http://HOST:PORT) over its HTTP API; "
                 "several nodes on one PostgreSQL database as URL1,URL2,... "
                 "(comma-separated): each user's calls go to the nodes in turn, /metrics "
                 "figures are summed, liveness and RSS checked per node");
  cmd.add_option("--token", cli->token, "bearer token for --server (gateway.auth_token)");
  cmd.add_option("--fakellm", cli->fakellm,
                 "with --server: the mneme-fakellm the daemon uses (http://HOST:PORT); the "
                 "scenario's faults are set there when the drive starts");
  cmd.add_flag("--no-faults", cli->no_faults,
               "with --server: run a scenario that has faults without setting them");
  cmd.add_option("--connections", cli->connections,
                 "with --server: HTTP calls in flight at most (default 16)")
    ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  return [cli] { return run_soak_command(*cli); };
}

} // namespace

MNEME_COMMAND("soak", "Soak test: simulated users and LLM outages against one runtime, "
                      "invariants checked, report with plots", setup_soak);

} // namespace mneme::cli
