// Tests of the single-writer store (store/message_store.hpp: store/sqlite/sqlite_store,
// store/pg/pg_store; store/sqlite/store_reader): every operation of issue 3, checked field by
// field, on a real WAL file and on a throw-away PostgreSQL cluster (issue 26). A case
// over all_store_backends() runs on both; sqlite_only() marks an operation the
// PostgreSQL store does not have yet (store/pg/pg_store.hpp) or a SQLite mechanism.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/session_ids.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(store_ops_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;
namespace data = boost::unit_test::data;

namespace {

std::vector<int64_t> ids_of(const std::vector<message>& xs) {
  std::vector<int64_t> out;
  for (auto& m : xs)
    out.push_back(m.id);
  return out;
}

struct store_fixture {
  testing::temp_dir dir{"mneme-store"};
  store_params params;
  testing::test_store store;
  std::string sid;

  // Opens a fresh store of backend `b` holding one session (sid) of alice.
  void open(testing::store_backend b) {
    testing::use_backend(b, params, dir);
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
  }

  // Reopens the same database (same file / same schema).
  void reopen() {
    store.reset();
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }

  int64_t add(msg_role role, const std::string& text) {
    auto id = store->append(msg(sid, role, text));
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }

  // A system prompt and n user/assistant turns; returns the ids in order.
  std::vector<int64_t> conversation(int n) {
    std::vector<int64_t> ids{add(msg_role::system, "You are helpful.")};
    for (int i = 0; i < n; ++i)
      ids.push_back(add(i % 2 == 0 ? msg_role::user : msg_role::assistant,
                        "turn " + std::to_string(i)));
    return ids;
  }

  message summary_text(const std::string& text) {
    message s;
    s.role = msg_role::user;
    s.content = text;
    return s;
  }

  int64_t scalar(const char* sql) { return testing::store_scalar(store, sql); }

