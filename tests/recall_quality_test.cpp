// The recall quality bar (SPEC §4, issue 4) on a generated corpus of thousands of
// sessions (testing/recall_corpus: fixed seed; English, Chinese, Japanese, mixed, code
// and error text; facts planted in known messages, in archived-only rows, in
// rolled-back rows and in another user's sessions): the planted session is in the
// top 3 for at least 99% of the probes; rolled-back facts are found only with
// include_inactive; another user's facts are never found. Every case runs on both
// backends (tests/store_backends.hpp), each over its own copy of the same corpus,
// and the backends must find the same sessions for the same probes.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "messages/mneme_types.hpp"
#include "policies/percentile.hpp"
#include "store/recall.hpp"
#include "testing/recall_corpus.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(recall_quality_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::store_backend;
namespace data = boost::unit_test::data;

namespace {

constexpr double required_recall_at_3 = 0.99; // issue 4 quality bar

// Built once per backend for the whole suite (generating it is the slow part).
struct corpus_fixture {
  testing::temp_dir dir{"mneme-recall-quality"};
  store_params params;
  corpus_report report;
  testing::test_store store;
  std::unique_ptr<recall_source> reader;

  explicit corpus_fixture(store_backend backend) {
    testing::use_backend(backend, params, dir);
    params.synchronous_full = false; // durability is not what this suite measures
    auto st = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(st, err_of(st));
    store = std::move(*st);
    corpus_spec spec;
    spec.messages = 42000;            // ~2,100 sessions of ~20 messages
    auto r = generate_corpus(*store, spec);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    report = std::move(*r);
    // What SQLite's storage actor does in its idle time: the suite measures the indexes.
    testing::index_for_recall(*store);
    auto rd = testing::open_test_recall(params);
    BOOST_REQUIRE_MESSAGE(rd, err_of(rd));
    reader = std::move(*rd);
    BOOST_TEST_MESSAGE(backend << " corpus: " << report.messages << " messages, "
                       << report.sessions << " sessions, " << report.probes.size()
                       << " probes, ingest " << report.ingest_seconds << " s");
  }

  probe_outcome run(const std::vector<recall_probe>& probes) {
    auto out = run_probes(*reader, probes);
    BOOST_REQUIRE_MESSAGE(out, err_of(out));
    return std::move(*out);
  }

  std::vector<recall_probe> probes_where(bool (*pred)(const recall_probe&)) {
    std::vector<recall_probe> out;
    for (auto& p : report.probes)
      if (pred(p)) out.push_back(p);
    return out;
  }

