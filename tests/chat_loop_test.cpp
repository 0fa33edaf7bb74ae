// `mneme chat` (apps/common/cli/chat_loop.hpp) driven through a string terminal: in
// process (local_chat_channel on the runtime) and against the daemon's API
// (remote_chat_channel over streamed HTTP), the answer printed is the one stored, a
// channel command prints its answer, a refused turn prints its error and the chat goes
// on, /quit and an interrupt leave with exit 0; the compaction line on data.
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/cli/chat_loop.hpp"
#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/host/local_chat.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(chat_loop_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct chat_fixture : test::http_api_fixture {
  // Runs a chat over `channel` on `input`; returns what it printed.
  static std::string chat(cli::chat_channel& channel, const std::string& input,
                          std::function<bool()> interrupted = {}) {
    std::istringstream in{input};
    std::ostringstream out;
    BOOST_TEST(cli::run_chat(channel, cli::chat_terminal{in, out, false, std::move(interrupted)}) == 0);
    return out.str();
  }

  std::string last_answer(const std::string& key) {
    auto s = get("/v1/sessions/" + key + "?user=u");
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    auto rows = all_rows(s.body["session"]["id"].get<std::string>());
    for (auto it = rows.rbegin(); it != rows.rend(); ++it)
      if (it->role == msg_role::assistant)
        return it->content;
    return {};
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(chat_loop, chat_fixture)

BOOST_AUTO_TEST_CASE(in_process_the_printed_answer_is_the_stored_one) {
  serve();
  local_chat_channel channel{*sys, *rt, stored_key("u", "chat-local"), "u"};
  auto out = chat(channel, "hello there, what is the 数据库 plan?\n\n/quit\nnever sent\n");
  auto stored = last_answer("chat-local");
  BOOST_REQUIRE(!stored.empty());
  BOOST_TEST(out.find(stored) != std::string::npos, out);
  BOOST_TEST(out.find("never sent") == std::string::npos); // /quit left
}

BOOST_AUTO_TEST_CASE(against_the_daemon_answers_stream_and_channel_commands_print) {
  serve();
  cli::daemon_client client{"http://127.0.0.1:" + std::to_string(port), ""};
  cli::remote_chat_channel channel{client, "chat-remote", "u", {}};
  auto out = chat(channel, "we chose PostgreSQL for the 数据库 migration\n/search PostgreSQL\n");
  auto stored = last_answer("chat-remote");
  BOOST_REQUIRE(!stored.empty());
  BOOST_TEST(out.find(stored) != std::string::npos, out);
  // /search answers with the session's hits, which quote the message.
  BOOST_TEST(out.find("PostgreSQL", out.find(stored) + stored.size()) != std::string::npos, out);
}

BOOST_AUTO_TEST_CASE(a_refused_turn_prints_its_error_and_the_chat_goes_on) {
  serve();
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  set_scenario(std::move(s));
  auto tools = json::parse(R"([{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}])");
  auto r = post("/v1/sessions/chat-pending/turns", json{{"user", "u"}, {"content", "go"}, {"tools", tools}});
  BOOST_REQUIRE_MESSAGE(r.status == 200 && r.body["finish_reason"] == "tool_calls", r.text);
  cli::daemon_client client{"http://127.0.0.1:" + std::to_string(port), ""};
  cli::remote_chat_channel channel{client, "chat-pending", "u", {}};
  auto out = chat(channel, "first\nsecond\n");
  auto first = out.find("error: ");
  BOOST_REQUIRE(first != std::string::npos);
  BOOST_TEST(out.find("tool_results_pending") != std::string::npos, out);
  BOOST_TEST(out.find("error: ", first + 1) != std::string::npos, out); // both lines tried
}

BOOST_AUTO_TEST_CASE(an_interrupt_leaves_before_the_next_line) {
  serve();
  local_chat_channel channel{*sys, *rt, stored_key("u", "chat-int"), "u"};
  int asked = 0;
  auto out = chat(channel, "one\ntwo\n", [&] { return ++asked > 3; });
  BOOST_TEST(out.find("error") == std::string::npos, out);
  auto stored = last_answer("chat-int");
  BOOST_TEST(out.find(stored) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_compaction_line_names_each_compaction_of_a_reply) {
  auto reply = json::parse(R"({"compactions":[
    {"trigger":"t1_pre_call","committed":true,"tokens_before":48213,"tokens_after":9877},
    {"trigger":"t2_post_call","committed":false,"summary_failed":true},
    {"trigger":"t12_manual_session","committed":false,"nothing_to_compact":true}]})");
  BOOST_TEST(cli::compaction_line(reply)
             == "[compacted: t1_pre_call 48,213 -> 9,877 tokens; t2_post_call not compacted "
                "(summarizer failed); t12_manual_session nothing to compact]");
  BOOST_TEST(cli::compaction_line(json::parse(R"({"compactions":[]})")).empty());
  BOOST_TEST(cli::compaction_line(json::parse("[]")).empty());
}

BOOST_AUTO_TEST_SUITE_END() // chat_loop
BOOST_AUTO_TEST_SUITE_END() // chat_loop_test