  sqlite3* sqlite_handle() {
    BOOST_REQUIRE(store.sqlite() != nullptr);
    return store.sqlite()->connection().native_handle();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(store_ops, store_fixture)

BOOST_DATA_TEST_CASE_F(store_fixture, an_appended_message_comes_back_field_for_field_with_bytes_intact,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  message m = msg(sid, msg_role::assistant, std::string{"我爱数据库 and \0 nul \xff\xfe bad utf8", 36});
  m.tool_calls = {tool_call{"call_1", "grep", R"({"q":"数据"})"}, tool_call{"c2", "ls", "{}"}};
  m.token_estimate = 17;
  auto id = store->append(m);
  BOOST_REQUIRE(id);
  message t = msg(sid, msg_role::tool, "result");
  t.tool_call_id = "call_1";
  t.tool_name = "grep";
  auto tid = store->append(t);
  BOOST_REQUIRE(tid);
  BOOST_TEST(*tid > *id);
  auto live = store->live_context(sid);
  BOOST_REQUIRE(live);
  BOOST_REQUIRE(live->size() == 2u);
  const auto& back = live->front();
  BOOST_TEST(back.id == *id);
  BOOST_TEST(back.session_id == sid);
  BOOST_TEST((back.role == msg_role::assistant));
  BOOST_TEST(back.content == m.content);
  BOOST_TEST(back.content.size() == 36u);
  BOOST_TEST((back.tool_calls == m.tool_calls));
  BOOST_TEST(back.timestamp_ms == m.timestamp_ms);
  BOOST_TEST(back.token_estimate == 17);
  BOOST_TEST((back.state() == row_state::live));
  BOOST_TEST(!back.is_summary);
  BOOST_TEST((*live)[1].tool_call_id == "call_1");
  BOOST_TEST((*live)[1].tool_name == "grep");
}

BOOST_DATA_TEST_CASE_F(store_fixture, a_batch_append_is_all_or_nothing,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  std::vector<message> batch{msg(sid, msg_role::user, "a"), msg(sid, msg_role::assistant, "b")};
  auto ok = store->append_batch(batch);
  BOOST_REQUIRE(ok);
  BOOST_TEST(ok->ids.size() == 2u);
  BOOST_TEST(ok->ids[1] == ok->ids[0] + 1);
  batch.push_back(msg("no-such-session", msg_role::user, "c"));
  auto bad = store->append_batch(batch);
  BOOST_REQUIRE(!bad);
  BOOST_TEST((bad.error() == errc::not_found));
  BOOST_TEST(store->live_context(sid)->size() == 2u);
}

// Each case breaks one rule of validate_new_message or names a bad session.
const std::vector<std::string> bad_append_cases{
  "unknown session", "empty session id", "role out of range", "archived flags",
  "rolled back flags", "replaced ids without summary", "summary without range",
  "negative timestamp", "negative estimate", "too large"};
const std::vector<errc> bad_append_codes{
  errc::not_found, errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request,
  errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request};

BOOST_DATA_TEST_CASE_F(store_fixture, an_invalid_append_is_refused_with_a_clear_error_and_stores_nothing,
                       data::make(testing::all_store_backends())
                         * (data::make(bad_append_cases) ^ data::make(bad_append_codes)),
                       backend, name, code) {
  open(backend);
  message m = msg(sid, msg_role::user, "text");
  if (name == "unknown session") m.session_id = "nope";
  if (name == "empty session id") m.session_id = "";
  if (name == "role out of range") m.role = static_cast<msg_role>(9);
  if (name == "archived flags") { m.active = false; m.compacted = true; }
  if (name == "rolled back flags") m.active = false;
  if (name == "replaced ids without summary") m.replaced_first_id = 1;
  if (name == "summary without range") m.is_summary = true;
  if (name == "negative timestamp") m.timestamp_ms = -1;
  if (name == "negative estimate") m.token_estimate = -5;
  if (name == "too large") m.content.assign(static_cast<size_t>(params.max_content_bytes) + 1, 'x');
  auto id = store->append(m);
  BOOST_REQUIRE(!id);
  BOOST_TEST((id.error() == code), name << ": " << render_error(id.error()));
  BOOST_TEST(render_error(id.error()).size() > std::string{"mneme::bad_request: "}.size());
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == 0);
}

BOOST_DATA_TEST_CASE_F(store_fixture, content_of_exactly_max_content_bytes_is_stored,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto huge = std::string(static_cast<size_t>(params.max_content_bytes), 'z');
  auto id = store->append(msg(sid, msg_role::tool, huge));
  BOOST_REQUIRE(id);
  BOOST_TEST(store->live_context(sid)->front().content.size() == huge.size());
}

BOOST_AUTO_TEST_CASE(the_default_content_cap_is_32_mib) {
  BOOST_TEST(store_params{}.max_content_bytes == 32 * 1024 * 1024);
  BOOST_TEST(store_params{}.max_batch == 512);
  BOOST_TEST(store_params{}.synchronous_full);
}

BOOST_DATA_TEST_CASE_F(store_fixture, an_ended_session_refuses_appends,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ended = store->end_session(sid, 2000, "rollover");
  BOOST_REQUIRE(ended);
  BOOST_TEST(ended->ended_at_ms == 2000);
  BOOST_TEST(ended->end_reason == "rollover");
  auto id = store->append(msg(sid, msg_role::user, "late"));
  BOOST_REQUIRE(!id);
  BOOST_TEST((id.error() == errc::bad_request));
}

BOOST_DATA_TEST_CASE_F(store_fixture, compaction_archives_the_middle_and_places_the_summary_between_head_and_tail,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(10); // system + 10 turns
  std::vector<int64_t> middle(ids.begin() + 4, ids.begin() + 8);
  compaction_commit c{sid, middle, summary_text("[CONTEXT COMPACTION — REFERENCE ONLY] s1"), false, {}};
  auto s = store->commit_compaction(c);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  BOOST_TEST(s->is_summary);
  BOOST_TEST(s->replaced_first_id == middle.front());
  BOOST_TEST(s->replaced_last_id == middle.back());
  BOOST_TEST(s->id > ids.back());
  auto live = store->live_context(sid);
  BOOST_REQUIRE(live);
  std::vector<int64_t> want(ids.begin(), ids.begin() + 4);
  want.push_back(s->id);
  want.insert(want.end(), ids.begin() + 8, ids.end());
  BOOST_TEST(ids_of(*live) == want, boost::test_tools::per_element());
  auto all = store->range(sid, ids.front(), s->id);
  BOOST_REQUIRE(all);
  BOOST_TEST(all->size() == ids.size() + 1); // nothing deleted
  for (auto& m : *all) {
    bool archived = std::count(middle.begin(), middle.end(), m.id) > 0;
    BOOST_TEST((m.state() == (archived ? row_state::archived : row_state::live)));
  }
  auto st = store->stats(sid);
  BOOST_TEST(st->archived_rows == 4);
  BOOST_TEST(st->live_rows == static_cast<int64_t>(want.size()));
  BOOST_TEST(st->summary_rows == 1);
  // A page of the range: its first rows in id order, whatever the range's end.
  auto page = store->range(sid, middle.front(), s->id, 3);
  BOOST_REQUIRE_MESSAGE(page, err_of(page));
  BOOST_TEST(ids_of(*page) == std::vector<int64_t>(middle.begin(), middle.begin() + 3),
             boost::test_tools::per_element());
  BOOST_TEST(store->range(sid, s->id, s->id, 1)->size() == 1u);
  BOOST_TEST((store->range(sid, 1, s->id, 0).error() == errc::bad_request));
}

BOOST_DATA_TEST_CASE_F(store_fixture, a_second_compaction_can_fold_the_previous_summary,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(12);
  auto s1 = store->commit_compaction({sid, {ids[4], ids[5], ids[6]}, summary_text("s1"), false, {}});
  BOOST_REQUIRE(s1);
  // live: ids[0..3], s1, ids[7..12]; fold s1 and ids[7], ids[8].
  auto s2 = store->commit_compaction({sid, {s1->id, ids[7], ids[8]}, summary_text("s2"), false, {}});
  BOOST_REQUIRE_MESSAGE(s2, err_of(s2));
  auto live = store->live_context(sid);
  std::vector<int64_t> want{ids[0], ids[1], ids[2], ids[3], s2->id, ids[9], ids[10], ids[11], ids[12]};
  BOOST_TEST(ids_of(*live) == want, boost::test_tools::per_element());
  BOOST_TEST(s2->replaced_first_id == ids[7]);
  BOOST_TEST(s2->replaced_last_id == s1->id);
  BOOST_TEST(scalar("SELECT count(*) FROM message_state WHERE archived_by > 0") == 6);
}

const std::vector<std::string> bad_compaction_cases{
  "empty", "not live", "gap", "out of order", "other session", "unknown session",
  "system role summary", "empty summary text"};
const std::vector<errc> bad_compaction_codes{
  errc::bad_request, errc::bad_request, errc::bad_request, errc::bad_request,
  errc::bad_request, errc::not_found, errc::bad_request, errc::bad_request};

BOOST_DATA_TEST_CASE_F(store_fixture, an_invalid_compaction_changes_nothing,
                       data::make(testing::all_store_backends())
                         * (data::make(bad_compaction_cases) ^ data::make(bad_compaction_codes)),
                       backend, name, code) {
  open(backend);
  auto ids = conversation(8);
  auto other = store->create_session(session_record{}, 1000);
  BOOST_REQUIRE(other);
  auto foreign = store->append(msg(other->id, msg_role::user, "elsewhere"));
  BOOST_REQUIRE(foreign);
  // Archive ids[5] first so it is not live.
  BOOST_REQUIRE(store->commit_compaction({sid, {ids[5]}, summary_text("s0"), false, {}}));
  auto before = scalar("SELECT coalesce(sum(active * 7 + compacted * 3 + archived_by), 0) FROM message_state");
  auto rows_before = scalar("SELECT count(*) FROM messages");
  compaction_commit c{sid, {ids[2], ids[3]}, summary_text("s"), false, {}};
  if (name == "empty") c.archive_ids.clear();
  if (name == "not live") c.archive_ids = {ids[5]};
  if (name == "gap") c.archive_ids = {ids[2], ids[4]};
  if (name == "out of order") c.archive_ids = {ids[3], ids[2]};
  if (name == "other session") c.archive_ids = {*foreign};
  if (name == "unknown session") c.session_id = "nope";
  if (name == "system role summary") c.summary.role = msg_role::system;
  if (name == "empty summary text") c.summary.content.clear();
  auto s = store->commit_compaction(c);
  BOOST_REQUIRE(!s);
  BOOST_TEST((s.error() == code), name << ": " << render_error(s.error()));
  BOOST_TEST(scalar("SELECT coalesce(sum(active * 7 + compacted * 3 + archived_by), 0) FROM message_state")
             == before);
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == rows_before);
}

BOOST_DATA_TEST_CASE_F(store_fixture, compaction_flips_flags_without_rewriting_any_message_row,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(30);
  auto rewrites = testing::watch_message_rewrites(store);
  trigger_state t;
  t.compaction_count = 1;
  std::vector<int64_t> middle(ids.begin() + 4, ids.end() - 20);
  auto s = store->commit_compaction({sid, middle, summary_text("s"), true, t});
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  BOOST_TEST(rewrites() == 0);
  BOOST_TEST(store->triggers(sid)->compaction_count == 1); // same transaction
}

BOOST_DATA_TEST_CASE_F(store_fixture, reset_starts_a_child_session_with_head_and_latest_summary_and_keeps_old_rows,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(12);
  auto s1 = store->commit_compaction({sid, {ids[4], ids[5]}, summary_text("s1"), false, {}});
  auto s2 = store->commit_compaction({sid, {s1->id, ids[6], ids[7]}, summary_text("s2 latest"), false, {}});
  BOOST_REQUIRE(s2);
  auto rows_before = scalar("SELECT count(*) FROM messages");
  auto child = store->reset_session(sid, 3, 5000, "compaction_exhausted");
  BOOST_REQUIRE_MESSAGE(child, err_of(child));
  BOOST_TEST(child->id != sid);
  BOOST_TEST(child->parent_id == sid);
  BOOST_TEST(child->session_key == "chat-1");
  BOOST_TEST(child->user_id == "alice");
  BOOST_TEST(child->started_at_ms == 5000);
  auto old = store->session(sid);
  BOOST_TEST(old->ended_at_ms == 5000);
  BOOST_TEST(old->end_reason == "compaction_exhausted");
  auto live = store->live_context(child->id);
  BOOST_REQUIRE(live);
  std::vector<std::string> texts;
  for (auto& m : *live)
    texts.push_back(m.content);
  std::vector<std::string> want{"You are helpful.", "turn 0", "turn 1", "turn 2", "s2 latest"};
  BOOST_TEST(texts == want, boost::test_tools::per_element());
  BOOST_TEST(live->back().is_summary);
  // The old session is untouched: same rows, same live context.
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == rows_before + 5);
  BOOST_TEST(store->live_context(sid)->size() == 4u + 1u + 5u);
  auto again = store->reset_session(sid, 3, 6000, "x");
  BOOST_REQUIRE(!again);
  BOOST_TEST((again.error() == errc::bad_request));
}

