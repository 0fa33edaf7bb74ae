// The embedder end to end through the runtime with the in-process fake LLM (issue 48):
// appended rows are embedded in the background until the backlog is 0, stored and in
// the index; a restart rebuilds the index from the database without a provider call;
// facts and their updates are embedded; a failing provider makes the embedder back off
// (few calls, counted in /metrics, query embeds refused at once) while appends and full
// text search work, and it resumes by itself; a batch too large for the provider is
// split and a row refused alone is skipped; a model change re-embeds beside the old
// vectors. Every wait has a generous bound: timing never decides a result.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <functional>
#include <thread>

#include "actors/embed/embedder_actor.hpp"
#include "apps/common/api/metrics_exporter.hpp"
#include "policies/fake_embedding.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(embedder_runtime_test)

using namespace mneme;
using namespace std::chrono_literals;

namespace {

constexpr int32_t test_dims = 32;

struct embed_runtime_fixture : test::serve_runtime_fixture {
  embedding_params params;

  embed_runtime_fixture() {
    params.enabled = true;
    params.model = "fake-embed";
    params.dimensions = test_dims;
    params.batch_size = 4;
    params.idle_poll_ms = 20;
    params.backoff_initial_ms = 50;
    params.backoff_max_ms = 200;
    params.timeout_seconds = 5;
    params.total_ceiling_seconds = 10;
    configure();
  }

  void configure() {
    rc.embeddings = embedder_config{embedding_endpoint_of(params, llm.base_url(), ""), params};
  }

  embed_metrics& metrics() { return *rt->metrics()->embeddings; }

  // Polls `done` until it holds; fails the test after a minute.
  void wait_for(const std::function<bool()>& done, const char* what) {
    auto until = std::chrono::steady_clock::now() + 60s;
    while (!done()) {
      BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, "timed out: " << what);
      std::this_thread::sleep_for(10ms);
    }
  }

  recall_result search(const std::string& q) {
    BOOST_REQUIRE(rt->recall());
    recall_request req;
    req.user_id = "u";
    req.query = q;
    auto r = call<recall_result>(rt->recall(), rc_search_atom_v, req);
    BOOST_REQUIRE_MESSAGE(r, testing::err_of(r));
    return *r;
  }

  uint64_t embedded(int source) {
    return metrics().embedded_rows[static_cast<size_t>(source)].load();
  }

  embed_progress progress(const std::string& model, int32_t dims) {
    auto p = call<embed_progress>(rt->storage(), st_emstate_atom_v, model, dims);
    BOOST_REQUIRE_MESSAGE(p, testing::err_of(p));
    return *p;
  }

  // Waits until every message row is behind the watermark and indexed.
  void wait_embedded(uint64_t rows) {
    wait_for([&] { return embedded(embed_source_message) >= rows; }, "rows embedded");
    wait_for([&] { return progress(params.model, test_dims).messages_backlog == 0; },
             "backlog 0");
  }

  static std::string text_of(int i) {
    static const char* texts[] = {"the deploy broke again", "rollout failed on node three",
                                  "postgres replication lag", "bake bread with sourdough",
                                  "the cat sleeps on the keyboard", "disk is full on host b"};
    return texts[i % 6];
  }
};

fakellm::fault_rule embedding_fault(fakellm::fault_kind k) {
  fakellm::fault_rule r;
  r.kind = k;
  r.purpose = fakellm::purpose_filter::embedding;
  return r;
}

} // namespace

BOOST_FIXTURE_TEST_CASE(appended_rows_are_embedded_stored_indexed_and_rebuilt_at_restart,
                        embed_runtime_fixture) {
  start();
  BOOST_TEST_REQUIRE(rt->vectors());
  auto sid = seed("k", 6, text_of);
  wait_embedded(6);
  auto p = progress(params.model, test_dims);
  BOOST_TEST(p.stored_vectors == 6); // the system prompt row is not embedded
  BOOST_TEST(rt->vectors()->size() == 6u);
  auto rows = all_rows(sid);
  BOOST_REQUIRE_EQUAL(rows.size(), 7u);
  BOOST_TEST(p.messages_through == rows.back().id);
  // The index finds a row by its fake vector, for its user only.
  auto q = fake_embedding(text_of(3), test_dims, fake_embedding_mode::bag_of_words);
  auto hits = rt->vectors()->nearest("u", q, 1, vector_source::message);
  BOOST_REQUIRE_EQUAL(hits.size(), 1u);
  BOOST_TEST(hits[0].id == rows[4].id);
  BOOST_TEST(rt->vectors()->nearest("someone-else", q, 1, vector_source::message).empty());
  // A query is embedded by the same provider.
  auto qv = call<std::vector<float>>(rt->embedder(), em_query_atom_v, text_of(3));
  BOOST_REQUIRE_MESSAGE(qv, testing::err_of(qv));
  BOOST_TEST(cosine_similarity(*qv, q) > 0.999f);
  BOOST_TEST(metrics().query_embeds.load() == 1u);
  auto text = api::render_counters_text(*rt->metrics());
  BOOST_TEST(text.find("mneme_embedded_rows_total{source=\"message\"} 6") != std::string::npos,
             text);
  BOOST_TEST(text.find("mneme_vector_index_vectors 6") != std::string::npos);

  auto calls_before = llm.stats().embedding_requests;
  restart();
  // The index is rebuilt from the database before start() returns: no provider call.
  BOOST_TEST(rt->vectors()->size() == 6u);
  BOOST_TEST(llm.stats().embedding_requests == calls_before);
  auto again = rt->vectors()->nearest("u", q, 1, vector_source::message);
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(again[0].id == rows[4].id);
  // New rows after the restart are embedded on top.
  seed("k2", 2, text_of);
  wait_for([&] { return rt->vectors()->size() == 8u; }, "two more vectors");
}

