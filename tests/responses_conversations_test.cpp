// In-process tests of the Conversations API of the Responses door
// (apps/common/api/doors/openai_responses/conversations_door.hpp, issue 43 items 3-4)
// through the daemon's HTTP server against the fake LLM: a conversation made with items
// and metadata and continued by POST /v1/responses on its session, its items listed in
// pages, added, fetched and deleted (a rolled-back row, kept), the conversation deleted
// (unknown from then on, its rows kept), GET /v1/responses/{id}/input_items, and the
// routes' counters in /metrics.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(responses_conversations_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct conversations_fixture : test::http_api_fixture {
  static json user_item(const std::string& text) {
    return {{"type", "message"}, {"role", "user"}, {"content", text}};
  }
  static json assistant_item(const std::string& text) {
    return {{"type", "message"}, {"role", "assistant"}, {"content", text}};
  }

  std::string create(const json& body) {
    auto a = post("/v1/conversations", body);
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return a.body["id"].get<std::string>();
  }

  // The texts of a list's items (message text, function_call name, output).
  static std::vector<std::string> texts(const json& list) {
    std::vector<std::string> out;
    for (const auto& item : list["data"]) {
      if (item["type"] == "message")
        out.push_back(item["content"][0]["text"].get<std::string>());
      else if (item["type"] == "function_call")
        out.push_back("call " + item["name"].get<std::string>());
      else
        out.push_back("output " + item["output"].get<std::string>());
    }
    return out;
  }

  std::vector<std::string> item_texts(const std::string& id) {
    auto a = get("/v1/conversations/" + id + "/items?order=asc&limit=100");
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
    return texts(a.body);
  }

  // The `error.code` of an answer's body ("" when it has none).
  static std::string code_in(const json& body) {
    if (!body.is_object() || !body.contains("error") || !body["error"].is_object())
      return "";
    return body["error"].value("code", "");
  }

  static std::string op_sample(const char* family, const char* op) {
    return std::string{family} + "{door=\"responses\",op=\"" + op + "\"}";
  }

  int64_t rolled_back_rows(const std::string& key) {
    int64_t n = 0;
    for (const auto& m : all_rows(snapshot(key).record.id))
      n += m.state() == row_state::rolled_back ? 1 : 0;
    return n;
  }
};

using texts_t = std::vector<std::string>;

} // namespace

BOOST_FIXTURE_TEST_SUITE(conversations_door, conversations_fixture)