BOOST_DATA_TEST_CASE_F(store_fixture, reset_without_summary_keeps_the_head_and_its_tool_answers,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  add(msg_role::system, "sys");
  add(msg_role::user, "u");
  message call = msg(sid, msg_role::assistant, "calling");
  call.tool_calls = {tool_call{"c1", "ls", "{}"}};
  BOOST_REQUIRE(store->append(call));
  message answer = msg(sid, msg_role::tool, "files");
  answer.tool_call_id = "c1";
  BOOST_REQUIRE(store->append(answer));
  add(msg_role::user, "later");
  auto child = store->reset_session(sid, 2, 5000, "compaction_exhausted");
  BOOST_REQUIRE(child);
  auto live = store->live_context(child->id);
  BOOST_REQUIRE(live->size() == 4u); // sys, u, call, its answer; not "later"
  BOOST_TEST(live->back().tool_call_id == "c1");
}

// Issue 25 item 8: a head row that cannot fit the window stays in the old session
// (whole, searchable there) and is not copied; without a limit the head is copied as is.
BOOST_DATA_TEST_CASE_F(store_fixture, reset_never_copies_a_row_over_the_row_limit,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  add(msg_role::system, "sys");
  add(msg_role::user, std::string(40000, 'x')); // about 10,000 tokens
  add(msg_role::assistant, "ok");
  add(msg_role::user, "later");
  auto child = store->reset_session(sid, 2, 5000, "compaction_exhausted", 4096);
  BOOST_REQUIRE_MESSAGE(child, err_of(child));
  auto live = store->live_context(child->id);
  BOOST_REQUIRE(live);
  BOOST_REQUIRE_EQUAL(live->size(), 2u); // sys, ok
  BOOST_TEST(live->at(0).content == "sys");
  BOOST_TEST(live->at(1).content == "ok");
  BOOST_TEST(store->live_context(sid)->at(1).content.size() == 40000u); // kept in the old one
  BOOST_TEST((store->reset_session(child->id, 2, 6000, "x", -1).error() == errc::bad_request));
}

