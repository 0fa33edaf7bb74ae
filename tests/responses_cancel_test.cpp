// In-process tests of POST /v1/responses/{id}/cancel (issue 43 item 3,
// apps/common/api/doors/openai_responses/responses_lookup.cpp) and of the doors'
// `door`-labelled counters in /metrics (item 6): a stream stalled upstream is stopped
// and ends with its begun items done `incomplete` and response.incomplete (the object
// `cancelled`), stored so (cancelled again: the same object); a finished response is a
// 400, an unknown id a 404; each door's requests count under
// mneme_door_requests_total{door=...}, one family beside the old per-door names.
#include <boost/test/unit_test.hpp>

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/api/http_api.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/sse_events.hpp"

BOOST_AUTO_TEST_SUITE(responses_cancel_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct cancel_fixture : test::http_api_fixture {
  // The events of a stream read so far.
  struct stream_reader {
    std::mutex mu;
    std::string text;
    std::string snapshot() {
      std::lock_guard lock{mu};
      return text;
    }
  };

  static std::vector<json> events_of(const std::string& text) {
    return test::sse_data_events(text);
  }

  // POSTs a streamed request on its own connection, appending what arrives to `into`.
  void stream_apart(const json& body, stream_reader& into) {
    httplib::Client own("127.0.0.1", port);
    own.set_read_timeout(30, 0); // a stream nothing stops ends here, without its last event
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/responses";
    req.headers = {{"Content-Type", "application/json"}, {"session-id", "rx-cancel"}};
    req.body = body.dump();
    req.content_receiver = [&into](const char* data, size_t n, uint64_t, uint64_t) {
      std::lock_guard lock{into.mu};
      into.text.append(data, n);
      return true;
    };
    own.send(req);
  }


};

} // namespace

BOOST_FIXTURE_TEST_SUITE(responses_cancel, cancel_fixture)

BOOST_AUTO_TEST_CASE(a_stalled_stream_is_cancelled_and_ends_cancelled) {
  // Only the cancel ends the stalled call (no timeout of the client's comes first).
  rc.chat.endpoint.idle_timeout = std::chrono::seconds(600);
  rc.chat.endpoint.total_timeout = std::chrono::seconds(900);
  serve();
  auto done = post("/v1/responses", json{{"input", "a finished one"}});
  BOOST_REQUIRE_MESSAGE(done.status == 200, done.text);
  // Half the answer's events, then 10 minutes of silence: only the cancel ends the stream
  // before the client's 30 s read timeout.
  auto stall = rule(fakellm::fault_kind::trickle, fakellm::purpose_filter::chat);
  stall.silence_ms = 600000;
  faults({stall});
  stream_reader reader;
  std::thread client([&] {
    stream_apart({{"input", "a long story, please"}, {"stream", true}}, reader);
  });
  std::string id;
  BOOST_REQUIRE_MESSAGE(wait_until([&] {
                          auto events = events_of(reader.snapshot());
                          for (const auto& e : events)
                            if (e["type"] == "response.output_text.delta" && id.empty())
                              id = events.front()["response"]["id"].get<std::string>();
                          return !id.empty();
                        }),
                        "the stream never began");
  auto cancel = post("/v1/responses/" + id + "/cancel", std::string{});
  BOOST_TEST(cancel.status == 200);
  BOOST_TEST(cancel.body["status"] == "cancelled");
  BOOST_TEST(cancel.body["id"] == id);
  client.join();
  auto events = events_of(reader.snapshot());
  BOOST_REQUIRE(!events.empty());
  // OpenAI's terminal event of a response that stopped short, the object cancelled
  BOOST_TEST(events.back()["type"] == "response.incomplete");
  BOOST_TEST(events.back()["response"]["status"] == "cancelled");
  // every item the stream added is done, incomplete, as streamed: what the cancel
  // answered, the last event carries and GET answers
  std::map<int64_t, json> began, ended;
  std::string deltas;
  for (const auto& e : events) {
    if (e["type"] == "response.output_item.added")
      began[e["output_index"].get<int64_t>()] = e["item"];
    if (e["type"] == "response.output_item.done")
      ended[e["output_index"].get<int64_t>()] = e["item"];
    if (e["type"] == "response.output_text.delta")
      deltas += e["delta"].get<std::string>();
  }
  BOOST_REQUIRE(!began.empty());
  BOOST_TEST(began.size() == ended.size());
  auto done_items = json::array();
  for (const auto& [index, item] : ended) {
    BOOST_TEST(began.count(index) == 1u);
    BOOST_TEST(item["status"] == "incomplete");
    done_items.push_back(item);
  }
  BOOST_TEST(done_items[0]["type"] == "message");
  BOOST_TEST(!deltas.empty());
  BOOST_TEST(done_items[0]["content"][0]["text"] == deltas);
  BOOST_TEST(events.back()["response"]["output"] == done_items);
  BOOST_TEST(cancel.body["output"] == done_items);
  llm.clear_faults();
  BOOST_TEST(metric("mneme_responses_cancelled_total") == 1);
  auto stored = get("/v1/responses/" + id);
  BOOST_TEST(stored.status == 200);
  BOOST_TEST(stored.body["status"] == "cancelled");
  BOOST_TEST(stored.body["output"] == done_items);
  auto again = post("/v1/responses/" + id + "/cancel", std::string{});
  BOOST_TEST(again.status == 200);
  BOOST_TEST(again.body["status"] == "cancelled");
  // The session goes on: the cancelled question has no answer, the next one is answered.
  auto next = post("/v1/responses", json{{"input", "something short"}, {"previous_response_id", id}});
  BOOST_TEST(next.status == 200);
  auto finished = post("/v1/responses/" + done.body["id"].get<std::string>() + "/cancel",
                       std::string{});
  BOOST_TEST(finished.status == 400);
  BOOST_TEST(finished.body["error"]["type"] == "invalid_request_error");
  auto unknown = post("/v1/responses/resp_unknown/cancel", std::string{});
  BOOST_TEST(unknown.status == 404);
}

BOOST_AUTO_TEST_CASE(every_door_counts_under_one_family_labelled_by_door) {
  serve();
  json chat = {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  BOOST_TEST(post("/v1/chat/completions", chat).status == 200);
  BOOST_TEST(post("/v1/responses", json{{"input", "hi"}, {"store", false}}).status == 200);
  json anthropic = {{"model", "x"}, {"max_tokens", 16},
                    {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  BOOST_TEST(post("/v1/messages", anthropic).status == 200);
  BOOST_TEST(metric("mneme_door_requests_total{door=\"chat\",style=\"stateless\"}") == 1);
  BOOST_TEST(metric("mneme_door_requests_total{door=\"responses\",style=\"stateless\"}") == 1);
  BOOST_TEST(metric("mneme_door_requests_total{door=\"anthropic\",style=\"stateless\"}") == 1);
  BOOST_TEST(metric("mneme_openai_requests_total{style=\"stateless\"}") == 1); // the old name
  auto text = get("/metrics").text;
  size_t types = 0;
  for (size_t at = 0; (at = text.find("# TYPE mneme_door_requests_total ", at)) != std::string::npos;
       ++at)
    ++types;
  BOOST_TEST(types == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // responses_cancel_test
