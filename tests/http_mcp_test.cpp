// Tests of the MCP door over the in-process HTTP API (apps/common/api/doors/mcp/,
// docs/api.md "MCP server"): POST /mcp as MCP's Streamable HTTP transport — initialize
// and its version negotiation, notifications answered 202, ping, tools/list, the
// JSON-RPC errors (-32700, -32600, -32601, -32602), the MCP-Protocol-Version and Origin headers,
// batches, GET answered 405 — then every tool against the daemon's own data, and the
// scope of a user token: it reaches only its own user's memory.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>

#include "apps/common/api/tokens/token_store.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_mcp_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

const std::string mcp_admin_token = "mcp-admin-token";
const std::string mcp_alice_token = "mneme_0000000a_alice-mcp-secret";

struct mcp_fixture : test::http_api_fixture {
  // The daemon with a skill "deploy-app"; with tokens when `scoped` (the fixture's own
  // client is admin).
  void serve_mcp(bool scoped = false) {
    auto folder = dir.file("skills") + "/deploy-app";
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/SKILL.md")
      << "---\nname: deploy-app\ndescription: how to deploy the app\n---\n"
      << "1. build the image\n2. push it to zq-registry\n";
    rc.gateway.skills_dir = dir.file("skills");
    api::http_api_options opt;
    opt.version = "9.9.9";
    if (scoped) {
      opt.auth_token = mcp_admin_token;
      auto set = api::token_set::parse(
        "0000000a sha256:" + api::sha256_hex(mcp_alice_token) + " user:alice\n", "tokens");
      BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
      opt.tokens = std::make_shared<const api::token_set>(std::move(*set));
    }
    serve(opt);
  }

  answer mcp_post(const std::string& body, const httplib::Headers& headers = {}) {
    return read(client->Post("/mcp", headers, body, "application/json"));
  }
  answer mcp_post(const json& body, const httplib::Headers& headers = {}) {
    return mcp_post(body.dump(), headers);
  }
  // A request's answer (HTTP 200 and a JSON-RPC response with the request's id).
  json rpc(const std::string& method, json params) {
    json msg{{"jsonrpc", "2.0"}, {"id", ++next_id}, {"method", method}};
    if (!params.is_null())
      msg["params"] = std::move(params);
    auto a = mcp_post(msg);
    BOOST_REQUIRE_MESSAGE(a.status == 200, method << " -> " << a.status << " " << a.text);
    BOOST_TEST(a.body["jsonrpc"] == "2.0");
    BOOST_TEST(a.body["id"] == next_id);
    return a.body;
  }
  // A tools/call's result.
  json call_tool(const std::string& name, json arguments) {
    auto r = rpc("tools/call", json{{"name", name}, {"arguments", std::move(arguments)}});
    BOOST_REQUIRE_MESSAGE(r.contains("result"), r.dump());
    return r["result"];
  }
  static std::string text_of(const json& result) {
    return result["content"][0]["text"].get<std::string>();
  }
  void append(const std::string& key, const std::string& user, const std::string& content) {
    auto a = post("/v1/sessions/" + key + "/messages",
                  json{{"user", user}, {"role", "user"}, {"content", content}});
    BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
  }

  int next_id = 0;
};

} // namespace

