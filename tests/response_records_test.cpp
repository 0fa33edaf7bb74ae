// Tests of the Responses door's records (store/response_records.hpp; SQLite schema v10,
// PostgreSQL schema v8): a response is stored with its session and answer row, read
// back byte for byte, marked deleted once (then unknown to a second delete) and never
// lost: the schema refuses a DELETE and a rewrite of what was recorded. A live
// conversation record's body alone may be replaced (store/conversation_rewrite.hpp;
// SQLite v13, PostgreSQL v11), also in a database migrated from the version before.
// Every case runs on both backends (tests/store_backends.hpp).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/response_records.hpp"
#include "tests/schema_at_version.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(response_records_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

using testing::store_backend;

struct fixture {
  testing::temp_dir dir{"mneme-responses"};
  store_params params;
  testing::test_store store;

  void open(store_backend b) {
    testing::use_backend(b, params, dir);
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }

  static response_record record(const std::string& id) {
    response_record r;
    r.id = id;
    r.user_id = "alice";
    r.session_key = "key \xe4\xb8\xad";
    r.session_id = "s-1";
    r.last_row_id = 42;
    r.previous_id = "resp_before";
    r.created_at_ms = 1700000000000;
    r.body = R"({"id":")" + id + R"(","object":"response","output":[]})";
    return r;
  }
};

} // namespace

BOOST_DATA_TEST_CASE_F(fixture, a_response_is_read_back_as_it_was_recorded,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto r = record("resp_1");
  BOOST_REQUIRE_MESSAGE(!store->put_response(r), "put");
  auto back = store->response("resp_1");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(back->user_id == r.user_id);
  BOOST_TEST(back->session_key == r.session_key);
  BOOST_TEST(back->session_id == r.session_id);
  BOOST_TEST(back->last_row_id == 42);
  BOOST_TEST(back->previous_id == "resp_before");
  BOOST_TEST(back->created_at_ms == r.created_at_ms);
  BOOST_TEST(back->deleted_at_ms == 0);
  BOOST_TEST(back->body == r.body);
  auto unknown = store->response("resp_nope");
  BOOST_REQUIRE(!unknown);
  BOOST_TEST((unknown.error() == errc::not_found));
  // One id is one response.
  BOOST_TEST(static_cast<bool>(store->put_response(r)));
}

BOOST_DATA_TEST_CASE_F(fixture, a_deleted_response_is_marked_once_and_kept,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  BOOST_REQUIRE(!store->put_response(record("resp_2")));
  auto gone = store->delete_response("resp_2", 5000);
  BOOST_REQUIRE_MESSAGE(gone, err_of(gone));
  BOOST_TEST(gone->deleted_at_ms == 5000);
  BOOST_TEST(gone->last_row_id == 42);
  auto again = store->delete_response("resp_2", 6000);
  BOOST_REQUIRE(!again);
  BOOST_TEST((again.error() == errc::not_found));
  auto kept = store->response("resp_2");
  BOOST_REQUIRE(kept);
  BOOST_TEST(kept->deleted_at_ms == 5000);
  // The schema keeps the row and what it recorded.
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM responses"));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE responses SET last_row_id = 1"));
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM responses") == 1);
}

BOOST_DATA_TEST_CASE_F(fixture, a_record_the_check_refuses_is_not_stored,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto bad_id = record("chat_1");
  auto no_key = record("resp_3");
  no_key.session_key.clear();
  auto deleted = record("resp_4");
  deleted.deleted_at_ms = 1;
  for (const auto& r : {bad_id, no_key, deleted}) {
    auto err = store->put_response(r);
    BOOST_TEST((err == errc::bad_request), r.id);
  }
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM responses") == 0);
}

BOOST_DATA_TEST_CASE_F(fixture, a_conversation_record_needs_no_session_and_is_kept_alike,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  auto conv = record("conv_1");
  conv.session_key = "conv_1";
  conv.session_id.clear(); // no item yet: no session
  conv.last_row_id = 0;
  conv.previous_id.clear();
  BOOST_REQUIRE_MESSAGE(!store->put_response(conv), "put");
  auto back = store->response("conv_1");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(back->session_id.empty());
  BOOST_TEST(back->body == conv.body);
  BOOST_TEST(!store->put_response(conv)); // the same record again: one id, one record
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM responses") == 1);
  auto gone = store->delete_response("conv_1", 7000);
  BOOST_REQUIRE_MESSAGE(gone, err_of(gone));
  BOOST_TEST(store->response("conv_1")->deleted_at_ms == 7000);
  // a response still needs its session
  auto orphan = record("resp_5");
  orphan.session_id.clear();
  BOOST_TEST((store->put_response(orphan) == errc::bad_request));
}

namespace {

response_record conversation_record(const std::string& id, const std::string& body) {
  auto conv = fixture::record(id);
  conv.session_key = id;
  conv.session_id.clear();
  conv.last_row_id = 0;
  conv.previous_id.clear();
  conv.body = body;
  return conv;
}

// `UPDATE responses SET body = 'new' WHERE id = ID` straight to the schema.
std::string set_body_sql(store_backend b, const std::string& id) {
  return std::string{"UPDATE responses SET body = "}
         + (b == store_backend::sqlite ? "'new'" : "'new'::bytea") + " WHERE id = '" + id + "'";
}

} // namespace

