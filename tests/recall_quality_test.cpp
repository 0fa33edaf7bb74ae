// The recall quality bar (SPEC §4, issue 4) on a generated corpus of thousands of
// sessions (store/recall_corpus: fixed seed; English, Chinese, Japanese, mixed, code
// and error text; facts planted in known messages, in archived-only rows, in
// rolled-back rows and in another user's sessions): the planted session is in the
// top 3 for at least 99% of the probes; rolled-back facts are found only with
// include_inactive; another user's facts are never found.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "messages/mneme_types.hpp"
#include "store/fts_indexer.hpp"
#include "store/recall.hpp"
#include "store/recall_corpus.hpp"
#include "store/sqlite_store.hpp"
#include "store/store_reader.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(recall_quality_test)

using namespace mneme;
using mneme::testing::err_of;

namespace {

constexpr double required_recall_at_3 = 0.99; // issue 4 quality bar

// Built once for the whole suite (generating it is the slow part).
struct corpus_fixture {
  testing::temp_dir dir{"mneme-recall-quality"};
  store_params params;
  corpus_report report;
  std::unique_ptr<store_reader> reader;

  corpus_fixture() {
    params.path = dir.file("q.db");
    params.synchronous_full = false; // durability is not what this suite measures
    auto store = sqlite_store::open(params);
    BOOST_REQUIRE(store);
    corpus_spec spec;
    spec.messages = 42000;            // ~2,100 sessions of ~20 messages
    auto r = generate_corpus(**store, spec);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    report = std::move(*r);
    // What the storage actor does in its idle time: the suite measures the indexes.
    auto indexed = index_all_pending((*store)->connection());
    BOOST_REQUIRE_MESSAGE(indexed, err_of(indexed));
    auto rd = store_reader::open(params);
    BOOST_REQUIRE(rd);
    reader = std::move(*rd);
    BOOST_TEST_MESSAGE("corpus: " << report.messages << " messages, " << report.sessions
                       << " sessions, " << report.probes.size() << " probes, ingest "
                       << report.ingest_seconds << " s");
  }

  probe_outcome run(const std::vector<recall_probe>& probes) {
    auto out = run_probes(reader->connection(), probes);
    BOOST_REQUIRE_MESSAGE(out, err_of(out));
    return std::move(*out);
  }

  std::vector<recall_probe> probes_where(bool (*pred)(const recall_probe&)) {
    std::vector<recall_probe> out;
    for (auto& p : report.probes)
      if (pred(p)) out.push_back(p);
    return out;
  }
};

corpus_fixture& corpus() {
  static corpus_fixture instance;
  return instance;
}

// Each test case sees the one corpus through these names.
struct shared_corpus {
  corpus_report& report = corpus().report;
  std::unique_ptr<store_reader>& reader = corpus().reader;
  probe_outcome run(const std::vector<recall_probe>& probes) { return corpus().run(probes); }
  std::vector<recall_probe> probes_where(bool (*pred)(const recall_probe&)) {
    return corpus().probes_where(pred);
  }
};

bool label_starts(const recall_probe& p, const char* prefix) {
  return p.label.rfind(prefix, 0) == 0;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(generated_corpus, shared_corpus)

BOOST_AUTO_TEST_CASE(the_corpus_has_thousands_of_sessions_and_every_fact_kind) {
  BOOST_TEST(report.sessions >= 2000);
  std::set<std::string> kinds;
  for (auto& p : report.probes)
    kinds.insert(p.label.substr(0, p.label.find('/')));
  BOOST_TEST(kinds == (std::set<std::string>{"archived", "code", "en", "foreign", "glued", "ja",
                                             "rolled", "zh"}),
             boost::test_tools::per_element());
  BOOST_TEST(report.probes.size() >= 1000u);
}

BOOST_AUTO_TEST_CASE(planted_sessions_are_in_the_top_three_for_99_percent_of_probes) {
  auto out = run(probes_where([](auto& p) { return p.expect == probe_expect::found; }));
  BOOST_TEST_MESSAGE("recall@3 = " << out.recall_at_3() << " (" << out.found_at_3 << "/"
                     << out.expected_found << ")");
  for (auto& m : out.misses)
    BOOST_TEST_MESSAGE("miss: " << m);
  BOOST_TEST(out.expected_found >= 800);
  BOOST_TEST(out.recall_at_3() >= required_recall_at_3);
}

BOOST_AUTO_TEST_CASE(every_probe_form_reaches_the_bar_on_its_own) {
  std::map<std::string, std::vector<recall_probe>> by_form;
  for (auto& p : report.probes)
    if (p.expect == probe_expect::found)
      by_form[p.label].push_back(p);
  BOOST_TEST(by_form.size() >= 15u);
  for (auto& [label, probes] : by_form) {
    auto out = run(probes);
    BOOST_TEST(out.recall_at_3() >= required_recall_at_3, label << " recall@3 = "
               << out.recall_at_3() << " over " << probes.size());
  }
}

BOOST_AUTO_TEST_CASE(rolled_back_facts_have_no_hit_unless_inactive_rows_are_asked_for) {
  auto hidden = run(probes_where([](auto& p) {
    return label_starts(p, "rolled/") && !p.request.include_inactive;
  }));
  BOOST_TEST(hidden.leaks == 0);
  auto asked = run(probes_where([](auto& p) {
    return label_starts(p, "rolled/") && p.request.include_inactive;
  }));
  BOOST_TEST(asked.expected_found >= 50);
  BOOST_TEST(asked.recall_at_3() >= required_recall_at_3);
}

BOOST_AUTO_TEST_CASE(another_users_facts_are_never_found) {
  auto foreign = probes_where([](auto& p) {
    return label_starts(p, "foreign/") && p.label.find("+other_user") != std::string::npos;
  });
  BOOST_TEST(foreign.size() >= 100u);
  BOOST_TEST(run(foreign).leaks == 0);
  // The same queries by the owner find them: the words are really there.
  auto owner = probes_where([](auto& p) {
    return label_starts(p, "foreign/") && p.label.find("+other_user") == std::string::npos;
  });
  BOOST_TEST(owner.size() == foreign.size());
  BOOST_TEST(run(owner).recall_at_3() >= required_recall_at_3);
}

BOOST_AUTO_TEST_CASE(archived_only_facts_are_found_and_reported_as_archived) {
  auto probes = probes_where([](auto& p) { return label_starts(p, "archived/"); });
  BOOST_TEST(probes.size() >= 100u);
  for (auto& p : probes) {
    auto r = recall_search(reader->connection(), p.request);
    BOOST_REQUIRE(r);
    auto it = std::find_if(r->hits.begin(), r->hits.end(),
                           [&](auto& h) { return h.hit.session_id == p.session_id; });
    BOOST_REQUIRE_MESSAGE(it != r->hits.end(), p.label << " " << p.request.query);
    BOOST_TEST(it->kind == recall_hit_kind::archived);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // recall_quality_test