BOOST_FIXTURE_TEST_CASE(initialize_negotiates_the_version_and_names_the_tools_capability,
                        mcp_fixture) {
  serve_mcp();
  auto r = rpc("initialize", json{{"protocolVersion", "2025-06-18"},
                                  {"capabilities", json::object()},
                                  {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  BOOST_TEST(r["result"]["protocolVersion"] == "2025-06-18");
  BOOST_TEST(r["result"]["capabilities"].contains("tools"));
  BOOST_TEST(r["result"]["serverInfo"]["version"] == "9.9.9");
  auto newer = rpc("initialize", json{{"protocolVersion", "2099-01-01"}});
  BOOST_TEST(newer["result"]["protocolVersion"] == "2025-11-25");
  auto bad = rpc("initialize", json::object());
  BOOST_TEST(bad["error"]["code"] == -32602);
  BOOST_TEST(!bad.contains("result"));
}

BOOST_FIXTURE_TEST_CASE(notifications_are_accepted_with_202_and_no_body, mcp_fixture) {
  serve_mcp();
  auto a = mcp_post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  BOOST_TEST(a.status == 202);
  BOOST_TEST(a.text.empty());
  auto response = mcp_post(json{{"jsonrpc", "2.0"}, {"id", 4}, {"result", json::object()}});
  BOOST_TEST(response.status == 202);
}

BOOST_FIXTURE_TEST_CASE(ping_and_tools_list_answer_their_results, mcp_fixture) {
  serve_mcp();
  BOOST_TEST(rpc("ping", nullptr)["result"] == json::object());
  auto tools = rpc("tools/list", json::object())["result"]["tools"];
  BOOST_REQUIRE(tools.size() == 5u);
  BOOST_TEST(tools[0]["name"] == "session_search");
  BOOST_TEST(tools[1]["inputSchema"]["required"][0] == "action");
}

BOOST_FIXTURE_TEST_CASE(json_rpc_errors_carry_their_codes, mcp_fixture) {
  serve_mcp();
  auto parse = mcp_post(std::string{"{\"jsonrpc\":"});
  BOOST_TEST(parse.status == 400);
  BOOST_TEST(parse.body["error"]["code"] == -32700);
  BOOST_TEST(parse.body["id"].is_null());
  auto invalid = mcp_post(json{{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}, {"params", 1}});
  BOOST_TEST(invalid.status == 400);
  BOOST_TEST(invalid.body["error"]["code"] == -32600);
  BOOST_TEST(invalid.body["id"] == 3);
  auto unknown = rpc("resources/list", json::object());
  BOOST_TEST(unknown["error"]["code"] == -32601);
  BOOST_TEST(unknown["error"]["message"].get<std::string>().find("resources/list")
             != std::string::npos);
  auto no_tool = rpc("tools/call", json{{"name", "teleport"}});
  BOOST_TEST(no_tool["error"]["code"] == -32602);
  BOOST_TEST(no_tool["error"]["message"].get<std::string>().find("teleport") != std::string::npos);
  auto no_name = rpc("tools/call", json::object());
  BOOST_TEST(no_name["error"]["code"] == -32602);
}

namespace {

// A header that refuses a request with `status` naming its value, beside one it accepts.
struct mcp_header_row {
  const char* name;
  const char* refused;
  int status;
  const char* accepted;
};

std::ostream& operator<<(std::ostream& os, const mcp_header_row& r) {
  return os << r.name << ": " << r.refused;
}

const mcp_header_row mcp_header_rows[] = {
  {"MCP-Protocol-Version", "1900-01-01", 400, "2025-06-18"}, // an unspoken version
  {"mcp-protocol-version", "not-a-version", 400, "2024-11-05"},
  {"Origin", "http://evil.example", 403, "http://localhost:6274"}, // no token: loopback only
};

} // namespace

BOOST_DATA_TEST_CASE_F(mcp_fixture, a_header_can_refuse_the_request_naming_its_value,
                       boost::unit_test::data::make(mcp_header_rows), row) {
  serve_mcp();
  auto ping = json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}};
  answer refused = mcp_post(ping, {{row.name, row.refused}});
  BOOST_TEST(refused.status == row.status);
  BOOST_TEST(refused.body["error"]["message"].get<std::string>().find(row.refused)
             != std::string::npos);
  BOOST_TEST(mcp_post(ping, {{row.name, row.accepted}}).status == 200);
}

BOOST_FIXTURE_TEST_CASE(a_batch_is_answered_in_order_where_the_version_allows_it, mcp_fixture) {
  serve_mcp();
  auto batch = json::array({json{{"jsonrpc", "2.0"}, {"id", "a"}, {"method", "ping"}},
                            json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                            json{{"jsonrpc", "2.0"}, {"id", "b"}, {"method", "tools/call"},
                                 {"params", {{"name", "skills_list"}}}},
                            json{{"jsonrpc", "2.0"}, {"id", "c"}}});
  auto a = mcp_post(batch, {{"MCP-Protocol-Version", "2025-03-26"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_REQUIRE(a.body.is_array());
  BOOST_REQUIRE(a.body.size() == 3u);
  BOOST_TEST(a.body[0]["id"] == "a");
  BOOST_TEST(a.body[1]["id"] == "b");
  BOOST_TEST(a.body[1]["result"]["isError"] == false);
  BOOST_TEST(a.body[2]["id"] == "c");
  BOOST_TEST(a.body[2]["error"]["code"] == -32600);
  auto refused = mcp_post(batch, {{"MCP-Protocol-Version", "2025-06-18"}});
  BOOST_TEST(refused.status == 400);
  BOOST_TEST(refused.body["error"]["code"] == -32600);
  BOOST_TEST(mcp_post(std::string{"[]"}).status == 400);
}

BOOST_FIXTURE_TEST_CASE(get_is_405_with_post_allowed, mcp_fixture) {
  serve_mcp();
  auto r = client->Get("/mcp");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 405);
  BOOST_TEST(r->get_header_value("Allow") == "POST");
  auto body = json::parse(r->body);
  BOOST_TEST(body["error"]["code"] == -32000);
}

BOOST_FIXTURE_TEST_CASE(the_memory_tool_sets_lists_searches_and_removes_facts, mcp_fixture) {
  serve_mcp();
  auto set = call_tool("memory", {{"action", "set"}, {"key", "editor"}, {"value", "helix"}});
  BOOST_TEST(set["isError"] == false, set.dump());
  // Stored through the facts API: the REST route sees it.
  auto stored = get("/v1/users/default/facts");
  BOOST_REQUIRE(stored.body["facts"].size() == 1u);
  BOOST_TEST(stored.body["facts"][0]["value"] == "helix");
  auto listed = json::parse(text_of(call_tool("memory", {{"action", "list"}})));
  BOOST_REQUIRE(listed["facts"].size() == 1u);
  BOOST_TEST(listed["facts"][0]["key"] == "editor");
  auto found = json::parse(text_of(call_tool("memory", {{"action", "search"}, {"query", "helix"}})));
  BOOST_TEST(found["facts"].size() == 1u);
  auto removed = call_tool("memory", {{"action", "remove"}, {"key", "editor"}});
  BOOST_TEST(removed["isError"] == false, removed.dump());
  BOOST_TEST(json::parse(text_of(call_tool("memory", {{"action", "list"}})))["facts"].size() == 0u);
  auto again = call_tool("memory", {{"action", "remove"}, {"key", "editor"}});
  BOOST_TEST(again["isError"] == true);
  BOOST_TEST(text_of(again).find("error 404") == 0u, text_of(again));
  auto bad = call_tool("memory", {{"action", "set"}, {"key", "k"}});
  BOOST_TEST(bad["isError"] == true);
  BOOST_TEST(text_of(bad).find("'value'") != std::string::npos, text_of(bad));
}

BOOST_FIXTURE_TEST_CASE(session_search_and_session_context_read_the_sessions, mcp_fixture) {
  serve_mcp();
  append("chat-1", "default", "the heliotrope protocol is due friday");
  auto found = call_tool("session_search", {{"query", "heliotrope"}});
  BOOST_REQUIRE_MESSAGE(found["isError"] == false, found.dump());
  auto hits = json::parse(text_of(found))["hits"];
  BOOST_REQUIRE(hits.size() == 1u);
  BOOST_TEST(hits[0]["snippet"].get<std::string>().find("heliotrope") != std::string::npos);
  auto context = call_tool("session_context", {{"key", "chat-1"}});
  BOOST_REQUIRE_MESSAGE(context["isError"] == false, context.dump());
  auto state = json::parse(text_of(context));
  BOOST_TEST(state["session"]["session_key"] == "chat-1");
  bool seen = false;
  for (const auto& m : state["live"])
    seen = seen || m["content"] == "the heliotrope protocol is due friday";
  BOOST_TEST(seen, state.dump());
  auto unknown = call_tool("session_context", {{"key", "no-such-key"}});
  BOOST_TEST(unknown["isError"] == true);
  BOOST_TEST(text_of(unknown).find("error 404 not_found") == 0u, text_of(unknown));
}

BOOST_FIXTURE_TEST_CASE(the_skill_tools_list_and_show_the_skills, mcp_fixture) {
  serve_mcp();
  auto listed = json::parse(text_of(call_tool("skills_list", json::object())));
  BOOST_REQUIRE(listed["skills"].size() == 1u);
  BOOST_TEST(listed["skills"][0]["name"] == "deploy-app");
  BOOST_TEST(listed["skills"][0]["description"] == "how to deploy the app");
  auto shown = call_tool("skill_view", {{"name", "deploy-app"}});
  BOOST_TEST(shown["isError"] == false);
  BOOST_TEST(text_of(shown).find("push it to zq-registry") != std::string::npos);
  auto missing = call_tool("skill_view", {{"name", "nope"}});
  BOOST_TEST(missing["isError"] == true);
  BOOST_TEST(text_of(missing).find("'nope'") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(with_2025_06_18_results_are_structured_and_tools_have_output_schemas,
                        mcp_fixture) {
  serve_mcp();
  httplib::Headers v2025{{"MCP-Protocol-Version", "2025-06-18"}};
  auto post = [&](const std::string& method, json params, const httplib::Headers& h) {
    json msg{{"jsonrpc", "2.0"}, {"id", ++next_id}, {"method", method}, {"params", params}};
    auto a = mcp_post(msg, h);
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return a.body["result"];
  };
  auto tools = post("tools/list", json::object(), v2025)["tools"];
  BOOST_REQUIRE(tools.size() == 5u);
  for (const auto& t : tools)
    BOOST_TEST(t["outputSchema"]["type"] == "object", t.dump());
  post("tools/call", {{"name", "memory"}, {"arguments", {{"action", "set"}, {"key", "editor"},
                                                          {"value", "helix"}}}}, v2025);
  auto listed = post("tools/call", {{"name", "memory"}, {"arguments", {{"action", "list"}}}}, v2025);
  BOOST_REQUIRE_MESSAGE(listed.contains("structuredContent"), listed.dump());
  BOOST_TEST(listed["structuredContent"]["facts"][0]["value"] == "helix");
  BOOST_TEST(json::parse(text_of(listed)) == listed["structuredContent"]); // the same JSON
  auto skills = post("tools/call", {{"name", "skills_list"}, {"arguments", json::object()}}, v2025);
  BOOST_TEST(skills["structuredContent"]["skills"][0]["name"] == "deploy-app");
  auto shown = post("tools/call", {{"name", "skill_view"}, {"arguments", {{"name", "deploy-app"}}}},
                    v2025);
  BOOST_TEST(shown["structuredContent"]["name"] == "deploy-app");
  BOOST_TEST(shown["structuredContent"]["text"] == text_of(shown));
  auto missing = post("tools/call", {{"name", "skill_view"}, {"arguments", {{"name", "nope"}}}},
                      v2025);
  BOOST_TEST(!missing.contains("structuredContent"));
  // An older version, or none: text only, no output schemas.
  auto old = post("tools/list", json::object(), {{"MCP-Protocol-Version", "2025-03-26"}});
  BOOST_TEST(!old["tools"][0].contains("outputSchema"));
  BOOST_TEST(!call_tool("memory", {{"action", "list"}}).contains("structuredContent"));
}

BOOST_FIXTURE_TEST_CASE(a_user_token_reaches_only_its_own_users_memory, mcp_fixture) {
  serve_mcp(true);
  client->set_bearer_token_auth(mcp_admin_token.c_str());
  append("alice-k", "alice", "alice plans the heliotrope launch");
  append("bob-k", "bob", "bob keeps the heliotrope budget");
  BOOST_REQUIRE(send("PUT", "/v1/users/bob/facts/secret", json{{"value", "bob-only"}}.dump())
                  .status == 200);
  client->set_bearer_token_auth(mcp_alice_token.c_str()); // the tools run as alice

  auto mine = call_tool("memory", {{"action", "set"}, {"key", "color"}, {"value", "teal"}});
  BOOST_TEST(mine["isError"] == false, mine.dump());
  auto listed = text_of(call_tool("memory", {{"action", "list"}}));
  BOOST_TEST(listed.find("teal") != std::string::npos, listed);
  BOOST_TEST(listed.find("bob-only") == std::string::npos, listed);
  auto bobs = call_tool("memory", {{"action", "list"}, {"user", "bob"}});
  BOOST_TEST(bobs["isError"] == true);
  BOOST_TEST(text_of(bobs).find("error 403 forbidden") == 0u, text_of(bobs));
  BOOST_TEST(text_of(bobs).find("bob-only") == std::string::npos);
  auto write_bob = call_tool("memory", {{"action", "set"}, {"key", "x"}, {"value", "y"}, {"user", "bob"}});
  BOOST_TEST(write_bob["isError"] == true);

  auto search = text_of(call_tool("session_search", {{"query", "heliotrope"}}));
  BOOST_TEST(search.find("launch") != std::string::npos, search);
  BOOST_TEST(search.find("budget") == std::string::npos, search);
  auto search_bob = call_tool("session_search", {{"query", "heliotrope"}, {"user", "bob"}});
  BOOST_TEST(search_bob["isError"] == true);
  auto bob_context = call_tool("session_context", {{"key", "bob-k"}});
  BOOST_TEST(bob_context["isError"] == true);
  BOOST_TEST(text_of(bob_context).find("error 404 not_found") == 0u, text_of(bob_context));
  BOOST_TEST(call_tool("session_context", {{"key", "alice-k"}})["isError"] == false);

  client->set_bearer_token_auth(mcp_admin_token.c_str());
  auto bobs_facts = get("/v1/users/bob/facts").body["facts"];
  BOOST_TEST(bobs_facts.size() == 1u, bobs_facts.dump()); // nothing written for bob

  // No token: the transport's 401, its body a JSON-RPC error.
  httplib::Client anonymous{"127.0.0.1", port};
  auto refused = anonymous.Post("/mcp", json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}.dump(),
                                "application/json");
  BOOST_REQUIRE(refused);
  BOOST_TEST(refused->status == 401);
  BOOST_TEST(json::parse(refused->body)["error"]["code"] == -32000);
}

BOOST_AUTO_TEST_SUITE_END()
