// Idempotent writes at the HTTP routes (issue 47 item 8; docs/api.md "Idempotency-Key"):
// a re-send of an append with the same Idempotency-Key answers the first answer (same
// id, session and status, plus Idempotent-Replayed: true) and stores no second row; the
// same key with another body is 422 idempotency_key_reused and stores nothing; a header
// that is not 1..255 printable ASCII is 400 naming the header; after
// gateway.idempotency_window_seconds the key names a new request; a key is per session
// key. A re-sent turn answers the first answer without a second model call; while the
// first runs it is 409 idempotency_in_flight with Retry-After; after a first attempt that
// stored its message but no answer it is 409 idempotency_unanswered. The runtime's clock
// is moved by hand past the window (no sleep).
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_idempotency_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct idempotency_fixture : test::http_api_fixture {
  explicit idempotency_fixture(bool serve_now = true) {
    use_manual_clock();
    rc.gateway.idempotency_window_seconds = 60;
    if (serve_now)
      serve();
  }

  struct keyed_answer {
    answer a;
    std::string replayed; // the Idempotent-Replayed header, "" when absent
    std::string retry_after;
  };
  keyed_answer post_keyed(const std::string& path, const json& body, const std::string& idem) {
    httplib::Headers h{{"Idempotency-Key", idem}};
    auto r = client->Post(path.c_str(), h, body.dump(), "application/json");
    keyed_answer out;
    out.a = read(r);
    out.replayed = r->get_header_value("Idempotent-Replayed");
    out.retry_after = r->get_header_value("Retry-After");
    return out;
  }
  keyed_answer append_keyed(const std::string& key, const std::string& text,
                            const std::string& idem) {
    return post_keyed("/v1/sessions/" + key + "/messages",
                      json{{"role", "user"}, {"content", text}}, idem);
  }
  // Every stored row of the key's session, any state.
  size_t rows_of(const std::string& key) {
    auto s = get("/v1/sessions/" + key);
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    return all_rows(s.body["session"]["id"].get<std::string>()).size();
  }
  void advance_seconds(int64_t s) { clock->fetch_add(s * 1000); }
  keyed_answer turn_keyed(const std::string& key, const std::string& text,
                          const std::string& idem) {
    return post_keyed("/v1/sessions/" + key + "/turns", json{{"content", text}}, idem);
  }
};

