// Table tests of the MCP door's decisions (apps/common/api/doors/mcp/mcp_wire.hpp,
// mcp_tools.hpp, mcp_server.hpp tool_result_of_answer): how a JSON-RPC message is
// classified, the protocol version negotiated, when a batch is allowed, the method a
// request names, a tools/call's params, and each tool's arguments turned into the API
// request it makes (or the tool error naming the bad argument). Also the body parser every
// door shares (apps/common/api/plumbing/json_duplicates.hpp): the first duplicate key, and
// otherwise the value Json::parse gives.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>

#include "apps/common/api/doors/mcp/mcp_server.hpp"
#include "apps/common/api/doors/mcp/mcp_tools.hpp"
#include "apps/common/api/doors/mcp/mcp_wire.hpp"
#include "apps/common/api/plumbing/json_duplicates.hpp"

BOOST_AUTO_TEST_SUITE(mcp_wire_test)

using namespace mneme::api::mcp;
namespace data = boost::unit_test::data;

namespace {

struct classify_row {
  const char* text;
  message_kind kind;
  const char* id;     // the id as JSON text
  const char* method;
  const char* error_part; // invalid: a part of the error
};

std::ostream& operator<<(std::ostream& os, const classify_row& r) { return os << r.text; }

const classify_row classify_rows[] = {
  {R"({"jsonrpc":"2.0","id":1,"method":"ping"})", message_kind::request, "1", "ping", ""},
  {R"({"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}})", message_kind::request,
   R"("a")", "tools/list", ""},
  {R"({"jsonrpc":"2.0","method":"notifications/initialized"})", message_kind::notification,
   "null", "notifications/initialized", ""},
  {R"({"jsonrpc":"2.0","id":7,"result":{}})", message_kind::response, "7", "", ""},
  {R"({"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}})", message_kind::response, "7",
   "", ""},
  {R"({"jsonrpc":"1.0","id":3,"method":"ping"})", message_kind::invalid, "3", "", "jsonrpc"},
  {R"({"id":3,"method":"ping"})", message_kind::invalid, "3", "", "jsonrpc"},
  {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", message_kind::invalid, "null", "", "'id'"},
  {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", message_kind::invalid, "null", "", "'id'"},
  {R"({"jsonrpc":"2.0","id":4,"method":7})", message_kind::invalid, "4", "", "'method'"},
  {R"({"jsonrpc":"2.0","id":4,"method":""})", message_kind::invalid, "4", "", "'method'"},
  {R"({"jsonrpc":"2.0","id":5})", message_kind::invalid, "5", "", "'method' is missing"},
  {R"({"jsonrpc":"2.0","id":6,"method":"ping","params":[1]})", message_kind::invalid, "6", "",
   "'params'"},
  {R"([1])", message_kind::invalid, "null", "", "object"},
  {R"("ping")", message_kind::invalid, "null", "", "object"},
};

} // namespace

BOOST_DATA_TEST_CASE(a_message_is_classified_by_its_members, data::make(classify_rows), row) {
  auto m = classify(json::parse(row.text));
  BOOST_TEST(static_cast<int>(m.kind) == static_cast<int>(row.kind));
  BOOST_TEST(m.id.dump() == row.id);
  BOOST_TEST(m.method == row.method);
  BOOST_TEST(m.error.find(row.error_part) != std::string::npos, m.error);
  if (row.kind != message_kind::invalid)
    BOOST_TEST(m.error.empty());
}

BOOST_AUTO_TEST_CASE(a_body_is_one_message_a_batch_or_a_parse_failure) {
  auto one = decode_post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  BOOST_TEST(!one.parse_failure);
  BOOST_TEST(!one.batch);
  BOOST_TEST(one.messages.size() == 1u);
  auto batch = decode_post(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"x":1}])");
  BOOST_TEST(batch.batch);
  BOOST_REQUIRE(batch.messages.size() == 2u);
  BOOST_TEST((batch.messages[1].kind == message_kind::invalid));
  auto empty = decode_post("[]");
  BOOST_TEST(empty.batch);
  BOOST_TEST(empty.messages.empty());
  BOOST_TEST(*decode_post("{\"jsonrpc\":").parse_failure == "the body is not valid JSON");
  BOOST_TEST(*decode_post("").parse_failure == "the body is empty");
}

