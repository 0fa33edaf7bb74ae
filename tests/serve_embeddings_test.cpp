// `mneme serve` (MNEME_BINARY_DIR/mneme) with `embeddings:` on and the builtin fake LLM
// (issue 48): appended rows are embedded in the background (GET /metrics counts them),
// the index is rebuilt from the database at a restart with no provider call; a
// configuration naming an unset key variable is refused at start naming the variable;
// with embeddings off /metrics shows none of their families; an unreachable provider
// leaves search on full text and counts the skipped vector leg.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "apps/common/api/json_codec.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(serve_embeddings_test)

using json = mneme::api::json;
using namespace std::chrono_literals;

namespace {

std::string write_config(const std::string& dir, const std::string& embeddings) {
  auto path = dir + "/mneme.yaml";
  std::ofstream{path} << "model:\n"
                         "  base_url: builtin\n"
                         "  timeout: 10\n"
                         "logging:\n"
                         "  level: warn\n"
                      << embeddings;
  return path;
}

const std::string embeddings_on = "embeddings:\n"
                                  "  enabled: true\n"
                                  "  base_url: builtin\n"
                                  "  model: fake-embed\n"
                                  "  dimensions: 64\n"
                                  "  idle_poll_ms: 50\n";

std::string metrics(int port) {
  httplib::Client c{"127.0.0.1", port};
  auto r = c.Get("/metrics");
  BOOST_REQUIRE(r);
  return r->body;
}

void append(int port, const std::string& text) {
  httplib::Client c{"127.0.0.1", port};
  json body{{"user", "u"}, {"role", "user"}, {"content", text}};
  auto r = c.Post("/v1/sessions/k/messages", body.dump(), "application/json");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 201);
}

