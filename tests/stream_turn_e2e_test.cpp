// End to end, streamed turns over HTTP (issue 29 item 4): the daemon's API in process
// against the fake LLM streaming its answers. A text turn relays its pieces, then the
// reply event and [DONE], and the pieces make the stored answer; a tool loop streams its
// call fragments and continues with a streamed text; a turn refused before any piece is
// a plain HTTP error; an upstream cut mid-stream ends in an error event and stores no
// answer; a client that leaves mid-stream does not cancel the turn: the answer is
// stored. Asserted on events and stored rows, never on timing.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/raw_http_client.hpp"

BOOST_AUTO_TEST_SUITE(stream_turn_e2e_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct sse_record {
  std::string event; // "" for the final data: [DONE]
  std::string data;
};

// The events of a text/event-stream body, in order.
std::vector<sse_record> events_of(const std::string& body) {
  std::vector<sse_record> out;
  sse_record cur;
  size_t at = 0;
  while (at < body.size()) {
    auto eol = body.find('\n', at);
    if (eol == std::string::npos)
      eol = body.size();
    auto line = body.substr(at, eol - at);
    at = eol + 1;
    if (line.empty()) {
      if (!cur.data.empty())
        out.push_back(cur);
      cur = {};
    } else if (line.rfind("event: ", 0) == 0) {
      cur.event = line.substr(7);
    } else if (line.rfind("data: ", 0) == 0) {
      cur.data = line.substr(6);
    }
  }
  return out;
}

json lookup_tools() {
  return json::parse(R"([{"type":"function","function":{"name":"lookup",
    "parameters":{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}}}])");
}

struct stream_fixture : test::http_api_fixture {
  answer stream_turn(const std::string& key, json body) {
    body["user"] = "u";
    body["stream"] = true;
    return post("/v1/sessions/" + key + "/turns", body);
  }

  // Checks the frame of a streamed answer (deltas, then reply or error, then [DONE]) and
  // returns the JSON of its last named event.
  static json final_event(const std::vector<sse_record>& events, const std::string& name) {
    BOOST_REQUIRE(events.size() >= 2u);
    BOOST_TEST(events.back().event.empty());
    BOOST_TEST(events.back().data == "[DONE]");
    for (size_t i = 0; i + 2 < events.size(); ++i)
      BOOST_TEST(events[i].event == "delta", "event " << i << " is " << events[i].event);
    const auto& last = events[events.size() - 2];
    BOOST_REQUIRE(last.event == name);
    return json::parse(last.data);
  }

  static std::string delta_text(const std::vector<sse_record>& events) {
    std::string out;
    for (const auto& e : events)
      if (e.event == "delta") {
        auto d = json::parse(e.data);
        if (d.contains("content"))
          out += d["content"].get<std::string>();
      }
    return out;
  }

