// Tests of the one commit skeleton (store/session_writer.hpp run_on_open_session) and of
// the session commits written on it once for every backend (store/session_commits.hpp),
// against a recording set of primitives: what runs inside the transaction, when it is
// committed and when rolled back. The backends' own primitives are tested through the
// stores (store_ops_test, store_replace_test, child_session_store_test on both backends).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages/errc.hpp"
#include "store/session_commits.hpp"
#include "store/session_writer.hpp"
#include "store/store_errors.hpp"

BOOST_AUTO_TEST_SUITE(session_commits_test)

using namespace mneme;

namespace {

// Primitives over an in-memory session: live rows 1..4 of session "s"; every call is
// logged in order. `fail_at` names a call that throws, `refuse_open` makes the
// open-session check fail, `commit_error` makes the commit fail.
class recording_writer final : public session_writer {
public:
  std::vector<std::string> calls;
  std::string fail_at;
  bool refuse_open = false;
  bool commit_error = false;
  std::vector<int64_t> live{1, 2, 3, 4};
  std::vector<std::pair<int64_t, int64_t>> archived; // (row, archived into)
  int64_t next_id = 100;

  caf::error begin(access a) override {
    calls.push_back(a == access::read ? "begin read" : "begin write");
    return {};
  }
  caf::error commit() override {
    calls.push_back("commit");
    if (commit_error)
      return caf::make_error(errc::storage_disk_full, "disk full");
    return {};
  }
  void roll_back() noexcept override { calls.push_back("roll back"); }
  caf::error failure(const std::exception& e, const char* what) override {
    return caf::make_error(errc::storage_failed, std::string{what} + ": " + e.what());
  }
  caf::error require_open(const std::string& session_id) override {
    note("require_open");
    if (refuse_open)
      return not_found("unknown session '" + session_id + "'");
    return {};
  }
  caf::expected<session_record> load_session(const std::string& session_id) override {
    note("load_session");
    session_record r;
    r.id = session_id;
    r.user_id = "u";
    r.session_key = "k";
    return r;
  }
  caf::expected<std::vector<live_place>> live_places(const std::string&) override {
    note("live_places");
    std::vector<live_place> out;
    for (auto id : live)
      out.push_back(live_place{id, id});
    return out;
  }
  caf::expected<std::vector<message>> live_rows(const std::string& session_id) override {
    note("live_rows");
    std::vector<message> out;
    for (auto id : live) {
      message m;
      m.id = id;
      m.session_id = session_id;
      m.content = "row " + std::to_string(id);
      out.push_back(m);
    }
    return out;
  }
  caf::expected<std::optional<row_place>> find_row(int64_t id) override {
    note("find_row");
    if (id > 50)
      return std::optional<row_place>{};
    return std::optional<row_place>{row_place{"s", false, true}};
  }
  caf::expected<int64_t> insert_message(const message&, int64_t position) override {
    note("insert_message at " + std::to_string(position));
    return next_id++;
  }
  caf::error archive_rows(const std::vector<int64_t>& ids,
                          const std::vector<int64_t>& by) override {
    note("archive_rows");
    for (size_t i = 0; i < ids.size(); ++i)
      archived.emplace_back(ids[i], by[i]);
    return {};
  }
  caf::error write_triggers(const std::string&, const trigger_state&) override {
    note("write_triggers");
    return {};
  }
  std::string next_session_id(time_ms) override { return "child"; }
  caf::expected<bool> insert_session(const session_record&, const char*) override {
    note("insert_session");
    return true;
  }
  caf::error end_session(const std::string&, time_ms, const std::string& reason,
                         const char*) override {
    note("end_session " + reason);
    return {};
  }
  caf::expected<int64_t> last_row_id(const std::string&) override {
    note("last_row_id");
    return int64_t{4};
  }
  caf::error put_checkpoint(const checkpoint_record&) override {
    note("put_checkpoint");
    return {};
  }
  caf::expected<std::optional<checkpoint_mark>> find_checkpoint(const std::string&,
                                                                const std::string& name) override {
    note("find_checkpoint");
    if (name == "gone")
      return std::optional<checkpoint_mark>{};
    return std::optional<checkpoint_mark>{checkpoint_mark{2, name == "retired" ? "later" : ""}};
  }
  caf::error roll_back_after(const std::string&, int64_t mark, const std::string&) override {
    note("roll_back_after " + std::to_string(mark));
    return {};
  }
  caf::expected<int64_t> insert_compaction_log(const compaction_log_entry& e) override {
    note("insert_compaction_log");
    logged.push_back(e);
    return int64_t{1};
  }
  std::vector<compaction_log_entry> logged;

private:
  void note(const std::string& call) {
    calls.push_back(call);
    if (call.rfind(fail_at, 0) == 0 && !fail_at.empty())
      throw std::runtime_error("lost the connection");
  }
};

using calls = std::vector<std::string>;

compaction_commit compact(std::vector<int64_t> ids) {
  compaction_commit c;
  c.session_id = "s";
  c.archive_ids = std::move(ids);
  c.summary.role = msg_role::assistant;
  c.summary.content = "summary";
  return c;
}

bool is(const caf::error& err, errc code) {
  return err == code;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_compaction_inserts_its_summary_at_the_first_archived_place_and_commits) {
  recording_writer w;
  auto r = session_commits::compaction(w, compact({2, 3}), store_params{});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->id == 100);
  BOOST_TEST(r->replaced_first_id == 2);
  BOOST_TEST(r->replaced_last_id == 3);
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "live_places", "insert_message at 2",
                               "archive_rows", "commit"}),
             boost::test_tools::per_element());
  BOOST_TEST((w.archived == std::vector<std::pair<int64_t, int64_t>>{{2, 100}, {3, 100}}));
}