// The fake model answers no chat call; the chat client gives up after 1 s.
struct silent_model_fixture : idempotency_fixture {
  silent_model_fixture() : idempotency_fixture(false) {
    rc.chat.endpoint.idle_timeout = std::chrono::seconds(1);
    rc.chat.endpoint.total_timeout = std::chrono::seconds(2);
    serve();
    faults({rule(fakellm::fault_kind::silence, fakellm::purpose_filter::chat)});
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(http_idempotency, idempotency_fixture)

BOOST_AUTO_TEST_CASE(a_resent_append_answers_the_first_answer_and_stores_one_row) {
  auto first = append_keyed("k", "hello", "req-1");
  BOOST_TEST(first.a.status == 201, first.a.text);
  BOOST_TEST(first.replayed == "");
  auto rows = rows_of("k");
  auto again = append_keyed("k", "hello", "req-1");
  BOOST_TEST(again.a.status == 201, again.a.text);
  BOOST_TEST(again.replayed == "true");
  BOOST_TEST(again.a.body["id"] == first.a.body["id"]);
  BOOST_TEST(again.a.body["session_id"] == first.a.body["session_id"]);
  BOOST_TEST(rows_of("k") == rows);
  // A new key is a new request.
  auto other = append_keyed("k", "hello", "req-2");
  BOOST_TEST(other.a.status == 201, other.a.text);
  BOOST_TEST(other.replayed == "");
  BOOST_TEST(other.a.body["id"] != first.a.body["id"]);
  BOOST_TEST(rows_of("k") == rows + 1);
}

BOOST_AUTO_TEST_CASE(the_same_key_with_another_body_is_refused_and_stores_nothing) {
  auto first = append_keyed("k", "hello", "req-1");
  BOOST_TEST(first.a.status == 201, first.a.text);
  auto rows = rows_of("k");
  auto other = append_keyed("k", "goodbye", "req-1");
  BOOST_TEST(other.a.status == 422, other.a.text);
  BOOST_REQUIRE_MESSAGE(other.a.content_type == "application/json", other.a.text);
  BOOST_TEST(other.a.body["error"]["code"] == "idempotency_key_reused");
  auto text = other.a.body["error"]["message"].get<std::string>();
  BOOST_TEST(text.find("Idempotency-Key 'req-1'") != std::string::npos, text);
  BOOST_TEST(rows_of("k") == rows);
}

BOOST_AUTO_TEST_CASE(after_the_window_the_key_names_a_new_request) {
  auto first = append_keyed("k", "hello", "req-1");
  BOOST_TEST(first.a.status == 201, first.a.text);
  advance_seconds(30);
  auto within = append_keyed("k", "hello", "req-1");
  BOOST_TEST(within.replayed == "true");
  auto rows = rows_of("k");
  advance_seconds(31); // 61 s after the first row: outside the 60 s window
  auto after = append_keyed("k", "hello", "req-1");
  BOOST_TEST(after.a.status == 201, after.a.text);
  BOOST_TEST(after.replayed == "");
  BOOST_TEST(after.a.body["id"] != first.a.body["id"]);
  BOOST_TEST(rows_of("k") == rows + 1);
  // ...and that new row is what the key answers from now on.
  auto again = append_keyed("k", "hello", "req-1");
  BOOST_TEST(again.replayed == "true");
  BOOST_TEST(again.a.body["id"] == after.a.body["id"]);
}

BOOST_AUTO_TEST_CASE(a_key_belongs_to_its_session_key) {
  auto a = append_keyed("ka", "hello", "req-1");
  auto b = append_keyed("kb", "hello", "req-1");
  BOOST_TEST(a.a.status == 201, a.a.text);
  BOOST_TEST(b.a.status == 201, b.a.text);
  BOOST_TEST(b.replayed == "");
  BOOST_TEST(b.a.body["id"] != a.a.body["id"]);
}

BOOST_AUTO_TEST_CASE(an_unusable_header_is_refused_naming_it) {
  for (std::string bad : {std::string{}, std::string(256, 'x'), std::string{"tab\there"},
                          std::string{"caf\xc3\xa9"}}) {
    auto r = append_keyed("k", "hello", bad);
    BOOST_TEST(r.a.status == 400, r.a.text);
    BOOST_REQUIRE_MESSAGE(r.a.content_type == "application/json", r.a.text);
    auto text = r.a.body["error"]["message"].get<std::string>();
    BOOST_TEST(text.find("Idempotency-Key") != std::string::npos, text);
  }
  httplib::Headers twice{{"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}};
  auto r = read(client->Post("/v1/sessions/k/messages", twice,
                             json{{"role", "user"}, {"content", "x"}}.dump(), "application/json"));
  BOOST_TEST(r.status == 400, r.text);
  BOOST_TEST(r.text.find("more than once") != std::string::npos, r.text);
  // None of them stored a row: the key has no session.
  BOOST_TEST(get("/v1/sessions/k").status == 404);
  // 255 printable bytes are a key.
  auto longest = append_keyed("k", "hello", std::string(255, '~'));
  BOOST_TEST(longest.a.status == 201, longest.a.text);
}

BOOST_AUTO_TEST_CASE(a_resent_turn_answers_the_first_answer_without_a_second_model_call) {
  auto first = turn_keyed("t", "What is 6 times 7?", "turn-1");
  BOOST_TEST(first.a.status == 200, first.a.text);
  BOOST_TEST(first.replayed == "");
  auto calls = llm.stats().chat_requests;
  auto rows = rows_of("t");
  auto again = turn_keyed("t", "What is 6 times 7?", "turn-1");
  BOOST_TEST(again.a.status == 200, again.a.text);
  BOOST_TEST(again.replayed == "true");
  BOOST_TEST(again.a.body["answer"] == first.a.body["answer"]);
  BOOST_TEST(again.a.body["session_id"] == first.a.body["session_id"]);
  BOOST_TEST(again.a.body["finish_reason"] == first.a.body["finish_reason"]);
  BOOST_TEST(llm.stats().chat_requests == calls);
  BOOST_TEST(rows_of("t") == rows);
  // Another message under the same key: refused, nothing stored, no model call.
  auto other = turn_keyed("t", "What is 7 times 8?", "turn-1");
  BOOST_TEST(other.a.status == 422, other.a.text);
  BOOST_TEST(other.a.body["error"]["code"] == "idempotency_key_reused");
  BOOST_TEST(rows_of("t") == rows);
  BOOST_TEST(llm.stats().chat_requests == calls);
  // Without a key every turn is a new one.
  auto plain = post("/v1/sessions/t/turns", json{{"content", "What is 6 times 7?"}});
  BOOST_TEST(plain.status == 200, plain.text);
  BOOST_TEST(rows_of("t") == rows + 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_CASE(a_turn_resent_while_running_is_409_then_unanswered_after_a_failure,
                        silent_model_fixture) {
  // The first attempt, on its own connection: its model call is never answered.
  auto first = std::async(std::launch::async, [this] {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(60, 0);
    httplib::Headers h{{"Idempotency-Key", "turn-1"}};
    auto r = c.Post("/v1/sessions/t/turns", h, json{{"content", "hello"}}.dump(),
                    "application/json");
    return r ? r->status : 0;
  });
  // Once the model got the call, the first request runs in the gateway.
  for (int i = 0; i < 6000 && llm.stats().chat_requests == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_REQUIRE(llm.stats().chat_requests >= 1);
  auto running = turn_keyed("t", "hello", "turn-1");
  BOOST_TEST(running.a.status == 409, running.a.text);
  BOOST_TEST(running.a.body["error"]["code"] == "idempotency_in_flight");
  BOOST_TEST(running.retry_after == "1");
  // The first one fails (the model timed out): its user row stays, no answer follows.
  auto status = first.get();
  BOOST_TEST(status >= 500, status);
  auto rows = rows_of("t");
  auto calls = llm.stats().chat_requests;
  auto after = turn_keyed("t", "hello", "turn-1");
  BOOST_TEST(after.a.status == 409, after.a.text);
  BOOST_TEST(after.a.body["error"]["code"] == "idempotency_unanswered");
  BOOST_TEST(rows_of("t") == rows);
  BOOST_TEST(llm.stats().chat_requests == calls);
  // A new key asks again.
  faults({});
  auto fresh = turn_keyed("t", "hello", "turn-2");
  BOOST_TEST(fresh.a.status == 200, fresh.a.text);
}

BOOST_AUTO_TEST_SUITE_END()
