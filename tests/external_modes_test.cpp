// External compaction modes end to end (SPEC §6): the runtime (storage, pools,
// gateway, sessions) against the in-process fake LLM over loopback, one case per
// mode of policies/external_compaction.hpp:
//   mneme          mneme compacts at its threshold, the server never does;
//   server_first   OpenAI server-side compaction: the server compacts first, at
//                  server_compact_threshold; mneme's trigger fires later, at
//                  mneme_threshold, and never on the answer the server compacted;
//                  when the server does not compact, mneme's backstop fires there;
//   backend_native / nobody (Codex app-server native | off): nothing automatic,
//                  manual and error triggers still compact;
//   backend_endpoint (managed): mneme's triggers, the summary from the compaction
//                  endpoint; the endpoint failing -> the local fallback summary.
// Plus the LLM edge's wire pieces for these modes (compaction endpoint body and
// answer, the compact threshold on chat requests, the server's marker).
// The expected thresholds come from the policy, never from literals.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "actors/llm/compaction_wire.hpp"
#include "actors/llm/llm_call.hpp"
#include "apps/common/fakellm/compaction_wire.hpp"
#include "policies/external_compaction.hpp"
#include "policies/summary_markers.hpp"
#include "tests/serve_runtime_fixture.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::compactor)

BOOST_AUTO_TEST_SUITE(external_modes_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;
using json = nlohmann::json;

namespace {

constexpr int64_t test_window = 20000;
constexpr int64_t test_threshold_cap = 4000;  // compression.threshold_tokens
constexpr int max_turns = 60;

std::string text_of(int64_t tokens, int turn) {
  return "turn " + std::to_string(turn) + " "
         + std::string(static_cast<size_t>(tokens * 4), static_cast<char>('a' + turn % 26));
}

// What one turn showed.
struct turn_seen {
  int64_t prompt_tokens = 0;       // as the API reported it
  bool server_compacted = false;   // the fake's counter moved during the turn
  std::vector<compaction_report> compactions;
};

// A Codex model with a small window and threshold cap, a head of 1 and a tail of 4.
struct modes_fixture : serve_runtime_fixture {
  modes_fixture() {
    rc.model.name = "gpt-5-codex";
    rc.model.context_length = test_window;
    rc.compression.threshold_tokens = test_threshold_cap;
    rc.compression.protect_first_n = 1;
    rc.compression.protect_last_n = 4;
  }

  // The decision the session works with, from the policy and the session's figures.
  external_compaction_decision decision_for(const session_snapshot& s) const {
    return decide_external_compaction(rc.compression, rc.model.backend, rc.model.name,
                                      s.threshold_tokens, s.context_window);
  }

  turn_seen turn(const std::string& key, int i, int64_t tokens = 300) {
    auto before = llm.stats().server_compactions;
    auto r = say_to(key, text_of(tokens, i));
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    turn_seen t;
    t.prompt_tokens = r->prompt_tokens;
    t.server_compacted = llm.stats().server_compactions > before;
    t.compactions = r->compactions;
    return t;
  }

  // Turns until mneme compacts automatically (or max_turns); every turn is kept.
  std::vector<turn_seen> until_mneme_compacts(const std::string& key) {
    std::vector<turn_seen> seen;
    for (int i = 0; i < max_turns; ++i) {
      seen.push_back(turn(key, i));
      if (!seen.back().compactions.empty())
        break;
    }
    return seen;
  }

  // Turns until the live context is at least `tokens` (or max_turns).
  void grow_to(const std::string& key, int64_t tokens) {
    for (int i = 0; i < max_turns && snapshot(key).live_tokens < tokens; ++i)
      turn(key, i);
  }

  // No model of the fake compacts natively: the server never compacts.
  void server_never_compacts() {
    fakellm::scenario s;
    s.native_compaction_models = std::vector<std::string>{"no-model-is-named-so"};
    set_scenario(std::move(s));
  }
};

int64_t total_compactions(const session_snapshot& s) {
  int64_t n = 0;
  for (auto c : s.compactions_by_trigger)
    n += c;
  return n;
}

bool automatic(trigger t) {
  return t == trigger::t1_pre_call || t == trigger::t2_post_call || t == trigger::t10_preflight;
}

} // namespace

// ------------------------------------------------------------------ mneme alone

BOOST_FIXTURE_TEST_SUITE(modes, modes_fixture)

BOOST_AUTO_TEST_CASE(without_external_modes_mneme_compacts_at_its_threshold_and_the_server_never) {
  start();
  auto seen = until_mneme_compacts("plain");
  auto s = snapshot("plain");
  auto d = decision_for(s);
  BOOST_TEST(d.who == compactor::mneme);
  BOOST_TEST_REQUIRE(!seen.back().compactions.empty());
  const auto& first = seen.back().compactions.front();
  BOOST_TEST(automatic(first.by));
  BOOST_TEST(first.tokens_before >= s.threshold_tokens);
  BOOST_TEST(llm.stats().server_compactions == 0);
  BOOST_TEST(llm.stats().compaction_requests == 0);
  BOOST_TEST(rt->metrics()->server_compactions.load() == 0u);
  // The comparison point for server_first: mneme alone fires before mneme_threshold.
  rc.compression.codex_responses_native = true;
  BOOST_TEST(first.tokens_before < decision_for(s).mneme_threshold);
}

// ------------------------------------------------------------------ server first

BOOST_AUTO_TEST_CASE(server_first_the_server_compacts_first_and_mneme_later_at_its_own_threshold) {
  rc.compression.codex_responses_native = true;
  start();
  auto seen = until_mneme_compacts("native");
  auto s = snapshot("native");
  auto d = decision_for(s);
  BOOST_TEST_REQUIRE(d.who == compactor::server_first);
  BOOST_TEST_REQUIRE(d.server_compact_threshold < d.mneme_threshold);

  // The server compacted first, when the prompt reached its threshold...
  auto server_turn = std::find_if(seen.begin(), seen.end(),
                                  [](const turn_seen& t) { return t.server_compacted; });
  BOOST_TEST_REQUIRE((server_turn != seen.end()));
  BOOST_TEST(server_turn->prompt_tokens >= d.server_compact_threshold);
  BOOST_TEST(server_turn->prompt_tokens < d.mneme_threshold);
  // ... and mneme did not compact on that answer.
  BOOST_TEST(server_turn->compactions.empty());
  BOOST_TEST((server_turn < seen.end() - 1));

  // mneme's own trigger fired later, at mneme_threshold, as a backstop.
  BOOST_TEST_REQUIRE(!seen.back().compactions.empty());
  const auto& mine = seen.back().compactions.front();
  BOOST_TEST(automatic(mine.by));
  BOOST_TEST(mine.tokens_before >= d.mneme_threshold);
  BOOST_TEST(mine.tokens_before > server_turn->prompt_tokens);

  // Recorded: the runtime's counter matches the server's.
  auto server_count = llm.stats().server_compactions;
  BOOST_TEST(server_count >= 1);
  BOOST_TEST(rt->metrics()->server_compactions.load() == static_cast<uint64_t>(server_count));
}

BOOST_AUTO_TEST_CASE(server_first_the_reported_usage_drops_after_the_server_compacted) {
  rc.compression.codex_responses_native = true;
  start();
  auto seen = until_mneme_compacts("usage");
  auto at = std::find_if(seen.begin(), seen.end(),
                         [](const turn_seen& t) { return t.server_compacted; });
  BOOST_TEST_REQUIRE((at != seen.end() && at + 1 != seen.end()));
  BOOST_TEST((at + 1)->prompt_tokens < at->prompt_tokens / 2);
}

BOOST_AUTO_TEST_CASE(server_first_when_the_server_does_not_compact_mneme_backstops_at_mneme_threshold) {
  rc.compression.codex_responses_native = true;
  start();
  server_never_compacts();
  auto seen = until_mneme_compacts("backstop");
  auto d = decision_for(snapshot("backstop"));
  BOOST_TEST_REQUIRE(d.who == compactor::server_first);
  BOOST_TEST(llm.stats().server_compactions == 0);
  // Turns between the server's threshold and mneme's passed without a compaction.
  auto past_server = std::count_if(seen.begin(), seen.end() - 1, [&](const turn_seen& t) {
    return t.prompt_tokens >= d.server_compact_threshold;
  });
  BOOST_TEST(past_server >= 1);
  BOOST_TEST_REQUIRE(!seen.back().compactions.empty());
  const auto& mine = seen.back().compactions.front();
  BOOST_TEST(automatic(mine.by));
  BOOST_TEST(mine.tokens_before >= d.mneme_threshold);
  BOOST_TEST(mine.committed);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------ native | off

struct hands_off_case {
  codex_mode mode;
  compactor who;
};
std::ostream& operator<<(std::ostream& os, const hands_off_case& c) {
  return os << "codex_app_server_auto=" << static_cast<int>(c.mode);
}

const std::vector<hands_off_case> hands_off_cases = {
  {codex_mode::native, compactor::backend_native},
  {codex_mode::off, compactor::nobody},
};

BOOST_DATA_TEST_CASE_F(modes_fixture,
                       native_and_off_run_nothing_automatic_but_manual_and_error_triggers_work,
                       data::make(hands_off_cases), c) {
  rc.model.backend = backend_kind::codex_app_server;
  rc.compression.codex_app_server_auto = c.mode;
  start();
  BOOST_REQUIRE(say_to("hands-off", "hello"));
  auto d = decision_for(snapshot("hands-off"));
  BOOST_TEST_REQUIRE(d.who == c.who);
  // Well past the threshold (and past what server_first would use): nothing automatic.
  grow_to("hands-off", 2 * snapshot("hands-off").threshold_tokens);
  auto s = snapshot("hands-off");
  BOOST_TEST(s.live_tokens >= 2 * s.threshold_tokens);
  BOOST_TEST(total_compactions(s) == 0);
  BOOST_TEST(llm.stats().summary_requests == 0);
  BOOST_TEST(llm.stats().compaction_requests == 0);
  // Manual compaction works.
  auto manual = say_to("hands-off", "/compress");
  BOOST_REQUIRE_MESSAGE(manual, err_of(manual));
  BOOST_TEST(compactions_of(snapshot("hands-off"), trigger::t14_channel_command) == 1);
  BOOST_TEST(llm.stats().summary_requests == 1);
  // An error trigger works: one context overflow from the model compacts (T9).
  grow_to("hands-off", snapshot("hands-off").live_tokens + 1500);
  faults({rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat, 1)});
  auto err = say_to("hands-off", "after the overflow");
  BOOST_REQUIRE_MESSAGE(err, err_of(err));
  BOOST_REQUIRE(!err->compactions.empty());
  BOOST_TEST(err->compactions[0].by == trigger::t9_context_overflow);
  BOOST_TEST(total_compactions(snapshot("hands-off")) == 2);
}

// ------------------------------------------------------------------ managed

BOOST_FIXTURE_TEST_SUITE(managed, modes_fixture)

BOOST_AUTO_TEST_CASE(managed_mneme_triggers_and_the_compaction_endpoint_summarizes) {
  rc.model.backend = backend_kind::codex_app_server;
  rc.compression.codex_app_server_auto = codex_mode::managed;
  start();
  auto seen = until_mneme_compacts("managed");
  auto s = snapshot("managed");
  BOOST_TEST_REQUIRE(decision_for(s).who == compactor::backend_endpoint);
  BOOST_TEST_REQUIRE(!seen.back().compactions.empty());
  const auto& r = seen.back().compactions.front();
  BOOST_TEST(automatic(r.by));
  BOOST_TEST(r.tokens_before >= s.threshold_tokens);  // mneme's own threshold
  BOOST_TEST(r.committed);
  BOOST_TEST(!r.used_fallback);
  BOOST_TEST(llm.stats().compaction_requests == 1);
  BOOST_TEST(llm.stats().summary_requests == 0);
  auto rows = stored_live(s.record.id);
  auto summary = std::find_if(rows.begin(), rows.end(), [](const message& m) { return m.is_summary; });
  BOOST_TEST_REQUIRE((summary != rows.end()));
  BOOST_TEST(summary->content.find(summary_prefix_tag) != std::string::npos);
  BOOST_TEST(summary->content.find("Local fallback summary") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(managed_with_the_endpoint_failing_falls_back_to_the_local_summary) {
  rc.model.backend = backend_kind::codex_app_server;
  rc.compression.codex_app_server_auto = codex_mode::managed;
  start();
  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::compaction)});
  auto seen = until_mneme_compacts("managed-down");
  BOOST_TEST_REQUIRE(!seen.back().compactions.empty());
  const auto& r = seen.back().compactions.front();
  BOOST_TEST(r.summary_failed);
  BOOST_TEST(r.used_fallback);
  BOOST_TEST(r.committed);
  BOOST_TEST(llm.stats().injected_of(fakellm::fault_kind::unavailable) == 1);
  BOOST_TEST(llm.stats().summary_requests == 0);
  auto s = snapshot("managed-down");
  BOOST_TEST(s.record.triggers.cooldown_until_ms > 0);  // as for a failed summary
  auto rows = stored_live(s.record.id);
  auto summary = std::find_if(rows.begin(), rows.end(), [](const message& m) { return m.is_summary; });
  BOOST_TEST_REQUIRE((summary != rows.end()));
  BOOST_TEST(summary->content.find("Local fallback summary") != std::string::npos);
  BOOST_TEST(rt->metrics()->summary_failures[static_cast<size_t>(errc::llm_server_error)].load()
             == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

// ------------------------------------------------------------------ wire

BOOST_AUTO_TEST_SUITE(wire)

struct url_case {
  std::string chat_url;
  std::string want;
};
std::ostream& operator<<(std::ostream& os, const url_case& c) { return os << c.chat_url; }

const std::vector<url_case> url_cases = {
  {"http://127.0.0.1:8000/v1/chat/completions", "http://127.0.0.1:8000/v1/responses/compact"},
  {"https://api.example.com/v1/chat/completions/", "https://api.example.com/v1/responses/compact"},
  {"http://gw.local/custom", "http://gw.local/custom/responses/compact"},
};

BOOST_DATA_TEST_CASE(the_compaction_url_sits_beside_the_chat_url, data::make(url_cases), c) {
  BOOST_TEST(llm::compaction_url(c.chat_url) == c.want);
}

BOOST_AUTO_TEST_CASE(a_chat_request_carries_the_compact_threshold_only_when_set) {
  chat_request req;
  req.model = "gpt-5-codex";
  req.messages.resize(1);
  req.messages[0].content = "hi";
  auto plain = json::parse(llm::to_wire_json(req));
  BOOST_TEST(!plain.contains("context_management"));
  req.server_compact_threshold = 150000;
  auto asked = json::parse(llm::to_wire_json(req));
  BOOST_TEST_REQUIRE(asked["context_management"].is_array());
  BOOST_TEST(asked["context_management"].size() == 1u);
  BOOST_TEST(asked["context_management"][0]["type"] == "compaction");
  BOOST_TEST(asked["context_management"][0]["compact_threshold"] == 150000);
}

BOOST_AUTO_TEST_CASE(the_servers_compaction_marker_sets_server_compacted) {
  std::string base = R"({"choices":[{"message":{"role":"assistant","content":"ok"},
                         "finish_reason":"stop"}],"usage":{"prompt_tokens":9})";
  auto plain = llm::parse_chat_answer(base + "}", llm_purpose::chat);
  BOOST_TEST_REQUIRE(plain.kind == llm_error_kind::none);
  BOOST_TEST(!plain.answer.server_compacted);
  auto marked = llm::parse_chat_answer(
    base + R"(,"compaction":{"type":"compaction","id":"cmp-1","encrypted_content":"x"}})",
    llm_purpose::chat);
  BOOST_TEST_REQUIRE(marked.kind == llm_error_kind::none);
  BOOST_TEST(marked.answer.server_compacted);
  BOOST_TEST(marked.answer.prompt_tokens == 9);
  auto other = llm::parse_chat_answer(base + R"(,"compaction":{"type":"other"}})",
                                      llm_purpose::chat);
  BOOST_TEST(!other.answer.server_compacted);
}

