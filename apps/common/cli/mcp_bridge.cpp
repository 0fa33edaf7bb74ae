// `mneme mcp`, the stdio bridge; see mcp_bridge.hpp.
#include "apps/common/cli/mcp_bridge.hpp"

#include <istream>
#include <ostream>

#include "apps/common/cli/daemon_client.hpp"

namespace mneme::cli {

namespace {

using json = nlohmann::json;

constexpr int rpc_parse_error = -32700;
constexpr int rpc_internal_error = -32603;

json rpc_error(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

bool is_request(const json& m) { return m.is_object() && m.contains("method") && m.contains("id"); }

// A JSON-RPC answer: an object with "jsonrpc", or a non-empty array of them.
bool rpc_shaped(const json& doc) {
  if (doc.is_object())
    return doc.contains("jsonrpc");
  return doc.is_array() && !doc.empty() && doc.front().is_object()
         && doc.front().contains("jsonrpc");
}

// -32603 for each request of `sent` (one message or a batch); null when there is none.
json failures_for(const json& sent, const std::string& why) {
  if (!sent.is_array())
    return is_request(sent) ? rpc_error(sent["id"], rpc_internal_error, why) : json{};
  json out = json::array();
  for (const auto& m : sent)
    if (is_request(m))
      out.push_back(rpc_error(m["id"], rpc_internal_error, why));
  return out.empty() ? json{} : out;
}

// The protocolVersion of an initialize result in `answer`, "" when none.
std::string agreed_version(const json& sent, const json& answer) {
  if (!sent.is_object() || sent.value("method", "") != "initialize" || !answer.is_object())
    return {};
  auto r = answer.find("result");
  if (r == answer.end() || !r->is_object() || !r->contains("protocolVersion")
      || !(*r)["protocolVersion"].is_string())
    return {};
  return (*r)["protocolVersion"].get<std::string>();
}

} // namespace

std::optional<json> bridge_answer(const json& sent, bool reached, int status,
                                  const std::string& body, const std::string& why) {
  if (!reached) {
    auto failed = failures_for(sent, why);
    return failed.is_null() ? std::nullopt : std::optional<json>{failed};
  }
  if (status == 202 || (body.empty() && status < 300))
    return std::nullopt;
  auto doc = json::parse(body, nullptr, false);
  if (!rpc_shaped(doc)) {
    auto failed = failures_for(sent, "the mneme daemon answered HTTP " + std::to_string(status)
                                       + " without a JSON-RPC body");
    return failed.is_null() ? std::nullopt : std::optional<json>{failed};
  }
  if (doc.is_object() && doc["id"].is_null() && is_request(sent))
    doc["id"] = sent["id"];
  if (doc.is_object() && doc["id"].is_null() && !sent.is_array() && !is_request(sent))
    return std::nullopt; // a refused notification: nobody waits for an answer
  return doc;
}

int run_mcp_bridge(const mcp_bridge_options& opt, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  daemon_client daemon{opt.server, opt.token};
  std::string version; // agreed by initialize
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto sent = json::parse(line, nullptr, false);
    if (sent.is_discarded()) {
      out << rpc_error(nullptr, rpc_parse_error, "the line is not valid JSON").dump() << "\n"
          << std::flush;
      continue;
    }
    std::vector<std::pair<std::string, std::string>> headers{
      {"Accept", "application/json, text/event-stream"}};
    if (!version.empty())
      headers.emplace_back("MCP-Protocol-Version", version);
    auto answer = daemon.post_raw("/mcp", line, headers);
    if (!answer.reached)
      err << "mneme mcp: " << answer.error << "\n";
    else if (answer.status >= 400)
      err << "mneme mcp: the daemon answered HTTP " << answer.status << "\n";
    auto written = bridge_answer(sent, answer.reached, answer.status, answer.body, answer.error);
    if (!written)
      continue;
    if (auto agreed = agreed_version(sent, *written); !agreed.empty())
      version = agreed;
    out << written->dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}

} // namespace mneme::cli
