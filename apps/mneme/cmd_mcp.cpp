// `mneme mcp --server URL [--token T]`: mneme's memory tools over MCP's stdio transport,
// for agent hosts that launch a command (apps/common/cli/mcp_bridge.hpp; docs/api.md
// "MCP server"). Every message goes to the daemon's POST /mcp; the token may come from
// MNEME_TOKEN so it stays out of the host's process list.
#include <iostream>
#include <memory>

#include "apps/common/cli/mcp_bridge.hpp"
#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

namespace {

command_action setup_mcp(CLI::App& cmd) {
  auto opt = std::make_shared<mcp_bridge_options>();
  cmd.add_option("--server", opt->server, "the daemon, e.g. http://127.0.0.1:8077")->required();
  cmd.add_option("--token", opt->token, "bearer token of the daemon (a user token scopes the tools)")
    ->envname("MNEME_TOKEN");
  return [opt] {
    return run_mcp_bridge(*opt, std::cin, std::cout, std::cerr);
  };
}

} // namespace

MNEME_COMMAND("mcp", "serve mneme's memory tools over MCP on stdin/stdout (via --server)",
              setup_mcp);

} // namespace mneme::cli
