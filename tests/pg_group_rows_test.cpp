// Tests of the PostgreSQL group commit sent in one statement (store/pg/pg_group_rows.hpp,
// pg_store's group): every row comes back byte-exact whatever its bytes (quotes,
// backslashes, braces, commas, NUL, invalid UTF-8), ids ascend in arrival order, a
// refused row or batch adds nothing, and the hint reserves the group's ids at once; a
// session the store created takes its first row without a lookup.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "store/pg/pg_store.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(pg_group_rows_test)

using namespace mneme;
using mneme::testing::err_of;
using mneme::testing::msg;

BOOST_AUTO_TEST_CASE(a_group_of_awkward_rows_commits_them_byte_exact_in_order) {
  testing::temp_dir dir{"mneme-pg-group"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  session_record rec;
  rec.user_id = "u";
  auto created = (*store)->create_session(rec, 1000);
  BOOST_REQUIRE(created);
  auto sid = created->id;

  const std::vector<std::string> texts{
    std::string{"quote \" backslash \\ braces {a,b} NULL \0 and \xff\xfe", 46},
    "{\"json\": [1, 2]}", "", "NULL", "plain 数据"};
  auto tool = msg(sid, msg_role::assistant, "calls");
  tool.tool_calls.push_back({"call_\"1\"", "grep", "{\"q\": \"a\\\\b\"}"});
  tool.idempotency_key = "key \"with\" quotes\\";

  BOOST_REQUIRE(!(*store)->begin_group());
  (*store)->expect_group_rows(static_cast<int64_t>(texts.size()) + 3);
  std::vector<int64_t> ids;
  auto first = (*store)->insert_in_group(msg(sid, msg_role::user, texts[0]));
  BOOST_REQUIRE_MESSAGE(first, err_of(first));
  ids.push_back(*first);
  // A refused single and a refused batch (one bad row) add nothing.
  BOOST_TEST(!(*store)->insert_in_group(msg("no-such-session", msg_role::user, "x")));
  BOOST_TEST(!(*store)->insert_batch_in_group(
    {msg(sid, msg_role::user, "kept out"), msg("no-such-session", msg_role::user, "x")}));
  BOOST_TEST((*store)->group_open());
  std::vector<message> batch;
  for (std::size_t i = 1; i < texts.size(); ++i)
    batch.push_back(msg(sid, msg_role::user, texts[i]));
  auto more = (*store)->insert_batch_in_group(batch);
  BOOST_REQUIRE_MESSAGE(more, err_of(more));
  ids.insert(ids.end(), more->ids.begin(), more->ids.end());
  auto last = (*store)->insert_in_group(tool);
  BOOST_REQUIRE(last);
  ids.push_back(*last);
  BOOST_REQUIRE(!(*store)->commit_group());

  for (std::size_t i = 1; i < ids.size(); ++i)
    BOOST_TEST(ids[i] > ids[i - 1]);
  auto rows = (*store)->range(sid, 1, ids.back() + 100);
  BOOST_REQUIRE(rows);
  BOOST_REQUIRE_EQUAL(rows->size(), texts.size() + 1);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    BOOST_TEST((*rows)[i].id == ids[i]);
    BOOST_TEST((*rows)[i].content == texts[i]);
  }
  BOOST_TEST(rows->back().tool_calls == tool.tool_calls);
  auto keyed = (*store)->idempotent_rows(created->session_key, tool.idempotency_key, 0, 10);
  BOOST_REQUIRE(keyed);
  BOOST_REQUIRE_EQUAL(keyed->size(), 1u);
  BOOST_TEST(keyed->front().id == ids.back());
  auto live = (*store)->live_context(sid);
  BOOST_REQUIRE(live);
  BOOST_TEST(live->size() == texts.size() + 1);
}

// A session this store created takes its first append without a lookup of its
// session (the writer would otherwise spend a round trip per new session, all at once
// when many start together); one created before the store opened is looked up once.
// Counted as PostgreSQL's scans of the sessions table by the store's connection.
BOOST_AUTO_TEST_CASE(a_session_the_store_created_is_known_open_at_its_first_append) {
  testing::temp_dir dir{"mneme-pg-group"};
  store_params params;
  testing::use_backend(testing::store_backend::postgres, params, dir);
  session_record rec;
  rec.user_id = "u";
  std::string before_open;
  {
    auto earlier = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(earlier, err_of(earlier));
    auto created = (*earlier)->create_session(rec, 1000);
    BOOST_REQUIRE(created);
    before_open = created->id;
  }
  auto store = testing::open_test_store(params);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto created = (*store)->create_session(rec, 1000);
  BOOST_REQUIRE(created);
  // The connection's counts reach the shared statistics when it next goes idle.
  auto sessions_scans = [&] {
    testing::store_scalar(*store, "SELECT 0 FROM (SELECT pg_stat_force_next_flush()) f");
    return testing::store_scalar(*store, "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0)"
                                         " FROM pg_stat_user_tables"
                                         " WHERE relid = 'sessions'::regclass");
  };
  auto scans_of_first_append = [&](const std::string& sid) {
    auto before = sessions_scans();
    BOOST_REQUIRE(!(*store)->begin_group());
    auto id = (*store)->insert_in_group(msg(sid, msg_role::user, "first"));
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    BOOST_REQUIRE(!(*store)->commit_group());
    return sessions_scans() - before;
  };
  auto created_here = scans_of_first_append(created->id);
  auto created_before = scans_of_first_append(before_open);
  BOOST_TEST_MESSAGE("scans of sessions: created here " << created_here << ", before the open "
                                                        << created_before);
  BOOST_TEST(created_here < created_before);
  // Both rows are stored.
  BOOST_TEST((*store)->range(created->id, 1, 1000000)->size() == 1u);
  BOOST_TEST((*store)->range(before_open, 1, 1000000)->size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END() // pg_group_rows_test
