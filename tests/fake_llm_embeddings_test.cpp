// The fake LLM's embeddings endpoint over loopback: the OpenAI answer shape, the
// requested dimensions, determinism, the paraphrase mode set by the scenario (near
// paraphrases across languages, far unrelated text), faults with purpose `embedding`
// (and only there), bad requests.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/fakellm/scenario.hpp"
#include "fake_llm_test_client.hpp"
#include "messages/errc.hpp"
#include "policies/fake_embedding.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_embeddings_test)

using namespace mneme;
using namespace mneme::fakellm;
using namespace mneme::fakellm::testing;
using json = nlohmann::json;

namespace {

struct embeddings_fixture {
  fake_llm_server server;
  uint16_t port = 0;

  embeddings_fixture() {
    auto p = server.start();
    BOOST_TEST_REQUIRE(static_cast<bool>(p));
    port = *p;
  }

  raw_result embed(const json& doc) {
    return roundtrip(port, post_request("/v1/embeddings", doc.dump()));
  }

  std::vector<std::vector<float>> vectors(const std::vector<std::string>& texts,
                                          std::optional<int> dims = std::nullopt) {
    json doc = {{"model", "fake-embed"}, {"input", texts}, {"encoding_format", "float"}};
    if (dims) doc["dimensions"] = *dims;
    auto r = embed(doc);
    BOOST_TEST_REQUIRE(r.status == 200);
    auto ans = json::parse(r.body);
    std::vector<std::vector<float>> out(texts.size());
    for (const auto& d : ans["data"])
      out.at(d["index"].get<size_t>()) = d["embedding"].get<std::vector<float>>();
    return out;
  }