BOOST_DATA_TEST_CASE_F(store_fixture, rollback_restores_the_live_context_of_the_checkpoint_even_across_a_compaction,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(8);
  auto at_checkpoint = store->live_context(sid);
  auto cp = store->create_checkpoint(sid, "before-refactor", 3000);
  BOOST_REQUIRE(cp);
  BOOST_TEST(cp->last_message_id == ids.back());
  auto extra = add(msg_role::user, "after checkpoint");
  auto s = store->commit_compaction({sid, {ids[3], ids[4], ids[5]}, summary_text("s"), false, {}});
  BOOST_REQUIRE(s);
  auto restored = store->rollback_to_checkpoint(sid, "before-refactor");
  BOOST_REQUIRE_MESSAGE(restored, err_of(restored));
  BOOST_TEST(ids_of(*restored) == ids_of(*at_checkpoint), boost::test_tools::per_element());
  auto rows = store->range(sid, extra, s->id);
  for (auto& m : *rows)
    BOOST_TEST((m.state() == row_state::rolled_back));
  auto cps = store->checkpoints(sid);
  BOOST_REQUIRE(cps->size() == 1u);
  BOOST_TEST(cps->front().name == "before-refactor");
  auto missing = store->rollback_to_checkpoint(sid, "nope");
  BOOST_TEST((missing.error() == errc::not_found));
}

