// Tests of continue_in_child (SPEC §3 `in_place: false`) on both store backends
// (tests/store_backends.hpp; recall and fault injection on SQLite only): one
// transaction ends the parent and continues in a child holding head + summary +
// tail; the parent's rows stay, every refusal leaves the file unchanged, recall
// finds the archived middle and the summary once each.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/sqlite/sqlite_recall.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(child_session_store_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

std::vector<int64_t> ids_of(const std::vector<message>& xs) {
  std::vector<int64_t> out;
  for (auto& m : xs)
    out.push_back(m.id);
  return out;
}

std::vector<std::string> texts_of(const std::vector<message>& xs) {
  std::vector<std::string> out;
  for (auto& m : xs)
    out.push_back(m.content);
  return out;
}

constexpr time_ms child_start_ms = 5000;

struct child_fixture {
  testing::temp_dir dir{"mneme-child"};
  store_params params;
  testing::test_store store;
  std::string sid;
  std::vector<int64_t> ids;            // system + 10 turns, in order
  std::vector<std::string> texts;      // their texts

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
    session_record rec;
    rec.user_id = "alice";
    rec.session_key = "chat-1";
    rec.model = "fake-chat";
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE(created);
    sid = created->id;
    add(msg_role::system, "You are helpful.");
    for (int i = 0; i < 10; ++i)
      add(i % 2 == 0 ? msg_role::user : msg_role::assistant,
          "turn " + std::to_string(i) + " word" + std::to_string(i) + "zq");
  }

  int64_t add(msg_role role, const std::string& text, const std::string& session = {}) {
    message m;
    m.session_id = session.empty() ? sid : session;
    m.role = role;
    m.content = text;
    m.timestamp_ms = 1700000000000 + static_cast<int64_t>(ids.size());
    m.token_estimate = static_cast<int64_t>(text.size() / 4) + 4;
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    if (session.empty()) {
      ids.push_back(*id);
      texts.push_back(text);
    }
    return *id;
  }

  // The middle: rows 4..7 (head = system + 3 turns, tail = 3 turns).
  compaction_commit middle_commit() {
    compaction_commit c;
    c.session_id = sid;
    c.archive_ids.assign(ids.begin() + 4, ids.begin() + 8);
    c.summary.role = msg_role::assistant;
    c.summary.content = "[CONTEXT COMPACTION — REFERENCE ONLY] summaryword of turns 3 to 6";
    c.summary.token_estimate = 20;
    return c;
  }

  int64_t scalar(const std::string& sql) { return testing::store_scalar(store, sql); }

  sqlite3* sqlite_handle() {
    BOOST_REQUIRE(store.sqlite() != nullptr);
    return store.sqlite()->connection().native_handle();
  }

  // Everything a refused request must leave as it was.
  std::string fingerprint() {
    std::ostringstream out;
    out << scalar("SELECT count(*) FROM messages") << '/'
        << scalar("SELECT count(*) FROM sessions") << '/'
        << scalar("SELECT coalesce(sum(active * 7 + compacted * 3 + archived_by), 0) FROM message_state")
        << '/' << scalar("SELECT count(*) FROM sessions WHERE ended_at_ms > 0");
    return out.str();
  }

  std::vector<recall_hit> search(const std::string& query) {
    recall_request req;
    req.user_id = "alice";
    req.query = query;
    req.max_sessions = recall_max_sessions;
    auto r = recall_search(store.sqlite()->connection(), req);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return r->hits;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(child_session_store, child_fixture)

BOOST_DATA_TEST_CASE_F(child_fixture, the_child_holds_head_summary_and_tail_and_the_parent_ends_with_a_link,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto c = middle_commit();
  c.update_triggers = true;
  c.triggers.compaction_count = 4;
  c.triggers.anti_thrash_strikes = 1;
  c.triggers.last_prompt_tokens = 1234;
  auto rows_before = scalar("SELECT count(*) FROM messages");
  auto live = store->continue_in_child(c, child_start_ms);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));

  // Child live context: head copies, the summary, tail copies, all in the child.
  std::vector<std::string> want(texts.begin(), texts.begin() + 4);
  want.push_back(c.summary.content);
  want.insert(want.end(), texts.begin() + 8, texts.end());
  BOOST_TEST(texts_of(*live) == want, boost::test_tools::per_element());
  auto child_id = live->front().session_id;
  BOOST_TEST(child_id != sid);
  for (auto& m : *live) {
    BOOST_TEST(m.session_id == child_id);
    BOOST_TEST((m.state() == row_state::live));
    BOOST_TEST(m.id > ids.back()); // copies are new rows; the parent's keep their ids
  }
  const auto& summary = (*live)[4];
  BOOST_TEST(summary.is_summary);
  BOOST_TEST(summary.replaced_first_id == ids[4]);
  BOOST_TEST(summary.replaced_last_id == ids[7]);
  BOOST_TEST((summary.role == msg_role::assistant));
  BOOST_TEST((*live)[1].timestamp_ms == 1700000000001); // a copy keeps its original fields
  BOOST_TEST((*live)[1].token_estimate == static_cast<int64_t>(texts[1].size() / 4) + 4);
  BOOST_TEST(store->live_context(child_id)->size() == live->size());

  // Child record: same user, key and model, parent link, the trigger state as given.
  auto child = store->session(child_id);
  BOOST_REQUIRE(child);
  BOOST_TEST(child->parent_id == sid);
  BOOST_TEST(child->user_id == "alice");
  BOOST_TEST(child->session_key == "chat-1");
  BOOST_TEST(child->model == "fake-chat");
  BOOST_TEST(child->started_at_ms == child_start_ms);
  BOOST_TEST(child->ended_at_ms == 0);
  BOOST_TEST(child->triggers.compaction_count == 4);
  BOOST_TEST(child->triggers.anti_thrash_strikes == 1);
  BOOST_TEST(child->triggers.last_prompt_tokens == 1234);

  // Parent: ended, every row kept; the middle archived by the child's summary, head
  // and tail untouched (still its live context at its end).
  auto parent = store->session(sid);
  BOOST_TEST(parent->ended_at_ms == child_start_ms);
  BOOST_TEST(parent->end_reason == "continued_in_child");
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == rows_before + static_cast<int64_t>(live->size()));
  auto all = store->range(sid, ids.front(), ids.back());
  BOOST_REQUIRE(all);
  BOOST_TEST(ids_of(*all) == ids, boost::test_tools::per_element());
  for (size_t i = 0; i < all->size(); ++i) {
    bool middle = i >= 4 && i < 8;
    BOOST_TEST(((*all)[i].state() == (middle ? row_state::archived : row_state::live)), i);
    BOOST_TEST((*all)[i].content == texts[i]);
  }
  BOOST_TEST(scalar("SELECT count(*) FROM message_state WHERE archived_by = "
                    + std::to_string(summary.id))
             == 4);
  std::vector<int64_t> parent_live(ids.begin(), ids.begin() + 4);
  parent_live.insert(parent_live.end(), ids.begin() + 8, ids.end());
  BOOST_TEST(ids_of(*store->live_context(sid)) == parent_live, boost::test_tools::per_element());
  // The ended parent takes no more rows; the child does.
  message late;
  late.session_id = sid;
  late.role = msg_role::user;
  late.content = "late";
  BOOST_TEST(!store->append(late));
  late.session_id = child_id;
  BOOST_TEST(static_cast<bool>(store->append(late)));
}

