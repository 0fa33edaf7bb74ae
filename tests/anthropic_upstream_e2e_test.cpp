// End to end, a daemon whose model and summarizer speak Anthropic's Messages API
// (model.api: anthropic, auxiliary.compression.api: anthropic): the HTTP API in process
// against the fake LLM's POST /v1/messages. A tool loop across compactions whose
// summaries are Messages calls too, a streamed turn relaying text and tool_use
// fragments, a 529 overloaded outage the turn reports and recovers from with every
// user message stored, and the Anthropic and OpenAI doors on that upstream. Asserted on replies, stored rows and the fake's counters (every
// model call went to /v1/messages), never on timing.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/llm/messages_api_wire.hpp"
#include "policies/token_estimate.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(anthropic_upstream_e2e_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

json lookup_tool() {
  return json::parse(R"([{"type":"function","function":{"name":"lookup","description":"Look up",
    "parameters":{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}}}])");
}

std::string filler(const std::string& tag, int64_t tokens) {
  std::string s = tag + " ";
  while (estimate_text_tokens(s) < tokens)
    s += "the deployment log of service " + tag + " shows a slow migration ";
  return s;
}

struct anthropic_fixture : test::http_api_fixture {
  anthropic_fixture() {
    for (auto* pool : {&rc.chat, &rc.summarizer}) {
      pool->endpoint.api = llm_api::anthropic;
      pool->endpoint.url = llm::messages_url(llm.base_url());
    }
  }

  answer turn(const std::string& key, json body) {
    body["user"] = "u";
    return post("/v1/sessions/" + key + "/turns", body);
  }

  void agent_model(int64_t rounds) {
    fakellm::scenario s;
    s.plan.seed = 44;
    s.tool_call_fraction = 1.0;
    s.tool_rounds = rounds;
    set_scenario(std::move(s));
  }

  // The results of every call of a reply, each "found <id>" and `padding` tokens more.
  static json results_for(const json& reply, int64_t padding = 0) {
    auto out = json::array();
    for (const auto& c : reply["tool_calls"]) {
      auto text = "found " + c["id"].get<std::string>();
      if (padding > 0)
        text += " " + filler("out", padding);
      out.push_back({{"tool_call_id", c["id"]}, {"content", text}});
    }
    return out;
  }

  // Every request the fake answered came over the Messages API, and paired its tools.
  void check_all_messages_api() {
    auto st = llm.stats();
    BOOST_TEST(st.messages_requests == st.chat_requests + st.summary_requests);
    BOOST_TEST(st.bad_requests == 0);
    BOOST_TEST(st.requests_with_orphans == 0);
  }
};

bool has_content(const std::vector<message>& rows, const std::string& text) {
  for (const auto& m : rows)
    if (m.content == text)
      return true;
  return false;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(anthropic_upstream_e2e, anthropic_fixture)

BOOST_AUTO_TEST_CASE(a_tool_loop_runs_across_compactions_summarized_over_the_messages_api) {
  rc.model.context_length = 16000;
  rc.compression.protect_last_n = 4;
  serve();
  agent_model(2);
  auto first = turn("loop", {{"content", "hello"}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  const auto threshold = snapshot("loop").threshold_tokens;
  int committed = 0;
  std::string sid;
  for (int round = 0; round < 6; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      auto r = turn("loop", {{"content", filler("r" + std::to_string(round), threshold / 4)},
                             {"tools", lookup_tool()}});
      BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
      // Two calling answers, then a text answer quoting the results.
      for (int call = 0; call < 2; ++call) {
        BOOST_REQUIRE_MESSAGE(r.body["finish_reason"] == "tool_calls", r.text);
        for (const auto& c : r.body["compactions"])
          committed += c["committed"] == true;
        r = turn("loop", {{"tool_results", results_for(r.body, threshold / 8)}});
        BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
      }
      for (const auto& c : r.body["compactions"])
        committed += c["committed"] == true;
      BOOST_TEST(r.body["finish_reason"] == "stop");
      BOOST_TEST(r.body["answer"].get<std::string>().find("found") != std::string::npos);
      sid = r.body["session_id"].get<std::string>();
    }
  }
  BOOST_TEST(committed >= 2);
  auto st = llm.stats();
  BOOST_TEST(st.summary_requests >= 2);
  check_all_messages_api();
  // The live context still pairs every call with its result.
  auto live = stored_live(sid);
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i].role == msg_role::tool)
      BOOST_TEST((i > 0 && (live[i - 1].has_tool_calls() || live[i - 1].role == msg_role::tool)));
}