BOOST_AUTO_TEST_CASE(the_version_is_the_clients_when_spoken_else_the_newest) {
  BOOST_TEST(negotiate_version("2025-06-18") == "2025-06-18");
  BOOST_TEST(negotiate_version("2024-11-05") == "2024-11-05");
  BOOST_TEST(negotiate_version("2025-11-25") == "2025-11-25");
  BOOST_TEST(negotiate_version("2024-10-07") == std::string{mcp_versions.front()});
  BOOST_TEST(negotiate_version("") == std::string{mcp_versions.front()});
  BOOST_TEST(spoken_version("2025-03-26"));
  BOOST_TEST(!spoken_version("1900-01-01"));
  BOOST_TEST(!spoken_version("not-a-version"));
}

BOOST_AUTO_TEST_CASE(batches_exist_up_to_2025_03_26) {
  BOOST_TEST(batch_allowed(""));
  BOOST_TEST(batch_allowed("2024-11-05"));
  BOOST_TEST(batch_allowed("2025-03-26"));
  BOOST_TEST(!batch_allowed("2025-06-18"));
  BOOST_TEST(!batch_allowed("2025-11-25"));
}

BOOST_AUTO_TEST_CASE(an_origin_is_served_when_loopback_or_with_a_token) {
  BOOST_TEST(origin_allowed("http://localhost:6274", false));
  BOOST_TEST(origin_allowed("http://localhost", false));
  BOOST_TEST(origin_allowed("http://127.0.0.1:8080", false));
  BOOST_TEST(origin_allowed("https://127.1.2.3", false));
  BOOST_TEST(origin_allowed("http://[::1]:3000", false));
  BOOST_TEST(!origin_allowed("http://evil.example", false));
  BOOST_TEST(!origin_allowed("http://127.0.0.1.evil.example", false));
  BOOST_TEST(!origin_allowed("http://localhost.evil.example", false));
  BOOST_TEST(!origin_allowed("http://[::1].evil", false));
  BOOST_TEST(!origin_allowed("null", false));
  BOOST_TEST(origin_allowed("http://evil.example", true));
  BOOST_TEST(origin_allowed("null", true));
}

BOOST_AUTO_TEST_CASE(methods_served_and_the_rest_unknown) {
  BOOST_TEST((method_of("initialize") == mcp_method::initialize));
  BOOST_TEST((method_of("ping") == mcp_method::ping));
  BOOST_TEST((method_of("tools/list") == mcp_method::tools_list));
  BOOST_TEST((method_of("tools/call") == mcp_method::tools_call));
  BOOST_TEST((method_of("resources/list") == mcp_method::unknown));
  BOOST_TEST((method_of("Tools/List") == mcp_method::unknown));
}

BOOST_AUTO_TEST_CASE(initialize_answers_the_negotiated_version_and_the_tools_capability) {
  auto a = answer_initialize(json{{"protocolVersion", "2025-03-26"}, {"capabilities", json::object()}},
                             "1.2.3");
  BOOST_TEST(a.error.empty());
  BOOST_TEST(a.result["protocolVersion"] == "2025-03-26");
  BOOST_TEST(a.result["capabilities"].contains("tools"));
  BOOST_TEST(a.result["serverInfo"]["name"] == "mneme");
  BOOST_TEST(a.result["serverInfo"]["version"] == "1.2.3");
  BOOST_TEST(answer_initialize(json{}, "1").error.find("protocolVersion") != std::string::npos);
  BOOST_TEST(!answer_initialize(json{{"protocolVersion", 20250326}}, "1").error.empty());
}

BOOST_AUTO_TEST_CASE(a_tools_call_names_its_tool_and_may_omit_arguments) {
  auto p = decode_tool_call(json{{"name", "memory"}});
  BOOST_TEST(p.error.empty());
  BOOST_TEST(p.name == "memory");
  BOOST_TEST(p.arguments == json::object());
  BOOST_TEST(!decode_tool_call(json{{"arguments", json::object()}}).error.empty());
  BOOST_TEST(!decode_tool_call(json{{"name", "memory"}, {"arguments", "x"}}).error.empty());
  BOOST_TEST(!decode_tool_call(json{}).error.empty());
}