BOOST_AUTO_TEST_CASE(the_compaction_body_is_read_back_by_the_fake_as_the_same_transcript) {
  chat_request req;
  req.model = "gpt-5-codex";
  req.purpose = llm_purpose::compaction;
  req.instructions = "target about 300 tokens.";
  message sys_row, user, call, result;
  sys_row.role = msg_role::system;
  sys_row.content = "Be brief.";
  user.role = msg_role::user;
  user.content = "grep for ERR_42";
  call.role = msg_role::assistant;
  call.tool_calls.push_back(tool_call{"c1", "grep", R"({"q":"ERR_42"})"});
  result.role = msg_role::tool;
  result.tool_call_id = "c1";
  result.content = "lib/x.cpp:7 ERR_42";
  req.messages = {sys_row, user, call, result};
  auto body = llm::to_compaction_wire_json(req);
  auto doc = json::parse(body);
  BOOST_TEST(doc["instructions"] == "target about 300 tokens.");
  BOOST_TEST_REQUIRE(doc["input"].size() == 4u);
  BOOST_TEST(doc["input"][2]["type"] == "function_call");  // no empty message item
  BOOST_TEST(doc["input"][3]["type"] == "function_call_output");
  auto parsed = fakellm::parse_compaction_call(body);
  BOOST_TEST_REQUIRE(static_cast<bool>(parsed));
  BOOST_TEST_REQUIRE(parsed->input.size() == 4u);
  BOOST_TEST((parsed->input[0].role == msg_role::system));
  BOOST_TEST(parsed->input[1].content == user.content);
  BOOST_TEST((parsed->input[2].tool_calls == call.tool_calls));
  BOOST_TEST(parsed->input[3].tool_call_id == "c1");
  BOOST_TEST(parsed->input[3].content == result.content);
}

