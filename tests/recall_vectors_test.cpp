// Semantic recall in the readers and the pool (issue 48; store/vector_recall.hpp,
// actors/recall) on both backends, with an index built by hand (4 dimensions, one
// direction per topic): the vector leg finds what the words miss, hybrid puts a
// conversation both legs found first, rolled-back rows and other users' rows never
// come from the index, the legs a mode runs and why one was skipped; the pool asks
// the embedder for the query's vector and searches by full text when it fails or
// does not answer in time.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <memory>
#include <set>

#include "caf/all.hpp"

#include "actors/recall/recall_actor.hpp"
#include "messages/mneme_types.hpp"
#include "store/vector_index.hpp"
#include "store/vector_recall.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(recall_vectors_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;
using mneme::testing::row_estimate;
using namespace std::chrono_literals;
namespace data = boost::unit_test::data;

namespace {

// Topic directions: the "database locked" meaning, the "deploy failed" meaning, filler.
const std::vector<float> locked{1, 0, 0, 0};
const std::vector<float> deploy{0, 1, 0, 0};
const std::vector<float> filler_dir{0, 0, 1, 0};
const std::vector<float> other_dir{0, 0, 0, 1};

std::vector<float> mix(const std::vector<float>& a, const std::vector<float>& b, float wb) {
  std::vector<float> v(a.size());
  float n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    v[i] = a[i] + wb * b[i];
    n += v[i] * v[i];
  }
  for (auto& x : v)
    x /= std::sqrt(n);
  return v;
}

struct vectors_fixture {
  testing::temp_dir dir{"mneme-recall-vectors"};
  store_params params;
  testing::test_store store;
  std::unique_ptr<recall_source> reader;
  std::shared_ptr<vector_index> index = std::make_shared<vector_index>(4);

  void open(store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    auto r = testing::open_test_recall(params);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    reader = std::move(*r);
    reader->use_vectors(index);
  }

  std::string session(const std::string& user, const std::string& key) {
    session_record rec;
    rec.user_id = user;
    rec.session_key = key;
    auto s = store->create_session(rec, 1);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    return s->id;
  }

  // Appends a row and puts its vector in the index under `user` (what the embedder does).
  int64_t add(const std::string& user, const std::string& sid, const std::string& text,
              const std::vector<float>& v) {
    auto id = store->append(msg(sid, msg_role::user, text, row_estimate::none));
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    index->add(user, vector_source::message, *id, v);
    return *id;
  }

  recall_result search(const std::string& user, const std::string& query, recall_mode mode,
                       std::vector<float> vec, bool include_inactive = false,
                       int32_t max_sessions = 3) {
    testing::index_for_recall(*store);
    recall_request req;
    req.user_id = user;
    req.query = query;
    req.mode = mode;
    req.query_vector = std::move(vec);
    req.include_inactive = include_inactive;
    req.max_sessions = max_sessions;
    auto r = reader->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return std::move(*r);
  }
};

const auto both_backends = data::make(testing::all_store_backends());

} // namespace

BOOST_DATA_TEST_CASE_F(vectors_fixture, words_that_do_not_occur_are_found_by_the_vector_leg_only,
                       both_backends, backend) {
  open(backend);
  auto s = session("alice", "k1");
  add("alice", s, "some filler about lunch", filler_dir);
  auto hit = add("alice", s, "the database is locked again since the migration", locked);
  add("alice", s, "more filler about the weather", filler_dir);
  auto query = "数据库卡住了";
  auto fts = search("alice", query, recall_mode::fts, mix(locked, filler_dir, 0.1f));
  BOOST_TEST(fts.hits.empty());
  BOOST_TEST(fts.mode == recall_mode::fts);
  BOOST_TEST(fts.vector_skipped == vector_skip::none);
  for (auto mode : {recall_mode::vector, recall_mode::hybrid, recall_mode::automatic}) {
    auto r = search("alice", query, mode, mix(locked, filler_dir, 0.1f));
    BOOST_TEST(r.mode == (mode == recall_mode::vector ? recall_mode::vector : recall_mode::hybrid));
    BOOST_TEST(r.vector_skipped == vector_skip::none);
    BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
    BOOST_TEST(r.hits[0].hit.id == hit);
    BOOST_TEST(r.hits[0].route == "vector");
    BOOST_TEST(r.hits[0].snippet == "the database is locked again since the migration");
    BOOST_TEST(r.hits[0].score < 0.01);
    // The anchored view is the full-text one: the window around the hit.
    BOOST_TEST(r.hits[0].window.size() == 3u);
  }
  // Vector mode runs no full-text route.
  BOOST_TEST(search("alice", query, recall_mode::vector, locked).routes_tried.empty());
}

