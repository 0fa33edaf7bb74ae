// Tests of the context service over the in-process HTTP API (issue 27 item 2; docs/api.md
// "Context service"): an agent that calls its model itself sends its new rows to
// /context and gets the messages to send (OpenAI format, tool pairing repaired, T1 and
// the window guard run first), reports the answer to /usage (T2) and a refusal to
// /model_error (T6-T9 compact, the answer says whether to retry and with what). Bad
// input is a 400 naming the field with nothing stored; a user token reaches only its
// own keys.
#include <boost/test/unit_test.hpp>

#include <memory>
#include <string>

#include "apps/common/api/tokens/token_store.hpp"
#include "policies/request_pairing.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_context_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct context_fixture : test::http_api_fixture {
  // As an admin; a body naming no user acts in user u's namespace (that of seed()).
  answer ctx(const std::string& key, const std::string& op, const json& body) {
    return post("/v1/sessions/" + key + "/" + op + (body.contains("user") ? "" : "?user=u"),
                body);
  }
  answer ctx_ok(const std::string& key, const std::string& op, const json& body) {
    auto a = ctx(key, op, body);
    BOOST_REQUIRE_MESSAGE(a.status == 200, op << ": " << a.text);
    return a;
  }
  // The stored rows of the key's session, archived and rolled back included.
  size_t stored_rows(const std::string& key, const std::string& user = "u") {
    auto s = get("/v1/sessions/" + key + "?live=false&user=" + user);
    if (s.status == 404)
      return 0;
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    return all_rows(s.body["session"]["id"].get<std::string>()).size();
  }
  // A session under `key` of `n` rows of ~100 tokens each.
  void seed_long(const std::string& key, int n) {
    seed(stored_key("u", key), n, [](int i) { return std::to_string(i) + " " + std::string(400, 'q'); });
  }
};

json ctx_user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

json ctx_call_answer(const std::string& id, const std::string& name) {
  return {{"role", "assistant"},
          {"content", nullptr},
          {"tool_calls",
           json::array({{{"id", id},
                         {"type", "function"},
                         {"function", {{"name", name}, {"arguments", "{\"q\":1}"}}}}})}};
}

json ctx_tool(const std::string& id, const std::string& content) {
  return {{"role", "tool"}, {"tool_call_id", id}, {"content", content}};
}

const std::string ctx_admin_token = "ctx-admin-secret";
const std::string ctx_alice_token = "mneme_0000000c_alice-ctx-secret";

} // namespace

