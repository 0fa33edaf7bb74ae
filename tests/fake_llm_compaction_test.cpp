// The fake LLM's compaction paths over loopback: the compaction endpoint
// POST /v1/responses/compact (deterministic compacted text, usage, target, faults
// with purpose `compaction`, bad requests) and server-side compaction of chat
// requests carrying context_management compact_threshold for native models (the
// marker, the reduced usage of the next call, the stats, the model list, no
// compaction on a faulted answer).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/fakellm/server_compaction.hpp"
#include "fake_llm_test_client.hpp"
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_compaction_test)

using namespace mneme;
using namespace mneme::fakellm;
using namespace mneme::fakellm::testing;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

namespace {

constexpr int64_t test_window = 100000;

json item(const std::string& role, const std::string& text) {
  return {{"type", "message"}, {"role", role}, {"content", text}};
}

json compaction_doc(int turns, const std::string& instructions = "",
                    const std::string& model = "gpt-5-codex") {
  auto input = json::array({item("system", "Be brief.")});
  for (int i = 0; i < turns; ++i) {
    input.push_back(item("user", "step " + std::to_string(i) + ": open src/mod_"
                                   + std::to_string(i) + ".cpp and fix ERR_" + std::to_string(i)));
    input.push_back(item("assistant", "Fixed mod_" + std::to_string(i) + " as asked."));
  }
  json doc = {{"model", model}, {"input", std::move(input)}};
  if (!instructions.empty()) doc["instructions"] = instructions;
  return doc;
}

std::string compact_request(const json& doc) {
  return post_request("/v1/responses/compact", doc.dump());
}

std::vector<message> as_messages(const json& input) {
  std::vector<message> out;
  for (const auto& it : input) {
    message m;
    m.role = *parse_role(it["role"].get<std::string>());
    m.content = it["content"].get<std::string>();
    out.push_back(m);
  }
  return out;
}

// A chat-completions conversation: system prompt, then `n` user/assistant rows of
// about `tokens` tokens each.
json conversation(int n, int64_t tokens) {
  auto msgs = json::array({{{"role", "system"}, {"content", "You are terse."}},
                           {{"role", "user"}, {"content", "Let us begin the long task."}}});
  for (int i = 0; i < n; ++i)
    msgs.push_back({{"role", i % 2 == 0 ? "assistant" : "user"},
                    {"content", std::to_string(i) + std::string(static_cast<size_t>(tokens * 4), 'x')}});
  return msgs;
}

json chat_doc(const json& msgs, const std::string& model, std::optional<int64_t> threshold) {
  json doc = {{"model", model}, {"messages", msgs}};
  if (threshold)
    doc["context_management"] =
      json::array({{{"type", "compaction"}, {"compact_threshold", *threshold}}});
  return doc;
}

int64_t estimate_of(const json& msgs) {
  std::vector<message> v;
  for (const auto& m : msgs) {
    message x;
    x.role = *parse_role(m["role"].get<std::string>());
    x.content = m["content"].get<std::string>();
    v.push_back(x);
  }
  return estimate_messages_tokens(v);
}

struct server_fixture {
  fake_llm_server server{[] {
    fake_llm_options o;
    o.answers.window_tokens = test_window;
    return o;
  }()};
  uint16_t port = 0;

  server_fixture() {
    auto p = server.start();
    BOOST_TEST_REQUIRE(static_cast<bool>(p));
    port = *p;
  }

  void set(scenario s) { BOOST_TEST_REQUIRE(!server.set_scenario(std::move(s))); }

  void faults(std::vector<fault_rule> rules) {
    scenario s;
    s.plan.rules = std::move(rules);
    set(std::move(s));
  }