// Each row sets one trigger_state field; every field must survive on its own.
BOOST_DATA_TEST_CASE_F(store_fixture, every_trigger_state_field_persists_across_a_reopen,
                       data::make(testing::all_store_backends()) * data::xrange(8), backend,
                       field) {
  open(backend);
  trigger_state t;
  switch (field) {
    case 0: t.cooldown_until_ms = 1700000600000; break;
    case 1: t.cooldown_reason = "summary failed: 503"; break;
    case 2: t.anti_thrash_strikes = 2; break;
    case 3: t.lock_until_ms = 1700000300000; break;
    case 4: t.probe_pending = true; break;
    case 5: t.fallback_streak = 4; break;
    case 6: t.compaction_count = 123456789012; break;
    case 7: t.last_prompt_tokens = 150001; break;
  }
  BOOST_TEST(!(t == trigger_state{}));
  BOOST_REQUIRE(!store->save_triggers(sid, t));
  reopen();
  auto back = store->triggers(sid);
  BOOST_REQUIRE(back);
  BOOST_TEST((*back == t));
  BOOST_TEST((store->save_triggers("nope", t) == errc::not_found));
}

BOOST_DATA_TEST_CASE_F(store_fixture, sessions_are_listed_newest_first_by_user_key_and_openness,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  session_record r;
  r.user_id = "bob";
  r.session_key = "k2";
  auto b1 = store->create_session(r, 2000);
  auto b2 = store->create_session(r, 3000);
  BOOST_REQUIRE(b1 && b2);
  BOOST_REQUIRE(store->end_session(b1->id, 4000, "done"));
  session_filter f;
  f.user_id = "bob";
  auto bobs = store->sessions(f);
  BOOST_REQUIRE(bobs->size() == 2u);
  BOOST_TEST(bobs->front().id == b2->id);
  f.open_only = true;
  BOOST_TEST(store->sessions(f)->size() == 1u);
  BOOST_TEST(store->sessions(session_filter{})->size() == 3u);
  f = session_filter{};
  f.session_key = "chat-1";
  BOOST_TEST(store->sessions(f)->front().id == sid);
  f.limit = 0;
  BOOST_TEST((store->sessions(f).error() == errc::bad_request));
}

// The gateway looks a key up for every key it has not seen: a lookup by key (or by
// user) must use its index, not scan every session (opening N keys cost N^2).
BOOST_DATA_TEST_CASE_F(store_fixture, session_lookups_by_key_or_user_use_an_index,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  for (int i = 0; i < 200; ++i) {
    session_record r;
    r.user_id = "user-" + std::to_string(i % 7);
    r.session_key = "key-" + std::to_string(i);
    BOOST_REQUIRE(store->create_session(r, 1000 + i));
  }
  auto* db = sqlite_handle();
  auto full_scan_steps = [&](bool reset) {
    int64_t steps = 0;
    for (auto* st = sqlite3_next_stmt(db, nullptr); st; st = sqlite3_next_stmt(db, st))
      if (std::string{sqlite3_sql(st)}.find("FROM sessions") != std::string::npos)
        steps += sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, reset ? 1 : 0);
    return steps;
  };
  session_filter by_key;
  by_key.session_key = "key-150";
  session_filter by_user;
  by_user.user_id = "user-3";
  by_user.open_only = true;
  BOOST_REQUIRE(store->sessions(by_key)); // prepared (and cached) once
  BOOST_REQUIRE(store->sessions(by_user));
  full_scan_steps(true);
  auto found = store->sessions(by_key);
  BOOST_REQUIRE(found);
  BOOST_REQUIRE(found->size() == 1u);
  BOOST_TEST(found->front().session_key == "key-150");
  auto users = store->sessions(by_user);
  BOOST_REQUIRE(users);
  BOOST_TEST(users->size() == 29u); // i % 7 == 3 for i < 200
  BOOST_TEST(full_scan_steps(false) == 0);
}