  void set_yaml(const std::string& yaml) {
    auto s = parse_scenario_yaml(yaml);
    BOOST_TEST_REQUIRE(static_cast<bool>(s));
    BOOST_TEST_REQUIRE(!server.set_scenario(std::move(*s)));
  }
};

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(embeddings_endpoint, embeddings_fixture)

BOOST_AUTO_TEST_CASE(the_answer_has_the_openai_shape_one_unit_vector_per_input_in_order) {
  auto r = embed({{"model", "fake-embed"},
                  {"input", {"first text", "second text", "数据库"}},
                  {"dimensions", 64}});
  BOOST_TEST_REQUIRE(r.status == 200);
  auto ans = json::parse(r.body);
  BOOST_TEST(ans["object"] == "list");
  BOOST_TEST(ans["model"] == "fake-embed");
  BOOST_TEST(ans["usage"]["prompt_tokens"].get<int64_t>() > 0);
  BOOST_TEST_REQUIRE(ans["data"].size() == 3u);
  for (size_t i = 0; i < 3; ++i) {
    BOOST_TEST(ans["data"][i]["index"] == i);
    BOOST_TEST(ans["data"][i]["object"] == "embedding");
    auto v = ans["data"][i]["embedding"].get<std::vector<float>>();
    BOOST_TEST(v.size() == 64u);
    BOOST_TEST(std::abs(norm(v) - 1.0) < 1e-4);
  }
  // The same vectors as the policy computes: what tests without a server rely on.
  BOOST_TEST(ans["data"][1]["embedding"].get<std::vector<float>>() ==
             fake_embedding("second text", 64, fake_embedding_mode::bag_of_words));
  BOOST_TEST(server.stats().embedding_requests == 1);
  BOOST_TEST(server.stats().embedded_inputs == 3);
  auto sj = json::parse(roundtrip(port, get_request("/control/stats")).body);
  BOOST_TEST(sj["requests"]["embedding"] == 1);
}

BOOST_AUTO_TEST_CASE(one_string_input_and_the_default_dimensions) {
  auto r = embed({{"model", "m"}, {"input", "just one"}});
  BOOST_TEST_REQUIRE(r.status == 200);
  auto ans = json::parse(r.body);
  BOOST_TEST_REQUIRE(ans["data"].size() == 1u);
  BOOST_TEST(ans["data"][0]["embedding"].size() == fake_embedding_default_dims);
}

BOOST_AUTO_TEST_CASE(answers_are_deterministic) {
  auto a = vectors({"the deploy broke", "rollout failed"}, 128);
  auto b = vectors({"the deploy broke", "rollout failed"}, 128);
  BOOST_TEST(a == b);
}

BOOST_AUTO_TEST_CASE(the_paraphrase_mode_brings_paraphrases_together_across_languages) {
  const std::vector<std::string> texts = {"数据库卡住了", "database is locked", "DB is stuck",
                                          "bake bread with sourdough starter"};
  auto plain = vectors(texts);
  BOOST_TEST(cosine_similarity(plain[0], plain[1]) < 0.3f); // the synonym gap
  set_yaml("embedding_mode: paraphrase\n");
  auto para = vectors(texts);
  BOOST_TEST(cosine_similarity(para[0], para[1]) > 0.8f);
  BOOST_TEST(cosine_similarity(para[1], para[2]) > 0.8f);
  BOOST_TEST(cosine_similarity(para[0], para[3]) < 0.3f);
  BOOST_TEST(to_json(server.current_scenario())["embedding_mode"] == "paraphrase");
}

BOOST_AUTO_TEST_CASE(faults_for_embeddings_apply_here_and_leave_chat_alone) {
  set_yaml("faults:\n  - kind: unavailable\n    purpose: embedding\n");
  auto r = embed({{"model", "m"}, {"input", {"x"}}});
  BOOST_TEST(r.status == 503);
  auto chat = roundtrip(port, post_request("/v1/chat/completions",
                                           R"({"model":"m","messages":[{"role":"user","content":"hi"}]})"));
  BOOST_TEST(chat.status == 200);
  BOOST_TEST(server.stats().injected_of(fault_kind::unavailable) == 1);
}

BOOST_AUTO_TEST_CASE(rate_limits_malformed_bodies_and_timeouts_reach_the_endpoint) {
  set_yaml("faults:\n  - kind: rate_limit_429\n    max_count: 1\n    retry_after: '2'\n"
           "  - kind: malformed_json\n    max_count: 1\n  - kind: empty_content\n    max_count: 1\n"
           "  - kind: silence\n    max_count: 1\n");
  auto limited = embed({{"model", "m"}, {"input", {"x"}}});
  BOOST_TEST(limited.status == 429);
  BOOST_TEST(limited.head.find("Retry-After: 2") != std::string::npos);
  auto malformed = embed({{"model", "m"}, {"input", {"x"}}});
  BOOST_TEST(malformed.status == 200);
  BOOST_TEST(json::parse(malformed.body, nullptr, false).is_discarded());
  auto empty = embed({{"model", "m"}, {"input", {"x"}}});
  BOOST_TEST_REQUIRE(empty.status == 200);
  BOOST_TEST(json::parse(empty.body)["data"].empty());
  auto silent = roundtrip(port, post_request("/v1/embeddings", R"({"model":"m","input":["x"]})"),
                          ms(300));
  BOOST_TEST(silent.idle_timeout);
  BOOST_TEST(embed({{"model", "m"}, {"input", {"x"}}}).status == 200); // all used up
}

BOOST_AUTO_TEST_CASE(bad_requests_are_400_naming_the_field) {
  struct bad_case { json doc; std::string names; };
  const std::vector<bad_case> cases = {
    {{{"input", {"x"}}}, "model"},
    {{{"model", "m"}}, "input"},
    {{{"model", "m"}, {"input", json::array()}}, "input"},
    {{{"model", "m"}, {"input", {1, 2}}}, "input[0]"},
    {{{"model", "m"}, {"input", {"x"}}, {"dimensions", 0}}, "dimensions"},
    {{{"model", "m"}, {"input", {"x"}}, {"dimensions", 5000}}, "dimensions"},
    {{{"model", "m"}, {"input", {"x"}}, {"encoding_format", "base64"}}, "encoding_format"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.doc.dump()) {
      auto r = embed(c.doc);
      BOOST_TEST(r.status == 400);
      BOOST_TEST(r.body.find(c.names) != std::string::npos);
    }
  }
  BOOST_TEST(server.stats().embedding_requests == 0);
  BOOST_TEST(roundtrip(port, get_request("/v1/embeddings")).status == 405);
}

BOOST_AUTO_TEST_CASE(an_unknown_embedding_mode_is_rejected_by_the_scenario) {
  auto s = parse_scenario_yaml("embedding_mode: semantic\n");
  BOOST_TEST_REQUIRE(!s);
  BOOST_TEST(render_error(s.error()).find("embedding_mode") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END()
