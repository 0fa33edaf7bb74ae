// In-process tests of the Responses door's compaction (issue 43 item 5,
// apps/common/api/doors/openai_responses/responses_compact.cpp): context_management's
// compact_threshold compacts a session its own threshold would not, POST
// /v1/responses/compact answers the window with mneme's readable summary and the range
// it replaced, that window resent as input matches the stored rows (nothing rolled
// back, nothing stored twice), and a compaction item of rows the session does not hold
// is refused with nothing stored.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(responses_compact_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct compact_fixture : test::http_api_fixture {
  struct reply {
    int status = 0;
    json body;
    std::string text;
    httplib::Headers headers;
    std::string header(const std::string& name) const {
      auto i = headers.find(name);
      return i == headers.end() ? std::string{} : i->second;
    }
  };

  reply post_on(const std::string& path, const std::string& key, const json& body) {
    httplib::Headers h;
    if (!key.empty())
      h.emplace("session-id", key);
    auto r = client->Post(path.c_str(), h, body.dump(), "application/json");
    BOOST_REQUIRE_MESSAGE(r, "no HTTP answer: " + httplib::to_string(r.error()));
    reply a;
    a.status = r->status;
    a.text = r->body;
    a.headers = r->headers;
    if (r->get_header_value("Content-Type") == "application/json")
      a.body = json::parse(r->body);
    return a;
  }

  static json user(const std::string& text) {
    return {{"type", "message"}, {"role", "user"}, {"content", text}};
  }

  // `turns` user messages on `key` as a full-history client; the transcript it holds.
  json converse(const std::string& key, int turns, json input = json::array()) {
    for (int t = 0; t < turns; ++t) {
      input.push_back(user("question " + std::to_string(t) + " " + std::string(300, 'q')));
      auto a = post_on("/v1/responses", key, {{"input", input}});
      BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
      for (const auto& item : a.body["output"])
        input.push_back(item);
    }
    return input;
  }

  std::vector<message> rows_of(const std::string& key) {
    return all_rows(snapshot(key).record.id);
  }
  static size_t count(const std::vector<message>& rows, row_state s, bool summaries) {
    size_t n = 0;
    for (const auto& m : rows)
      n += m.state() == s && m.is_summary == summaries ? 1 : 0;
    return n;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(responses_compact, compact_fixture)

BOOST_AUTO_TEST_CASE(context_management_compacts_at_the_requests_threshold) {
  rc.compression.protect_first_n = 1;
  rc.compression.protect_last_n = 2;
  serve();
  auto input = converse("rc-cm", 6);
  BOOST_TEST(count(rows_of("rc-cm"), row_state::archived, false) == 0u);
  input.push_back(user("one more"));
  auto a = post_on("/v1/responses", "rc-cm",
                   {{"input", input},
                    {"context_management",
                     json::array({{{"type", "compaction"}, {"compact_threshold", 200}}})}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(std::stoll(a.header("X-Mneme-Compactions")) >= 1);
  BOOST_TEST(count(rows_of("rc-cm"), row_state::archived, false) > 0u);
  auto bad = post_on("/v1/responses", "rc-cm",
                     {{"input", "x"},
                      {"context_management",
                       json::array({{{"type", "compaction"}, {"compact_threshold", 0}}})}});
  BOOST_TEST(bad.status == 400);
  BOOST_TEST(bad.body["error"]["message"].get<std::string>().find(
               "context_management[0].compact_threshold")
             != std::string::npos);
  auto other = post_on("/v1/responses", "rc-cm",
                       {{"input", "x"}, {"context_management", json::array({{{"type", "clear"}}})}});
  BOOST_TEST(other.status == 400);
}

BOOST_AUTO_TEST_CASE(compact_answers_the_window_and_the_window_resent_matches) {
  rc.compression.protect_first_n = 1;
  rc.compression.protect_last_n = 2;
  serve();
  converse("rc-win", 5);
  auto c = post_on("/v1/responses/compact", "rc-win", {{"model", "mneme"}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  BOOST_TEST(c.body["object"] == "response.compaction");
  BOOST_TEST(c.body["id"].get<std::string>().rfind("resp_", 0) == 0u);
  BOOST_TEST(c.body["usage"]["input_tokens"].get<int64_t>() > 0);
  auto rows = rows_of("rc-win");
  const message* summary = nullptr;
  for (const auto& m : rows)
    if (m.is_summary && m.active)
      summary = &m;
  BOOST_REQUIRE(summary);
  json window = c.body["output"];
  size_t items = 0;
  for (const auto& item : window)
    if (item["type"] == "compaction") {
      ++items;
      BOOST_TEST(item["encrypted_content"] == summary->content); // readable: the row's text
      BOOST_TEST(item["created_by"] == "mneme");
      BOOST_TEST(item["replaced_rows"]["first_id"] == summary->replaced_first_id);
      BOOST_TEST(item["replaced_rows"]["last_id"] == summary->replaced_last_id);
      BOOST_TEST(item["id"] == "cmp_" + std::to_string(summary->replaced_first_id) + "_"
                                 + std::to_string(summary->replaced_last_id));
    }
  BOOST_TEST(items == 1u);
  BOOST_TEST(c.body["usage"]["output_tokens"] == summary->token_estimate);
  auto before = rows.size();
  // The window resent with a new question: matched, nothing rolled back, the question
  // and its answer are the only new rows.
  window.push_back(user("after the compaction"));
  auto a = post_on("/v1/responses", "rc-win", {{"input", window}});
  BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  BOOST_TEST(a.header("X-Mneme-Rebased").empty());
  auto after = rows_of("rc-win");
  BOOST_TEST(after.size() == before + 2);
  BOOST_TEST(count(after, row_state::rolled_back, false) == 0u);
  // With only the typed fields (type, id, encrypted_content), as a typed client keeps it.
  for (auto& item : window)
    if (item["type"] == "compaction")
      item.erase("replaced_rows");
  for (const auto& item : a.body["output"])
    window.push_back(item);
  window.push_back(user("and again"));
  auto b = post_on("/v1/responses", "rc-win", {{"input", window}});
  BOOST_REQUIRE_MESSAGE(b.status == 200, b.text);
  BOOST_TEST(b.header("X-Mneme-Rebased").empty());
  BOOST_TEST(rows_of("rc-win").size() == before + 4);
}

BOOST_AUTO_TEST_CASE(compact_stores_the_input_of_a_chain_then_compacts_it) {
  rc.compression.protect_first_n = 1;
  rc.compression.protect_last_n = 2;
  serve();
  std::string prev;
  for (int t = 0; t < 5; ++t) {
    json body = {{"input", "chain question " + std::to_string(t) + std::string(300, 'c')}};
    if (!prev.empty())
      body["previous_response_id"] = prev;
    auto a = post_on("/v1/responses", "", body);
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    prev = a.body["id"].get<std::string>();
  }
  auto c = post_on("/v1/responses/compact", "",
                   {{"previous_response_id", prev}, {"input", "a note to keep"}});
  BOOST_REQUIRE_MESSAGE(c.status == 200, c.text);
  const auto& out = c.body["output"];
  BOOST_REQUIRE(!out.empty());
  BOOST_TEST(out[out.size() - 1]["content"][0]["text"] == "a note to keep");
  bool has_compaction = false;
  for (const auto& item : out)
    has_compaction = has_compaction || item["type"] == "compaction";
  BOOST_TEST(has_compaction);
  auto unknown = post_on("/v1/responses/compact", "", {{"previous_response_id", "resp_nope"}});
  BOOST_TEST(unknown.status == 400);
  BOOST_TEST(unknown.body["error"]["code"] == "previous_response_not_found");
}

BOOST_AUTO_TEST_CASE(compact_without_a_session_and_a_foreign_summary_are_refused) {
  serve();
  auto none = post_on("/v1/responses/compact", "", {{"input", "hello"}});
  BOOST_TEST(none.status == 400);
  BOOST_TEST(none.body["error"]["message"].get<std::string>().find("previous_response_id")
             != std::string::npos);
  auto input = converse("rc-foreign", 2);
  auto before = rows_of("rc-foreign").size();
  json forged = json::array({{{"type", "compaction"}, {"id", "cmp_900_950"},
                              {"encrypted_content", "made up"}}});
  for (const auto& item : input)
    forged.push_back(item);
  forged.push_back(user("go on"));
  auto a = post_on("/v1/responses", "rc-foreign", {{"input", forged}});
  BOOST_TEST(a.status == 400);
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find("summary of rows 900-950")
             != std::string::npos);
  BOOST_TEST(rows_of("rc-foreign").size() == before);
  json unnamed = json::array({{{"type", "compaction"}, {"encrypted_content", "x"}}, user("y")});
  auto b = post_on("/v1/responses", "rc-foreign", {{"input", unnamed}});
  BOOST_TEST(b.status == 400);
  BOOST_TEST(b.body["error"]["message"].get<std::string>().find("input[0]") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // responses_compact_test