  // The session keys ("chan-N", the same on both backends) of a probe's hits, and
  // the route of each.
  std::map<std::string, std::string> hit_keys(const recall_request& req) {
    auto r = reader->search(req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    std::map<std::string, std::string> out;
    for (auto& h : r->hits) {
      auto s = store->session(h.hit.session_id);
      BOOST_REQUIRE_MESSAGE(s, err_of(s));
      out[s->session_key] = h.route;
    }
    return out;
  }
};

corpus_fixture& corpus(store_backend backend) {
  static std::map<store_backend, std::unique_ptr<corpus_fixture>> instances;
  auto& slot = instances[backend];
  if (!slot)
    slot = std::make_unique<corpus_fixture>(backend);
  return *slot;
}

const auto quality_backends = data::make(testing::all_store_backends());

bool label_starts(const recall_probe& p, const char* prefix) {
  return p.label.rfind(prefix, 0) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(generated_corpus)

BOOST_DATA_TEST_CASE(the_corpus_has_thousands_of_sessions_and_every_fact_kind, quality_backends, backend) {
  auto& c = corpus(backend);
  BOOST_TEST(c.report.sessions >= 2000);
  std::set<std::string> kinds;
  for (auto& p : c.report.probes)
    kinds.insert(p.label.substr(0, p.label.find('/')));
  BOOST_TEST(kinds == (std::set<std::string>{"archived", "code", "en", "foreign", "glued", "ja",
                                             "rolled", "zh"}),
             boost::test_tools::per_element());
  BOOST_TEST(c.report.probes.size() >= 1000u);
}

BOOST_DATA_TEST_CASE(planted_sessions_are_in_the_top_three_for_99_percent_of_probes, quality_backends, backend) {
  auto& c = corpus(backend);
  auto out = c.run(c.probes_where([](auto& p) { return p.expect == probe_expect::found; }));
  // Printed for the record (docs/scale-out.md); timing never decides this test.
  BOOST_TEST_MESSAGE("recall@3 = " << out.recall_at_3() << " (" << out.found_at_3 << "/"
                     << out.expected_found << "), search p50 "
                     << percentile_or_zero(out.latencies_ms, 0.5) << " ms, p99 "
                     << percentile_or_zero(out.latencies_ms, 0.99) << " ms");
  for (auto& m : out.misses)
    BOOST_TEST_MESSAGE("miss: " << m);
  BOOST_TEST(out.expected_found >= 800);
  BOOST_TEST(out.recall_at_3() >= required_recall_at_3);
}

BOOST_DATA_TEST_CASE(every_probe_form_reaches_the_bar_on_its_own, quality_backends, backend) {
  auto& c = corpus(backend);
  std::map<std::string, std::vector<recall_probe>> by_form;
  for (auto& p : c.report.probes)
    if (p.expect == probe_expect::found)
      by_form[p.label].push_back(p);
  BOOST_TEST(by_form.size() >= 15u);
  for (auto& [label, probes] : by_form) {
    auto out = c.run(probes);
    BOOST_TEST(out.recall_at_3() >= required_recall_at_3, label << " recall@3 = "
               << out.recall_at_3() << " over " << probes.size());
  }
}

BOOST_DATA_TEST_CASE(rolled_back_facts_have_no_hit_unless_inactive_rows_are_asked_for,
                     quality_backends, backend) {
  auto& c = corpus(backend);
  auto hidden = c.run(c.probes_where([](auto& p) {
    return label_starts(p, "rolled/") && !p.request.include_inactive;
  }));
  BOOST_TEST(hidden.leaks == 0);
  auto asked = c.run(c.probes_where([](auto& p) {
    return label_starts(p, "rolled/") && p.request.include_inactive;
  }));
  BOOST_TEST(asked.expected_found >= 50);
  BOOST_TEST(asked.recall_at_3() >= required_recall_at_3);
}

BOOST_DATA_TEST_CASE(another_users_facts_are_never_found, quality_backends, backend) {
  auto& c = corpus(backend);
  auto foreign = c.probes_where([](auto& p) {
    return label_starts(p, "foreign/") && p.label.find("+other_user") != std::string::npos;
  });
  BOOST_TEST(foreign.size() >= 100u);
  BOOST_TEST(c.run(foreign).leaks == 0);
  // The same queries by the owner find them: the words are really there.
  auto owner = c.probes_where([](auto& p) {
    return label_starts(p, "foreign/") && p.label.find("+other_user") == std::string::npos;
  });
  BOOST_TEST(owner.size() == foreign.size());
  BOOST_TEST(c.run(owner).recall_at_3() >= required_recall_at_3);
}

BOOST_DATA_TEST_CASE(archived_only_facts_are_found_and_reported_as_archived, quality_backends,
                     backend) {
  auto& c = corpus(backend);
  auto probes = c.probes_where([](auto& p) { return label_starts(p, "archived/"); });
  BOOST_TEST(probes.size() >= 100u);
  for (auto& p : probes) {
    auto r = c.reader->search(p.request);
    BOOST_REQUIRE(r);
    auto it = std::find_if(r->hits.begin(), r->hits.end(),
                           [&](auto& h) { return h.hit.session_id == p.session_id; });
    BOOST_REQUIRE_MESSAGE(it != r->hits.end(), p.label << " " << p.request.query);
    BOOST_TEST(it->kind == recall_hit_kind::archived);
  }
}

// Issue 26: the same probes find the same sessions (by key: ids differ per store)
// through the same routes on PostgreSQL as on SQLite; printed per probe when not.
BOOST_AUTO_TEST_CASE(both_backends_find_the_same_sessions_for_every_probe) {
  auto& lite = corpus(store_backend::sqlite);
  auto& pg = corpus(store_backend::postgres);
  BOOST_REQUIRE_EQUAL(lite.report.probes.size(), pg.report.probes.size());
  std::map<std::string, int> compared, differing;
  for (std::size_t i = 0; i < lite.report.probes.size(); ++i) {
    auto& p = lite.report.probes[i];
    BOOST_REQUIRE_EQUAL(p.label, pg.report.probes[i].label);
    BOOST_REQUIRE_EQUAL(p.request.query, pg.report.probes[i].request.query);
    auto kind = p.label.substr(0, p.label.find('/'));
    ++compared[kind];
    auto a = lite.hit_keys(p.request);
    auto b = pg.hit_keys(pg.report.probes[i].request);
    if (a != b) {
      ++differing[kind];
      std::string sa, sb;
      for (auto& [k, route] : a) sa += " " + k + "@" + route;
      for (auto& [k, route] : b) sb += " " + k + "@" + route;
      BOOST_TEST_MESSAGE("differs: " << p.label << " " << p.request.query << " sqlite:" << sa
                         << " postgres:" << sb);
    }
  }
  for (auto& [kind, n] : compared)
    BOOST_TEST(differing[kind] == 0, kind << ": " << differing[kind] << " of " << n
                                          << " probes differ");
  BOOST_TEST(compared["zh"] + compared["ja"] + compared["glued"] >= 300);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // recall_quality_test
