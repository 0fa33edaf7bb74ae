// In-process tests of the Conversations API of the Responses door
// (apps/common/api/doors/openai_responses/conversations_door.hpp, issue 43 items 3-4)
// through the daemon's HTTP server against the fake LLM: a conversation made with items
// and metadata and continued by POST /v1/responses on its session, its items listed in
// pages, added, fetched and deleted (a rolled-back row, kept), the conversation deleted
// (unknown from then on, its rows kept), GET /v1/responses/{id}/input_items, and the
// routes' counters in /metrics.
#include <boost/test/unit_test.hpp>

#include <string>
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

  // The value of the sample `line_prefix` (name and labels) in GET /metrics.
  int64_t metric(const std::string& line_prefix) {
    auto text = get("/metrics").text;
    auto at = text.find("\n" + line_prefix + " ");
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, "no metric " + line_prefix);
    return std::stoll(text.substr(at + line_prefix.size() + 2));
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
  BOOST_TEST(post("/v1/conversations/" + id, json{{"metadata", {{"k", "w"}}}}).status == 400);
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
