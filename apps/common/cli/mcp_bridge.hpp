// `mneme mcp`: MCP over stdio for hosts that launch a command (docs/api.md "MCP
// server"). Each line of standard input is one JSON-RPC message (or batch); it is sent
// as it is to the daemon's POST /mcp with the token, and the daemon's answer is written
// to standard output as one line (nothing for a notification: 202). The tools are the
// daemon's, so the bridge holds no state but the protocol version initialize agreed on,
// sent as MCP-Protocol-Version from then on.
//
// Decisions:
//   - a line that is not JSON is answered -32700 (id null) without asking the daemon;
//     blank lines are skipped;
//   - a daemon that cannot be reached, or answers without a JSON-RPC body, is a -32603
//     error for each request of the line (by id) and nothing for its notifications; the
//     bridge keeps serving (the daemon may come back);
//   - a JSON-RPC error the daemon answers with id null (a 401 refusal) is given the
//     request's id, so the host can match it;
//   - end of input ends the program (exit 0). Diagnostics go to standard error only.
//
// Thread: the program's main thread; blocking reads and HTTP calls (no actor runs).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace mneme::cli {

struct mcp_bridge_options {
  std::string server; // the daemon's base URL, e.g. http://127.0.0.1:8077
  std::string token;  // bearer token; empty = none
};

// What the bridge writes for a message `sent` (parsed) given the daemon's answer:
// reached, status and body; or nullopt to write nothing.
std::optional<nlohmann::json> bridge_answer(const nlohmann::json& sent, bool reached, int status,
                                            const std::string& body, const std::string& why);

// Serves `in` until its end; returns the exit code (0).
int run_mcp_bridge(const mcp_bridge_options& opt, std::istream& in, std::ostream& out,
                   std::ostream& err);

} // namespace mneme::cli