BOOST_DATA_TEST_CASE_F(store_fixture, session_creation_checks_ids_and_parents,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  session_record r;
  r.id = "fixed-id_1";
  BOOST_REQUIRE(store->create_session(r, 1));
  BOOST_TEST((store->create_session(r, 1).error() == errc::bad_request)); // duplicate
  r.id = "bad id; DROP TABLE sessions";
  BOOST_TEST((store->create_session(r, 1).error() == errc::bad_request));
  r.id.clear();
  r.parent_id = "missing";
  BOOST_TEST((store->create_session(r, 1).error() == errc::not_found));
  BOOST_TEST((store->stats("missing").error() == errc::not_found));
  BOOST_TEST((store->live_context("missing").error() == errc::not_found));
  BOOST_TEST((store->range(sid, 5, 2).error() == errc::bad_request));
}

BOOST_DATA_TEST_CASE_F(store_fixture, stats_count_rows_by_state,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(6);
  BOOST_REQUIRE(store->create_checkpoint(sid, "cp", 1));
  add(msg_role::user, "to be undone");
  BOOST_REQUIRE(store->commit_compaction({sid, {ids[2], ids[3]}, summary_text("s"), false, {}}));
  BOOST_REQUIRE(store->rollback_to_checkpoint(sid, "cp"));
  // After the rollback: the summary and "to be undone" are rolled back, ids[2..3] live again.
  auto st = store->stats(sid);
  BOOST_REQUIRE(st);
  BOOST_TEST(st->live_rows == 7);
  BOOST_TEST(st->archived_rows == 0);
  BOOST_TEST(st->rolled_back_rows == 2);
  BOOST_TEST(st->summary_rows == 1);
  BOOST_TEST(st->first_id == ids.front());
}

BOOST_DATA_TEST_CASE_F(store_fixture, jsonl_export_writes_every_row_with_its_flags,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto ids = conversation(5);
  auto s = store->commit_compaction({sid, {ids[2], ids[3]}, summary_text("sum"), false, {}});
  BOOST_REQUIRE(s);
  std::ostringstream out;
  auto lines = store->export_jsonl(sid, out);
  BOOST_REQUIRE(lines);
  BOOST_TEST(*lines == 7);
  std::istringstream in{out.str()};
  std::string line;
  std::map<int64_t, nlohmann::json> rows;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    rows[j["id"].get<int64_t>()] = j;
  }
  BOOST_REQUIRE(rows.size() == 7u);
  BOOST_TEST(rows[ids[2]]["state"] == "archived");
  BOOST_TEST(rows[ids[2]]["active"] == false);
  BOOST_TEST(rows[ids[2]]["compacted"] == true);
  BOOST_TEST(rows[ids[2]]["archived_by"] == s->id);
  BOOST_TEST(rows[s->id]["is_summary"] == true);
  BOOST_TEST(rows[s->id]["replaced_first_id"] == ids[2]);
  BOOST_TEST(rows[ids[0]]["role"] == "system");
  BOOST_TEST(rows[ids[1]]["content"] == "turn 0");
  for (auto key : {"session_id", "tool_call_id", "tool_calls", "tool_name", "timestamp_ms",
                   "token_estimate", "replaced_last_id"})
    BOOST_TEST(rows[ids[1]].contains(key), key);
}