BOOST_DATA_TEST_CASE_F(vectors_fixture, hybrid_puts_a_conversation_both_legs_found_first,
                       both_backends, backend) {
  open(backend);
  // Full text for "rollout" finds a and b; the vector of the query is nearest to b's
  // row, then c's (which says it in other words).
  auto a = session("alice", "a");
  auto b = session("alice", "b");
  auto c = session("alice", "c");
  auto a_row = add("alice", a, "the rollout plan for rollout week: rollout rollout", other_dir);
  auto b_row = add("alice", b, "the rollout failed at noon", deploy);
  auto c_row = add("alice", c, "the deploy broke everything", mix(deploy, filler_dir, 0.3f));
  auto fts = search("alice", "rollout", recall_mode::fts, {});
  BOOST_REQUIRE_EQUAL(fts.hits.size(), 2u);
  auto r = search("alice", "rollout", recall_mode::hybrid, mix(deploy, filler_dir, 0.05f));
  BOOST_TEST(r.mode == recall_mode::hybrid);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 3u);
  BOOST_TEST(r.hits[0].hit.id == b_row);
  BOOST_TEST(r.hits[0].route == "unicode61"); // found by both: keeps its full-text route
  BOOST_TEST(r.hits[0].snippet.find(">>>rollout<<<") != std::string::npos);
  // a (full text rank 1 or 2) and c (vector rank 2) follow; c says "vector".
  std::set<int64_t> rest{r.hits[1].hit.id, r.hits[2].hit.id};
  BOOST_TEST((rest == std::set<int64_t>{a_row, c_row}));
  for (auto& h : r.hits)
    if (h.hit.id == c_row)
      BOOST_TEST(h.route == "vector");
  // max_sessions still bounds the fused list.
  BOOST_TEST(search("alice", "rollout", recall_mode::hybrid, deploy, false, 1).hits.size() == 1u);
}

BOOST_DATA_TEST_CASE_F(vectors_fixture, rolled_back_rows_come_from_the_index_only_with_include_inactive,
                       both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  add("alice", s, "filler one", filler_dir);
  add("alice", s, "filler two", filler_dir);
  BOOST_REQUIRE(store->create_checkpoint(s, "before", 2));
  auto undone = add("alice", s, "the database is locked", locked);
  BOOST_REQUIRE(store->rollback_to_checkpoint(s, "before"));
  auto hidden = search("alice", "stuck db", recall_mode::vector, locked);
  for (auto& h : hidden.hits)
    BOOST_TEST(h.hit.id != undone);
  auto shown = search("alice", "stuck db", recall_mode::vector, locked, true);
  BOOST_REQUIRE(!shown.hits.empty());
  BOOST_TEST(shown.hits[0].hit.id == undone);
  BOOST_TEST(shown.hits[0].kind == recall_hit_kind::rolled_back);
}

BOOST_DATA_TEST_CASE_F(vectors_fixture, another_users_vectors_are_never_returned, both_backends,
                       backend) {
  open(backend);
  auto mine = session("alice", "k");
  auto theirs = session("bob", "k");
  add("alice", mine, "alice talks about lunch", filler_dir);
  auto bob_row = add("bob", theirs, "bob's database is locked", locked);
  // Even an index that wrongly files bob's row under alice does not leak it: the
  // reader checks the row's user again.
  index->add("alice", vector_source::message, bob_row, locked);
  for (auto mode : {recall_mode::vector, recall_mode::hybrid})
    for (bool inactive : {false, true})
      for (auto& h : search("alice", "database", mode, locked, inactive, 10).hits) {
        BOOST_TEST(h.hit.id != bob_row);
        BOOST_TEST(h.hit.session_id == mine);
      }
  auto bobs = search("bob", "nothing like it", recall_mode::vector, locked);
  BOOST_REQUIRE_EQUAL(bobs.hits.size(), 1u);
  BOOST_TEST(bobs.hits[0].hit.id == bob_row);
}

BOOST_DATA_TEST_CASE_F(vectors_fixture, without_a_usable_vector_the_search_is_full_text_and_says_why,
                       both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto row = add("alice", s, "the database is locked", locked);
  // No query vector (the pool had none to give): full text, embeddings_off.
  auto r = search("alice", "database", recall_mode::hybrid, {});
  BOOST_TEST(r.mode == recall_mode::fts);
  BOOST_TEST(r.vector_skipped == vector_skip::embeddings_off);
  BOOST_REQUIRE_EQUAL(r.hits.size(), 1u);
  BOOST_TEST(r.hits[0].hit.id == row);
  // A vector of other dimensions (a provider answering another model): provider_failed.
  auto wrong = search("alice", "database", recall_mode::vector, {1, 0});
  BOOST_TEST(wrong.mode == recall_mode::fts);
  BOOST_TEST(wrong.vector_skipped == vector_skip::provider_failed);
  BOOST_TEST(wrong.hits.size() == 1u);
  // No index at all (embeddings off in this process).
  reader->use_vectors(nullptr);
  auto off = search("alice", "database", recall_mode::vector, locked);
  BOOST_TEST(off.mode == recall_mode::fts);
  BOOST_TEST(off.vector_skipped == vector_skip::embeddings_off);
  BOOST_TEST(off.hits.size() == 1u);
  auto plain = search("alice", "database", recall_mode::fts, {});
  BOOST_TEST(plain.vector_skipped == vector_skip::none);
}