BOOST_AUTO_TEST_CASE(a_refused_body_is_rolled_back_and_never_committed) {
  recording_writer w;
  auto r = session_commits::compaction(w, compact({2, 4}), store_params{});
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::bad_request));
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "live_places", "roll back"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_closed_session_stops_the_operation_before_its_body) {
  recording_writer w;
  w.refuse_open = true;
  auto r = session_commits::rollback_after_row(w, "s", 2, "label");
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::not_found));
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "roll back"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_exception_of_a_primitive_is_rolled_back_and_named_by_the_operation) {
  recording_writer w;
  w.fail_at = "archive_rows";
  auto r = session_commits::compaction(w, compact({2, 3}), store_params{});
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::storage_failed));
  BOOST_TEST(render_error(r.error()).find("compaction: lost the connection") != std::string::npos,
             render_error(r.error()));
  BOOST_TEST(w.calls.back() == "roll back");
  BOOST_TEST(std::count(w.calls.begin(), w.calls.end(), "commit") == 0);
}

BOOST_AUTO_TEST_CASE(a_failed_commit_is_rolled_back_and_answered_with_its_error) {
  recording_writer w;
  w.commit_error = true;
  auto r = session_commits::checkpoint(w, "s", "cp", 7);
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::storage_disk_full));
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "last_row_id", "put_checkpoint",
                               "commit", "roll back"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(checks_that_need_no_database_refuse_before_any_transaction) {
  recording_writer w;
  BOOST_TEST(is(session_commits::rollback_after_row(w, "s", -1, "x").error(), errc::bad_request));
  BOOST_TEST(is(session_commits::compaction(w, compact({}), store_params{}).error(),
                errc::bad_request));
  BOOST_TEST(is(session_commits::child_continuation(w, compact({2}), -1, store_params{}).error(),
                errc::bad_request));
  BOOST_TEST(is(session_commits::checkpoint(w, "s", "", 1).error(), errc::bad_request));
  BOOST_TEST(is(session_commits::reset(w, "s", -1, 1, "r", 0).error(), errc::bad_request));
  BOOST_TEST(w.calls.empty());
}

BOOST_AUTO_TEST_CASE(a_child_continuation_copies_head_summary_and_tail_and_ends_the_parent) {
  recording_writer w;
  auto r = session_commits::child_continuation(w, compact({2, 3}), 50, store_params{});
  BOOST_REQUIRE(r);
  // Head (row 1), summary, tail (row 4): three inserts into the child, then the run
  // archived into the summary (the second insert, id 101) and the parent ended.
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "load_session", "live_rows",
                               "insert_session", "write_triggers", "insert_message at 0",
                               "insert_message at 0", "insert_message at 0", "archive_rows",
                               "end_session continued_in_child", "live_rows", "commit"}),
             boost::test_tools::per_element());
  BOOST_TEST((w.archived == std::vector<std::pair<int64_t, int64_t>>{{2, 101}, {3, 101}}));
}