BOOST_DATA_TEST_CASE_F(child_fixture, without_a_trigger_update_the_child_inherits_the_parent_trigger_state,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  trigger_state t;
  t.cooldown_until_ms = 900000;
  t.cooldown_reason = "summary_failed";
  t.fallback_streak = 2;
  BOOST_REQUIRE(!store->save_triggers(sid, t));
  auto live = store->continue_in_child(middle_commit(), child_start_ms);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));
  auto child = store->session(live->front().session_id);
  BOOST_TEST(child->triggers.cooldown_until_ms == 900000);
  BOOST_TEST(child->triggers.cooldown_reason == "summary_failed");
  BOOST_TEST(child->triggers.fallback_streak == 2);
}

BOOST_DATA_TEST_CASE_F(child_fixture, no_message_row_is_rewritten_only_state_flips_and_new_rows,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto rewrites = testing::watch_message_rewrites(store);
  BOOST_REQUIRE(store->continue_in_child(middle_commit(), child_start_ms));
  BOOST_TEST(rewrites() == 0);
}

BOOST_DATA_TEST_CASE_F(child_fixture, a_failure_inside_the_transaction_leaves_the_file_as_it_was,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  auto before = fingerprint();
  // The copy of the last tail row fails half way through the transaction.
  auto sql = "CREATE TEMP TRIGGER fail_copy BEFORE INSERT ON main.messages"
             " WHEN new.content = '" + texts.back() + "' AND new.session_id <> '" + sid + "'"
             " BEGIN SELECT RAISE(ABORT, 'injected'); END;";
  BOOST_REQUIRE(sqlite3_exec(sqlite_handle(), sql.c_str(), nullptr, nullptr, nullptr)
                == SQLITE_OK);
  auto live = store->continue_in_child(middle_commit(), child_start_ms);
  BOOST_REQUIRE(!live);
  BOOST_TEST(fingerprint() == before);
  BOOST_TEST(store->session(sid)->ended_at_ms == 0);
  BOOST_TEST(store->live_context(sid)->size() == ids.size());
  BOOST_TEST(scalar("SELECT count(*) FROM sessions WHERE parent_id <> ''") == 0);
}