BOOST_AUTO_TEST_CASE(a_streamed_turn_relays_tool_use_fragments_then_text_over_the_messages_api) {
  serve();
  agent_model(1);
  auto r = turn("st", {{"content", "look up the plan"}, {"tools", lookup_tool()}, {"stream", true}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.content_type == "text/event-stream");
  // The fragments of the calls, assembled, are the stored calls of the reply.
  json reply, assembled = json::array();
  std::string text;
  auto collect = [&](const std::string& body) {
    reply = nullptr;
    text.clear();
    assembled = json::array();
    std::string event;
    size_t at = 0;
    while (at < body.size()) {
      auto eol = body.find('\n', at);
      if (eol == std::string::npos)
        eol = body.size();
      auto line = body.substr(at, eol - at);
      at = eol + 1;
      if (line.rfind("event: ", 0) == 0) {
        event = line.substr(7);
      } else if (line.rfind("data: ", 0) == 0 && line != "data: [DONE]") {
        auto d = json::parse(line.substr(6));
        if (event == "reply")
          reply = d;
        if (event == "delta" && d.contains("content"))
          text += d["content"].get<std::string>();
        if (event == "delta" && d.contains("tool_call")) {
          auto idx = d["tool_call"]["index"].get<size_t>();
          while (assembled.size() <= idx)
            assembled.push_back({{"id", ""}, {"name", ""}, {"arguments", ""}});
          for (const char* f : {"id", "name", "arguments"})
            if (d["tool_call"].contains(f))
              assembled[idx][f] = assembled[idx][f].get<std::string>()
                                  + d["tool_call"][f].get<std::string>();
        }
      }
    }
  };
  collect(r.text);
  BOOST_REQUIRE_MESSAGE(reply.is_object(), r.text);
  BOOST_REQUIRE(reply["finish_reason"] == "tool_calls");
  BOOST_TEST(assembled == reply["tool_calls"]);
  auto r2 = turn("st", {{"tool_results", results_for(reply)}, {"stream", true}});
  BOOST_REQUIRE_MESSAGE(r2.status == 200, r2.text);
  collect(r2.text);
  BOOST_REQUIRE_MESSAGE(reply.is_object(), r2.text);
  BOOST_TEST(reply["finish_reason"] == "stop");
  BOOST_TEST(!text.empty());
  BOOST_TEST(text == reply["answer"].get<std::string>());
  check_all_messages_api();
}

BOOST_AUTO_TEST_CASE(a_529_outage_fails_the_turn_as_a_server_error_and_recovery_loses_no_message) {
  serve();
  auto before = turn("down", {{"content", "first question"}});
  BOOST_REQUIRE_MESSAGE(before.status == 200, before.text);
  const auto sid = before.body["session_id"].get<std::string>();
  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::chat)});
  auto during = turn("down", {{"content", "asked while the upstream is overloaded"}});
  BOOST_TEST(during.status >= 500, during.text);
  BOOST_TEST(during.body["error"]["code"] == "llm_server_error", during.text);
  BOOST_TEST(llm.stats().injected_of(fakellm::fault_kind::unavailable) >= 1);
  faults({});
  auto after = turn("down", {{"content", "asked after the recovery"}});
  BOOST_REQUIRE_MESSAGE(after.status == 200, after.text);
  BOOST_TEST(!after.body["answer"].get<std::string>().empty());
  auto rows = all_rows(sid);
  BOOST_TEST(has_content(rows, "first question"));
  BOOST_TEST(has_content(rows, "asked while the upstream is overloaded"));
  BOOST_TEST(has_content(rows, "asked after the recovery"));
  BOOST_REQUIRE(!rows.empty());
  BOOST_TEST(rows.back().role == msg_role::assistant);
  BOOST_TEST(rows.back().content == after.body["answer"].get<std::string>());
  check_all_messages_api();
}