BOOST_AUTO_TEST_CASE(a_compaction_call_goes_to_the_compaction_url_with_its_purpose) {
  llm::llm_endpoint ep;
  ep.url = "http://127.0.0.1:9/v1/chat/completions";
  ep.model = "gpt-5-codex";
  chat_request req;
  req.purpose = llm_purpose::compaction;
  req.messages.resize(1);
  req.messages[0].content = "hello";
  auto call = llm::build_http_call(ep, req, 1000ms);
  BOOST_TEST(call.url == "http://127.0.0.1:9/v1/responses/compact");
  BOOST_TEST((std::find(call.headers.begin(), call.headers.end(),
                        "X-Mneme-Purpose: compaction") != call.headers.end()));
  auto doc = json::parse(call.body);
  BOOST_TEST(doc["model"] == "gpt-5-codex");  // the endpoint's model when the request has none
  BOOST_TEST(doc.contains("input"));
  BOOST_TEST(!doc.contains("messages"));
}

struct answer_case {
  std::string name;
  std::string body;
  llm_error_kind kind;
  std::string content;
};
std::ostream& operator<<(std::ostream& os, const answer_case& c) { return os << c.name; }

const std::vector<answer_case> answer_cases = {
  {"message_item_text",
   R"({"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Goal: fix ERR_42."}]},
                 {"type":"compaction","id":"c","encrypted_content":"opaque"}],
       "usage":{"input_tokens":900,"output_tokens":12}})",
   llm_error_kind::none, "Goal: fix ERR_42."},
  {"two_message_items_are_joined",
   R"({"output":[{"type":"message","role":"user","content":"kept request"},
                 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"summary"}]}]})",
   llm_error_kind::none, "kept request\n\nsummary"},
  {"only_an_opaque_item", R"({"output":[{"type":"compaction","encrypted_content":"opaque"}]})",
   llm_error_kind::empty_answer, ""},
  {"reasoning_only_text",
   R"({"output":[{"type":"message","role":"assistant","content":"<think>hmm</think>"}]})",
   llm_error_kind::empty_answer, ""},
  {"no_output", R"({"id":"resp-1"})", llm_error_kind::malformed, ""},
  {"not_json", "<html>bad gateway</html>", llm_error_kind::malformed, ""},
};

BOOST_DATA_TEST_CASE(a_compaction_answer_is_read_into_text_or_a_failure_kind,
                     data::make(answer_cases), c) {
  auto parsed = llm::parse_compaction_answer(c.body);
  BOOST_TEST(parsed.kind == c.kind);
  BOOST_TEST(parsed.answer.content == c.content);
  if (c.name == "message_item_text") {
    BOOST_TEST(parsed.answer.prompt_tokens == 900);
    BOOST_TEST(parsed.answer.completion_tokens == 12);
  }
}

BOOST_AUTO_TEST_CASE(the_fakes_compaction_answer_reads_as_its_summary) {
  fakellm::compaction_result r;
  r.id = "resp-fake-1";
  r.model = "m";
  r.summary = "Goal: ship it.";
  r.input_tokens = 100;
  r.output_tokens = 5;
  auto parsed = llm::parse_compaction_answer(fakellm::compaction_body(r));
  BOOST_TEST_REQUIRE(parsed.kind == llm_error_kind::none);
  BOOST_TEST(parsed.answer.content == r.summary);
  BOOST_TEST(parsed.answer.prompt_tokens == 100);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // external_modes_test