BOOST_DATA_TEST_CASE_F(fixture, a_live_conversation_record_has_its_body_replaced_and_nothing_else,
                       data::make(testing::all_store_backends()), backend) {
  open(backend);
  BOOST_REQUIRE(!store->put_response(conversation_record("conv_m", R"({"metadata":{}})")));
  auto next = conversation_record("conv_m", R"({"metadata":{"k":"v"}})");
  BOOST_REQUIRE_MESSAGE(!store->put_response(next), "rewrite");
  auto back = store->response("conv_m");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(back->body == next.body);
  BOOST_TEST(back->created_at_ms == next.created_at_ms);
  // any other field differing: refused, the body kept
  auto moved = conversation_record("conv_m", "{}");
  moved.user_id = "bob";
  auto renamed = conversation_record("conv_m", "{}");
  renamed.session_key = "other";
  auto older = conversation_record("conv_m", "{}");
  older.created_at_ms = 1;
  for (const auto& r : {moved, renamed, older})
    BOOST_TEST((store->put_response(r) == errc::bad_request));
  BOOST_TEST(store->response("conv_m")->body == next.body);
  // a response is never rewritten, by a put or by the schema
  BOOST_REQUIRE(!store->put_response(record("resp_m")));
  auto again = record("resp_m");
  again.body = "{}";
  BOOST_TEST(static_cast<bool>(store->put_response(again)));
  BOOST_TEST(store->response("resp_m")->body == record("resp_m").body);
  BOOST_TEST(!testing::store_exec_ok(store, set_body_sql(backend, "resp_m")));
  BOOST_TEST(testing::store_exec_ok(store, set_body_sql(backend, "conv_m")));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE responses SET last_row_id = 3"
                                            " WHERE id = 'conv_m'"));
  // a deleted one: unknown to a put, and kept by the schema
  BOOST_REQUIRE(store->delete_response("conv_m", 9000));
  BOOST_TEST((store->put_response(next) == errc::not_found));
  BOOST_TEST(!testing::store_exec_ok(store, set_body_sql(backend, "conv_m")));
  BOOST_TEST(store->response("conv_m")->body == "new");
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM responses WHERE id = 'conv_m'"));
}

namespace {

constexpr int sqlite_before_rewrite = 12;
constexpr int pg_before_rewrite = 10;

// A response and a conversation an older binary wrote (one SQL text for both backends).
constexpr const char* records_before_sql =
  "INSERT INTO responses(id, user_id, session_key, session_id, last_row_id, created_at_ms,"
  " body) VALUES ('resp_old', 'alice', 'k', 's-1', 4, 10, 'response body'),"
  " ('conv_old', 'alice', 'conv_old', '', 0, 20, 'conversation body')";

void write_sqlite_before_rewrite(const std::string& path) {
  auto db = test::sqlite_at_version(path, sqlite_before_rewrite);
  test::sqlite_exec_required(db.get(), records_before_sql);
  // the schema of that version keeps the conversation's body too
  BOOST_REQUIRE(sqlite3_exec(db.get(), "UPDATE responses SET body = 'x' WHERE id = 'conv_old'",
                             nullptr, nullptr, nullptr)
                != SQLITE_OK);
}

void write_pg_before_rewrite(const std::string& url) {
  test::write_pg_at_version(url, pg_before_rewrite,
                            [](pqxx::work& w) { w.exec0(records_before_sql); });
  bool refused = false; // the schema of that version keeps the conversation's body too
  try {
    pqxx::connection c{url};
    pqxx::work u{c};
    u.exec0("UPDATE responses SET body = 'x'::bytea WHERE id = 'conv_old'");
    u.commit();
  } catch (const std::exception&) {
    refused = true;
  }
  BOOST_REQUIRE(refused);
}

} // namespace

BOOST_DATA_TEST_CASE_F(fixture, a_database_of_the_version_before_keeps_its_records_and_takes_metadata,
                       data::make(testing::all_store_backends()), backend) {
  testing::use_backend(backend, params, dir);
  if (backend == store_backend::sqlite)
    write_sqlite_before_rewrite(params.path);
  else
    write_pg_before_rewrite(params.url);
  {
    auto s = testing::open_test_store(params); // opening migrates
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }
  BOOST_TEST(test::at_latest_schema(store, backend));
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM responses") == 2);
  auto old = store->response("resp_old");
  BOOST_REQUIRE_MESSAGE(old, err_of(old));
  BOOST_TEST(old->body == "response body");
  BOOST_TEST(old->last_row_id == 4);
  auto conv = store->response("conv_old");
  BOOST_REQUIRE_MESSAGE(conv, err_of(conv));
  BOOST_TEST(conv->body == "conversation body");
  // the conversation takes new metadata; the response stays as written
  auto next = *conv;
  next.body = R"({"metadata":{"k":"v"}})";
  BOOST_REQUIRE_MESSAGE(!store->put_response(next), "rewrite after the migration");
  BOOST_TEST(store->response("conv_old")->body == next.body);
  BOOST_TEST(!testing::store_exec_ok(store, set_body_sql(backend, "resp_old")));
  BOOST_TEST(store->response("resp_old")->body == "response body");
}

BOOST_AUTO_TEST_SUITE_END() // response_records_test