BOOST_AUTO_TEST_CASE(the_tool_table_lists_the_five_tools_with_object_schemas) {
  const auto& tools = tools_list()["tools"];
  BOOST_REQUIRE(tools.size() == 5u);
  for (const char* name : {"session_search", "memory", "skills_list", "skill_view",
                           "session_context"}) {
    BOOST_TEST(known_tool(name), name);
  }
  for (const auto& t : tools) {
    BOOST_TEST(t["inputSchema"]["type"] == "object");
    BOOST_TEST(!t["description"].get<std::string>().empty());
  }
  BOOST_TEST(!known_tool("sessions_search"));
}

namespace {

struct plan_row {
  const char* tool;
  const char* arguments;
  const char* token_user; // "" = admin
  tool_action action;
  const char* method;
  const char* target;  // api_request; for bad_arguments: a part of the error
  const char* body;
};

std::ostream& operator<<(std::ostream& os, const plan_row& r) {
  return os << r.tool << " " << r.arguments << " as '" << r.token_user << "'";
}

const plan_row plan_rows[] = {
  {"session_search", R"({"query":"deploy plan"})", "", tool_action::api_request, "GET",
   "/v1/search?q=deploy%20plan", ""},
  {"session_search", R"({"query":"x","limit":2,"include_inactive":true,"user":"bob"})", "",
   tool_action::api_request, "GET", "/v1/search?q=x&limit=2&include_inactive=true&user=bob", ""},
  {"session_search", R"({})", "", tool_action::bad_arguments, "", "'query' is required", ""},
  {"session_search", R"({"query":""})", "", tool_action::bad_arguments, "", "'query' must be", ""},
  {"session_search", R"({"query":"x","limit":11})", "", tool_action::bad_arguments, "",
   "'limit' must be an integer from 1 to 10", ""},
  {"session_search", R"({"query":"x","include_inactive":"yes"})", "",
   tool_action::bad_arguments, "", "'include_inactive'", ""},
  {"session_search", R"({"query":"x","mode":"hybrid","user":"bob"})", "",
   tool_action::api_request, "GET", "/v1/search?q=x&mode=hybrid&user=bob", ""},
  {"session_search", R"({"query":"x","mode":"sideways"})", "", tool_action::bad_arguments, "",
   "'mode' must be one of automatic, fts, vector, hybrid", ""},
  {"memory", R"({"action":"list"})", "", tool_action::api_request, "GET",
   "/v1/users/default/facts", ""},
  {"memory", R"({"action":"list","limit":5})", "alice", tool_action::api_request, "GET",
   "/v1/users/alice/facts?limit=5", ""},
  {"memory", R"({"action":"list","user":"bob"})", "alice", tool_action::api_request, "GET",
   "/v1/users/bob/facts", ""},
  {"memory", R"({"action":"search","query":"color"})", "alice", tool_action::api_request, "GET",
   "/v1/users/alice/facts?q=color", ""},
  {"memory", R"({"action":"search"})", "", tool_action::bad_arguments, "", "'query' is required",
   ""},
  {"memory", R"({"action":"set","key":"team/lead","value":"Ana"})", "a b",
   tool_action::api_request, "PUT", "/v1/users/a%20b/facts/team%2Flead", R"({"value":"Ana"})"},
  {"memory", R"({"action":"set","key":"k"})", "", tool_action::bad_arguments, "",
   "'value' is required", ""},
  {"memory", R"({"action":"remove","key":"k"})", "alice", tool_action::api_request, "DELETE",
   "/v1/users/alice/facts/k", ""},
  {"memory", R"({"action":"remove"})", "", tool_action::bad_arguments, "", "'key' is required",
   ""},
  {"memory", R"({"action":"forget","key":"k"})", "", tool_action::bad_arguments, "",
   "one of list, search, set, remove", ""},
  {"memory", R"({})", "", tool_action::bad_arguments, "", "'action' is required", ""},
  {"skills_list", R"({})", "", tool_action::list_skills, "", "", ""},
  {"skill_view", R"({"name":"deploy"})", "", tool_action::view_skill, "", "", ""},
  {"skill_view", R"({"name":3})", "", tool_action::bad_arguments, "", "'name' must be", ""},
  {"session_context", R"({"key":"telegram/123"})", "alice", tool_action::api_request, "GET",
   "/v1/sessions/telegram%2F123", ""},
  {"session_context", R"({})", "", tool_action::bad_arguments, "", "'key' is required", ""},
};

} // namespace