namespace {

caf::actor_system_config& make_config(caf::actor_system_config& cfg) {
  register_mneme_types(cfg);
  return cfg;
}

// A query embedder answering `vec`, an error, or never (to time out).
enum class embedder_answer { vector, error, never };

query_embedder::behavior_type fake_embedder(query_embedder::pointer self, embedder_answer how,
                                            std::vector<float> vec) {
  return {
    [=](em_query_atom, const std::string&) -> caf::result<std::vector<float>> {
      if (how == embedder_answer::error)
        return caf::make_error(errc::overloaded, "embedder backs off");
      if (how == embedder_answer::never)
        return self->make_response_promise<std::vector<float>>(); // never delivered
      return vec;
    },
  };
}

struct pool_vectors_fixture : vectors_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{make_config(cfg)};
  caf::scoped_actor self{sys};
  std::vector<caf::actor> to_stop;
  std::shared_ptr<embed_metrics> metrics = std::make_shared<embed_metrics>();

  ~pool_vectors_fixture() {
    for (auto& a : to_stop)
      self->send_exit(a, caf::exit_reason::user_shutdown);
  }

  recall_result pool_search(embedder_answer how, recall_mode mode) {
    testing::index_for_recall(*store);
    auto embedder = sys.spawn(fake_embedder, how, locked);
    to_stop.push_back(caf::actor_cast<caf::actor>(embedder));
    recall_vectors vectors{index, embedder, 300ms, metrics};
    auto pool = spawn_recall(sys, params, nullptr, recall_pool_params{}, vectors);
    BOOST_REQUIRE_MESSAGE(pool, err_of(pool));
    to_stop.push_back(caf::actor_cast<caf::actor>(*pool));
    recall_request req;
    req.user_id = "alice";
    req.query = "数据库卡住了";
    req.mode = mode;
    recall_result out;
    self->request(*pool, 10s, rc_search_atom_v, req)
      .receive([&](recall_result& r) { out = std::move(r); },
               [&](caf::error& err) { BOOST_FAIL(render_error(err)); });
    return out;
  }
};

} // namespace

BOOST_DATA_TEST_CASE_F(pool_vectors_fixture, the_pool_embeds_the_query_and_falls_back_to_full_text,
                       both_backends, backend) {
  open(backend);
  auto s = session("alice", "k");
  auto row = add("alice", s, "the database is locked (数据库卡住了 in the log)", locked);
  auto ok = pool_search(embedder_answer::vector, recall_mode::automatic);
  BOOST_TEST(ok.mode == recall_mode::hybrid);
  BOOST_TEST(ok.vector_skipped == vector_skip::none);
  BOOST_REQUIRE_EQUAL(ok.hits.size(), 1u);
  BOOST_TEST(ok.hits[0].hit.id == row);
  BOOST_TEST(metrics->vector_legs_skipped[0].load() + metrics->vector_legs_skipped[1].load()
             == 0u);
  for (auto how : {embedder_answer::error, embedder_answer::never}) {
    auto r = pool_search(how, recall_mode::vector);
    BOOST_TEST(r.mode == recall_mode::fts);
    BOOST_TEST(r.vector_skipped == (how == embedder_answer::error ? vector_skip::provider_failed
                                                                  : vector_skip::timed_out));
    BOOST_REQUIRE_EQUAL(r.hits.size(), 1u); // the words still find it
    BOOST_TEST(r.hits[0].route != "vector");
  }
  // each skipped leg counted once, under its reason (mneme_search_vector_skipped_total)
  BOOST_TEST(metrics->vector_legs_skipped[0].load() == 1u);
  BOOST_TEST(metrics->vector_legs_skipped[1].load() == 1u);
  // Mode fts never asks the embedder (one that never answers does not delay it).
  auto fts = pool_search(embedder_answer::never, recall_mode::fts);
  BOOST_TEST(fts.vector_skipped == vector_skip::none);
  BOOST_TEST(fts.hits.size() == 1u);
  BOOST_TEST(metrics->vector_legs_skipped[1].load() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