// Polls /metrics until it holds `line`; fails after a minute.
void wait_for_metric(int port, const std::string& line) {
  auto until = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    auto text = metrics(port);
    if (text.find(line) != std::string::npos)
      return;
    BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until,
                          "no '" << line << "' in:\n" << text);
    std::this_thread::sleep_for(20ms);
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(appends_are_embedded_and_a_restart_rebuilds_the_index_without_a_call) {
  mneme::testing::temp_dir dir{"mneme-serve-embed"};
  auto config = write_config(dir.path(), embeddings_on);
  auto db = dir.file("t.db");
  {
    mneme::testing::mneme_daemon d{{"--config", config, "--db", db}};
    append(d.port, "the deploy broke");
    append(d.port, "rollout failed on node three");
    append(d.port, "数据库卡住了");
    wait_for_metric(d.port, "mneme_embedded_rows_total{source=\"message\"} 3");
    wait_for_metric(d.port, "mneme_vector_index_vectors 3");
    BOOST_TEST(d.process.stop(SIGTERM, 30s) == 0);
  }
  mneme::testing::mneme_daemon again{{"--config", config, "--db", db}};
  auto text = metrics(again.port);
  BOOST_TEST(text.find("mneme_vector_index_vectors 3") != std::string::npos, text);
  BOOST_TEST(text.find("mneme_embedding_calls_total 0") != std::string::npos, text);
  BOOST_TEST(text.find("mneme_embedded_rows_total{source=\"message\"} 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_unset_key_variable_stops_the_start_naming_it) {
  mneme::testing::temp_dir dir{"mneme-serve-embed"};
  ::unsetenv("MNEME_TEST_UNSET_EMBED_KEY");
  auto config = write_config(dir.path(), "embeddings:\n"
                                         "  enabled: true\n"
                                         "  base_url: http://127.0.0.1:9\n"
                                         "  api_key_env: MNEME_TEST_UNSET_EMBED_KEY\n");
  auto r = mneme::testing::run_program(
    "mneme", {"serve", "--port", "0", "--config", config, "--db", dir.file("t.db")},
    mneme::testing::stderr_mode::merged, 60s);
  BOOST_TEST(r.code == 2, r.out);
  BOOST_TEST(r.out.find("MNEME_TEST_UNSET_EMBED_KEY") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(with_embeddings_off_metrics_carry_none_of_their_families) {
  mneme::testing::temp_dir dir{"mneme-serve-embed"};
  auto config = write_config(dir.path(), "");
  mneme::testing::mneme_daemon d{{"--config", config, "--db", dir.file("t.db")}};
  append(d.port, "hello");
  auto text = metrics(d.port);
  BOOST_TEST(text.find("mneme_embedded_rows_total") == std::string::npos);
  BOOST_TEST(text.find("mneme_vector_index") == std::string::npos);
}

// A provider that cannot be reached: appends and full-text search are unaffected, a
// hybrid search runs on full text, says why, and /metrics counts the skipped leg.
BOOST_AUTO_TEST_CASE(an_unreachable_provider_leaves_search_on_full_text_and_counts_it) {
  mneme::testing::temp_dir dir{"mneme-serve-embed"};
  auto config = write_config(dir.path(), "embeddings:\n"
                                         "  enabled: true\n"
                                         "  base_url: http://127.0.0.1:9\n"
                                         "  model: fake-embed\n"
                                         "  dimensions: 64\n"
                                         "  idle_poll_ms: 50\n");
  mneme::testing::mneme_daemon d{{"--config", config, "--db", dir.file("t.db")}};
  append(d.port, "the nightly backup finished late");
  httplib::Client c{"127.0.0.1", d.port};
  auto r = c.Get("/v1/search?user=u&q=backup&mode=hybrid");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->status, 200);
  auto body = json::parse(r->body);
  BOOST_TEST(body["mode"] == "fts", body.dump());
  BOOST_TEST(body["vector_skipped"] == "provider_failed", body.dump());
  BOOST_TEST(body["hits"].size() == 1u, body.dump());
  wait_for_metric(d.port, "mneme_search_vector_skipped_total{reason=\"provider_failed\"} 1");
  auto text = metrics(d.port);
  BOOST_TEST(text.find("mneme_search_vector_skipped_total{reason=\"timed_out\"} 0")
               != std::string::npos, text);
  BOOST_TEST(text.find("mneme_embedded_rows_total{source=\"message\"} 0") != std::string::npos,
             text);
}

// The synonym gap through the daemon (issue 48 item 5): a provider whose paraphrase
// groups put 数据库卡住了 near "database is locked" (mneme-fakellm's paraphrase mode) lets
// a Chinese query find the English row, which full text cannot.
BOOST_AUTO_TEST_CASE(a_paraphrase_across_languages_is_found_by_hybrid_search_not_by_full_text) {
  mneme::testing::temp_dir dir{"mneme-serve-embed"};
  auto scenario = dir.file("fake.yaml");
  std::ofstream{scenario} << "embedding_mode: paraphrase\n";
  mneme::testing::child_program fake;
  std::string said;
  auto fake_port = mneme::testing::start_fakellm(fake, {"--scenario", scenario}, said,
                                                 dir.file("fake.err"));
  BOOST_REQUIRE_MESSAGE(fake_port > 0, said);
  auto config = write_config(dir.path(), "embeddings:\n"
                                         "  enabled: true\n"
                                         "  base_url: http://127.0.0.1:"
                                           + std::to_string(fake_port) + "\n"
                                         "  model: fake-embed\n"
                                         "  dimensions: 64\n"
                                         "  idle_poll_ms: 50\n");
  mneme::testing::mneme_daemon d{{"--config", config, "--db", dir.file("t.db")}};
  httplib::Client c{"127.0.0.1", d.port};
  auto post = [&](const std::string& key, const std::string& text) {
    json body{{"user", "u"}, {"role", "user"}, {"content", text}};
    auto r = c.Post("/v1/sessions/" + key + "/messages", body.dump(), "application/json");
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_EQUAL(r->status, 201);
  };
  post("ops", "the database is locked again after the migration");
  post("lunch", "lunch on friday at the noodle place");
  wait_for_metric(d.port, "mneme_embedded_rows_total{source=\"message\"} 2");
  auto search = [&](const std::string& mode) {
    auto r = c.Get("/v1/search?user=u&q=%E6%95%B0%E6%8D%AE%E5%BA%93%E5%8D%A1%E4%BD%8F%E4%BA%86"
                   "&mode=" + mode);
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_EQUAL(r->status, 200);
    return json::parse(r->body);
  };
  auto fts = search("fts");
  BOOST_TEST(fts["hits"].size() == 0u, fts.dump());
  auto hybrid = search("hybrid");
  BOOST_TEST(hybrid["mode"] == "hybrid", hybrid.dump());
  BOOST_REQUIRE_MESSAGE(!hybrid["hits"].empty(), hybrid.dump());
  BOOST_TEST(hybrid["hits"][0]["route"] == "vector");
  BOOST_TEST(hybrid["hits"][0]["hit"]["content"].get<std::string>().find("database is locked")
             != std::string::npos, hybrid.dump());
  // Another user sees none of it, whatever the mode.
  auto other = c.Get("/v1/search?user=v&q=database&mode=hybrid");
  BOOST_REQUIRE(other);
  BOOST_TEST(json::parse(other->body)["hits"].size() == 0u, other->body);
  // Facts too: the Chinese words find the English fact by its meaning, for its user only.
  auto put = c.Put("/v1/users/u/facts/incident",
                   json{{"value", "the database is locked during the nightly backup"}}.dump(),
                   "application/json");
  BOOST_REQUIRE(put);
  BOOST_REQUIRE_EQUAL(put->status, 200);
  wait_for_metric(d.port, "mneme_embedded_rows_total{source=\"fact\"} 1");
  const std::string stuck = "q=%E6%95%B0%E6%8D%AE%E5%BA%93%E5%8D%A1%E4%BD%8F%E4%BA%86";
  auto facts = c.Get("/v1/users/u/facts?" + stuck);
  BOOST_REQUIRE(facts);
  BOOST_REQUIRE_EQUAL(facts->status, 200);
  auto found = json::parse(facts->body)["facts"];
  BOOST_REQUIRE_MESSAGE(found.size() == 1u, facts->body);
  BOOST_TEST(found[0]["key"] == "incident");
  auto others = c.Get("/v1/users/v/facts?" + stuck);
  BOOST_REQUIRE(others);
  BOOST_TEST(json::parse(others->body)["facts"].size() == 0u, others->body);
  // The model's memory tool searches the same way: asked in Chinese, it reads the fact.
  json turn{{"user", "u"}, {"content", "What do you remember about 数据库卡住了?"}};
  auto t = c.Post("/v1/sessions/ask/turns", turn.dump(), "application/json");
  BOOST_REQUIRE(t);
  BOOST_REQUIRE_MESSAGE(t->status == 200, t->body);
  auto answer = json::parse(t->body);
  BOOST_REQUIRE_MESSAGE(answer["builtin_calls"].size() == 1u, t->body);
  BOOST_TEST(answer["builtin_calls"][0]["name"] == "memory");
  BOOST_TEST(answer["answer"].get<std::string>().find("nightly backup") != std::string::npos,
             t->body);
}

BOOST_AUTO_TEST_SUITE_END()