BOOST_DATA_TEST_CASE_F(store_fixture, a_reader_sees_committed_rows_beside_the_writer_and_cannot_write,
                       data::make(testing::sqlite_only()), backend) {
  open(backend);
  conversation(3);
  auto reader = store_reader::open(params);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  BOOST_TEST((*reader)->live_context(sid)->size() == 4u);
  add(msg_role::user, "new");
  BOOST_TEST((*reader)->live_context(sid)->size() == 5u); // fresh after commit
  auto rc = sqlite3_exec((*reader)->connection().native_handle(),
                         "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                         " VALUES ('x', 'u', 'k', 1)", nullptr, nullptr, nullptr);
  BOOST_TEST((rc & 0xff) == SQLITE_READONLY);
  std::ostringstream out;
  BOOST_TEST(*(*reader)->export_jsonl(sid, out) == 5);
}

BOOST_DATA_TEST_CASE_F(store_fixture, the_schema_refuses_to_delete_a_message,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  conversation(1);
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM messages"));
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM message_state"));
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == 2);
}

BOOST_DATA_TEST_CASE_F(store_fixture, group_commit_blocks_keep_a_failed_request_out_and_the_rest_in,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  BOOST_REQUIRE(!store->begin_group());
  auto a = store->insert_in_group(msg(sid, msg_role::user, "a"));
  auto bad = store->insert_batch_in_group({msg(sid, msg_role::user, "b"), msg("nope", msg_role::user, "c")});
  auto d = store->insert_batch_in_group({msg(sid, msg_role::user, "d")});
  BOOST_TEST(static_cast<bool>(a));
  BOOST_TEST(!bad);
  BOOST_TEST(static_cast<bool>(d));
  BOOST_TEST(store->group_open());
  BOOST_REQUIRE(!store->commit_group());
  auto live = store->live_context(sid);
  BOOST_REQUIRE(live->size() == 2u);
  BOOST_TEST(live->front().content == "a");
  BOOST_TEST(live->back().content == "d");
}

// Agent turns' tools per key (store/session_tools.hpp): the newest setting wins.
BOOST_DATA_TEST_CASE_F(store_fixture, the_newest_tools_of_a_key_win_and_bad_settings_are_refused,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  BOOST_TEST(*store->session_tools("chat-1") == "");
  BOOST_REQUIRE(!store->put_session_tools("chat-1", sid, R"([{"name":"a"}])", 1000));
  BOOST_REQUIRE(!store->put_session_tools("chat-1", sid, R"([{"name":"b"}])", 2000));
  BOOST_REQUIRE(!store->put_session_tools("chat-2", sid, "[]", 3000));
  BOOST_TEST(*store->session_tools("chat-1") == R"([{"name":"b"}])");
  BOOST_TEST((store->put_session_tools("", sid, "[]", 1) == errc::bad_request));
  BOOST_TEST((store->put_session_tools("k", sid, "[]", -1) == errc::bad_request));
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM session_tools"));
}

// A group remembers the sessions it found open; the next group looks again.
BOOST_DATA_TEST_CASE_F(store_fixture, a_session_ended_after_a_group_refuses_the_next_groups_appends,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  BOOST_REQUIRE(!store->begin_group());
  BOOST_TEST(static_cast<bool>(store->insert_in_group(msg(sid, msg_role::user, "a"))));
  BOOST_TEST(static_cast<bool>(store->insert_in_group(msg(sid, msg_role::user, "b"))));
  BOOST_REQUIRE(!store->commit_group());
  BOOST_REQUIRE(store->end_session(sid, 5000, "done"));
  BOOST_REQUIRE(!store->begin_group());
  auto late = store->insert_in_group(msg(sid, msg_role::user, "c"));
  auto late_batch = store->insert_batch_in_group({msg(sid, msg_role::user, "d")});
  BOOST_REQUIRE(!store->commit_group());
  BOOST_REQUIRE(!late);
  BOOST_TEST((late.error() == errc::bad_request));
  BOOST_TEST(!late_batch);
  BOOST_TEST(scalar("SELECT count(*) FROM messages") == 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(session_ids_are_44_hex_characters_ordered_by_creation_time) {
  session_id_generator gen;
  std::set<std::string> seen;
  std::string prev;
  for (int i = 0; i < 1000; ++i) {
    auto id = gen.next(1700000000000 + i);
    BOOST_TEST(id.size() == 44u);
    BOOST_TEST(id.find_first_not_of("0123456789abcdef") == std::string::npos);
    BOOST_TEST(id > prev);
    BOOST_TEST(valid_session_id(id));
    prev = id;
    seen.insert(id);
  }
  BOOST_TEST(seen.size() == 1000u);
  BOOST_TEST(gen.next(1700000000000).substr(0, 12) == "018bcfe56800");
}

BOOST_AUTO_TEST_SUITE_END() // store_ops_test