BOOST_FIXTURE_TEST_CASE(facts_are_embedded_and_an_update_embeds_its_new_version,
                        embed_runtime_fixture) {
  start();
  fact_record f;
  f.user_id = "u";
  f.key = "editor";
  f.value = "vim with many plugins";
  auto v1 = call<fact_record>(rt->storage(), st_fact_put_atom_v, f, int64_t{1000});
  BOOST_REQUIRE_MESSAGE(v1, testing::err_of(v1));
  wait_for([&] { return embedded(embed_source_fact) == 1; }, "the fact embedded");
  f.value = "emacs in evil mode";
  auto v2 = call<fact_record>(rt->storage(), st_fact_put_atom_v, f, int64_t{2000});
  BOOST_REQUIRE_MESSAGE(v2, testing::err_of(v2));
  wait_for([&] { return embedded(embed_source_fact) == 2; }, "the new version embedded");
  auto q = fake_embedding("editor: emacs in evil mode", test_dims,
                          fake_embedding_mode::bag_of_words);
  auto hits = rt->vectors()->nearest("u", q, 2, vector_source::fact);
  BOOST_REQUIRE(!hits.empty());
  BOOST_TEST(hits[0].id == v2->id);
  BOOST_TEST(embedded(embed_source_message) == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_failing_provider_is_backed_off_while_appends_and_full_text_work,
                        embed_runtime_fixture) {
  params.backoff_initial_ms = 3000; // long enough to observe the back-off from outside
  params.backoff_max_ms = 3000;
  configure();
  faults({embedding_fault(fakellm::fault_kind::unavailable)});
  start();
  auto sid = seed("k", 4, text_of);
  wait_for([&] { return metrics().backing_off.load() == 1; }, "backing off");
  auto failures = metrics()
                    .provider_failures[static_cast<size_t>(llm_error_kind::server_error)]
                    .load();
  BOOST_TEST(failures >= 1u);
  BOOST_TEST(embedded(embed_source_message) == 0u);
  // No hot loop: one call per back-off period, never more calls than failures + 1.
  BOOST_TEST(llm.stats().embedding_requests <= static_cast<int64_t>(failures) + 1);
  // While backing off a query embed is refused at once.
  auto qv = call<std::vector<float>>(rt->embedder(), em_query_atom_v, std::string{"deploy"});
  BOOST_TEST_REQUIRE(!qv);
  BOOST_TEST(qv.error() == errc::overloaded);
  BOOST_TEST(metrics().query_failures.load() >= 1u);
  // Appends and full-text search are not affected.
  seed("k2", 2, text_of);
  auto found = search("sourdough");
  BOOST_TEST(!found.hits.empty());
  auto text = api::render_counters_text(*rt->metrics());
  BOOST_TEST(text.find("mneme_embedding_failures_total{kind=\"server_error\"}")
               != std::string::npos,
             text);
  BOOST_TEST(text.find("mneme_embedding_backing_off 1") != std::string::npos);
  // The provider returns: the embedder resumes by itself.
  llm.clear_faults();
  wait_embedded(6);
  BOOST_TEST(metrics().backing_off.load() == 0);
  BOOST_TEST(rt->vectors()->size() == 6u);
  (void)sid;
}

BOOST_FIXTURE_TEST_CASE(a_batch_too_large_is_split_and_a_row_refused_alone_is_skipped,
                        embed_runtime_fixture) {
  start();
  // Bodies over 115 bytes get 413: one normal row fits in a call (99..107 bytes of
  // JSON), two do not (124 bytes and more).
  auto rule = embedding_fault(fakellm::fault_kind::payload_too_large);
  rule.max_body_bytes = 115;
  faults({rule});
  auto huge = std::string(600, 'x');
  seed("k", 5, [&](int i) { return i == 4 ? huge : text_of(i); });
  wait_for([&] { return metrics().skipped_rows.load() == 1; }, "the huge row skipped");
  wait_embedded(4);
  BOOST_TEST(rt->vectors()->size() == 4u);
  BOOST_TEST(progress(params.model, test_dims).stored_vectors == 4);
  BOOST_TEST(metrics()
               .provider_failures[static_cast<size_t>(llm_error_kind::payload_too_large)]
               .load() >= 2u);
}

BOOST_FIXTURE_TEST_CASE(a_model_change_re_embeds_beside_the_old_vectors, embed_runtime_fixture) {
  start();
  seed("k", 4, text_of);
  wait_embedded(4);
  rt->stop();
  rt.reset();
  rc.metrics = nullptr;
  params.model = "fake-embed-2";
  params.dimensions = 16;
  configure();
  start();
  wait_for([&] { return rt->vectors()->size() == 4u; }, "re-embedded");
  BOOST_TEST(rt->vectors()->dims() == 16u);
  BOOST_TEST(progress("fake-embed-2", 16).stored_vectors == 4);
  BOOST_TEST(progress("fake-embed", test_dims).stored_vectors == 4); // kept
}

BOOST_AUTO_TEST_SUITE_END()