BOOST_AUTO_TEST_CASE(a_created_conversation_is_the_session_of_responses_naming_it) {
  serve();
  auto made = post("/v1/conversations", json{{"items", json::array({user_item("hi there")})},
                                              {"metadata", {{"topic", "rivers"}}}});
  BOOST_REQUIRE_MESSAGE(made.status == 200, made.text);
  auto id = made.body["id"].get<std::string>();
  BOOST_TEST(id.rfind("conv_", 0) == 0u);
  BOOST_TEST(id.size() == 5u + 32u); // 128 bits from the kernel
  BOOST_TEST(made.body["object"] == "conversation");
  BOOST_TEST(made.body["metadata"]["topic"] == "rivers");
  auto again = get("/v1/conversations/" + id);
  BOOST_REQUIRE_MESSAGE(again.status == 200, again.text);
  BOOST_TEST(again.body == made.body);

  auto r = post("/v1/responses", json{{"conversation", id}, {"input", "tell me more"}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.body["conversation"]["id"] == id);
  auto answer = r.body["output"][0]["content"][0]["text"].get<std::string>();
  BOOST_TEST(item_texts(id) == (texts_t{"hi there", "tell me more", answer}));
  // the response's input: everything since the conversation's last answer (none)
  auto in = get("/v1/responses/" + r.body["id"].get<std::string>() + "/input_items?order=asc");
  BOOST_REQUIRE_MESSAGE(in.status == 200, in.text);
  BOOST_TEST(texts(in.body) == (texts_t{"hi there", "tell me more"}));
  auto r2 = post("/v1/responses", json{{"conversation", {{"id", id}}}, {"input", "and then?"}});
  BOOST_REQUIRE_MESSAGE(r2.status == 200, r2.text);
  auto in2 = get("/v1/responses/" + r2.body["id"].get<std::string>() + "/input_items");
  BOOST_TEST(texts(in2.body) == texts_t{"and then?"});
  BOOST_TEST(item_texts(id).size() == 5u);
  // a conversation's record is no response
  BOOST_TEST(get("/v1/responses/" + id).status == 404);
  BOOST_TEST(post("/v1/responses", json{{"previous_response_id", id}, {"input", "x"}}).status
             == 400);
}

BOOST_AUTO_TEST_CASE(items_are_listed_in_pages_added_and_fetched_by_id) {
  serve();
  auto id = create(json::object());
  BOOST_TEST(get("/v1/conversations/" + id + "/items").body["data"].empty());
  auto added = post("/v1/conversations/" + id + "/items",
                    json{{"items", {user_item("one"), assistant_item("two"), user_item("three"),
                                    assistant_item("four"), user_item("five")}}});
  BOOST_REQUIRE_MESSAGE(added.status == 200, added.text);
  BOOST_TEST(added.body["object"] == "list");
  BOOST_TEST(texts(added.body) == (texts_t{"one", "two", "three", "four", "five"}));
  BOOST_TEST(added.body["data"][1]["content"][0]["type"] == "output_text");
  BOOST_TEST(added.body["data"][0]["content"][0]["type"] == "input_text");

  auto page = get("/v1/conversations/" + id + "/items?limit=2"); // desc by default
  BOOST_REQUIRE_MESSAGE(page.status == 200, page.text);
  BOOST_TEST(texts(page.body) == (texts_t{"five", "four"}));
  BOOST_TEST(page.body["has_more"] == true);
  BOOST_TEST(page.body["first_id"] == page.body["data"][0]["id"]);
  auto next = get("/v1/conversations/" + id + "/items?limit=2&after="
                  + page.body["last_id"].get<std::string>());
  BOOST_TEST(texts(next.body) == (texts_t{"three", "two"}));
  auto last = get("/v1/conversations/" + id + "/items?limit=2&after="
                  + next.body["last_id"].get<std::string>() + "&include=message.input_image.image_url");
  BOOST_TEST(texts(last.body) == texts_t{"one"});
  BOOST_TEST(last.body["has_more"] == false);

  auto item_id = added.body["data"][2]["id"].get<std::string>();
  auto one = get("/v1/conversations/" + id + "/items/" + item_id);
  BOOST_REQUIRE_MESSAGE(one.status == 200, one.text);
  BOOST_TEST(one.body == added.body["data"][2]);

  BOOST_TEST(get("/v1/conversations/" + id + "/items?limit=0").status == 400);
  BOOST_TEST(get("/v1/conversations/" + id + "/items?order=sideways").status == 400);
  BOOST_TEST(get("/v1/conversations/" + id + "/items?after=msg_999999").status == 400);
  BOOST_TEST(get("/v1/conversations/" + id + "/items/msg_999999").status == 404);
  BOOST_TEST(get("/v1/conversations/" + id + "/items/nonsense").status == 404);
  BOOST_TEST(get("/v1/conversations/conv_unknown").status == 404);
  BOOST_TEST(post("/v1/conversations/" + id + "/items", json{{"items", json::array()}}).status
             == 400);
  BOOST_TEST(post("/v1/conversations", json{{"title", "x"}}).status == 400);
  // items the session refuses: the refusal, and no conversation handed out
  auto orphan = post("/v1/conversations",
                     json{{"items", {{{"type", "function_call_output"}, {"call_id", "nope"},
                                      {"output", "x"}}}}});
  BOOST_TEST(orphan.status == 400, orphan.text);
  BOOST_TEST(!orphan.body.contains("id"));
}

BOOST_AUTO_TEST_CASE(a_deleted_item_is_a_rolled_back_row_and_the_later_items_stay) {
  serve();
  auto id = create({{"items", {user_item("u1"), assistant_item("a1"), user_item("u2"),
                               assistant_item("a2"), user_item("u3")}}});
  auto list = get("/v1/conversations/" + id + "/items?order=asc").body;
  auto u2 = list["data"][2]["id"].get<std::string>();
  auto rows_before = all_rows(snapshot(id).record.id).size();
  auto del = send("DELETE", "/v1/conversations/" + id + "/items/" + u2, "");
  BOOST_REQUIRE_MESSAGE(del.status == 200, del.text);
  BOOST_TEST(del.body["object"] == "conversation");
  BOOST_TEST(item_texts(id) == (texts_t{"u1", "a1", "a2", "u3"}));
  // nothing erased: u2 and the originals of a2, u3 are rolled-back rows; a2, u3 again
  BOOST_TEST(rolled_back_rows(id) == 3);
  BOOST_TEST(all_rows(snapshot(id).record.id).size() == rows_before + 2);
  BOOST_TEST(get("/v1/conversations/" + id + "/items/" + u2).status == 404);
  BOOST_TEST(send("DELETE", "/v1/conversations/" + id + "/items/" + u2, "").status == 404);
  // the conversation continues from what is left
  auto r = post("/v1/responses", json{{"conversation", id}, {"input", "u4"}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(item_texts(id).size() == 6u);

  // a call whose output follows it cannot go before its output
  auto tools = create({{"items", {user_item("weather?"),
                                  {{"type", "function_call"}, {"call_id", "c1"},
                                   {"name", "get_weather"}, {"arguments", "{}"}},
                                  {{"type", "function_call_output"}, {"call_id", "c1"},
                                   {"output", "sunny"}}}}});
  auto items = get("/v1/conversations/" + tools + "/items?order=asc").body;
  BOOST_TEST(texts(items) == (texts_t{"weather?", "call get_weather", "output sunny"}));
  auto call_id = items["data"][1]["id"].get<std::string>();
  auto refused = send("DELETE", "/v1/conversations/" + tools + "/items/" + call_id, "");
  BOOST_TEST(refused.status == 400);
  BOOST_TEST(refused.body["error"]["message"].get<std::string>().find("c1") != std::string::npos);
  auto out_id = items["data"][2]["id"].get<std::string>();
  BOOST_TEST(send("DELETE", "/v1/conversations/" + tools + "/items/" + out_id, "").status == 200);
  BOOST_TEST(send("DELETE", "/v1/conversations/" + tools + "/items/" + call_id, "").status == 200);
  BOOST_TEST(item_texts(tools) == texts_t{"weather?"});
}

BOOST_AUTO_TEST_CASE(a_deleted_conversation_is_unknown_and_its_rows_stay) {
  serve();
  auto id = create({{"items", {user_item("keep me")}}, {"metadata", {{"k", "v"}}}});
  auto same = post("/v1/conversations/" + id, json{{"metadata", {{"k", "v"}}}});
  BOOST_TEST(same.status == 200);
  auto sid = snapshot(id).record.id;
  auto del = send("DELETE", "/v1/conversations/" + id, "");
  BOOST_REQUIRE_MESSAGE(del.status == 200, del.text);
  BOOST_TEST(del.body["deleted"] == true);
  BOOST_TEST(del.body["object"] == "conversation.deleted");
  BOOST_TEST(get("/v1/conversations/" + id).status == 404);
  BOOST_TEST(get("/v1/conversations/" + id + "/items").status == 404);
  BOOST_TEST(send("DELETE", "/v1/conversations/" + id, "").status == 404);
  auto r = post("/v1/responses", json{{"conversation", id}, {"input", "still there?"}});
  BOOST_TEST(r.status == 404);
  BOOST_TEST(r.body["error"]["code"] == "not_found");
  auto rows = all_rows(sid);
  BOOST_REQUIRE(!rows.empty());
  BOOST_TEST(rows.back().content == "keep me"); // nothing erased, nothing added

  // any session key is a conversation; it has no record to delete
  auto plain = post("/v1/responses", json{{"input", "hello"}, {"prompt_cache_key", "plain-k"}});
  BOOST_REQUIRE_MESSAGE(plain.status == 200, plain.text);
  auto seen = get("/v1/conversations/plain-k");
  BOOST_REQUIRE_MESSAGE(seen.status == 200, seen.text);
  BOOST_TEST(seen.body["metadata"].empty());
  BOOST_TEST(item_texts("plain-k").size() == 2u);
  BOOST_TEST(send("DELETE", "/v1/conversations/plain-k", "").status == 400);
  // a deleted conversation takes no metadata
  BOOST_TEST(post("/v1/conversations/" + id, json{{"metadata", {{"k", "w"}}}}).status == 404);
}

BOOST_AUTO_TEST_CASE(an_update_replaces_the_metadata_and_a_bad_one_is_refused_naming_the_field) {
  serve();
  auto id = create({{"metadata", {{"a", "1"}, {"b", "2"}}}});
  auto made = get("/v1/conversations/" + id).body;
  auto up = post("/v1/conversations/" + id, json{{"metadata", {{"c", "3"}}}});
  BOOST_REQUIRE_MESSAGE(up.status == 200, up.text);
  BOOST_TEST(up.body["metadata"] == (json{{"c", "3"}})); // replaced, not merged
  BOOST_TEST(up.body["id"] == id);
  BOOST_TEST(up.body["created_at"] == made["created_at"]);
  BOOST_TEST(get("/v1/conversations/" + id).body == up.body);
  BOOST_TEST(post("/v1/conversations/" + id, json{{"metadata", json::object()}}).body["metadata"]
             == json::object());
  BOOST_TEST(post("/v1/conversations/" + id, json{{"metadata", {{"c", "3"}}}}).status == 200);

  json many = json::object();
  for (int i = 0; i < 17; ++i)
    many["k" + std::to_string(i)] = "v";
  json sixteen = many;
  sixteen.erase("k16");
  const std::vector<std::pair<json, std::string>> refused{
    {json{{"metadata", many}}, "'metadata'"},
    {json{{"metadata", {{std::string(65, 'k'), "v"}}}}, "'metadata." + std::string(65, 'k') + "'"},
    {json{{"metadata", {{"long", std::string(513, 'v')}}}}, "'metadata.long'"},
    {json{{"metadata", {{"n", 5}}}}, "'metadata.n'"},
    {json{{"metadata", "text"}}, "'metadata'"},
    {json{{"title", "x"}}, "'title'"},
    {json::object(), "'metadata'"},
  };
  for (const auto& [body, field] : refused) {
    auto no = post("/v1/conversations/" + id, body);
    BOOST_TEST(no.status == 400, body.dump());
    BOOST_TEST(no.body["error"]["type"] == "invalid_request_error");
    BOOST_TEST(no.body["error"]["message"].get<std::string>().find(field) != std::string::npos,
               no.text);
  }
  BOOST_TEST(get("/v1/conversations/" + id).body["metadata"] == (json{{"c", "3"}})); // kept
  // the limits themselves are accepted
  auto full = post("/v1/conversations/" + id, json{{"metadata", sixteen}});
  BOOST_TEST(full.status == 200, full.text);
  auto edge = post("/v1/conversations/" + id,
                   json{{"metadata", {{std::string(64, 'k'), std::string(512, 'v')}}}});
  BOOST_TEST(edge.status == 200, edge.text);
  BOOST_TEST(get("/v1/conversations/" + id).body == edge.body);
  // a plain session key has no record for metadata
  auto plain = post("/v1/responses", json{{"input", "hello"}, {"prompt_cache_key", "plain-m"}});
  BOOST_REQUIRE_MESSAGE(plain.status == 200, plain.text);
  BOOST_TEST(post("/v1/conversations/plain-m", json{{"metadata", json::object()}}).status == 200);
  auto keyed = post("/v1/conversations/plain-m", json{{"metadata", {{"k", "v"}}}});
  BOOST_TEST(keyed.status == 400);
  BOOST_TEST(keyed.body["error"]["message"].get<std::string>().find("'metadata'")
             != std::string::npos);
  BOOST_TEST(post("/v1/conversations/conv_unknown", json{{"metadata", json::object()}}).status
             == 404);
}

BOOST_AUTO_TEST_CASE(the_input_items_of_a_chained_response_are_its_own_input) {
  serve();
  auto r1 = post("/v1/responses", json{{"instructions", "Be brief."}, {"input", "first"}});
  BOOST_REQUIRE_MESSAGE(r1.status == 200, r1.text);
  auto id1 = r1.body["id"].get<std::string>();
  auto r2 = post("/v1/responses", json{{"previous_response_id", id1}, {"input", "second"}});
  BOOST_REQUIRE_MESSAGE(r2.status == 200, r2.text);
  auto id2 = r2.body["id"].get<std::string>();
  auto in1 = get("/v1/responses/" + id1 + "/input_items?order=asc");
  BOOST_REQUIRE_MESSAGE(in1.status == 200, in1.text);
  BOOST_TEST(texts(in1.body) == (texts_t{"Be brief.", "first"}));
  BOOST_TEST(in1.body["data"][0]["role"] == "system");
  auto in2 = get("/v1/responses/" + id2 + "/input_items");
  BOOST_TEST(texts(in2.body) == texts_t{"second"});
  BOOST_TEST(get("/v1/responses/resp_unknown/input_items").status == 404);
  BOOST_TEST(send("DELETE", "/v1/responses/" + id2, "").status == 200);
  BOOST_TEST(get("/v1/responses/" + id2 + "/input_items").status == 404);
}

BOOST_AUTO_TEST_CASE(an_item_delete_or_add_beside_a_response_on_its_way_is_refused_at_once_changing_nothing) {
  // The held response waits on the fake until the fake stops (no timeout ends it first).
  rc.chat.endpoint.idle_timeout = std::chrono::seconds(600);
  rc.chat.endpoint.total_timeout = std::chrono::seconds(900);
  serve();
  auto id = create({{"items", {user_item("u1"), assistant_item("a1")}}});
  auto a1 = get("/v1/conversations/" + id + "/items?order=asc").body["data"][1]["id"]
              .get<std::string>();
  faults({rule(fakellm::fault_kind::silence, fakellm::purpose_filter::chat)});
  auto upstream_calls = llm.stats().chat_requests;
  apart_answer held;
  std::thread held_client([&] {
    held = send_apart("POST", "/v1/responses", json{{"conversation", id}, {"input", "held"}});
  });
  // The held call fails when the fake stops; its request then ends (also when a check
  // below ends the test early).
  auto release_held = [&] {
    if (!held_client.joinable())
      return;
    llm.stop();
    held_client.join();
  };
  struct at_exit {
    std::function<void()> f;
    ~at_exit() { f(); }
  } releasing{release_held};
  BOOST_REQUIRE_MESSAGE(wait_until([&] { return llm.stats().chat_requests > upstream_calls; }),
                        "the held response never reached the model");
  auto rows_while_held = all_rows(snapshot(id).record.id);
  auto del = send_apart("DELETE", "/v1/conversations/" + id + "/items/" + a1);
  BOOST_TEST(del.status == 429, del.text);
  BOOST_TEST(code_in(del.body) == "session_busy");
  BOOST_TEST(del.text.find("\"rate_limit_error\"") != std::string::npos, del.text);
  auto retry_after = del.headers.find("Retry-After");
  BOOST_TEST((retry_after != del.headers.end() && retry_after->second == "1"));
  auto add = send_apart("POST", "/v1/conversations/" + id + "/items",
                        json{{"items", {user_item("between")}}});
  BOOST_TEST(add.status == 429, add.text);
  BOOST_TEST(code_in(add.body) == "session_busy");
  // nothing rolled back, nothing appended
  auto rows_after = all_rows(snapshot(id).record.id);
  BOOST_TEST(rows_after.size() == rows_while_held.size());
  for (size_t i = 0; i < rows_after.size() && i < rows_while_held.size(); ++i)
    BOOST_TEST((rows_after[i].state() == rows_while_held[i].state()));
  // reading is not held
  BOOST_TEST(get("/v1/conversations/" + id + "/items/" + a1).status == 200);
  release_held(); // the held response ends and frees the key
  BOOST_TEST(held.status >= 500);
  auto after = send("DELETE", "/v1/conversations/" + id + "/items/" + a1, "");
  BOOST_TEST(after.status == 200, after.text);
  BOOST_TEST(rolled_back_rows(id) >= 1);
}

BOOST_AUTO_TEST_CASE(item_deletes_sent_with_responses_never_lose_an_answered_question) {
  serve();
  auto slow = rule(fakellm::fault_kind::latency, fakellm::purpose_filter::chat);
  slow.latency_ms = 20; // the window in which the two requests meet
  faults({slow});
  auto id = create({{"items", {user_item("start"), assistant_item("started")}}});
  int answered = 0, deleted = 0, refused = 0;
  const int tries = 25;
  for (int t = 0; t < tries; ++t) {
    // the newest item, an assistant's when there is one; when the deletes have won every
    // race so far (a slow build refuses the responses) the conversation is given a pair again
    auto items = get("/v1/conversations/" + id + "/items?limit=100").body["data"];
    if (items.empty()) {
      auto refill = post("/v1/conversations/" + id + "/items",
                         json{{"items", {user_item("again"), assistant_item("again")}}});
      BOOST_REQUIRE_MESSAGE(refill.status == 200, refill.text);
      items = get("/v1/conversations/" + id + "/items?limit=100").body["data"];
    }
    BOOST_REQUIRE(!items.empty());
    std::string target = items[0]["id"].get<std::string>();
    for (const auto& item : items)
      if (item.value("role", "") == "assistant") {
        target = item["id"].get<std::string>();
        break;
      }
    auto question = "question " + std::to_string(t);
    apart_answer r, d;
    std::thread tr([&] {
      r = send_apart("POST", "/v1/responses", json{{"conversation", id}, {"input", question}});
    });
    std::thread td([&] { d = send_apart("DELETE", "/v1/conversations/" + id + "/items/" + target); });
    tr.join();
    td.join();
    for (const auto* x : {&r, &d}) {
      if (x->status == 200)
        continue;
      BOOST_TEST(x->status == 429, "try " << t << ": " << x->status << " " << x->text);
      BOOST_TEST(code_in(x->body) == "session_busy");
      ++refused;
    }
    BOOST_TEST((r.status == 200 || d.status == 200), "try " << t << ": neither was served");
    auto live = get("/v1/conversations/" + id + "/items?order=asc&limit=100").body["data"];
    std::vector<std::string> seen;
    for (const auto& item : live)
      if (item["type"] == "message")
        seen.push_back(item["content"][0]["text"].get<std::string>());
    if (r.status == 200) { // its question, then its answer, both live
      ++answered;
      auto answer = r.body["output"][0]["content"][0]["text"].get<std::string>();
      auto at = std::find(seen.begin(), seen.end(), question);
      BOOST_TEST((at != seen.end()), "try " << t << ": the answered question is gone");
      if (at != seen.end())
        BOOST_TEST((at + 1 != seen.end() && *(at + 1) == answer),
                   "try " << t << ": the answer does not follow its question");
    }
    if (d.status == 200) {
      ++deleted;
      for (const auto& item : live)
        BOOST_TEST(item["id"] != target, "try " << t << ": the deleted item is live");
    }
    for (size_t i = 0; i < seen.size(); ++i) // no row appended twice
      for (size_t j = i + 1; j < seen.size(); ++j)
        if (seen[i].rfind("question ", 0) == 0)
          BOOST_TEST(seen[i] != seen[j], "try " << t << ": '" << seen[i] << "' twice");
  }
  BOOST_TEST_MESSAGE("response + delete pairs: " << tries << " tries, " << answered
                                                 << " answered, " << deleted << " deleted, "
                                                 << refused << " refused session_busy");
}

BOOST_AUTO_TEST_CASE(a_conversation_continued_in_a_child_session_lists_its_earlier_items_once) {
  rc.compression.in_place = false; // a compaction continues the key in a child session
  rc.compression.threshold_tokens = 5000;
  serve();
  auto id = create(json::object());
  std::string first_session;
  texts_t sent;
  for (int batch = 0; batch < 3; ++batch) { // 60 items of ~100 tokens: past the threshold
    json items = json::array();
    for (int i = 0; i < 20; ++i) {
      auto n = batch * 20 + i;
      auto text = std::to_string(n) + " " + std::string(400, 'a');
      items.push_back(n % 2 == 0 ? user_item(text) : assistant_item(text));
      sent.push_back(text);
    }
    auto added = post("/v1/conversations/" + id + "/items", json{{"items", items}});
    BOOST_REQUIRE_MESSAGE(added.status == 200, added.text);
    if (batch == 0)
      first_session = snapshot(id).record.id;
  }
  auto r = post("/v1/responses", json{{"conversation", id}, {"input", "what did we decide?"}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  auto now = snapshot(id).record;
  BOOST_REQUIRE_MESSAGE(now.id != first_session, "the key was never continued in a child");
  BOOST_REQUIRE(!now.parent_id.empty());
  // every item once, in order: the parent's, then the child's own (not its copies)
  auto want = sent;
  want.push_back("what did we decide?");
  want.push_back(r.body["output"][0]["content"][0]["text"].get<std::string>());
  BOOST_TEST(item_texts(id) == want, boost::test_tools::per_element());
  // an earlier session's item is fetched, but not deleted
  auto first = get("/v1/conversations/" + id + "/items?order=asc&limit=1").body["data"][0];
  auto first_id = first["id"].get<std::string>();
  BOOST_TEST(get("/v1/conversations/" + id + "/items/" + first_id).status == 200);
  auto no = send("DELETE", "/v1/conversations/" + id + "/items/" + first_id, "");
  BOOST_TEST(no.status == 400);
  BOOST_TEST(no.body["error"]["message"].get<std::string>().find("earlier session")
             != std::string::npos);
  BOOST_TEST(item_texts(id).size() == want.size());
}

BOOST_AUTO_TEST_CASE(every_route_counts_its_requests_and_errors_labelled_by_door_and_op) {
  serve();
  const char* requests = "mneme_door_conversation_requests_total";
  const char* errors = "mneme_door_conversation_errors_total";
  for (const char* op : {"create", "get", "update", "delete", "items_list", "items_add",
                         "item_get", "item_delete", "input_items"}) {
    BOOST_TEST(metric(op_sample(requests, op)) == 0, op); // rendered from the start
    BOOST_TEST(metric(op_sample(errors, op)) == 0, op);
  }
  auto id = create({{"items", {user_item("u1"), assistant_item("a1")}}});
  BOOST_TEST(post("/v1/conversations", json{{"title", "x"}}).status == 400);
  BOOST_TEST(get("/v1/conversations/" + id).status == 200);
  BOOST_TEST(get("/v1/conversations/conv_unknown").status == 404);
  BOOST_TEST(get("/v1/conversations/conv_unknown").status == 404);
  BOOST_TEST(post("/v1/conversations/" + id, json{{"metadata", json::object()}}).status == 200);
  auto list = get("/v1/conversations/" + id + "/items?order=asc");
  BOOST_REQUIRE_MESSAGE(list.status == 200, list.text);
  auto u1 = list.body["data"][0]["id"].get<std::string>();
  BOOST_TEST(post("/v1/conversations/" + id + "/items", json{{"items", {user_item("u2")}}})
               .status
             == 200);
  BOOST_TEST(get("/v1/conversations/" + id + "/items/" + u1).status == 200);
  BOOST_TEST(get("/v1/conversations/" + id + "/items/msg_999999").status == 404);
  BOOST_TEST(send("DELETE", "/v1/conversations/" + id + "/items/" + u1, "").status == 200);
  BOOST_TEST(get("/v1/responses/resp_unknown/input_items").status == 404);
  BOOST_TEST(send("DELETE", "/v1/conversations/" + id, "").status == 200);

  BOOST_TEST(metric(op_sample(requests, "create")) == 2);
  BOOST_TEST(metric(op_sample(errors, "create")) == 1);
  BOOST_TEST(metric(op_sample(requests, "get")) == 3);
  BOOST_TEST(metric(op_sample(errors, "get")) == 2);
  BOOST_TEST(metric(op_sample(requests, "update")) == 1);
  BOOST_TEST(metric(op_sample(errors, "update")) == 0);
  BOOST_TEST(metric(op_sample(requests, "items_list")) == 1);
  BOOST_TEST(metric(op_sample(requests, "items_add")) == 1);
  BOOST_TEST(metric(op_sample(requests, "item_get")) == 2);
  BOOST_TEST(metric(op_sample(errors, "item_get")) == 1);
  BOOST_TEST(metric(op_sample(requests, "item_delete")) == 1);
  BOOST_TEST(metric(op_sample(errors, "item_delete")) == 0);
  BOOST_TEST(metric(op_sample(requests, "input_items")) == 1);
  BOOST_TEST(metric(op_sample(errors, "input_items")) == 1);
  BOOST_TEST(metric(op_sample(requests, "delete")) == 1);
  // the Responses door's own counters do not count these routes
  BOOST_TEST(metric("mneme_door_errors_total{door=\"responses\"}") == 0);
}

BOOST_AUTO_TEST_SUITE_END()
BOOST_AUTO_TEST_SUITE_END()
