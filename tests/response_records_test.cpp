// Tests of the Responses door's records (store/response_records.hpp; SQLite schema v10,
// PostgreSQL schema v8): a response is stored with its session and answer row, read
// back byte for byte, marked deleted once (then unknown to a second delete) and never
// lost: the schema refuses a DELETE and a rewrite of what was recorded. Every case runs
// on both backends (tests/store_backends.hpp).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "messages/mneme_types.hpp"
#include "store/response_records.hpp"
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
  BOOST_TEST(static_cast<bool>(store->put_response(conv))); // one id, one record
  auto gone = store->delete_response("conv_1", 7000);
  BOOST_REQUIRE_MESSAGE(gone, err_of(gone));
  BOOST_TEST(store->response("conv_1")->deleted_at_ms == 7000);
  // a response still needs its session
  auto orphan = record("resp_5");
  orphan.session_id.clear();
  BOOST_TEST((store->put_response(orphan) == errc::bad_request));
}

BOOST_AUTO_TEST_SUITE_END() // response_records_test
