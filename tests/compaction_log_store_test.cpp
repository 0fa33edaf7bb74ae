// Tests of the compaction log on both store backends (tests/store_backends.hpp;
// store/compaction_log.hpp): a committed compaction writes its row in its own
// transaction (with the range, count and summary id of the commit), a refused one
// writes none, an attempt that committed nothing is written alone, rows come back
// oldest first and bounded, a child continuation's row belongs to the child, bad
// entries are refused naming the field, and no row is ever rewritten or deleted.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "messages/mneme_types.hpp"
#include "store/compaction_log.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(compaction_log_store_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

struct log_fixture {
  testing::temp_dir dir{"mneme-clog"};
  store_params params;
  testing::test_store store;
  std::string sid;
  std::vector<int64_t> ids;

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    session_record rec;
    rec.user_id = "alice";
    rec.session_key = "chat-1";
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE(created);
    sid = created->id;
    for (int i = 0; i < 8; ++i) {
      message m;
      m.session_id = sid;
      m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
      m.content = "turn " + std::to_string(i) + " in src/file" + std::to_string(i) + ".cpp";
      m.token_estimate = 10;
      auto id = store->append(m);
      BOOST_REQUIRE_MESSAGE(id, err_of(id));
      ids.push_back(*id);
    }
  }

  compaction_log_entry entry(const std::string& outcome) const {
    compaction_log_entry e;
    e.session_id = sid;
    e.at_ms = 5000;
    e.trigger = "T12_manual_session";
    e.origin = "manual";
    e.mode = "summarizer";
    e.outcome = outcome;
    e.tokens_before = 80;
    e.tokens_after = 40;
    e.summarizer_model = "fake-summarizer";
    e.duration_ms = 12;
    e.summary_tokens = 120;
    e.identifiers_in = 4;
    e.identifiers_kept = 3;
    return e;
  }

  compaction_commit commit_of(std::vector<int64_t> archive, bool with_log) const {
    compaction_commit c;
    c.session_id = sid;
    c.archive_ids = std::move(archive);
    c.summary.session_id = sid;
    c.summary.role = msg_role::assistant;
    c.summary.content = "[summary] src/file2.cpp and src/file3.cpp";
    c.has_log = with_log;
    c.log = entry("committed");
    return c;
  }

  std::vector<compaction_log_entry> log() {
    auto rows = store->compaction_log(sid, 100);
    BOOST_REQUIRE_MESSAGE(rows, err_of(rows));
    return *rows;
  }
};

} // namespace

BOOST_DATA_TEST_CASE(a_committed_compaction_writes_one_row_with_its_range_and_summary,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  auto c = f.commit_of({f.ids[2], f.ids[3], f.ids[4]}, true);
  c.log.first_id = 1; // the commit's own range wins
  auto summary = f.store->commit_compaction(c);
  BOOST_REQUIRE_MESSAGE(summary, err_of(summary));
  auto rows = f.log();
  BOOST_REQUIRE_EQUAL(rows.size(), 1u);
  const auto& e = rows[0];
  BOOST_TEST(e.id > 0);
  BOOST_TEST(e.session_id == f.sid);
  BOOST_TEST(e.outcome == "committed");
  BOOST_TEST(e.first_id == f.ids[2]);
  BOOST_TEST(e.last_id == f.ids[4]);
  BOOST_TEST(e.rows_replaced == 3);
  BOOST_TEST(e.summary_id == summary->id);
  BOOST_TEST(e.trigger == "T12_manual_session");
  BOOST_TEST(e.origin == "manual");
  BOOST_TEST(e.mode == "summarizer");
  BOOST_TEST(e.tokens_before == 80);
  BOOST_TEST(e.tokens_after == 40);
  BOOST_TEST(e.summarizer_model == "fake-summarizer");
  BOOST_TEST(e.duration_ms == 12);
  BOOST_TEST(e.summary_tokens == 120);
  BOOST_TEST(e.identifiers_in == 4);
  BOOST_TEST(e.identifiers_kept == 3);
  BOOST_TEST(e.attempt == 1);
}

BOOST_DATA_TEST_CASE(a_refused_compaction_writes_no_row_and_one_without_a_log_none_either,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  // Not a contiguous run: refused inside the transaction, after the log was checked.
  BOOST_REQUIRE(!f.store->commit_compaction(f.commit_of({f.ids[2], f.ids[4]}, true)));
  BOOST_TEST(f.log().empty());
  BOOST_REQUIRE(f.store->commit_compaction(f.commit_of({f.ids[2], f.ids[3]}, false)));
  BOOST_TEST(f.log().empty());
}