BOOST_FIXTURE_TEST_CASE(context_stores_the_new_rows_and_answers_the_messages_to_send,
                        context_fixture) {
  serve();
  auto a = ctx_ok("agent", "context",
                  json{{"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                 ctx_user("hello")})}});
  BOOST_TEST(a.body["appended_ids"].size() == 2u);
  BOOST_TEST(a.body["compactions"].empty());
  BOOST_TEST(a.body["context_window"].get<int64_t>() == rc.model.context_length);
  BOOST_TEST(a.body["threshold_tokens"].get<int64_t>() > 0);
  BOOST_TEST(a.body["estimated_tokens"].get<int64_t>() > 0);
  const auto& msgs = a.body["messages"];
  BOOST_REQUIRE(msgs.is_array());
  // The gateway's system prompt leads, one system message with the agent's; then its user row.
  BOOST_REQUIRE(msgs.size() == 2u);
  BOOST_TEST(msgs[0]["role"] == "system");
  auto system = msgs[0]["content"].get<std::string>();
  BOOST_TEST(system.rfind(rc.gateway.system_prompt, 0) == 0u);
  BOOST_TEST(system.substr(system.size() - 9) == "Be brief.");
  BOOST_TEST(msgs.back() == ctx_user("hello"));
  // Asking again without new rows stores nothing and answers the same messages.
  auto again = ctx_ok("agent", "context", json::object());
  BOOST_TEST(again.body["messages"] == msgs);
  BOOST_TEST(again.body["appended_ids"].empty());
  BOOST_TEST(stored_rows("agent") == 3u); // the daemon's and the agent's system rows, hello
}

BOOST_FIXTURE_TEST_CASE(the_daemons_prompt_and_the_clients_are_answered_as_one_system_message,
                        context_fixture) {
  rc.gateway.system_prompt = "You are the gateway's assistant.";
  serve();
  auto a = ctx_ok("agent-sys", "context",
                  json{{"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                                 ctx_user("hello")})}});
  const auto& msgs = a.body["messages"];
  BOOST_REQUIRE(msgs.size() == 2u);
  BOOST_TEST(msgs[0] == (json{{"role", "system"},
                              {"content", "You are the gateway's assistant.\n\nBe brief."}}));
  BOOST_TEST(msgs[1] == ctx_user("hello"));
  BOOST_TEST(stored_rows("agent-sys") == 3u); // both system rows stay stored as sent
}

// SPEC §2: a reasoning model's ratio is 0.85 instead of 0.75 on a 200,000 window; the
// model a context request names picks the rules until another is named.
BOOST_FIXTURE_TEST_CASE(the_threshold_follows_the_model_the_agent_names, context_fixture) {
  rc.model.context_length = 200000;
  serve();
  auto plain = ctx_ok("models", "context", json{{"messages", json::array({ctx_user("a")})}});
  BOOST_TEST(plain.body["threshold_tokens"] == 150000);
  auto reasoning = ctx_ok("models", "context", json{{"model", "o3-mini"}});
  BOOST_TEST(reasoning.body["threshold_tokens"] == 170000);
  BOOST_TEST(ctx_ok("models", "context", json::object()).body["threshold_tokens"] == 170000);
  auto usage = ctx_ok("models", "usage", json{{"prompt_tokens", 160000}});
  BOOST_TEST(usage.body["compactions"].empty()); // 160,000 < 170,000: no T2
  BOOST_TEST(ctx_ok("models", "context", json{{"model", "gpt-4o"}}).body["threshold_tokens"]
             == 150000);
  BOOST_TEST(ctx("models", "context", json{{"model", std::string(257, 'm')}}).status == 400);
}

BOOST_FIXTURE_TEST_CASE(a_tool_loop_goes_through_usage_and_context_in_openai_format,
                        context_fixture) {
  serve();
  ctx_ok("loop", "context", json{{"messages", json::array({ctx_user("weather in Oslo?")})},
                                 {"tools", json::array({{{"type", "function"},
                                                         {"function", {{"name", "weather"}}}}})}});
  auto u = ctx_ok("loop", "usage", json{{"prompt_tokens", 120}, {"completion_tokens", 9},
                                        {"answer", ctx_call_answer("call_1", "weather")}});
  BOOST_TEST(u.body["answer_id"].get<int64_t>() > 0);
  BOOST_TEST(u.body["compactions"].empty());
  auto c = ctx_ok("loop", "context",
                  json{{"messages", json::array({ctx_tool("call_1", "{\"temp\":3}")})}});
  const auto& msgs = c.body["messages"];
  BOOST_REQUIRE(msgs.size() >= 3u);
  BOOST_TEST(msgs[msgs.size() - 2] == ctx_call_answer("call_1", "weather"));
  BOOST_TEST(msgs.back() == ctx_tool("call_1", "{\"temp\":3}"));
  auto done = ctx_ok("loop", "usage",
                     json{{"prompt_tokens", 150},
                          {"answer", {{"role", "assistant"}, {"content", "3 degrees."},
                                      {"refusal", nullptr}}}});
  BOOST_TEST(done.body["answer_id"].get<int64_t>() > u.body["answer_id"].get<int64_t>());
  auto state = get("/v1/sessions/loop?live=false&user=u");
  BOOST_TEST(state.body["session"]["triggers"]["last_prompt_tokens"] == 150);
}

BOOST_FIXTURE_TEST_CASE(a_call_left_without_result_is_stubbed_in_the_answer_not_stored,
                        context_fixture) {
  serve();
  ctx_ok("stub", "context", json{{"messages", json::array({ctx_user("look it up")})}});
  ctx_ok("stub", "usage", json{{"prompt_tokens", 10}, {"answer", ctx_call_answer("c9", "lookup")}});
  auto before = stored_rows("stub");
  auto c = ctx_ok("stub", "context", json{{"messages", json::array({ctx_user("never mind")})}});
  const auto& msgs = c.body["messages"];
  BOOST_REQUIRE(msgs.size() >= 3u);
  BOOST_TEST(msgs[msgs.size() - 2]["role"] == "tool");
  BOOST_TEST(msgs[msgs.size() - 2]["tool_call_id"] == "c9");
  BOOST_TEST(msgs[msgs.size() - 2]["content"] == std::string{unanswered_call_stub});
  BOOST_TEST(stored_rows("stub") == before + 1); // the user row only
}

BOOST_FIXTURE_TEST_CASE(bad_input_is_a_400_naming_the_field_and_stores_nothing,
                        context_fixture) {
  serve();
  ctx_ok("strict", "context", json{{"messages", json::array({ctx_user("start")})}});
  auto rows = stored_rows("strict");
  struct bad_case {
    const char* op;
    json body;
    const char* needle;
  };
  const std::vector<bad_case> cases{
    {"context", json{{"messages", json::array({ctx_user("ok"), ctx_tool("ghost", "r")})}},
     "messages[1]"},
    {"context", json{{"messages", json::array({{{"role", "robot"}, {"content", "x"}}})}},
     "unknown role 'robot'"},
    {"context", json{{"messages", json::array({{{"role", "user"}}})}}, "messages[0].content"},
    {"context",
     json{{"messages", json::array({{{"role", "user"},
                                     {"content", json::array({{{"type", "image_url"}}})}}})}},
     "only text parts"},
    {"context", json{{"messages", "hi"}}, "field 'messages' must be an array"},
    {"context", json{{"message", json::array()}}, "unknown field 'message'"},
    {"context", json{{"max_tokens", 0}}, "max_tokens"},
    {"context", json{{"tools", json::array({{{"type", "web"}}})}}, "tools[0].type"},
    {"context",
     json{{"messages", json::array({ctx_user("a"), [] {
             auto m = ctx_call_answer("d", "f");
             m["tool_calls"].push_back(m["tool_calls"][0]);
             return m;
           }()})}},
     "duplicate_call_id"},
    {"usage", json{{"completion_tokens", 3}}, "prompt_tokens"},
    {"usage", json{{"prompt_tokens", -1}}, "prompt_tokens"},
    {"usage", json{{"prompt_tokens", 1}, {"answer", ctx_user("me")}}, "answer.role"},
    {"usage", json{{"prompt_tokens", 1}, {"answer", ctx_tool("nope", "r")}}, "answer"},
    {"model_error", json{{"status", 200}, {"body", "fine"}}, "2xx"},
    {"model_error", json{{"body", "x"}}, "status"},
    {"model_error", json{{"status", 42}}, "status"},
  };
  for (const auto& c : cases) {
    auto a = ctx("strict", c.op, c.body);
    BOOST_TEST(a.status == 400, c.op << " " << c.body.dump() << ": " << a.text);
    BOOST_TEST(a.body["error"]["message"].get<std::string>().find(c.needle) != std::string::npos,
               c.needle << " in " << a.text);
  }
  BOOST_TEST(stored_rows("strict") == rows);

  // A key without a session: usage and model_error are 404, context opens it.
  BOOST_TEST(ctx("nobody", "usage", json{{"prompt_tokens", 1}}).status == 404);
  BOOST_TEST(ctx("nobody", "model_error", json{{"status", 500}}).status == 404);
  BOOST_TEST(stored_rows("nobody") == 0u);
  // Counted by op in /metrics: the requests the gateway answered (the decoder's 400s never
  // reach it) and the errors among them.
  auto metrics = get("/metrics").text;
  for (const auto* line : {"mneme_context_requests_total{op=\"context\"} 3",
                           "mneme_context_errors_total{op=\"context\"} 2",
                           "mneme_context_requests_total{op=\"usage\"} 1",
                           "mneme_context_errors_total{op=\"usage\"} 1",
                           "mneme_context_errors_total{op=\"model_error\"} 1"})
    BOOST_TEST(metrics.find(line) != std::string::npos, line);
}

BOOST_FIXTURE_TEST_CASE(context_runs_t1_before_answering_the_messages, context_fixture) {
  rc.compression.threshold_tokens = 5000;
  serve();
  // ~8,400 tokens; after a compaction head + tail ~2,500 and the summary ~2,000 (its
  // budget's floor)
  seed_long("heavy", 80);
  auto a = ctx_ok("heavy", "context", json{{"messages", json::array({ctx_user("go on")})}});
  BOOST_REQUIRE(!a.body["compactions"].empty());
  BOOST_TEST(a.body["compactions"][0]["trigger"] == "T1_pre_call");
  BOOST_TEST(a.body["compactions"][0]["committed"] == true);
  BOOST_TEST(a.body["threshold_tokens"] == 5000);
  BOOST_TEST(a.body["estimated_tokens"].get<int64_t>() < 5000, a.body["compactions"].dump());
  // The messages are the compacted live context: the summary is in, the user row last.
  bool has_summary = false;
  for (const auto& m : a.body["messages"])
    has_summary = has_summary
                  || m["content"].get<std::string>().find("CONTEXT COMPACTION") != std::string::npos;
  BOOST_TEST(has_summary);
  BOOST_TEST(a.body["messages"].back() == ctx_user("go on"));
  BOOST_TEST(llm.stats().chat_requests == 0); // mneme never called the chat model
}

BOOST_FIXTURE_TEST_CASE(usage_runs_t2_on_the_reported_prompt_tokens, context_fixture) {
  rc.compression.threshold_tokens = 2000;
  serve();
  ctx_ok("t2", "context", json{{"messages", json::array({ctx_user("hi")})}});
  auto low = ctx_ok("t2", "usage", json{{"prompt_tokens", 1999}, {"answer", {{"role", "assistant"}, {"content", "hello"}}}});
  BOOST_TEST(low.body["compactions"].empty());
  // T2 compares the API's figure: the local estimate is tiny, the API says otherwise.
  for (int i = 0; i < 30; ++i)
    ctx_ok("t2", "context", json{{"messages", json::array({ctx_user(std::to_string(i) + " " + std::string(40, 'w'))})}});
  auto high = ctx_ok("t2", "usage", json{{"prompt_tokens", 2500}, {"completion_tokens", 4},
                                         {"answer", {{"role", "assistant"}, {"content", "ok"}}}});
  BOOST_REQUIRE(!high.body["compactions"].empty());
  BOOST_TEST(high.body["compactions"][0]["trigger"] == "T2_post_call");
}

BOOST_FIXTURE_TEST_CASE(model_error_is_classified_and_compacts_when_the_error_calls_for_it,
                        context_fixture) {
  serve();
  seed_long("err", 40);
  auto before = ctx_ok("err", "context", json::object());
  auto overflow = ctx_ok("err", "model_error",
                         json{{"status", 400},
                              {"body", {{"error", {{"message", "This model's maximum context "
                                                               "length is 4096 tokens"},
                                                   {"type", "invalid_request_error"}}}}}});
  BOOST_TEST(overflow.body["kind"] == "context_overflow");
  BOOST_TEST(overflow.body["trigger"] == "T9_context_overflow");
  BOOST_TEST(overflow.body["retry"] == true);
  BOOST_TEST(overflow.body["retry_after_backoff"] == false);
  BOOST_TEST(overflow.body["compacted"] == true);
  BOOST_REQUIRE(overflow.body["messages"].is_array());
  BOOST_TEST(overflow.body["messages"].size() < before.body["messages"].size());
  BOOST_TEST(overflow.body["estimated_tokens"].get<int64_t>()
             < before.body["estimated_tokens"].get<int64_t>());

  auto limited = ctx_ok("err", "model_error", json{{"status", 429}, {"body", "slow down"}});
  BOOST_TEST(limited.body["kind"] == "rate_limited");
  BOOST_TEST(limited.body["trigger"].is_null());
  BOOST_TEST(limited.body["retry"] == true);
  BOOST_TEST(limited.body["retry_after_backoff"] == true);
  BOOST_TEST(limited.body["compacted"] == false);
  BOOST_TEST(limited.body["messages"] == overflow.body["messages"]);

  auto denied = ctx_ok("err", "model_error", json{{"status", 401}, {"body", "bad key"}});
  BOOST_TEST(denied.body["kind"] == "auth");
  BOOST_TEST(denied.body["retry"] == false);
  BOOST_TEST(!denied.body.contains("messages"));

  auto large = ctx_ok("err", "model_error", json{{"status", 413}});
  BOOST_TEST(large.body["trigger"] == "T6_payload_too_large");
}

// A refused request retried again and again with nothing left to compact spends the
// attempt budget of its context request (SPEC §5.3): compaction exhaustion, and the key
// is reset, as after the session's own turn.
BOOST_FIXTURE_TEST_CASE(model_errors_that_compaction_cannot_help_end_in_exhaustion,
                        context_fixture) {
  serve();
  auto first = ctx_ok("stuck", "context", json{{"messages", json::array({ctx_user("hi")})}});
  const json overflow{{"status", 400}, {"body", "maximum context length exceeded"}};
  int answered = 0;
  answer last;
  for (int i = 0; i < 10; ++i) {
    last = ctx("stuck", "model_error", overflow);
    if (last.status != 200)
      break;
    ++answered;
    BOOST_TEST(last.body["retry"] == true);
    BOOST_TEST(last.body["compacted"] == false); // nothing to compact: no commit
  }
  BOOST_TEST(answered == static_cast<int>(rc.compression.max_attempts));
  BOOST_TEST(last.status == 409, last.text);
  BOOST_TEST(last.body["error"]["code"] == "compaction_exhausted");
  BOOST_TEST(last.body["notice"].get<std::string>().find("please send it again.")
             != std::string::npos);
  BOOST_TEST(last.body["session_id"] != first.body["session_id"]); // reset before the answer
  // The key continues in a new session; a context request starts a new budget.
  auto after = ctx_ok("stuck", "context", json::object());
  BOOST_TEST(after.body["session_id"] != first.body["session_id"]);
  BOOST_TEST(ctx("stuck", "model_error", overflow).status == 200);
}

BOOST_FIXTURE_TEST_CASE(a_user_token_reaches_only_its_own_keys, context_fixture) {
  api::http_api_options opt;
  opt.auth_token = ctx_admin_token;
  auto set = api::token_set::parse("0000000c sha256:" + api::sha256_hex(ctx_alice_token)
                                     + " user:alice\n",
                                   "tokens");
  BOOST_REQUIRE_MESSAGE(set, testing::err_of(set));
  opt.tokens = std::make_shared<const api::token_set>(std::move(*set));
  serve(opt);
  ctx_ok("bob-k", "context", json{{"user", "bob"}, {"messages", json::array({ctx_user("b")})}});
  auto bob_rows = stored_rows("bob-k", "bob");
  httplib::Client alice{"127.0.0.1", port};
  alice.set_bearer_token_auth(ctx_alice_token.c_str());
  auto as_alice = [&](const std::string& path, const json& body) {
    return read(alice.Post(path.c_str(), body.dump(), "application/json"));
  };
  for (const auto* op : {"context", "usage", "model_error"}) {
    json body = std::string{op} == "usage"         ? json{{"prompt_tokens", 5}}
                : std::string{op} == "model_error" ? json{{"status", 413}}
                                                   : json{{"messages", json::array({ctx_user("x")})}};
    auto a = as_alice(std::string{"/v1/sessions/bob-k/"} + op, body); // her own bob-k
    BOOST_TEST(a.status == 200, op << ": " << a.text);
    BOOST_TEST(a.text.find(R"("b")") == std::string::npos, a.text);
  }
  BOOST_TEST(stored_rows("bob-k", "bob") == bob_rows);
  auto own = as_alice("/v1/sessions/alice-k/context",
                      json{{"messages", json::array({ctx_user("mine")})}});
  BOOST_TEST(own.status == 200, own.text);
  auto other_user = as_alice("/v1/sessions/alice-2/context", json{{"user", "bob"}});
  BOOST_TEST(other_user.status == 403);
  BOOST_TEST(get("/v1/sessions/alice-k?live=false&user=alice").body["session"]["user_id"] == "alice");
}

BOOST_AUTO_TEST_SUITE_END() // http_context_test
