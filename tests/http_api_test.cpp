// The daemon's HTTP/JSON API in process: a runtime on a temporary SQLite file against
// the fake LLM, the API server on an ephemeral port, driven with httplib::Client.
// Every endpoint's success shape; the error table (malformed JSON, wrong types, missing
// fields, unknown role, invalid UTF-8, unknown session, unknown route, bad query
// parameters); the body limit (413); bearer auth; 503 while shutting down; the one
// errc -> HTTP status mapping; the constant-time token comparison.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "apps/common/api/plumbing/bearer_auth.hpp"
#include "apps/common/api/http_status.hpp"
#include "apps/common/api/plumbing/route_table.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_api_test)

using namespace mneme;
using json = nlohmann::json;
namespace data = boost::unit_test::data;

namespace {

struct api_fixture : test::http_api_fixture {
  void serve(api::http_api_options opt = {}) {
    opt.version = "9.8.7";
    http_api_fixture::serve(opt, 8);
  }

  int64_t append(const std::string& key, const std::string& role, const std::string& text) {
    auto a = post("/v1/sessions/" + key + "/messages",
                  json{{"role", role}, {"content", text}});
    BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
    return a.body["id"].get<int64_t>();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(http_api, api_fixture)

// Issue 25 item 4: the summarizer's health as the sessions record it (their
// behaviour on 401/403/quota is tested in session_actor_test).
BOOST_AUTO_TEST_CASE(health_shows_the_summarizer_auth_failed_until_it_answers_again) {
  serve();
  BOOST_TEST(get("/v1/health").body["summarizer"] == "ok");
  rt->metrics()->record_summarizer(summarizer_event::auth_failed);
  auto failed = get("/v1/health");
  BOOST_TEST(failed.status == 200);
  BOOST_TEST(failed.body["status"] == "ok");
  BOOST_TEST(failed.body["summarizer"] == "auth_failed");
  rt->metrics()->record_summarizer(summarizer_event::other_failure);
  BOOST_TEST(get("/v1/health").body["summarizer"] == "auth_failed");
  auto m = read(client->Get("/metrics"));
  BOOST_TEST(m.text.find("mneme_summarizer_auth_failures_total 1") != std::string::npos);
  rt->metrics()->record_summarizer(summarizer_event::answered);
  BOOST_TEST(get("/v1/health").body["summarizer"] == "ok");
}

BOOST_AUTO_TEST_CASE(health_reports_the_version_and_the_hosted_sessions) {
  serve();
  auto a = get("/v1/health");
  BOOST_TEST(a.status == 200);
  BOOST_TEST(a.body["status"] == "ok");
  BOOST_TEST(a.body["version"] == "9.8.7");
  BOOST_TEST(a.body["sessions_hosted"] == 0);
  append("h", "user", "hi");
  BOOST_TEST(get("/v1/health").body["sessions_hosted"] == 1);
}

BOOST_AUTO_TEST_CASE(an_append_is_stored_durably_without_a_model_call_and_answers_201) {
  serve();
  auto a = post("/v1/sessions/chat%201/messages",
                json{{"role", "assistant"},
                     {"content", "calling the tool"},
                     {"tool_calls", json::array({{{"id", "c1"},
                                                  {"name", "lookup"},
                                                  {"arguments", "{\"q\":1}"}}})}});
  BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
  auto id = a.body["id"].get<int64_t>();
  auto sid = a.body["session_id"].get<std::string>();
  BOOST_TEST(id > 0);
  BOOST_TEST(!sid.empty());
  auto t = post("/v1/sessions/chat%201/messages",
                json{{"role", "tool"}, {"content", "42"}, {"tool_call_id", "c1"},
                     {"tool_name", "lookup"}});
  BOOST_REQUIRE_MESSAGE(t.status == 201, t.text);
  BOOST_TEST(llm.stats().chat_requests == 0);
  // The key is URL-decoded: "chat 1".
  auto s = get("/v1/sessions/chat%201");
  BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
  BOOST_TEST(s.body["session"]["session_key"] == "chat 1");
  BOOST_TEST(s.body["session"]["user_id"] == "default");
  auto live = s.body["live"];
  BOOST_REQUIRE(live.size() == 3u); // system prompt, assistant, tool
  BOOST_TEST(live[1]["id"] == id);
  BOOST_TEST(live[1]["tool_calls"][0]["name"] == "lookup");
  BOOST_TEST(live[2]["tool_call_id"] == "c1");
  BOOST_TEST(live[2]["role"] == "tool");
  BOOST_TEST(s.body["live_messages"] == 3);
  BOOST_TEST(s.body["checkpoints"].is_array());
  auto without = get("/v1/sessions/chat%201?live=false");
  BOOST_TEST(!without.body.contains("live"));
}

BOOST_AUTO_TEST_CASE(a_turn_answers_from_the_model_and_grows_the_live_context_by_two) {
  serve();
  auto a = post("/v1/sessions/t/turns", json{{"content", "hello there"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(!a.body["answer"].get<std::string>().empty());
  BOOST_TEST(a.body["live_messages"] == 3); // system prompt, user, assistant
  BOOST_TEST(llm.stats().chat_requests == 1);
  auto cmd = post("/v1/sessions/t/turns", json{{"content", "/search hello"}});
  BOOST_REQUIRE_MESSAGE(cmd.status == 200, cmd.text);
  BOOST_TEST(cmd.body["notice"].get<std::string>().find("Found 1 session") == 0u);
}

// A turn's `stop` reaches the model and the sequence it stopped on comes back; an
// upstream rate limit with Retry-After is the turn's 503 with the upstream's wait.
BOOST_AUTO_TEST_CASE(a_turn_names_its_stop_sequence_and_passes_the_upstreams_retry_after_on) {
  serve();
  auto a = post("/v1/sessions/ts/turns", json{{"content", "tell me about the river"},
                                              {"stop", json::array({"river"})}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.body["finish_reason"] == "stop");
  BOOST_TEST(a.body["stop_sequence"] == "river");
  BOOST_TEST(a.body["answer"].get<std::string>().find("river") == std::string::npos);
  auto b = post("/v1/sessions/ts/turns", json{{"content", "and the sea"}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(!b.body.contains("stop_sequence"));
  auto r = rule(fakellm::fault_kind::rate_limit_429, fakellm::purpose_filter::chat, 1);
  r.retry_after = "42";
  faults({r});
  auto limited = client->Post("/v1/sessions/ts/turns", json{{"content", "more"}}.dump(),
                              "application/json");
  BOOST_REQUIRE(limited);
  BOOST_TEST(limited->status == 503);
  BOOST_TEST(json::parse(limited->body)["error"]["code"] == "llm_rate_limited");
  BOOST_TEST(limited->get_header_value("Retry-After") == "42");
  r.retry_after.clear(); // none from the upstream: the front's own 1 s on a 503
  faults({r});
  auto plain = client->Post("/v1/sessions/ts/turns", json{{"content", "more"}}.dump(),
                            "application/json");
  BOOST_REQUIRE(plain);
  BOOST_TEST(plain->status == 503);
  BOOST_TEST(plain->get_header_value("Retry-After") == "1");
}

// The trigger state of GET /v1/sessions/{key} includes the turn's attempt budget (SPEC
// §5.3). A summarizer that is down, without a fallback summary, makes the pre-call T1
// compaction commit nothing: that attempt stays spent, then the cooldown refuses the
// next ones and the model answers.
BOOST_AUTO_TEST_CASE(the_session_state_shows_the_attempts_a_failing_summarizer_spent) {
  rc.compression.max_attempts = 4; // not the default 3: the budget comes from the config
  rc.compression.threshold_tokens = 2000;
  rc.compression.abort_on_summary_failure = true;
  serve();
  seed(stored_key("u", "spending"), 40, [](int i) { return std::to_string(i) + " " + std::string(400, 'q'); });
  auto fresh = get("/v1/sessions/spending?live=false&user=u");
  BOOST_REQUIRE_MESSAGE(fresh.status == 200, fresh.text);
  BOOST_TEST(fresh.body["attempts"] == (json{{"used", 0}, {"max", 4}}));

  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::summary)});
  auto a = post("/v1/sessions/spending/turns", json{{"user", "u"}, {"content", "go on"}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_REQUIRE(a.body["compactions"].size() == 1u);
  BOOST_TEST(a.body["compactions"][0]["summary_failed"] == true);
  BOOST_TEST(a.body["compactions"][0]["committed"] == false);
  auto s = get("/v1/sessions/spending?live=false&user=u");
  BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
  BOOST_TEST(s.body["attempts"]["used"] == 1);
  BOOST_TEST(s.body["attempts"]["max"] == 4);
  BOOST_TEST(s.body["session"]["triggers"]["cooldown_until_ms"].get<int64_t>() > 0);

  // A turn starts with the full budget: the cooldown refuses every compaction now.
  auto b = post("/v1/sessions/spending/turns", json{{"user", "u"}, {"content", "and on"}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.body["compactions"].size() == 0u);
  BOOST_TEST(get("/v1/sessions/spending?live=false&user=u").body["attempts"]["used"] == 0);
}

BOOST_AUTO_TEST_CASE(compaction_whole_and_around_a_message_answers_the_report) {
  serve();
  std::vector<int64_t> ids;
  for (int i = 0; i < 60; ++i)
    ids.push_back(append("c", i % 2 ? "assistant" : "user",
                         "line " + std::to_string(i) + " of the quarterly budget review"
                           + std::string(400, 'x')));
  // (long rows: a summary of five short rows would not be smaller, and the size guard
  // would refuse to commit it)
  auto local = post("/v1/sessions/c/compact", json{{"around_id", ids[30]}, {"radius", 2}});
  BOOST_REQUIRE_MESSAGE(local.status == 200, local.text);
  BOOST_TEST(local.body["trigger"] == "T13_manual_local");
  BOOST_TEST(local.body["committed"] == true);
  BOOST_TEST(local.body["archived_rows"] == 5);
  auto gone = post("/v1/sessions/c/compact", json{{"around_id", ids[30]}});
  BOOST_TEST(gone.status == 404);
  BOOST_TEST(gone.body["error"]["code"] == "not_found");
  auto whole = post("/v1/sessions/c/compact", json{{"focus", "the budget"}});
  BOOST_REQUIRE_MESSAGE(whole.status == 200, whole.text);
  BOOST_TEST(whole.body["trigger"] == "T12_manual_session");
  BOOST_TEST(whole.body["committed"] == true);
  auto again = post("/v1/sessions/c/compact", std::string{}); // empty body = {}
  BOOST_REQUIRE_MESSAGE(again.status == 200, again.text);
  BOOST_TEST(again.body["trigger"] == "T12_manual_session");
}

BOOST_AUTO_TEST_CASE(checkpoints_and_rollback_restore_the_live_rows) {
  serve();
  append("r", "user", "first");
  auto cp = post("/v1/sessions/r/checkpoints", json{{"name", "start"}});
  BOOST_REQUIRE_MESSAGE(cp.status == 201, cp.text);
  BOOST_TEST(cp.body["name"] == "start");
  auto kept = cp.body["last_message_id"].get<int64_t>();
  append("r", "user", "second");
  auto list = get("/v1/sessions/r/checkpoints");
  BOOST_REQUIRE(list.status == 200);
  BOOST_REQUIRE(list.body["checkpoints"].size() == 1u);
  BOOST_TEST(list.body["checkpoints"][0]["name"] == "start");
  auto rb = post("/v1/sessions/r/rollback", json{{"name", "start"}});
  BOOST_REQUIRE_MESSAGE(rb.status == 200, rb.text);
  BOOST_TEST(rb.body["session_id"] == cp.body["session_id"]);
  BOOST_REQUIRE(rb.body["live"].size() == 2u);
  BOOST_TEST(rb.body["live"][1]["id"] == kept);
  BOOST_TEST(get("/v1/sessions/r").body["live_messages"] == 2);
  auto unknown = post("/v1/sessions/r/rollback", json{{"name", "nope"}});
  BOOST_TEST(unknown.status == 404);
}

BOOST_AUTO_TEST_CASE(an_existing_checkpoint_name_is_409_unless_replace_moves_it) {
  serve();
  append("cp", "user", "first");
  auto first = post("/v1/sessions/cp/checkpoints", json{{"name", "mark"}});
  BOOST_REQUIRE_MESSAGE(first.status == 201, first.text);
  append("cp", "user", "second");
  auto again = post("/v1/sessions/cp/checkpoints", json{{"name", "mark"}});
  BOOST_TEST(again.status == 409);
  BOOST_TEST(again.body["error"]["code"] == "checkpoint_exists");
  BOOST_TEST(again.body["error"]["message"].get<std::string>().find("'mark' exists")
               != std::string::npos,
             again.text);
  auto list = get("/v1/sessions/cp/checkpoints").body["checkpoints"];
  BOOST_REQUIRE(list.size() == 1u);
  BOOST_TEST(list[0]["last_message_id"] == first.body["last_message_id"]); // not moved
  auto moved = post("/v1/sessions/cp/checkpoints", json{{"name", "mark"}, {"replace", true}});
  BOOST_REQUIRE_MESSAGE(moved.status == 201, moved.text);
  BOOST_TEST(moved.body["last_message_id"].get<int64_t>()
             > first.body["last_message_id"].get<int64_t>());
  BOOST_TEST(get("/v1/sessions/cp/checkpoints").body["checkpoints"].size() == 1u);
  auto bad = post("/v1/sessions/cp/checkpoints", json{{"name", "x"}, {"replace", "yes"}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.body["error"]["message"] == "field 'replace' must be true or false");
}

BOOST_AUTO_TEST_CASE(export_lists_every_row_with_its_flags_and_reads_accept_a_session_id) {
  serve();
  append("e", "user", "alpha");
  append("e", "assistant", "beta");
  auto sid = get("/v1/sessions/e").body["session"]["id"].get<std::string>();
  auto cp = post("/v1/sessions/e/checkpoints", json{{"name", "x"}});
  append("e", "user", "gamma");
  BOOST_REQUIRE(post("/v1/sessions/e/rollback", json{{"name", "x"}}).status == 200);
  for (const auto& who : {std::string{"e"}, sid}) {
    auto a = get("/v1/sessions/" + who + "/export");
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    BOOST_TEST(a.content_type == "application/x-ndjson");
    std::istringstream lines{a.text};
    std::vector<json> rows;
    for (std::string line; std::getline(lines, line);)
      rows.push_back(json::parse(line));
    BOOST_REQUIRE(rows.size() == 4u); // system prompt, alpha, beta, gamma
    BOOST_TEST(rows[3]["content"] == "gamma");
    BOOST_TEST(rows[3]["state"] == "rolled_back");
    BOOST_TEST(rows[1]["state"] == "live");
  }
  auto by_id = get("/v1/sessions/" + sid);
  BOOST_REQUIRE(by_id.status == 200);
  BOOST_TEST(by_id.body["session"]["session_key"] == "e");
  BOOST_TEST(get("/v1/sessions/" + sid + "/checkpoints").body["checkpoints"].size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_session_list_filters_by_user_key_and_limit) {
  serve();
  append("a1", "user", "x");
  append("a2", "user", "y");
  BOOST_REQUIRE(post("/v1/sessions/b1/messages",
                     json{{"user", "bob"}, {"role", "user"}, {"content", "z"}})
                  .status == 201);
  BOOST_TEST(get("/v1/sessions").body["sessions"].size() == 3u);
  BOOST_TEST(get("/v1/sessions?user=default").body["sessions"].size() == 2u);
  auto one = get("/v1/sessions?key=b1&user=bob&open_only=true");
  BOOST_REQUIRE(one.body["sessions"].size() == 1u);
  BOOST_TEST(one.body["sessions"][0]["user_id"] == "bob");
  BOOST_TEST(get("/v1/sessions?limit=1").body["sessions"].size() == 1u);
}

BOOST_AUTO_TEST_CASE(search_finds_the_users_session_and_metrics_render_as_text) {
  serve();
  append("s", "user", "the heliotrope protocol is due friday");
  auto found = get("/v1/search?q=heliotrope&user=default&limit=3");
  BOOST_REQUIRE_MESSAGE(found.status == 200, found.text);
  BOOST_REQUIRE(found.body["hits"].size() == 1u);
  BOOST_TEST(found.body["hits"][0]["snippet"].get<std::string>().find(">>>heliotrope<<<")
             != std::string::npos);
  BOOST_TEST(found.body["limit_clamped"] == false);
  BOOST_TEST(found.body["hits"][0]["conversation_id"] == found.body["hits"][0]["session_id"]);
  BOOST_TEST(get("/v1/search?q=heliotrope&user=bob").body["hits"].size() == 0u);
  BOOST_TEST(rt->metrics()->search_latency.count.load() == 2u);
  auto m = read(client->Get("/metrics"));
  BOOST_TEST(m.status == 200);
  BOOST_TEST(m.content_type.find("text/plain") == 0u);
  BOOST_TEST(m.text.find("# TYPE") != std::string::npos);
}

// The search modes (issue 48): without embeddings every mode runs on full text and the
// answer names the mode that ran and why a wanted vector leg was skipped.
BOOST_AUTO_TEST_CASE(search_modes_run_on_full_text_without_embeddings_and_say_so) {
  serve();
  append("s", "user", "the heliotrope protocol is due friday");
  // The hit comes from the word index once the indexer has the row (a row appended soon
  // after the indexer caught up waits for the writer to go quiet: policies/index_pacing).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (rt->metrics()->storage->unindexed_rows.load() > 0
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  BOOST_REQUIRE(rt->metrics()->storage->unindexed_rows.load() == 0);
  struct expect {
    const char* query;
    const char* skipped;
  };
  for (auto e : {expect{"", "embeddings_off"}, expect{"&mode=automatic", "embeddings_off"},
                 expect{"&mode=fts", "none"}, expect{"&mode=vector", "embeddings_off"},
                 expect{"&mode=hybrid", "embeddings_off"}}) {
    auto found = get(std::string{"/v1/search?q=heliotrope&user=default"} + e.query);
    BOOST_REQUIRE_MESSAGE(found.status == 200, found.text);
    BOOST_TEST(found.body["hits"].size() == 1u, e.query);
    BOOST_TEST(found.body["mode"] == "fts", e.query);
    BOOST_TEST(found.body["vector_skipped"] == e.skipped, e.query);
    BOOST_TEST(found.body["hits"][0]["route"] == "unicode61", e.query);
  }
}

// A limit above 10 is clamped to 10 and the answer says so (issue 25 item 7).
BOOST_AUTO_TEST_CASE(a_search_limit_above_10_is_clamped_and_the_answer_says_so) {
  serve();
  for (int i = 0; i < 12; ++i)
    append("k" + std::to_string(i), "user", "the heliotrope protocol, part " + std::to_string(i));
  for (const char* limit : {"11", "50", "9223372036854775807"}) {
    auto found = get(std::string{"/v1/search?q=heliotrope&user=default&limit="} + limit);
    BOOST_REQUIRE_MESSAGE(found.status == 200, found.text);
    BOOST_TEST(found.body["hits"].size() == 10u, limit);
    BOOST_TEST(found.body["limit_clamped"] == true, limit);
  }
  auto ten = get("/v1/search?q=heliotrope&user=default&limit=10");
  BOOST_TEST(ten.body["hits"].size() == 10u);
  BOOST_TEST(ten.body["limit_clamped"] == false);
}

struct error_case {
  const char* what;
  const char* method;
  std::string path;
  std::string body;
  int status;
  const char* code;
  const char* message_part; // a piece of the error message
};

std::ostream& operator<<(std::ostream& os, const error_case& c) { return os << c.what; }

const std::vector<error_case> error_cases{
  {"malformed JSON", "POST", "/v1/sessions/k/messages", "{\"role\":", 400, "bad_request",
   "not valid JSON"},
  {"a body that is not an object", "POST", "/v1/sessions/k/turns", "[1,2]", 400, "bad_request",
   "must be a JSON object"},
  {"content of the wrong type", "POST", "/v1/sessions/k/messages",
   R"({"role":"user","content":5})", 400, "bad_request", "'content' must be a string"},
  {"a missing role", "POST", "/v1/sessions/k/messages", R"({"content":"x"})", 400,
   "bad_request", "missing field 'role'"},
  {"an unknown role", "POST", "/v1/sessions/k/messages", R"({"role":"robot","content":"x"})",
   400, "bad_request", "unknown role 'robot'"},
  {"an unknown field", "POST", "/v1/sessions/k/turns", R"({"content":"x","colour":"red"})", 400,
   "bad_request", "unknown field 'colour'"},
  {"a tool call without a name", "POST", "/v1/sessions/k/messages",
   R"({"role":"assistant","content":"","tool_calls":[{"id":"a"}]})", 400, "bad_request",
   "missing field 'tool_calls[0].name'"},
  {"a key written twice in a message", "POST", "/v1/sessions/k/messages",
   R"({"role":"tool","content":"x","role":"user"})", 400, "bad_request",
   "the body holds the key 'role' twice in one object"},
  {"a key written twice in a nested object", "POST", "/v1/sessions/k/messages",
   R"({"role":"assistant","content":"","tool_calls":[{"id":"a","name":"f","id":"b"}]})", 400,
   "bad_request", "the body holds the key 'id' twice in one object"},
  {"a key written twice in a turn", "POST", "/v1/sessions/k/turns",
   R"({"content":"x","content":"y"})", 400, "bad_request", "the key 'content' twice"},
  {"a tool_call_id on a user row", "POST", "/v1/sessions/k/messages",
   R"({"role":"user","content":"x","tool_call_id":"call_1"})", 400, "bad_request",
   "field 'tool_call_id' is only for role 'tool', not 'user'"},
  {"a tool_call_id on an assistant row", "POST", "/v1/sessions/k/messages",
   R"({"role":"assistant","content":"x","tool_call_id":"call_1"})", 400, "bad_request",
   "field 'tool_call_id' is only for role 'tool', not 'assistant'"},
  {"a tool_call_id on a system row", "POST", "/v1/sessions/k/messages",
   R"({"role":"system","content":"x","tool_call_id":""})", 400, "bad_request",
   "field 'tool_call_id' is only for role 'tool', not 'system'"},
  {"invalid UTF-8", "POST", "/v1/sessions/k/turns", "{\"content\":\"ab\xC3\x28\"}", 400,
   "bad_request", "not valid UTF-8 (byte 14)"},
  {"an empty turn", "POST", "/v1/sessions/k/turns", R"({"content":""})", 400, "bad_request",
   "'content' is empty"},
  {"a fractional radius", "POST", "/v1/sessions/k/compact", R"({"around_id":1,"radius":1.5})",
   400, "bad_request", "'radius' must be an integer"},
  {"a negative radius", "POST", "/v1/sessions/k/compact", R"({"around_id":1,"radius":-1})",
   400, "bad_request", "'radius' must be 0 or more"},
  {"a checkpoint without a name", "POST", "/v1/sessions/k/checkpoints", "{}", 400, "bad_request",
   "missing field 'name'"},
  {"an unknown session", "GET", "/v1/sessions/nobody", "", 404, "not_found", "nobody"},
  {"checkpoints of an unknown session", "GET", "/v1/sessions/nobody/checkpoints", "", 404,
   "not_found", "nobody"},
  {"export of an unknown session", "GET", "/v1/sessions/nobody/export", "", 404, "not_found",
   "nobody"},
  {"compaction of an unknown session", "POST", "/v1/sessions/nobody/compact", "{}", 404,
   "not_found", "nobody"},
  {"rollback of an unknown session", "POST", "/v1/sessions/nobody/rollback",
   R"({"name":"x"})", 404, "not_found", "nobody"},
  {"an unknown route", "GET", "/v2/everything", "", 404, "not_found", "no route GET /v2"},
  {"a wrong method on a known path", "DELETE", "/v1/sessions/k", "", 405,
   "method_not_allowed", "DELETE is not allowed on /v1/sessions/k (allowed: GET)"},
  {"a search query that is not UTF-8", "GET", "/v1/search?q=ab%C3%28", "", 400, "bad_request",
   "parameter 'q' is not valid UTF-8 (byte 2)"},
  {"a limit that is not a number", "GET", "/v1/sessions?limit=ten", "", 400, "bad_request",
   "'limit' must be an integer"},
  {"a limit out of range", "GET", "/v1/sessions?limit=0", "", 400, "bad_request",
   "1..100000"},
  {"open_only that is not a boolean", "GET", "/v1/sessions?open_only=yes", "", 400,
   "bad_request", "true or false"},
  {"a search without a query", "GET", "/v1/search?user=alice", "", 400, "bad_request",
   "'q' is missing"},
  {"a negative search limit", "GET", "/v1/search?q=x&limit=-1", "", 400, "bad_request",
   "'limit' must be within 1.."},
  {"a zero search limit", "GET", "/v1/search?q=x&limit=0", "", 400, "bad_request",
   "'limit' must be within 1.."},
  {"a search limit that is not a number", "GET", "/v1/search?q=x&limit=many", "", 400,
   "bad_request", "'limit' must be an integer"},
  {"an unknown search mode", "GET", "/v1/search?q=x&mode=semantic", "", 400, "bad_request",
   "parameter 'mode' must be one of automatic, fts, vector, hybrid, got 'semantic'"},
  {"a search mode in capitals", "GET", "/v1/search?q=x&mode=FTS", "", 400, "bad_request",
   "got 'FTS'"},
};

BOOST_DATA_TEST_CASE_F(api_fixture, bad_requests_get_a_json_error_with_the_right_status,
                       data::make(error_cases), c) {
  serve();
  httplib::Result r{nullptr, httplib::Error::Unknown};
  std::string method = c.method;
  if (method == "GET")
    r = client->Get(c.path.c_str());
  else if (method == "POST")
    r = client->Post(c.path.c_str(), c.body, "application/json");
  else
    r = client->Delete(c.path.c_str());
  auto a = read(r);
  BOOST_TEST(a.status == c.status);
  BOOST_REQUIRE_MESSAGE(a.content_type == "application/json", a.text);
  BOOST_TEST(a.body["error"]["code"] == c.code);
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find(c.message_part)
               != std::string::npos,
             a.body["error"]["message"]);
}

BOOST_AUTO_TEST_CASE(a_body_above_max_body_bytes_is_refused_with_413) {
  api::http_api_options opt;
  opt.max_body_bytes = 4 * 1024 * 1024;
  serve(opt);
  std::string big = R"({"role":"user","content":")" + std::string(10 * 1024 * 1024, 'x') + "\"}";
  auto a = post("/v1/sessions/big/messages", big);
  BOOST_TEST(a.status == 413);
  BOOST_TEST(a.body["error"]["code"] == "payload_too_large");
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find("4194304")
             != std::string::npos);
  BOOST_TEST(get("/v1/sessions/big").status == 404); // nothing was opened
}

struct body_type_case {
  const char* content_type;
};

std::ostream& operator<<(std::ostream& os, const body_type_case& c) {
  return os << c.content_type;
}

// curl -d sends application/x-www-form-urlencoded, which httplib alone caps at 8 KB.
const std::vector<body_type_case> body_type_cases{
  {"application/json"},
  {"application/x-www-form-urlencoded"},
  {"text/plain"},
};

BOOST_DATA_TEST_CASE_F(api_fixture, a_1_mb_body_is_accepted_whatever_its_content_type,
                       data::make(body_type_cases), c) {
  serve();
  auto text = std::string(1024 * 1024, 'x');
  auto body = json{{"role", "user"}, {"content", text}}.dump();
  auto a = read(client->Post("/v1/sessions/big/messages", body, c.content_type));
  BOOST_REQUIRE_MESSAGE(a.status == 201, a.text);
  auto s = get("/v1/sessions/big");
  BOOST_REQUIRE(s.status == 200);
  BOOST_TEST(s.body["live"].back()["content"].get<std::string>().size() == text.size());
}

BOOST_DATA_TEST_CASE_F(api_fixture, a_body_above_the_limit_is_413_naming_it_whatever_its_type,
                       data::make(body_type_cases), c) {
  api::http_api_options opt;
  opt.max_body_bytes = 100000;
  serve(opt);
  auto body = json{{"role", "user"}, {"content", std::string(100001, 'x')}}.dump();
  auto a = read(client->Post("/v1/sessions/big/messages", body, c.content_type));
  BOOST_TEST(a.status == 413);
  BOOST_TEST(a.body["error"]["code"] == "payload_too_large");
  BOOST_TEST(a.body["error"]["message"] == "the body is larger than 100000 bytes");
}

BOOST_AUTO_TEST_CASE(a_second_server_on_a_busy_port_fails_to_start_naming_the_port) {
  serve();
  auto port = server->port();
  api::http_server second{*sys, *rt, {}, 2};
  auto started = second.start("127.0.0.1", port);
  BOOST_REQUIRE(!started);
  BOOST_TEST(testing::err_of(started).find("port " + std::to_string(port) + " is in use")
               != std::string::npos,
             testing::err_of(started));
  BOOST_TEST(get("/v1/health").status == 200); // the first one still serves
}

struct key_case {
  const char* what;
  std::string key;     // as the channel names it
  std::string encoded; // as it appears in the URL
};

std::ostream& operator<<(std::ostream& os, const key_case& c) { return os << c.what; }

const std::vector<key_case> key_cases{
  {"a slash", "telegram/123", "telegram%2F123"},
  {"a slash and a space", "a/b c", "a%2Fb%20c"},
  {"a percent sign", "100%", "100%25"},
  {"CJK", "会话/一", "%E4%BC%9A%E8%AF%9D%2F%E4%B8%80"},
  {"a plus (no form decoding in a path)", "a+b", "a+b"},
};

BOOST_DATA_TEST_CASE_F(api_fixture, an_encoded_key_reaches_every_session_route_decoded,
                       data::make(key_cases), c) {
  serve();
  auto base = "/v1/sessions/" + c.encoded;
  auto t = post(base + "/turns", json{{"content", "hello"}});
  BOOST_REQUIRE_MESSAGE(t.status == 200, t.text);
  auto s = get(base);
  BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
  BOOST_TEST(s.body["session"]["session_key"] == c.key);
  BOOST_TEST(s.body["live"].back()["role"] == "assistant");
  BOOST_TEST(post(base + "/messages", json{{"role", "user"}, {"content", "x"}})
               .status
             == 201);
  BOOST_TEST(post(base + "/checkpoints", json{{"name", "cp"}}).status == 201);
  BOOST_TEST(get(base + "/checkpoints").body["checkpoints"].size() == 1u);
  BOOST_TEST(get(base + "/export").status == 200);
  BOOST_TEST(get("/v1/sessions?key=" + c.encoded).body["sessions"].size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_known_path_under_another_method_is_405_with_an_allow_header) {
  serve();
  auto r = client->Put("/v1/sessions/k/turns", "{}", "application/json");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->status == 405);
  BOOST_TEST(r->get_header_value("Allow") == "POST");
  auto c = client->Delete("/v1/sessions/k/checkpoints");
  BOOST_REQUIRE(c);
  BOOST_TEST(c->status == 405);
  BOOST_TEST(c->get_header_value("Allow") == "POST, GET");
  auto o = client->Options("/v1/sessions/k");
  BOOST_REQUIRE(o);
  BOOST_TEST(o->status == 204);
  BOOST_TEST(o->get_header_value("Allow") == "GET");
}

struct route_case {
  const char* method;
  const char* raw_path;
  int route;                     // -1: none
  std::vector<std::string> args; // decoded captures
  std::string allowed;
};

std::ostream& operator<<(std::ostream& os, const route_case& c) {
  return os << c.method << " " << c.raw_path;
}

const std::vector<route_case> route_cases{
  {"GET", "/v1/sessions/k", 0, {"k"}, "GET"},
  {"HEAD", "/v1/sessions/k", 0, {"k"}, "GET"},
  {"POST", "/v1/sessions/a%2Fb/turns", 1, {"a/b"}, "POST"},
  {"POST", "/v1/sessions/a/b/turns", -1, {}, ""},
  {"POST", "/v1/sessions//turns", -1, {}, ""},
  {"GET", "/v1/sessions/100%25", 0, {"100%"}, "GET"},
  {"GET", "/v1/sessions/bad%zz", 0, {"bad%zz"}, "GET"},
  {"GET", "/v1/sessions/a%2", 0, {"a%2"}, "GET"},
  {"DELETE", "/v1/sessions/k", -1, {}, "GET"},
  {"PUT", "/v1/users/u%20v/facts/a/b%2Fc", 2, {"u v", "a/b/c"}, "PUT"},
  {"PUT", "/v1/users/u/facts/", 2, {"u", ""}, "PUT"},
  {"PUT", "/v1/users/u/facts", -1, {}, ""},
};

BOOST_DATA_TEST_CASE(the_router_matches_raw_segments_and_decodes_captures,
                     data::make(route_cases), c) {
  api::route_table t;
  t.add("GET", "/v1/sessions/{}");
  t.add("POST", "/v1/sessions/{}/turns");
  t.add("PUT", "/v1/users/{}/facts/{*}");
  auto f = t.find(c.method, c.raw_path);
  BOOST_TEST(f.route.has_value() == (c.route >= 0));
  if (c.route >= 0) {
    BOOST_TEST(*f.route == static_cast<size_t>(c.route));
    BOOST_TEST(f.args == c.args, boost::test_tools::per_element());
  }
  std::string allowed;
  for (const auto& m : f.allowed)
    allowed += (allowed.empty() ? "" : ", ") + m;
  BOOST_TEST(allowed == c.allowed);
}

BOOST_AUTO_TEST_CASE(a_token_guards_every_route_but_health) {
  api::http_api_options opt;
  opt.auth_token = "s3cret-token";
  serve(opt);
  BOOST_TEST(get("/v1/sessions").status == 200);
  httplib::Client anonymous{"127.0.0.1", server->port()};
  auto none = read(anonymous.Get("/v1/sessions"));
  BOOST_TEST(none.status == 401);
  BOOST_TEST(none.body["error"]["code"] == "unauthorized");
  anonymous.set_bearer_token_auth("s3cret-tokem");
  BOOST_TEST(read(anonymous.Get("/v1/sessions")).status == 401);
  BOOST_TEST(read(anonymous.Post("/v1/sessions/k/turns", R"({"content":"x"})",
                                 "application/json")).status == 401);
  BOOST_TEST(read(anonymous.Get("/metrics")).status == 401);
  httplib::Client health{"127.0.0.1", server->port()};
  BOOST_TEST(read(health.Get("/v1/health")).status == 200);
}

BOOST_AUTO_TEST_CASE(requests_after_shutdown_began_are_answered_503_shutting_down) {
  serve();
  append("k", "user", "x");
  server->api().begin_shutdown(); // the listener stays open: the flag refuses new work
  auto a = get("/v1/sessions/k");
  BOOST_TEST(a.status == 503);
  BOOST_TEST(a.body["error"]["code"] == "shutting_down");
}

BOOST_AUTO_TEST_SUITE_END()

// --- the pure pieces

struct status_case {
  errc code;
  int status;
};
std::ostream& operator<<(std::ostream& os, const status_case& c) {
  return os << to_string(c.code);
}

BOOST_DATA_TEST_CASE(every_error_code_maps_to_one_http_status,
                     data::make(std::vector<status_case>{
                       {errc::bad_request, 400},
                       {errc::config_invalid, 500},
                       {errc::not_found, 404},
                       {errc::overloaded, 429},
                       {errc::shutting_down, 503},
                       {errc::internal, 500},
                       {errc::foreign_session, 400},
                       {errc::storage_failed, 500},
                       {errc::storage_disk_full, 500},
                       {errc::storage_corrupt, 500},
                       {errc::storage_locked, 500},
                       {errc::storage_schema_too_new, 500},
                       {errc::storage_readonly, 500},
                       {errc::storage_cant_open, 500},
                       {errc::llm_refused, 502},
                       {errc::llm_dns, 502},
                       {errc::llm_tls, 502},
                       {errc::llm_idle_timeout, 504},
                       {errc::llm_total_timeout, 504},
                       {errc::llm_network, 502},
                       {errc::llm_payload_too_large, 502},
                       {errc::llm_long_context_rate_limit, 503},
                       {errc::llm_rate_limited, 503},
                       {errc::llm_output_too_large, 502},
                       {errc::llm_context_overflow, 502},
                       {errc::llm_unsupported_parameter, 502},
                       {errc::llm_auth, 502},
                       {errc::llm_quota, 503},
                       {errc::llm_server_error, 502},
                       {errc::llm_bad_request, 502},
                       {errc::llm_malformed, 502},
                       {errc::llm_empty_answer, 502},
                       {errc::compaction_locked, 409},
                       {errc::compaction_failed, 502},
                       {errc::compaction_exhausted, 409},
                       {errc::nothing_to_compact, 409},
                       {errc::compaction_in_flight, 409},
                       {errc::session_busy, 409},
                     }),
                     c) {
  BOOST_TEST(api::http_status_of(c.code) == c.status);
  auto err = caf::make_error(c.code, std::string{"detail"});
  BOOST_TEST(api::http_status_of(err) == c.status);
  // foreign_session reaches an admin only, as the bad request it always was
  BOOST_TEST(api::error_code_of(err)
             == (c.code == errc::foreign_session ? "bad_request" : to_string(c.code)));
  BOOST_TEST(api::error_message_of(err) == "detail");
}

BOOST_AUTO_TEST_CASE(another_users_session_is_an_unknown_key_to_a_user_token_only) {
  auto foreign = caf::make_error(errc::foreign_session, std::string{"belongs to another user"});
  auto alice = access_scope::of_user("alice");
  BOOST_TEST(api::hidden_from(alice, foreign));
  auto seen = api::as_seen_by(alice, foreign, "k");
  BOOST_TEST((seen == errc::not_found));
  BOOST_TEST(api::error_message_of(seen) == api::unknown_key_message("k"));
  BOOST_TEST(!api::hidden_from(access_scope::admin(), foreign));
  BOOST_TEST((api::as_seen_by(access_scope::admin(), foreign, "k") == errc::foreign_session));
  auto other = caf::make_error(errc::bad_request, std::string{"x"});
  BOOST_TEST(!api::hidden_from(alice, other));
  BOOST_TEST((api::as_seen_by(alice, other, "k") == errc::bad_request));
}

BOOST_AUTO_TEST_CASE(a_request_timeout_is_504_and_a_foreign_error_is_500) {
  caf::error timeout = caf::sec::request_timeout;
  BOOST_TEST(api::http_status_of(timeout) == 504);
  BOOST_TEST(api::error_code_of(timeout) == "request_timeout");
  caf::error down = caf::sec::request_receiver_down;
  BOOST_TEST(api::http_status_of(down) == 500);
  BOOST_TEST(api::error_code_of(down) == "internal");
}

struct auth_case {
  const char* header;
  bool ok;
};
std::ostream& operator<<(std::ostream& os, const auth_case& c) { return os << c.header; }

BOOST_DATA_TEST_CASE(a_bearer_header_matches_only_the_exact_token,
                     data::make(std::vector<auth_case>{
                       {"Bearer tok-123", true},
                       {"bearer tok-123", true},
                       {"Bearer   tok-123", true},
                       {"Bearer tok-124", false},
                       {"Bearer tok-12", false},
                       {"Bearer tok-1234", false},
                       {"Basic tok-123", false},
                       {"Bearertok-123", false},
                       {"Bearer ", false},
                       {"", false},
                       {"tok-123", false},
                     }),
                     c) {
  BOOST_TEST(api::bearer_matches(c.header, "tok-123") == c.ok);
}

BOOST_AUTO_TEST_CASE(constant_time_equals_compares_whole_strings) {
  BOOST_TEST(api::constant_time_equals("abc", "abc"));
  BOOST_TEST(!api::constant_time_equals("abc", "abd"));
  BOOST_TEST(!api::constant_time_equals("abc", "abcd"));
  BOOST_TEST(!api::constant_time_equals("", "a"));
  BOOST_TEST(api::constant_time_equals("", ""));
}

BOOST_AUTO_TEST_SUITE_END() // http_api_test
