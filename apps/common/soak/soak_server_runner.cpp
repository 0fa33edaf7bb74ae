// `mneme soak --server URL[,URL2...]`: one soak run against a running daemon, or against
// several nodes on one PostgreSQL database; see soak_runner.hpp (run_soak_server) and
// soak_http_target.hpp.
#include <fmt/format.h>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/soak/soak_http_target.hpp"
#include "apps/common/soak/soak_loop.hpp"
#include "apps/common/soak/soak_runner.hpp"

namespace mneme::soak {

namespace {


} // namespace

int run_soak_server(soak_scenario sc, const soak_options& opt, const server_options& server,
                    std::ostream& out, std::ostream& err) {
  if (opt.users)
    sc.users = *opt.users;
  if (opt.duration_s)
    sc.duration_s = *opt.duration_s;
  if (!opt.config_file.empty() || !opt.db.empty()) {
    err << "mneme soak --server: --config and --db configure an in-process runtime; a "
           "running daemon uses its own configuration and database\n";
    return exit_usage;
  }
  auto fault_rules = sc.fake_llm.plan.rules.size();
  if (fault_rules > 0 && server.fakellm_url.empty() && !server.no_faults) {
    err << fmt::format("mneme soak --server: scenario {} injects faults ({} rules) but this "
                       "run does not control the daemon's LLM: pass --fakellm URL (the "
                       "mneme-fakellm the daemon's model.base_url points at) or --no-faults "
                       "to run without them\n", sc.name, fault_rules);
    return exit_usage;
  }
  http_target_options to;
  to.server_urls = server.urls;
  to.token = server.token;
  to.fakellm_url = server.fakellm_url;
  to.set_faults = !server.no_faults;
  to.connections = server.connections;
  std::string why;
  auto target = http_target::connect(to, fakellm::to_json(sc.fake_llm), why);
  if (!target) {
    err << "mneme soak --server: " << why << "\n";
    return exit_usage;
  }

  soak_result result;
  result.scenario = &sc;
  auto version = target->daemon_version().empty()
                   ? std::string{} : " (version " + target->daemon_version() + ")";
  if (server.urls.size() == 1) {
    result.target = fmt::format("the daemon at {}{}", server.urls[0], version);
  } else {
    std::string list;
    for (const auto& u : server.urls)
      list += (list.empty() ? "" : ", ") + u;
    result.target = fmt::format("{} nodes at {}{}", server.urls.size(), list, version);
    result.nodes = server.urls;
  }
  result.database = "the daemon's own";
  result.notes = target->notes();
  if (!sc.config_yaml.empty())
    result.notes.push_back("The scenario's config: block was not applied: the daemon runs on "
                           "its own configuration (the threshold below is the daemon's, read "
                           "from its sessions' state).");
  if (server.no_faults)
    result.notes.push_back("Faults were not injected (--no-faults): the fake LLM's own "
                           "scenario was left as it was.");
  else if (server.fakellm_url.empty())
    result.notes.push_back("The daemon's LLM was not under this run's control (no --fakellm); "
                           "the scenario has no faults.");
  result.live_bound = sc.invariants.max_live_tokens;   // 0: derived from the first state

  out << fmt::format("mneme soak: scenario {} ({}), {} users for {:.0f} s\n", sc.name, sc.origin,
                     sc.users, sc.duration_s);
  for (size_t i = 0; i < server.urls.size(); ++i)
    out << fmt::format("{}{}{}\n", server.urls.size() == 1 ? "daemon      " : "node        ",
                       server.urls[i],
                       i > 0 || target->daemon_version().empty()
                         ? "" : " version " + target->daemon_version());
  out << fmt::format("fake LLM    {}\n",
                     server.fakellm_url.empty() ? std::string{"not controlled"}
                     : server.no_faults
                       ? server.fakellm_url + " (faults not set: --no-faults)"
                       : fmt::format("{} with {} fault rules", server.fakellm_url, fault_rules));
  out << fmt::format("connections {} at most\n", server.connections);
  for (const auto& n : result.notes)
    out << "note        " << n << "\n";
  if (result.live_bound > 0)
    out << fmt::format("live bound  {} tokens (scenario)\n", result.live_bound);
  out.flush();
  return drive_and_report(sc, *target, result, opt, out, err);
}

} // namespace mneme::soak