BOOST_DATA_TEST_CASE(each_tool_call_is_one_api_request_or_a_tool_error, data::make(plan_rows),
                     row) {
  auto p = plan_tool_call(row.tool, json::parse(row.arguments), {row.token_user, "default"});
  BOOST_TEST(static_cast<int>(p.action) == static_cast<int>(row.action));
  if (row.action == tool_action::bad_arguments) {
    BOOST_TEST(p.error.find(row.target) != std::string::npos, p.error);
  } else {
    BOOST_TEST(p.error.empty());
  }
  if (row.action == tool_action::api_request) {
    BOOST_TEST(p.step.method == row.method);
    BOOST_TEST(p.step.target == row.target);
    BOOST_TEST(p.step.body == row.body);
  }
  if (row.action == tool_action::view_skill)
    BOOST_TEST(p.skill_name == "deploy");
}

BOOST_AUTO_TEST_CASE(components_are_percent_encoded_but_unreserved_bytes) {
  BOOST_TEST(encode_component("aZ09-_.~") == "aZ09-_.~");
  BOOST_TEST(encode_component("a/b c?&=%") == "a%2Fb%20c%3F%26%3D%25");
  BOOST_TEST(encode_component("\xC3\xA9") == "%C3%A9");
}

BOOST_AUTO_TEST_CASE(structured_output_comes_with_2025_06_18_and_later) {
  BOOST_TEST(!structured_output(""));           // the transport's default: 2025-03-26
  BOOST_TEST(!structured_output("2024-11-05"));
  BOOST_TEST(!structured_output("2025-03-26"));
  BOOST_TEST(structured_output("2025-06-18"));
  BOOST_TEST(structured_output("2025-11-25"));
  BOOST_TEST(!structured_output("2099-01-01")); // not spoken
  for (const auto& t : tools_list(true)["tools"])
    BOOST_TEST(t["outputSchema"]["type"] == "object", t["name"].get<std::string>());
  for (const auto& t : tools_list(false)["tools"])
    BOOST_TEST(!t.contains("outputSchema"));
  auto facts = tool_result_of_answer(200, R"({"facts":[{"key":"k"}]})", true);
  BOOST_TEST(facts["structuredContent"] == json::parse(R"({"facts":[{"key":"k"}]})"));
  BOOST_TEST(facts["content"][0]["text"] == R"({"facts":[{"key":"k"}]})");
  BOOST_TEST(tool_result_of_answer(204, "", true)["structuredContent"] == json::object());
  BOOST_TEST(tool_result_of_answer(200, "[1]", true)["structuredContent"]
             == json::parse(R"({"result":[1]})"));
  BOOST_TEST(!tool_result_of_answer(200, "not json", true).contains("structuredContent"));
  BOOST_TEST(!tool_result_of_answer(404, R"({"error":{}})", true).contains("structuredContent"));
  BOOST_TEST(!tool_result_of_answer(200, R"({"facts":[]})", false).contains("structuredContent"));
}

BOOST_AUTO_TEST_CASE(an_api_answer_becomes_a_tool_result) {
  auto ok = tool_result_of_answer(200, R"({"facts":[]})");
  BOOST_TEST(ok["isError"] == false);
  BOOST_TEST(ok["content"][0]["type"] == "text");
  BOOST_TEST(ok["content"][0]["text"] == R"({"facts":[]})");
  auto refused = tool_result_of_answer(
    403, R"({"error":{"code":"forbidden","message":"not yours"}})");
  BOOST_TEST(refused["isError"] == true);
  BOOST_TEST(refused["content"][0]["text"] == "error 403 forbidden: not yours");
  auto odd = tool_result_of_answer(502, "upstream gone");
  BOOST_TEST(odd["isError"] == true);
  BOOST_TEST(odd["content"][0]["text"] == "error 502 error: upstream gone");
}