const std::vector<std::string> refusal_cases{
  "empty", "not live", "gap", "out of order", "other session", "unknown session",
  "ended session", "system role summary", "empty summary text", "summary of another session",
  "oversized summary", "negative now"};
const std::vector<errc> refusal_codes{
  errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request,
  errc::bad_request, errc::not_found,   errc::bad_request, errc::bad_request,
  errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request};

BOOST_DATA_TEST_CASE_F(child_fixture, a_refused_request_names_the_problem_and_changes_nothing,
                       data::make(testing::all_store_backends())
                         * (data::make(refusal_cases) ^ data::make(refusal_codes)),
                       backend, name, code) {
  open(backend);
  auto other = store->create_session(session_record{}, 1000);
  BOOST_REQUIRE(other);
  auto foreign = add(msg_role::user, "elsewhere", other->id);
  // Archive ids[9] so it is not live any more.
  message s0;
  s0.role = msg_role::user;
  s0.content = "s0";
  BOOST_REQUIRE(store->commit_compaction({sid, {ids[9]}, s0, false, {}}));
  if (name == "ended session")
    BOOST_REQUIRE(store->end_session(other->id, 2000, "done"));
  auto c = middle_commit();
  time_ms now = child_start_ms;
  if (name == "empty") c.archive_ids.clear();
  if (name == "not live") c.archive_ids = {ids[9]};
  if (name == "gap") c.archive_ids = {ids[2], ids[4]};
  if (name == "out of order") c.archive_ids = {ids[5], ids[4]};
  if (name == "other session") c.archive_ids = {foreign};
  if (name == "unknown session") c.session_id = "nope";
  if (name == "ended session") c = compaction_commit{other->id, {foreign}, c.summary, false, {}};
  if (name == "system role summary") c.summary.role = msg_role::system;
  if (name == "empty summary text") c.summary.content.clear();
  if (name == "summary of another session") c.summary.session_id = other->id;
  if (name == "oversized summary") c.summary.content.assign(params.max_content_bytes + 1, 'x');
  if (name == "negative now") now = -1;
  auto before = fingerprint();
  auto live = store->continue_in_child(c, now);
  BOOST_REQUIRE(!live);
  BOOST_TEST((live.error() == code), name << ": " << render_error(live.error()));
  bool names_operation = render_error(live.error()).find("child session") != std::string::npos
                         || code == errc::not_found || name == "ended session";
  BOOST_TEST(names_operation, name << ": " << render_error(live.error()));
  BOOST_TEST(fingerprint() == before, name);
}