BOOST_DATA_TEST_CASE(an_attempt_that_committed_nothing_is_logged_alone_in_order,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  auto grew = f.entry("grew");
  grew.detail = std::string(2000, 'x');
  auto first = f.store->log_compaction_attempt(grew);
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  BOOST_REQUIRE(f.store->commit_compaction(f.commit_of({f.ids[2], f.ids[3]}, true)));
  auto timeout = f.entry("timeout");
  timeout.mode = "fallback";
  timeout.attempt = 2;
  BOOST_REQUIRE(f.store->log_compaction_attempt(timeout));
  auto rows = f.log();
  BOOST_REQUIRE_EQUAL(rows.size(), 3u);
  BOOST_TEST(rows[0].id == *first);
  BOOST_TEST(rows[0].outcome == "grew");
  BOOST_TEST(rows[0].summary_id == 0);
  BOOST_TEST(rows[0].detail.size() == compaction_log_max_text);
  BOOST_TEST(rows[1].outcome == "committed");
  BOOST_TEST(rows[2].outcome == "timeout");
  BOOST_TEST(rows[2].mode == "fallback");
  BOOST_TEST(rows[2].attempt == 2);
  // The newest rows when limited, still oldest first.
  auto last_two = f.store->compaction_log(f.sid, 2);
  BOOST_REQUIRE(last_two);
  BOOST_REQUIRE_EQUAL(last_two->size(), 2u);
  BOOST_TEST((*last_two)[0].outcome == "committed");
  BOOST_TEST((*last_two)[1].outcome == "timeout");
}

BOOST_DATA_TEST_CASE(a_child_continuation_logs_under_the_child,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  auto live = f.store->continue_in_child(f.commit_of({f.ids[2], f.ids[3]}, true), 6000);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));
  const auto child = live->front().session_id;
  BOOST_TEST(f.log().empty()); // the parent keeps no row
  auto rows = f.store->compaction_log(child, 10);
  BOOST_REQUIRE(rows);
  BOOST_REQUIRE_EQUAL(rows->size(), 1u);
  BOOST_TEST((*rows)[0].first_id == f.ids[2]);
  BOOST_TEST((*rows)[0].last_id == f.ids[3]);
  bool summary_in_child = false;
  for (const auto& m : *live)
    summary_in_child = summary_in_child || (m.is_summary && m.id == (*rows)[0].summary_id);
  BOOST_TEST(summary_in_child);
}

BOOST_DATA_TEST_CASE(bad_entries_and_reads_are_refused_naming_what_was_wrong,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  auto refused = [&](compaction_log_entry e, const std::string& why) {
    auto r = f.store->log_compaction_attempt(e);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error() == errc::bad_request);
    BOOST_TEST(err_of(r).find(why) != std::string::npos, err_of(r));
  };
  auto e = f.entry("failed");
  e.mode = "magic";
  refused(e, "unknown mode 'magic'");
  e = f.entry("failed");
  e.outcome = "fine";
  refused(e, "unknown outcome 'fine'");
  e = f.entry("failed");
  e.origin = "";
  refused(e, "unknown origin");
  refused(f.entry("committed"), "written by the compaction's own commit");
  e = f.entry("failed");
  e.identifiers_kept = 9;
  refused(e, "identifiers_kept is above identifiers_in");
  e = f.entry("failed");
  e.tokens_before = -1;
  refused(e, "tokens_before is negative");
  e = f.entry("failed");
  e.attempt = 3;
  refused(e, "attempt must be 1 or 2");
  e = f.entry("failed");
  e.session_id = "no-such-session";
  auto unknown = f.store->log_compaction_attempt(e);
  BOOST_REQUIRE(!unknown);
  BOOST_TEST(unknown.error() == errc::not_found);
  BOOST_TEST(f.store->compaction_log(f.sid, 0).error() == errc::bad_request);
  BOOST_TEST(f.store->compaction_log("no-such-session", 5).error() == errc::not_found);
  BOOST_TEST(f.log().empty());
}

BOOST_DATA_TEST_CASE(a_log_row_is_never_rewritten_or_deleted,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  BOOST_REQUIRE(f.store->log_compaction_attempt(f.entry("grew")));
  BOOST_TEST(!testing::store_exec_ok(f.store, "UPDATE compaction_log SET outcome = 'committed'"));
  BOOST_TEST(!testing::store_exec_ok(f.store, "DELETE FROM compaction_log"));
  BOOST_TEST(testing::store_scalar(f.store, "SELECT count(*) FROM compaction_log") == 1);
  BOOST_TEST(f.log().at(0).outcome == "grew");
}

BOOST_DATA_TEST_CASE(an_ended_session_still_takes_the_row_of_its_last_attempt,
                     data::make(testing::all_store_backends()), backend) {
  log_fixture f;
  f.open(backend);
  BOOST_REQUIRE(f.store->end_session(f.sid, 7000, "done"));
  BOOST_REQUIRE(f.store->log_compaction_attempt(f.entry("commit_failed")));
  BOOST_TEST(f.log().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