namespace {

struct duplicate_row {
  const char* text;
  const char* duplicate; // the first key met twice in one object, "" when none
};

std::ostream& operator<<(std::ostream& os, const duplicate_row& r) { return os << r.text; }

const duplicate_row duplicate_rows[] = {
  {R"({"a":1,"b":2})", ""},
  {R"({"a":1,"a":2})", "a"},
  {R"({"a":{"b":1},"b":2})", ""},                        // one key in two objects
  {R"([{"k":1},{"k":2}])", ""},                          // one key in two array items
  {R"({"m":[{"role":"user"},{"role":"user","role":"tool"}]})", "role"},
  {R"({"x":{"y":1,"y":2},"z":1,"z":2})", "y"},           // the first in the text
  {R"({"a":{"a":{"a":1}},"b":[[{"a":1}]]})", ""},
  {R"({"o":{"p":1},"o":{"p":2}})", "o"},
  {R"({"":1,"":2})", R"("")"},
  {R"({"t":"\u00e9","t":true})", "t"},
};

} // namespace

BOOST_DATA_TEST_CASE(the_first_key_met_twice_in_one_object_is_noted,
                     data::make(duplicate_rows), row) {
  std::string duplicate = "stale";
  auto j = mneme::api::parse_noting_duplicate_keys<nlohmann::json>(row.text, duplicate);
  BOOST_TEST(duplicate == row.duplicate);
  BOOST_TEST(j == nlohmann::json::parse(row.text)); // the last value of a duplicate kept
  auto o = mneme::api::parse_noting_duplicate_keys<nlohmann::ordered_json>(row.text, duplicate);
  BOOST_TEST(duplicate == row.duplicate);
  BOOST_TEST(o.dump() == nlohmann::ordered_json::parse(row.text).dump());
}

BOOST_AUTO_TEST_CASE(a_body_without_duplicates_reads_as_json_parse_reads_it) {
  std::string text = R"({"model":"m","stream":true,"n":-3,"u":18446744073709551615,)"
                     R"("f":1.5e3,"z":null,"b":false,"e":{},"a":[],"messages":[)";
  for (int i = 0; i < 3000; ++i)
    text += std::string(i ? "," : "") + R"({"role":"user","content":"m)" + std::to_string(i)
            + R"(","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]})";
  text += "]}";
  std::string duplicate;
  auto j = mneme::api::parse_noting_duplicate_keys<nlohmann::json>(text, duplicate);
  BOOST_TEST(duplicate.empty());
  BOOST_TEST(j == nlohmann::json::parse(text));
  auto o = mneme::api::parse_noting_duplicate_keys<nlohmann::ordered_json>(text, duplicate);
  BOOST_TEST(duplicate.empty());
  BOOST_TEST(o.dump() == nlohmann::ordered_json::parse(text).dump()); // member order kept
  for (const char* scalar : {"7", "\"s\"", "null", "[1,[2,{}]]"})
    BOOST_TEST(mneme::api::parse_noting_duplicate_keys<nlohmann::json>(scalar, duplicate)
               == nlohmann::json::parse(scalar));
}

BOOST_AUTO_TEST_CASE(a_parse_error_throws_or_discards_as_json_parse_does) {
  for (const char* bad : {R"({"a":)", R"({"a":1} x)", R"([1,])", "", R"({"a":1,"a":)"}) {
    BOOST_TEST_CONTEXT(bad) {
      std::size_t ours = 0;
      std::size_t theirs = 1;
      std::string duplicate;
      try {
        (void)mneme::api::parse_noting_duplicate_keys<nlohmann::json>(bad, duplicate);
      } catch (const nlohmann::json::parse_error& e) {
        ours = e.byte;
      }
      try {
        (void)nlohmann::json::parse(bad);
      } catch (const nlohmann::json::parse_error& e) {
        theirs = e.byte;
      }
      BOOST_TEST(ours == theirs);
      BOOST_TEST(ours > 0u);
      auto j = mneme::api::parse_noting_duplicate_keys<nlohmann::json>(bad, duplicate, false);
      BOOST_TEST(j.is_discarded());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