BOOST_DATA_TEST_CASE_F(child_fixture, recall_finds_the_archived_middle_and_the_summary_exactly_once,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  auto live = store->continue_in_child(middle_commit(), child_start_ms);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));
  auto child_id = live->front().session_id;
  for (int turn = 3; turn <= 6; ++turn) { // the middle: ids[4..7] = turns 3..6
    auto hits = search("word" + std::to_string(turn) + "zq");
    BOOST_REQUIRE_EQUAL(hits.size(), 1u);
    BOOST_TEST(hits[0].hit.session_id == sid);
    BOOST_TEST(hits[0].hit.id == ids[static_cast<size_t>(turn) + 1]);
    BOOST_TEST((hits[0].kind == recall_hit_kind::archived));
  }
  auto summary_hits = search("summaryword");
  BOOST_REQUIRE_EQUAL(summary_hits.size(), 1u);
  BOOST_TEST(summary_hits[0].hit.session_id == child_id);
  BOOST_TEST((summary_hits[0].kind == recall_hit_kind::summary));
  // Head and tail live in both: the parent's originals and the child's copies (the
  // representation the reset uses; see store/sqlite/sqlite_store_child.cpp). Parent and
  // child are one conversation: one hit, whichever session holds the best row.
  for (int turn : {0, 2, 7, 9}) {
    auto hits = search("word" + std::to_string(turn) + "zq");
    BOOST_REQUIRE_EQUAL(hits.size(), 1u);
    BOOST_TEST((hits[0].hit.session_id == sid || hits[0].hit.session_id == child_id));
    BOOST_TEST(hits[0].conversation_id == sid);
  }
}

BOOST_DATA_TEST_CASE_F(child_fixture, a_child_can_continue_in_a_grandchild_and_keeps_copied_summaries,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto live = store->continue_in_child(middle_commit(), child_start_ms);
  BOOST_REQUIRE(live);
  auto child_id = live->front().session_id;
  // Child live: 4 head, summary, 3 tail. Compact the summary and the first tail row.
  compaction_commit c;
  c.session_id = child_id;
  c.archive_ids = {(*live)[4].id, (*live)[5].id};
  c.summary.role = msg_role::user;
  c.summary.content = "second summary";
  auto next = store->continue_in_child(c, child_start_ms + 1);
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  auto grandchild = store->session(next->front().session_id);
  BOOST_TEST(grandchild->parent_id == child_id);
  BOOST_TEST(store->session(child_id)->end_reason == "continued_in_child");
  std::vector<std::string> want(texts.begin(), texts.begin() + 4);
  want.push_back("second summary");
  want.insert(want.end(), texts.begin() + 9, texts.end());
  BOOST_TEST(texts_of(*next) == want, boost::test_tools::per_element());
  // The first summary is archived in the child, searchable as an archived summary
  // (recall runs on SQLite only so far: store/pg/pg_store.hpp).
  if (store.sqlite() != nullptr) {
    auto hits = search("summaryword");
    BOOST_REQUIRE_EQUAL(hits.size(), 1u);
    BOOST_TEST((hits[0].kind == recall_hit_kind::archived_summary));
  }
  // Listing by key: the newest open session is the grandchild.
  session_filter f;
  f.session_key = "chat-1";
  f.open_only = true;
  auto open = store->sessions(f);
  BOOST_REQUIRE(open);
  BOOST_REQUIRE_EQUAL(open->size(), 1u);
  BOOST_TEST(open->front().id == grandchild->id);
}

BOOST_DATA_TEST_CASE_F(child_fixture, a_copied_summary_in_the_tail_keeps_its_provenance,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  // A summary in the tail (from an earlier in-place compaction) stays a summary.
  message s1;
  s1.role = msg_role::user;
  s1.content = "early summary";
  auto early = store->commit_compaction({sid, {ids[8], ids[9]}, s1, false, {}});
  BOOST_REQUIRE(early);
  auto live = store->continue_in_child(middle_commit(), child_start_ms);
  BOOST_REQUIRE_MESSAGE(live, err_of(live));
  auto copy = std::find_if(live->begin(), live->end(),
                           [](const message& m) { return m.content == "early summary"; });
  BOOST_REQUIRE(copy != live->end());
  BOOST_TEST(copy->is_summary);
  BOOST_TEST(copy->replaced_first_id == ids[8]);
  BOOST_TEST(copy->replaced_last_id == ids[9]);
  BOOST_TEST(live->back().content == texts.back());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // child_session_store_test