BOOST_AUTO_TEST_CASE(the_anthropic_and_openai_doors_both_run_on_the_anthropic_upstream) {
  serve();
  agent_model(1);
  auto post_door = [&](const std::string& path, const json& body) {
    httplib::Headers headers{{"X-Mneme-Session", "doors-" + path.substr(4, 4)},
                             {"anthropic-version", "2023-06-01"}};
    return read(client->Post(path.c_str(), headers, body.dump(), "application/json"));
  };
  // The Anthropic door: a tool_use round trip resending the whole history.
  json tools = json::array({{{"name", "lookup"},
                             {"input_schema", {{"type", "object"},
                                               {"properties", {{"topic", {{"type", "string"}}}}},
                                               {"required", {"topic"}}}}}});
  json history = json::array({{{"role", "user"}, {"content", "look up the plan"}}});
  auto first = post_door("/v1/messages", {{"model", "claude-fake"}, {"max_tokens", 512},
                                          {"tools", tools}, {"messages", history}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  BOOST_REQUIRE(first.body["stop_reason"] == "tool_use");
  history.push_back({{"role", "assistant"}, {"content", first.body["content"]}});
  auto results = json::array();
  for (const auto& b : first.body["content"])
    if (b["type"] == "tool_use")
      results.push_back({{"type", "tool_result"}, {"tool_use_id", b["id"]},
                         {"content", "the plan has 3 steps"}});
  BOOST_REQUIRE(!results.empty());
  history.push_back({{"role", "user"}, {"content", results}});
  auto second = post_door("/v1/messages", {{"model", "claude-fake"}, {"max_tokens", 512},
                                           {"tools", tools}, {"messages", history}});
  BOOST_REQUIRE_MESSAGE(second.status == 200, second.text);
  BOOST_TEST(second.body["stop_reason"] == "end_turn");
  BOOST_TEST(second.body["content"][0]["text"].get<std::string>().find("3 steps")
             != std::string::npos);
  // The OpenAI door.
  auto chat = post_door("/v1/chat/completions",
                        {{"model", "mneme"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}});
  BOOST_REQUIRE_MESSAGE(chat.status == 200, chat.text);
  BOOST_TEST(!chat.body["choices"][0]["message"]["content"].get<std::string>().empty());
  check_all_messages_api();
}

BOOST_AUTO_TEST_CASE(every_content_block_reaches_an_anthropic_upstream_verbatim_in_its_place) {
  serve();
  auto doc = json::parse(R"({"type":"document","source":{"type":"text","media_type":"text/plain",
    "data":"the memo"},"title":"memo"})");
  auto image = json::parse(R"({"type":"image","source":{"type":"url","url":"https://x.test/a.png"}})");
  auto thinking = json::parse(R"({"type":"thinking","thinking":"let me see","signature":"sig"})");
  json history = json::array(
    {{{"role", "user"}, {"content", json::array({doc, {{"type", "text"}, {"text", "read it"}}, image})}},
     {{"role", "assistant"}, {"content", json::array({thinking, {{"type", "text"}, {"text", "done"}}})}},
     {{"role", "user"}, {"content", "so?"}}});
  httplib::Headers headers{{"X-Mneme-Session", "blocks"}, {"anthropic-version", "2023-06-01"}};
  json body = {{"model", "claude-fake"}, {"max_tokens", 256}, {"messages", history}};
  auto res = client->Post("/v1/messages", headers, body.dump(), "application/json");
  auto r = read(res);
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(res->get_header_value("X-Mneme-Ignored").empty()); // nothing dropped
  auto sent = json::parse(llm.stats().last_messages_body);
  const auto& m = sent["messages"];
  BOOST_REQUIRE(m.size() == 3u);
  BOOST_TEST(m[0]["content"] == json::array({doc, {{"type", "text"}, {"text", "read it"}}, image}));
  BOOST_TEST(m[1]["content"] == json::array({thinking, {{"type", "text"}, {"text", "done"}}}));
  check_all_messages_api();
}

BOOST_AUTO_TEST_CASE(the_clients_anthropic_headers_and_unused_fields_reach_the_upstream) {
  serve();
  httplib::Headers headers{{"X-Mneme-Session", "passing"},
                           {"anthropic-version", "2023-06-01"},
                           {"anthropic-beta", "interleaved-thinking-2025-05-14"}};
  json body = {{"model", "claude-fake"}, {"max_tokens", 2048},
               {"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}},
               {"service_tier", "auto"},
               {"messages", json::array({{{"role", "user"}, {"content", "hello"}}})}};
  auto res = client->Post("/v1/messages", headers, body.dump(), "application/json");
  auto r = read(res);
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  // All passed on but `thinking` (mneme keeps no thinking blocks for the next call).
  BOOST_TEST(res->get_header_value("X-Mneme-Ignored") == "thinking");
  auto st = llm.stats();
  BOOST_TEST(st.last_anthropic_version == "2023-06-01");
  BOOST_TEST(st.last_anthropic_beta == "interleaved-thinking-2025-05-14");
  auto sent = json::parse(st.last_messages_body);
  BOOST_TEST(!sent.contains("thinking"));
  BOOST_TEST(sent["service_tier"] == "auto");
  // The stateless pass-through too.
  headers.erase("X-Mneme-Session");
  headers.erase("anthropic-beta");
  headers.emplace("anthropic-beta", "output-128k-2025-02-19");
  auto stateless = read(client->Post("/v1/messages", headers, body.dump(), "application/json"));
  BOOST_REQUIRE_MESSAGE(stateless.status == 200, stateless.text);
  BOOST_TEST(llm.stats().last_anthropic_beta == "output-128k-2025-02-19");
  check_all_messages_api();
}

BOOST_AUTO_TEST_CASE(stop_sequences_reach_the_messages_api_and_the_matched_one_comes_back) {
  serve();
  httplib::Headers headers{{"X-Mneme-Session", "stops"}, {"anthropic-version", "2023-06-01"}};
  json body = {{"model", "claude-fake"}, {"max_tokens", 256},
               {"stop_sequences", json::array({"river"})},
               {"messages", json::array({{{"role", "user"}, {"content", "the river runs"}}})}};
  auto whole = read(client->Post("/v1/messages", headers, body.dump(), "application/json"));
  BOOST_REQUIRE_MESSAGE(whole.status == 200, whole.text);
  BOOST_TEST(json::parse(llm.stats().last_messages_body)["stop_sequences"]
             == json::array({"river"}));
  BOOST_TEST(whole.body["stop_reason"] == "stop_sequence");
  BOOST_TEST(whole.body["stop_sequence"] == "river");
  // Streamed from the upstream and to the client: message_delta names it.
  headers = {{"X-Mneme-Session", "stops-streamed"}, {"anthropic-version", "2023-06-01"}};
  body["stream"] = true;
  auto streamed = client->Post("/v1/messages", headers, body.dump(), "application/json");
  BOOST_REQUIRE(streamed);
  BOOST_REQUIRE_MESSAGE(streamed->status == 200, streamed->body);
  auto at = streamed->body.find("event: message_delta\ndata: ");
  BOOST_REQUIRE(at != std::string::npos);
  auto data = streamed->body.substr(at + 27, streamed->body.find("\n", at + 27) - at - 27);
  auto delta = json::parse(data);
  BOOST_TEST(delta["delta"]["stop_reason"] == "stop_sequence");
  BOOST_TEST(delta["delta"]["stop_sequence"] == "river");
  // The chat door's `stop` on this upstream: sent as stop_sequences, finish_reason "stop".
  json chat = {{"model", "mneme"}, {"stop", "river"},
               {"messages", json::array({{{"role", "user"}, {"content", "a river"}}})}};
  auto c = read(client->Post("/v1/chat/completions", {{"X-Mneme-Session", "stops-chat"}},
                             chat.dump(), "application/json"));
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.body["choices"][0]["finish_reason"] == "stop");
  BOOST_TEST(c.body["choices"][0]["message"]["content"].get<std::string>().find("river")
             == std::string::npos);
  BOOST_TEST(json::parse(llm.stats().last_messages_body)["stop_sequences"]
             == json::array({"river"}));
  check_all_messages_api();
}

BOOST_AUTO_TEST_SUITE_END() // anthropic_upstream_e2e
BOOST_AUTO_TEST_SUITE_END()
