// One embeddings call as data (actors/llm/embedding_wire.hpp): the URL, the request body
// and headers, the strict reading of the answer (count, indexes, dimensions, finite
// numbers) into unit vectors in input order, and the classification of failures.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "actors/llm/embedding_wire.hpp"
#include "messages/errc.hpp"
#include "messages/llm_errc.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(embedding_wire_test)

using namespace mneme;
using namespace mneme::llm;
using json = nlohmann::json;

namespace {

embedding_endpoint endpoint(bool send_dims = true) {
  embedding_endpoint e;
  e.url = embeddings_url("http://127.0.0.1:9/v1");
  e.api_key = "sk-secret-key";
  e.model = "text-embedding-3-small";
  e.dimensions = 3;
  e.send_dimensions = send_dims;
  e.idle_timeout = std::chrono::seconds{30};
  return e;
}

json answer(const std::vector<std::pair<int, std::vector<double>>>& items) {
  auto data = json::array();
  for (const auto& [i, v] : items)
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
  return {{"object", "list"}, {"data", data}, {"model", "m"}, {"usage", {{"prompt_tokens", 2}}}};
}

std::string why(const caf::expected<std::vector<std::vector<float>>>& r) {
  return r ? std::string{} : render_error(r.error());
}

http_outcome ok_outcome(std::string body) {
  http_outcome out;
  out.status = 200;
  out.body = std::move(body);
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_url_appends_v1_embeddings_once) {
  BOOST_TEST(embeddings_url("http://h:1") == "http://h:1/v1/embeddings");
  BOOST_TEST(embeddings_url("http://h:1/") == "http://h:1/v1/embeddings");
  BOOST_TEST(embeddings_url("https://api.example.com/v1") == "https://api.example.com/v1/embeddings");
  BOOST_TEST(embeddings_url("http://h/v1/") == "http://h/v1/embeddings");
}

BOOST_AUTO_TEST_CASE(the_request_carries_model_inputs_dimensions_and_float_encoding) {
  auto call = build_embedding_call(endpoint(), {"数据库卡住了", "rollout failed"},
                                   std::chrono::seconds{10});
  BOOST_TEST(call.url == "http://127.0.0.1:9/v1/embeddings");
  auto body = json::parse(call.body);
  BOOST_TEST(body["model"] == "text-embedding-3-small");
  BOOST_TEST(body["input"] == json({"数据库卡住了", "rollout failed"}));
  BOOST_TEST(body["dimensions"] == 3);
  BOOST_TEST(body["encoding_format"] == "float");
  auto has = [&](const std::string& h) {
    return std::find(call.headers.begin(), call.headers.end(), h) != call.headers.end();
  };
  BOOST_TEST(has("Authorization: Bearer sk-secret-key"));
  BOOST_TEST(has("Content-Type: application/json"));
  BOOST_TEST(has("X-Mneme-Purpose: embedding"));
  BOOST_TEST(call.total_timeout.count() == 10000);
  BOOST_TEST(call.idle_timeout.count() == 10000); // capped by the total
  auto no_dims = json::parse(build_embedding_call(endpoint(false), {"x"},
                                                  std::chrono::seconds{1}).body);
  BOOST_TEST(!no_dims.contains("dimensions"));
  auto keyless = endpoint();
  keyless.api_key.clear();
  auto plain = build_embedding_call(keyless, {"x"}, std::chrono::seconds{1});
  for (const auto& h : plain.headers)
    BOOST_TEST(h.find("Authorization") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(invalid_utf8_in_a_text_is_replaced_not_thrown) {
  auto body = embedding_request_json(endpoint(), {std::string{"ok \xff\xfe end"}});
  BOOST_TEST(json::parse(body, nullptr, false).is_discarded() == false);
}

BOOST_AUTO_TEST_CASE(vectors_come_back_in_input_order_at_unit_length) {
  auto r = parse_embedding_answer(answer({{1, {0, 3, 4}}, {0, {2, 0, 0}}}).dump(), 2, 3);
  BOOST_TEST_REQUIRE(static_cast<bool>(r), why(r));
  BOOST_TEST(((*r)[0] == std::vector<float>{1, 0, 0}));
  BOOST_TEST(std::abs((*r)[1][1] - 0.6f) < 1e-6f);
  BOOST_TEST(std::abs((*r)[1][2] - 0.8f) < 1e-6f);
}

BOOST_AUTO_TEST_CASE(bad_answers_are_malformed_naming_what_was_wrong) {
  struct bad_case { std::string body; std::string names; };
  const std::vector<bad_case> cases = {
    {"not json", "not a JSON object"},
    {R"({"object":"list"})", "no \"data\" array"},
    {answer({{0, {1, 0, 0}}}).dump(), "1 vectors for 2 inputs"},
    {answer({{0, {1, 0, 0}}, {0, {0, 1, 0}}}).dump(), "index 0 comes twice"},
    {answer({{0, {1, 0, 0}}, {2, {0, 1, 0}}}).dump(), "index 2 is outside 0..1"},
    {answer({{0, {1, 0, 0}}, {1, {0, 1}}}).dump(), "2 numbers, not the 3 dimensions"},
    {answer({{0, {1, 0, 0}}, {1, {0, 0, 0}}}).dump(), "all zero"},
    {R"({"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":[1,0,0]}]})",
     "no \"embedding\" array"},
    {R"({"data":[{"index":0,"embedding":[1,"x",0]},{"index":1,"embedding":[1,0,0]}]})",
     "other than a number"},
    {R"({"data":[{"index":0,"embedding":[1,1e39,0]},{"index":1,"embedding":[1,0,0]}]})",
     "non-finite"},
    {R"({"data":[{"embedding":[1,0,0]},{"index":1,"embedding":[1,0,0]}]})",
     "no integer \"index\""},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.body) {
      auto r = read_embedding_outcome(ok_outcome(c.body), 2, 3, "sk-secret-key");
      BOOST_TEST_REQUIRE(!r);
      BOOST_TEST(r.error() == errc::llm_malformed);
      BOOST_TEST(render_error(r.error()).find(c.names) != std::string::npos, render_error(r.error()));
    }
  }
}

BOOST_AUTO_TEST_CASE(failures_are_classified_as_for_chat_and_never_show_the_key) {
  http_outcome limited;
  limited.status = 429;
  limited.body = R"({"error":{"message":"Rate limit reached for key sk-secret-key"}})";
  limited.retry_after = "7";
  auto r = read_embedding_outcome(limited, 1, 3, "sk-secret-key");
  BOOST_TEST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::llm_rate_limited);
  BOOST_TEST(render_error(r.error()).find("sk-secret-key") == std::string::npos);
  BOOST_TEST((upstream_retry_after_of(r.error()) == std::optional<int64_t>{7}));

  http_outcome down;
  down.status = 503;
  down.body = "unavailable";
  BOOST_TEST(read_embedding_outcome(down, 1, 3, "k").error() == errc::llm_server_error);

  http_outcome auth;
  auth.status = 401;
  BOOST_TEST(read_embedding_outcome(auth, 1, 3, "k").error() == errc::llm_auth);

  http_outcome refused;
  refused.transport = llm_error_kind::refused;
  refused.transport_detail = "connection refused";
  BOOST_TEST(read_embedding_outcome(refused, 1, 3, "k").error() == errc::llm_refused);

  auto embedded = ok_outcome(R"({"error":{"code":500,"message":"boom"}})");
  BOOST_TEST(read_embedding_outcome(embedded, 1, 3, "k").error() == errc::llm_server_error);
}

BOOST_AUTO_TEST_SUITE_END()