BOOST_AUTO_TEST_CASE(a_compaction_writes_its_log_row_inside_its_transaction_with_its_range) {
  recording_writer w;
  auto c = compact({2, 3});
  c.has_log = true;
  c.log.mode = "summarizer";
  c.log.origin = "manual";
  c.log.outcome = "grew"; // the commit says what happened, not the caller
  c.log.first_id = 99;
  c.log.identifiers_in = 4;
  c.log.identifiers_kept = 3;
  auto r = session_commits::compaction(w, c, store_params{});
  BOOST_REQUIRE(r);
  BOOST_TEST(w.calls == (calls{"begin write", "require_open", "live_places", "insert_message at 2",
                               "archive_rows", "insert_compaction_log", "commit"}),
             boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(w.logged.size(), 1u);
  const auto& e = w.logged[0];
  BOOST_TEST(e.outcome == "committed");
  BOOST_TEST(e.session_id == "s");
  BOOST_TEST(e.first_id == 2);
  BOOST_TEST(e.last_id == 3);
  BOOST_TEST(e.rows_replaced == 2);
  BOOST_TEST(e.summary_id == 100);
  BOOST_TEST(e.identifiers_kept == 3);
}

BOOST_AUTO_TEST_CASE(a_log_that_breaks_the_rules_refuses_the_commit_before_any_transaction) {
  recording_writer w;
  auto c = compact({2, 3});
  c.has_log = true;
  c.log.mode = "telepathy";
  c.log.origin = "automatic";
  c.log.outcome = "committed";
  auto r = session_commits::compaction(w, c, store_params{});
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::bad_request));
  BOOST_TEST(render_error(r.error()).find("unknown mode 'telepathy'") != std::string::npos);
  BOOST_TEST(w.calls.empty());
}

BOOST_AUTO_TEST_CASE(a_child_continuation_logs_under_the_child_where_its_summary_is) {
  recording_writer w;
  auto c = compact({2, 3});
  c.has_log = true;
  c.log.mode = "fallback";
  c.log.origin = "automatic";
  c.log.outcome = "committed";
  BOOST_REQUIRE(session_commits::child_continuation(w, c, 50, store_params{}));
  BOOST_REQUIRE_EQUAL(w.logged.size(), 1u);
  BOOST_TEST(w.logged[0].session_id == "child");
  BOOST_TEST(w.logged[0].summary_id == 101);
  BOOST_TEST(w.logged[0].first_id == 2);
  BOOST_TEST(w.logged[0].last_id == 3);
}

BOOST_AUTO_TEST_CASE(a_rollback_to_a_checkpoint_reads_its_mark_then_rolls_back_after_it) {
  recording_writer w;
  auto r = session_commits::rollback_to_checkpoint(w, "s", "cp");
  BOOST_REQUIRE(r);
  BOOST_TEST(w.calls == (calls{"begin read", "require_open", "find_checkpoint", "commit",
                               "begin write", "require_open", "roll_back_after 2", "live_rows",
                               "commit"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_unknown_or_retired_checkpoint_is_refused_without_a_write) {
  recording_writer w;
  BOOST_TEST(is(session_commits::rollback_to_checkpoint(w, "s", "gone").error(), errc::not_found));
  BOOST_TEST(is(session_commits::rollback_to_checkpoint(w, "s", "retired").error(),
                errc::bad_request));
  BOOST_TEST(std::count(w.calls.begin(), w.calls.end(), "begin write") == 0);
}

BOOST_AUTO_TEST_CASE(a_replacement_names_why_an_archive_id_is_not_live) {
  recording_writer w;
  replacement_commit c;
  c.session_id = "s";
  c.archive_ids = {2, 9};
  c.rows = {message{}};
  c.rows[0].content = "folded";
  c.positions = {2};
  auto r = session_commits::replacement(w, c);
  BOOST_REQUIRE(!r);
  BOOST_TEST(is(r.error(), errc::bad_request));
  BOOST_TEST(render_error(r.error()).find("row 9 of session 's' is not live (archived)")
               != std::string::npos,
             render_error(r.error()));
  c.archive_ids = {2, 99};
  BOOST_TEST(is(session_commits::replacement(w, c).error(), errc::not_found));
}

BOOST_AUTO_TEST_SUITE_END() // session_commits_test