  std::vector<message> rows_of(const std::string& key) {
    auto s = get("/v1/sessions/" + key + "?user=u");
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    return all_rows(s.body["session"]["id"].get<std::string>());
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(stream_turn_e2e, stream_fixture)

BOOST_AUTO_TEST_CASE(a_streamed_text_turn_relays_pieces_that_make_the_stored_answer) {
  serve();
  auto r = stream_turn("st-1", {{"content", "explain the 数据库 migration plan step by step"}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.content_type == "text/event-stream");
  auto events = events_of(r.text);
  auto reply = final_event(events, "reply");
  BOOST_TEST(events.size() > 4u); // several pieces, the reply, [DONE]
  BOOST_TEST(delta_text(events) == reply["answer"].get<std::string>());
  BOOST_TEST(reply["finish_reason"] == "stop");
  BOOST_TEST(reply["live_messages"].get<int64_t>() >= 2);
  auto rows = rows_of("st-1");
  BOOST_REQUIRE(!rows.empty());
  BOOST_TEST(rows.back().role == msg_role::assistant);
  BOOST_TEST(rows.back().content == reply["answer"].get<std::string>());
}

BOOST_AUTO_TEST_CASE(a_streamed_tool_loop_relays_call_fragments_then_a_streamed_text) {
  serve();
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  set_scenario(std::move(s));
  auto r = stream_turn("st-tools", {{"content", "look up the plan"}, {"tools", lookup_tools()}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  auto events = events_of(r.text);
  auto reply = final_event(events, "reply");
  BOOST_REQUIRE(reply["finish_reason"] == "tool_calls");
  json assembled = json::array();
  for (const auto& e : events) {
    if (e.event != "delta")
      continue;
    auto d = json::parse(e.data);
    BOOST_REQUIRE(d.contains("tool_call"));
    auto idx = d["tool_call"]["index"].get<size_t>();
    while (assembled.size() <= idx)
      assembled.push_back({{"id", ""}, {"name", ""}, {"arguments", ""}});
    for (const char* f : {"id", "name", "arguments"})
      if (d["tool_call"].contains(f))
        assembled[idx][f] = assembled[idx][f].get<std::string>() + d["tool_call"][f].get<std::string>();
  }
  BOOST_TEST(assembled == reply["tool_calls"]);
  auto results = json::array();
  for (const auto& c : reply["tool_calls"])
    results.push_back({{"tool_call_id", c["id"]}, {"content", "found: the plan has 3 steps"}});
  auto r2 = stream_turn("st-tools", {{"tool_results", results}});
  BOOST_REQUIRE_MESSAGE(r2.status == 200, r2.text);
  auto events2 = events_of(r2.text);
  auto reply2 = final_event(events2, "reply");
  BOOST_TEST(reply2["finish_reason"] == "stop");
  BOOST_TEST(!delta_text(events2).empty());
  BOOST_TEST(delta_text(events2) == reply2["answer"].get<std::string>());
}

BOOST_AUTO_TEST_CASE(a_streamed_turn_refused_before_any_piece_is_a_plain_http_error) {
  serve();
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  set_scenario(std::move(s));
  auto r = stream_turn("st-refused", {{"content", "go"}, {"tools", lookup_tools()}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  auto again = stream_turn("st-refused", {{"content", "and now?"}});
  BOOST_TEST(again.status == 409);
  BOOST_TEST(again.content_type == "application/json");
  BOOST_TEST(again.body["error"]["code"] == "tool_results_pending");
}

BOOST_AUTO_TEST_CASE(an_upstream_cut_mid_stream_ends_in_an_error_event_and_stores_no_answer) {
  serve();
  faults({rule(fakellm::fault_kind::truncated_body, fakellm::purpose_filter::chat)});
  auto r = stream_turn("st-cut", {{"content", "explain the plan in many words please"}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  auto events = events_of(r.text);
  auto err = final_event(events, "error");
  BOOST_TEST(err["error"]["code"] == "llm_network");
  BOOST_TEST(!delta_text(events).empty()); // the first half reached the client
  auto rows = rows_of("st-cut");
  BOOST_REQUIRE(!rows.empty());
  BOOST_TEST(rows.back().role == msg_role::user); // the partial answer is not stored
  for (const auto& m : rows)
    BOOST_TEST(m.role != msg_role::assistant);
}

BOOST_AUTO_TEST_CASE(a_client_leaving_mid_stream_does_not_cancel_the_turn) {
  serve();
  auto stall = rule(fakellm::fault_kind::trickle, fakellm::purpose_filter::chat, 1);
  stall.silence_ms = 1000; // below the chat pool's idle timeout: the answer completes
  faults({stall});
  {
    testing::raw_client c{port};
    BOOST_REQUIRE(c.connected());
    std::string body = R"({"user":"u","stream":true,"content":"a long answer please"})";
    BOOST_REQUIRE(c.send("POST /v1/sessions/st-gone/turns HTTP/1.1\r\nHost: x\r\n"
                         "Content-Type: application/json\r\nContent-Length: "
                         + std::to_string(body.size()) + "\r\n\r\n" + body));
    auto head = c.read_head(std::chrono::milliseconds{20000});
    BOOST_REQUIRE(head);
    BOOST_TEST(head->status == 200);
    BOOST_TEST(head->header("Content-Type") == "text/event-stream");
  } // the client closes while the upstream stalls
  std::vector<message> rows;
  for (int i = 0; i < 400; ++i) { // until the answer is stored (bounded, not timed)
    rows = rows_of("st-gone");
    if (!rows.empty() && rows.back().role == msg_role::assistant)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  BOOST_REQUIRE(!rows.empty());
  BOOST_TEST(rows.back().role == msg_role::assistant);
  BOOST_TEST(!rows.back().content.empty());
}

BOOST_AUTO_TEST_CASE(stream_must_be_a_boolean) {
  serve();
  auto r = post("/v1/sessions/st-bad/turns", json{{"user", "u"}, {"content", "x"}, {"stream", "yes"}});
  BOOST_TEST(r.status == 400);
  BOOST_TEST(r.body["error"]["message"].get<std::string>().find("stream") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // stream_turn_e2e
BOOST_AUTO_TEST_SUITE_END() // stream_turn_e2e_test