  raw_result chat(const json& doc) {
    return roundtrip(port, post_request("/v1/chat/completions", doc.dump()));
  }
};

fault_rule rule(fault_kind k, purpose_filter p) {
  fault_rule r;
  r.kind = k;
  r.purpose = p;
  if (k == fault_kind::payload_too_large) r.max_body_bytes = 10;
  return r;
}

std::string output_text(const json& doc) {
  std::string out;
  for (const auto& it : doc["output"])
    if (it["type"] == "message")
      for (const auto& part : it["content"]) out += part["text"].get<std::string>();
  return out;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(compaction_endpoint, server_fixture)

BOOST_AUTO_TEST_CASE(the_endpoint_answers_a_deterministic_compaction_with_usage) {
  auto doc = compaction_doc(12);
  auto r = roundtrip(port, compact_request(doc));
  BOOST_TEST_REQUIRE(r.status == 200);
  auto ans = json::parse(r.body);
  BOOST_TEST(ans["object"] == "response.compaction");
  BOOST_TEST_REQUIRE(ans["output"].size() == 2u);
  BOOST_TEST(ans["output"][0]["type"] == "message");
  BOOST_TEST(ans["output"][1]["type"] == "compaction");
  BOOST_TEST(!ans["output"][1]["encrypted_content"].get<std::string>().empty());
  auto text = output_text(ans);
  BOOST_TEST(text.find("src/mod_11.cpp") != std::string::npos);  // identifiers kept verbatim
  BOOST_TEST(ans["usage"]["input_tokens"].get<int64_t>()
             == estimate_messages_tokens(as_messages(doc["input"])));
  BOOST_TEST(ans["usage"]["output_tokens"].get<int64_t>() == estimate_text_tokens(text));
  BOOST_TEST(ans["usage"]["total_tokens"].get<int64_t>()
             == ans["usage"]["input_tokens"].get<int64_t>()
                  + ans["usage"]["output_tokens"].get<int64_t>());
  auto again = json::parse(roundtrip(port, compact_request(doc)).body);
  BOOST_TEST(output_text(again) == text);
  auto st = server.stats();
  BOOST_TEST(st.compaction_requests == 2);
  BOOST_TEST(st.chat_requests == 0);
  auto sj = json::parse(roundtrip(port, get_request("/control/stats")).body);
  BOOST_TEST(sj["requests"]["compaction"] == 2);
}

BOOST_AUTO_TEST_CASE(the_target_named_in_the_instructions_bounds_the_compacted_text) {
  auto doc = compaction_doc(200, "Compact this; target about 150 tokens.");
  auto ans = json::parse(roundtrip(port, compact_request(doc)).body);
  auto text = output_text(ans);
  BOOST_TEST(!text.empty());
  BOOST_TEST(estimate_text_tokens(text) <= 150);
  auto roomy = json::parse(roundtrip(port, compact_request(compaction_doc(200))).body);
  BOOST_TEST(estimate_text_tokens(output_text(roomy)) > 150);  // default target is larger
}

BOOST_AUTO_TEST_CASE(tool_items_are_accepted_as_function_calls_and_outputs) {
  auto doc = compaction_doc(2);
  doc["input"].push_back({{"type", "function_call"}, {"call_id", "c1"}, {"name", "grep"},
                          {"arguments", "{\"q\":\"ERR_42\"}"}});
  doc["input"].push_back({{"type", "function_call_output"}, {"call_id", "c1"},
                          {"output", "found ERR_42 in lib/x.cpp"}});
  auto r = roundtrip(port, compact_request(doc));
  BOOST_TEST_REQUIRE(r.status == 200);
  BOOST_TEST(output_text(json::parse(r.body)).find("lib/x.cpp") != std::string::npos);
}

struct bad_case {
  std::string name;
  json doc;
  std::string names;  // the part of the error message that names the field
};
std::ostream& operator<<(std::ostream& os, const bad_case& c) { return os << c.name; }

const std::vector<bad_case> bad_cases = {
  {"no_model", {{"input", json::array({item("user", "hi")})}}, "model"},
  {"empty_input", {{"model", "m"}, {"input", json::array()}}, "input"},
  {"input_not_a_list", {{"model", "m"}, {"input", "hi"}}, "input"},
  {"tool_role_message", {{"model", "m"}, {"input", json::array({item("tool", "x")})}},
   "input[0].role"},
  {"unknown_item_type",
   {{"model", "m"}, {"input", json::array({{{"type", "reasoning"}, {"summary", "x"}}})}},
   "input[0].type"},
  {"instructions_not_text",
   {{"model", "m"}, {"input", json::array({item("user", "hi")})}, {"instructions", 5}},
   "instructions"},
};

BOOST_DATA_TEST_CASE_F(server_fixture, a_bad_compaction_request_is_a_400_naming_the_field,
                       data::make(bad_cases), c) {
  auto r = roundtrip(port, compact_request(c.doc));
  BOOST_TEST(r.status == 400);
  std::string msg = json::parse(r.body)["error"]["message"];
  BOOST_TEST(msg.find(c.names) != std::string::npos, msg);
  BOOST_TEST(server.stats().compaction_requests == 0);
  BOOST_TEST(server.stats().bad_requests == 1);
}

BOOST_AUTO_TEST_CASE(get_on_the_compaction_endpoint_is_a_405) {
  BOOST_TEST(roundtrip(port, get_request("/v1/responses/compact")).status == 405);
}

struct fault_case {
  fault_kind kind;
  int status;           // 0 = reset
  bool empty_text;      // a 200 whose message item has no text
  bool malformed;       // a 200 whose body is not JSON
};
std::ostream& operator<<(std::ostream& os, const fault_case& c) { return os << c.kind; }

const std::vector<fault_case> fault_cases = {
  {fault_kind::unavailable, 503, false, false},
  {fault_kind::payload_too_large, 413, false, false},
  {fault_kind::long_context_429, 429, false, false},
  {fault_kind::overflow_400, 400, false, false},
  {fault_kind::reset, 0, false, false},
  {fault_kind::empty_content, 200, true, false},
  {fault_kind::reasoning_only, 200, true, false},
  {fault_kind::malformed_json, 200, false, true},
};

BOOST_DATA_TEST_CASE_F(server_fixture, faults_with_purpose_compaction_hit_the_endpoint,
                       data::make(fault_cases), c) {
  faults({rule(c.kind, purpose_filter::compaction)});
  auto r = roundtrip(port, compact_request(compaction_doc(3)));
  if (c.status == 0) {
    BOOST_TEST((r.reset || r.eof));
  } else {
    BOOST_TEST(r.status == c.status);
  }
  if (c.empty_text) BOOST_TEST(output_text(json::parse(r.body)).empty());
  if (c.malformed) BOOST_TEST(json::parse(r.body, nullptr, false).is_discarded());
  BOOST_TEST(server.stats().injected_of(c.kind) == 1);
  // The same rule leaves chat requests alone.
  auto chat_r = chat(chat_doc(conversation(2, 10), "gpt-test", std::nullopt));
  BOOST_TEST(chat_r.status == 200);
  BOOST_TEST(server.stats().injected_of(c.kind) == 1);
}

BOOST_AUTO_TEST_CASE(a_chat_purpose_fault_leaves_the_compaction_endpoint_alone) {
  faults({rule(fault_kind::unavailable, purpose_filter::chat),
          rule(fault_kind::unavailable, purpose_filter::summary)});
  BOOST_TEST(roundtrip(port, compact_request(compaction_doc(3))).status == 200);
  BOOST_TEST(chat(chat_doc(conversation(2, 10), "gpt-test", std::nullopt)).status == 503);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(server_side_compaction, server_fixture)

BOOST_AUTO_TEST_CASE(a_native_model_compacts_at_the_threshold_and_reports_less_usage_next) {
  auto msgs = conversation(8, 500);  // about 4,000 tokens
  auto raw = estimate_of(msgs);
  BOOST_TEST_REQUIRE(raw > 3000);
  // Below the threshold: no marker, full usage.
  auto below = json::parse(chat(chat_doc(msgs, "gpt-5-codex", raw + 1)).body);
  BOOST_TEST(!below.contains("compaction"));
  BOOST_TEST(below["usage"]["prompt_tokens"].get<int64_t>() == raw);
  BOOST_TEST(server.stats().server_compactions == 0);
  // At the threshold: the server compacts and says so.
  auto at = json::parse(chat(chat_doc(msgs, "gpt-5-codex", raw)).body);
  BOOST_TEST_REQUIRE(at.contains("compaction"));
  BOOST_TEST(at["compaction"]["type"] == "compaction");
  BOOST_TEST(at["compaction"]["tokens_before"].get<int64_t>() == raw);
  auto after = at["compaction"]["tokens_after"].get<int64_t>();
  BOOST_TEST(after == raw * server_compaction_keep_percent / 100);
  BOOST_TEST(at["usage"]["prompt_tokens"].get<int64_t>() == raw);
  BOOST_TEST(server.stats().server_compactions == 1);
  // The next call of the same conversation costs the item plus what is new.
  auto more = msgs;
  auto added = json::array({{{"role", "assistant"}, {"content", "done"}},
                            {{"role", "user"}, {"content", "and now the next step please"}}});
  for (const auto& m : added) more.push_back(m);
  auto next = json::parse(chat(chat_doc(more, "gpt-5-codex", raw)).body);
  BOOST_TEST(!next.contains("compaction"));
  BOOST_TEST(next["usage"]["prompt_tokens"].get<int64_t>() == after + estimate_of(added));
  BOOST_TEST(server.stats().server_compactions == 1);
  auto sj = json::parse(roundtrip(port, get_request("/control/stats")).body);
  BOOST_TEST(sj["server_compactions"] == 1);
}

BOOST_AUTO_TEST_CASE(the_marker_rides_on_the_final_chunk_of_a_stream) {
  auto msgs = conversation(4, 100);
  auto doc = chat_doc(msgs, "gpt-5", 10);
  doc["stream"] = true;
  auto r = chat(doc);
  BOOST_TEST_REQUIRE(r.status == 200);
  BOOST_TEST(r.body.find("\"compaction\":{") != std::string::npos);
  BOOST_TEST(server.stats().server_compactions == 1);
}

struct no_compaction_case {
  std::string name;
  std::string model;
  bool with_threshold;
};
std::ostream& operator<<(std::ostream& os, const no_compaction_case& c) { return os << c.name; }

const std::vector<no_compaction_case> no_compaction_cases = {
  {"model_not_native", "gpt-4o", true},
  {"native_model_without_threshold", "gpt-5-codex", false},
};

BOOST_DATA_TEST_CASE_F(server_fixture, nothing_is_compacted_server_side_unless_both_hold,
                       data::make(no_compaction_cases), c) {
  auto msgs = conversation(8, 500);
  auto doc = chat_doc(msgs, c.model, c.with_threshold ? std::optional<int64_t>{10} : std::nullopt);
  auto ans = json::parse(chat(doc).body);
  BOOST_TEST(!ans.contains("compaction"));
  int64_t reported = ans["usage"]["prompt_tokens"];
  BOOST_TEST(reported == estimate_of(msgs));
  BOOST_TEST(server.stats().server_compactions == 0);
}

BOOST_AUTO_TEST_CASE(the_scenario_names_which_models_compact_natively) {
  scenario s;
  s.native_compaction_models = std::vector<std::string>{"fake-chat"};
  set(s);
  auto msgs = conversation(4, 100);
  BOOST_TEST(json::parse(chat(chat_doc(msgs, "fake-chat", 10)).body).contains("compaction"));
  BOOST_TEST(!json::parse(chat(chat_doc(msgs, "gpt-5", 10)).body).contains("compaction"));
  BOOST_TEST(server.stats().server_compactions == 1);
}

BOOST_AUTO_TEST_CASE(a_faulted_answer_compacts_nothing) {
  faults({rule(fault_kind::unavailable, purpose_filter::chat)});
  auto msgs = conversation(4, 100);
  BOOST_TEST(chat(chat_doc(msgs, "gpt-5", 10)).status == 503);
  BOOST_TEST(server.stats().server_compactions == 0);
  server.clear_faults();
  auto ans = json::parse(chat(chat_doc(msgs, "gpt-5", 10)).body);
  BOOST_TEST(ans["usage"]["prompt_tokens"].get<int64_t>() == estimate_of(msgs));  // not reduced
  BOOST_TEST(server.stats().server_compactions == 1);
}

BOOST_AUTO_TEST_CASE(a_bad_context_management_entry_is_a_400) {
  auto doc = chat_doc(conversation(2, 10), "gpt-5", std::nullopt);
  doc["context_management"] = json::array({{{"type", "compaction"}, {"compact_threshold", 0}}});
  auto r = chat(doc);
  BOOST_TEST(r.status == 400);
  BOOST_TEST(json::parse(r.body)["error"]["message"].get<std::string>().find(
               "context_management[0].compact_threshold") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(scenario_keys)

BOOST_AUTO_TEST_CASE(native_compaction_models_and_the_compaction_purpose_round_trip) {
  auto s = parse_scenario_json(
    R"({"native_compaction_models": ["gpt-5", "o-mini"],
        "faults": [{"kind": "unavailable", "purpose": "compaction"}]})");
  BOOST_TEST_REQUIRE(static_cast<bool>(s));
  BOOST_TEST_REQUIRE(s->native_compaction_models.has_value());
  BOOST_TEST(s->native_compaction_models->size() == 2u);
  BOOST_TEST((s->plan.rules.at(0).purpose == purpose_filter::compaction));
  auto again = parse_scenario(to_json(*s));
  BOOST_TEST_REQUIRE(static_cast<bool>(again));
  BOOST_TEST((again->native_compaction_models == s->native_compaction_models));
}

BOOST_AUTO_TEST_CASE(a_bad_model_list_is_rejected_naming_the_key) {
  auto s = parse_scenario_json(R"({"native_compaction_models": ["gpt-5", ""]})");
  BOOST_TEST_REQUIRE(!s);
  BOOST_TEST(render_error(s.error()).find("scenario.native_compaction_models[1]")
             != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // fake_llm_compaction_test
