// A streamed answer cut by the daemon's shutdown ends with an error event, never
// silently (docs/api.md "Shutdown"): a streamed turn whose model stalls mid-stream has
// sent its first events when the daemon shuts down; fail_pending() (the end of the
// drain window) cuts the stream with `event: error` {"error":{"code":"shutting_down"}},
// then `data: [DONE]` and the end of the chunked answer. In process: the runtime and the
// API of tests/http_api_fixture.hpp, the client a raw socket.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>

#include "apps/common/api/http_server.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/raw_http_client.hpp"

BOOST_AUTO_TEST_SUITE(stream_shutdown_test)

using namespace mneme;
using namespace std::chrono_literals;

namespace {

struct stalled_model_fixture : test::http_api_fixture {
  stalled_model_fixture() {
    // The model's stall outlasts the test: only the shutdown can end the stream.
    rc.chat.endpoint.idle_timeout = 600s;
    rc.chat.endpoint.total_timeout = 900s;
  }
  void stall_every_chat_stream() {
    auto r = rule(fakellm::fault_kind::trickle, fakellm::purpose_filter::chat);
    r.silence_ms = 600000;
    faults({r});
  }
};

std::string streamed_turn(const std::string& key) {
  std::string body = R"({"content":"tell me a long story","stream":true})";
  return "POST /v1/sessions/" + key + "/turns HTTP/1.1\r\nHost: x\r\n"
         "Content-Type: application/json\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(a_stream_cut_by_shutdown_ends_with_an_error_event_and_done,
                        stalled_model_fixture) {
  serve();
  stall_every_chat_stream();
  testing::raw_client client{port};
  BOOST_REQUIRE(client.connected());
  BOOST_REQUIRE(client.send(streamed_turn("cut")));
  auto head = client.read_head(60000ms);
  BOOST_REQUIRE_MESSAGE(head, "no head: " << testing::to_string(client.last_end()));
  BOOST_TEST(head->status == 200);
  BOOST_TEST(head->header("Content-Type") == "text/event-stream");
  BOOST_REQUIRE_MESSAGE(client.read_until("event: delta", 60000ms),
                        "no delta before the stall: " << client.pending());

  server->begin_shutdown();
  BOOST_TEST(server->fail_pending() == 0u); // the stream is cut, not answered 503

  BOOST_REQUIRE_MESSAGE(client.read_until("\r\n0\r\n\r\n", 60000ms),
                        "the stream did not end: " << client.pending());
  const auto& bytes = client.pending();
  auto error_at = bytes.find("event: error\ndata: {\"error\":{\"code\":\"shutting_down\"");
  auto done_at = bytes.find("data: [DONE]\n\n");
  BOOST_TEST(error_at != std::string::npos, bytes);
  BOOST_TEST(done_at != std::string::npos, bytes);
  BOOST_TEST(error_at < done_at);
  BOOST_TEST(bytes.find("event: reply") == std::string::npos); // the turn never finished
}

BOOST_AUTO_TEST_SUITE_END()
