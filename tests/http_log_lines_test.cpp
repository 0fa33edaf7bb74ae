// Log lines cannot be forged through the HTTP API: a request whose path, key, header or
// body holds control characters (%0A, %0D, raw CR/LF/ESC bytes) or bytes that are not
// UTF-8 (raw 0xFF) is sent to every route, read routes first (GET /v1/sessions/{key},
// /export, /checkpoints, /rows, /compactions), with the runtime's and the API's loggers
// writing into memory at trace level. Every log event must stay one line of well-formed
// UTF-8 with no control character: the text of a request or of a store error reaches a
// log only through log_quoted (policies/client_text.hpp).
#include <boost/test/unit_test.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>

#include "apps/common/api/http_server.hpp"
#include "policies/client_text.hpp"
#include "policies/utf8.hpp"
#include "tests/http_api_fixture.hpp"
#include "tests/raw_http_client.hpp"

BOOST_AUTO_TEST_SUITE(http_log_lines_test)

using namespace mneme;
using namespace std::chrono_literals;

namespace {

// Keeps every formatted log event, one string per event.
class memory_sink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    events_.emplace_back(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> events_;
};

// "" when `event` is one line (its only newline the last byte) of well-formed UTF-8 with
// no other control character; else what is wrong with it.
std::string line_problem(const std::string& event) {
  if (event.empty() || event.back() != '\n')
    return "does not end in a newline";
  std::string_view body(event.data(), event.size() - 1);
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto at = pos;
    auto c = next_code_point(body, pos);
    if (c == replacement_character && pos - at == 1)
      return "byte " + std::to_string(at) + " is not UTF-8";
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029)
      return "control character or line separator " + std::to_string(static_cast<int>(c))
             + " at byte " + std::to_string(at);
  }
  return {};
}

struct log_fixture : test::http_api_fixture {
  std::shared_ptr<memory_sink> sink = std::make_shared<memory_sink>();
  std::shared_ptr<spdlog::logger> log = std::make_shared<spdlog::logger>("mneme", sink);

  log_fixture() {
    log->set_level(spdlog::level::trace);
    rc.log = log;
  }
  void serve_logged() {
    api::http_api_options opt;
    opt.log = log;
    serve(opt);
  }
  // One request of raw bytes; its status (0 when there was no answer).
  int raw(const std::string& request) {
    testing::raw_client c(port);
    BOOST_REQUIRE(c.connected());
    BOOST_REQUIRE(c.send(request));
    auto r = c.read_response(60000ms);
    return r ? r->status : 0;
  }
};

const std::string forged = "%0A[2026-01-01 00:00:00.000] [mneme] [critical] FORGED%0D";
const std::string raw_forged = "\n[critical] FORGED\r\x1b[31m";

std::string raw_get(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
}

std::string raw_post(const std::string& target, const std::string& body,
                     const std::string& extra_headers = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
         "Content-Type: application/json\r\n" + extra_headers
         + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(control_characters_and_invalid_utf8_never_split_or_forge_a_log_line,
                        log_fixture) {
  serve_logged();
  // A session to read, so the read routes find something next to the hostile keys.
  BOOST_REQUIRE_EQUAL(post("/v1/sessions/known/messages",
                           std::string{R"({"role":"user","content":"hello"})"}).status,
                      201);

  const std::vector<std::string> hostile_keys{
    "x" + forged, "x%FF%FEy", "%1B%5B31mred", "known%00", "k%E2%80%A8%C0%AF%C2%85"};
  const std::vector<std::string> read_suffixes{"",         "/export",      "/checkpoints",
                                               "/rows",    "/compactions", "/context"};
  int answered = 0;
  for (const auto& key : hostile_keys) {
    for (const auto& suffix : read_suffixes) {
      auto a = get("/v1/sessions/" + key + suffix);
      BOOST_TEST(a.status >= 400, key << suffix << " -> " << a.status);
      ++answered;
    }
    for (const char* write : {"/messages", "/turns", "/compact", "/checkpoints", "/rollback",
                              "/facts", "/usage", "/model_error", "/context"}) {
      auto a = post("/v1/sessions/" + key + write, std::string{R"({"content":"x"})"});
      BOOST_TEST(a.status >= 400, key << write << " -> " << a.status);
      ++answered;
    }
    get("/v1/users/" + key + "/facts");
    send("PUT", "/v1/users/alice/facts/" + key, R"({"value":"v"})");
    send("DELETE", "/v1/users/alice/facts/" + key, "");
    get("/v1/responses/" + key);
    send("DELETE", "/v1/responses/" + key, "");
    get("/v1/search?q=" + key + "&user=" + key);
    get("/v1/sessions?user=" + key);
    get("/v1/no/such/route/" + key);
  }
  // Raw bytes on the wire: the request target, headers the doors read, JSON bodies.
  for (const std::string& suffix : {"", "/export", "/checkpoints", "/rows"})
    raw(raw_get("/v1/sessions/x\xff\xfe" + suffix));
  raw(raw_get("/v1/sessions/x\x1b[31m/export"));
  raw(raw_post("/v1/chat/completions",
               R"({"model":"fake-chat","messages":[{"role":"user","content":"hi"}]})",
               "X-Mneme-Session: s\xff\x1b[0m\r\n"));
  raw(raw_post("/v1/messages",
               R"({"model":"fake-chat","max_tokens":5,)"
               R"("messages":[{"role":"user","content":"hi"}]})",
               "X-Mneme-Session: a\xfe" "b\r\n"));
  raw(raw_post("/v1/responses", R"({"model":"fake-chat","input":"hi","previous_response_id":")"
                                  + std::string{"r\\u000a[critical] FORGED\xff"} + R"("})"));
  raw(raw_post("/v1/sessions/known/turns", std::string{R"({"content":"x","user":"\u001b\xff"})"}));
  raw(raw_post("/v1/sessions/known/messages", std::string{"{\"role\":\"us\xff\\u000aer\"}"}));
  raw(raw_post("/v1/sessions/known/messages", std::string{"not json \xff\n[critical] X"}));
  BOOST_TEST(answered == 75);

  auto events = sink->events();
  BOOST_TEST_MESSAGE(events.size() << " log events");
  BOOST_TEST(events.size() > 0u); // the API logs at debug: the lines were written
  int broken = 0;
  for (const auto& e : events) {
    auto problem = line_problem(e);
    if (!problem.empty()) {
      ++broken;
      BOOST_ERROR("log event " << problem << ": " << log_quoted(e, 400));
    }
  }
  BOOST_TEST(broken == 0);
}

BOOST_AUTO_TEST_CASE(the_line_check_sees_what_it_must_refuse) {
  BOOST_TEST(line_problem("a=1 b=\"x\"\n").empty());
  BOOST_TEST(line_problem("caf\xc3\xa9 \xe4\xb8\xad\n").empty());
  BOOST_TEST(!line_problem("a\nb\n").empty());
  BOOST_TEST(!line_problem("a\rb\n").empty());
  BOOST_TEST(!line_problem("a\x1b[31m\n").empty());
  BOOST_TEST(!line_problem("a\xff\n").empty());
  BOOST_TEST(!line_problem("a\xe2\x80\xa8" "b\n").empty()); // U+2028
  BOOST_TEST(!line_problem("a\xc2\x85\n").empty());          // NEL
  BOOST_TEST(!line_problem("a").empty());
}

BOOST_AUTO_TEST_SUITE_END()
