// Stored vectors on both backends (issue 48; store/embeddings.hpp; SQLite schema v14,
// PostgreSQL v13): rows above a watermark in id order with their user, role and state
// (archived rows and summaries included, facts as new versions), a batch of vectors and
// its watermark in one transaction (all or nothing), paged reads for the start-up
// rebuild, a model change starting afresh beside the old vectors, bad writes refused,
// and a database of the version before migrated with its rows embeddable.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/embeddings.hpp"
#include "tests/schema_at_version.hpp"
#include "tests/store_backends.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(embedding_store_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

constexpr int32_t dims = 4;

struct embed_fixture {
  testing::temp_dir dir{"mneme-embed"};
  store_params params;
  testing::test_store store;

  void open(testing::store_backend backend) {
    testing::use_backend(backend, params, dir);
    reopen();
  }
  void reopen() {
    store.reset();
    auto s = testing::open_test_store(params);
    BOOST_REQUIRE_MESSAGE(s, err_of(s));
    store = std::move(*s);
  }
  std::string session(const std::string& user) {
    session_record rec;
    rec.user_id = user;
    rec.session_key = user + "\x1f" "k";
    auto created = store->create_session(rec, 1000);
    BOOST_REQUIRE_MESSAGE(created, err_of(created));
    return created->id;
  }
  int64_t append(const std::string& sid, msg_role role, const std::string& text) {
    message m;
    m.session_id = sid;
    m.role = role;
    m.content = text;
    m.timestamp_ms = 2000;
    m.token_estimate = 5;
    if (role == msg_role::tool)
      m.tool_call_id = "call-1";
    auto id = store->append(m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
    return *id;
  }
  embed_candidates rows(int32_t source, int64_t after, int64_t limit = 100) {
    auto r = store->rows_to_embed(source, after, limit);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    return *r;
  }
  embed_progress progress(const std::string& model = "m1", int32_t d = dims) {
    auto p = store->embed_progress_of(model, d);
    BOOST_REQUIRE_MESSAGE(p, err_of(p));
    return *p;
  }
  std::vector<stored_vector> load(int32_t source, int64_t after = 0, int64_t limit = 100,
                                  const std::string& model = "m1", int32_t d = dims) {
    auto v = store->stored_vectors(model, d, source, after, limit);
    BOOST_REQUIRE_MESSAGE(v, err_of(v));
    return *v;
  }
};

std::vector<float> vec(float a, float b = 0, float c = 0, float d = 0) {
  return {a, b, c, d};
}

embed_write write_of(int32_t source, int64_t through, std::vector<stored_vector> rows,
                     const std::string& model = "m1", int32_t d = dims) {
  return embed_write{model, d, source, through, std::move(rows)};
}

std::vector<int64_t> ids_of(const embed_candidates& c) {
  std::vector<int64_t> out;
  for (const auto& r : c.rows)
    out.push_back(r.id);
  return out;
}

} // namespace

const auto both = data::make(testing::all_store_backends());

BOOST_DATA_TEST_CASE_F(embed_fixture, rows_above_a_watermark_come_in_id_order_with_their_user,
                       both, backend) {
  open(backend);
  auto a = session("alice");
  auto b = session("bob");
  auto m1 = append(a, msg_role::user, "the deploy broke");
  auto m2 = append(b, msg_role::assistant, "rollout failed");
  auto m3 = append(a, msg_role::tool, "exit 1");
  auto m4 = append(a, msg_role::user, "");
  auto all = rows(embed_source_message, 0);
  BOOST_TEST(ids_of(all) == (std::vector<int64_t>{m1, m2, m3, m4}),
             boost::test_tools::per_element());
  BOOST_TEST(all.scanned_through == m4);
  BOOST_TEST(all.rows[0].user_id == "alice");
  BOOST_TEST(all.rows[1].user_id == "bob");
  BOOST_TEST(all.rows[1].role == "assistant");
  BOOST_TEST(all.rows[2].role == "tool"); // the store filters nothing: the policy does
  BOOST_TEST(all.rows[0].text == "the deploy broke");
  auto page = rows(embed_source_message, m1, 2);
  BOOST_TEST(ids_of(page) == (std::vector<int64_t>{m2, m3}), boost::test_tools::per_element());
  BOOST_TEST(page.scanned_through == m3);
  auto none = rows(embed_source_message, m4);
  BOOST_TEST(none.rows.empty());
  BOOST_TEST(none.scanned_through == m4);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, archived_rows_and_summaries_are_rows_to_embed, both,
                       backend) {
  open(backend);
  auto s = session("alice");
  auto first = append(s, msg_role::user, "the database is locked");
  auto second = append(s, msg_role::assistant, "retry the write");
  append(s, msg_role::user, "tail");
  compaction_commit c;
  c.session_id = s;
  c.archive_ids = {first, second};
  c.summary.session_id = s;
  c.summary.role = msg_role::assistant;
  c.summary.content = "summary: a locked database";
  auto summary = store->commit_compaction(c);
  BOOST_REQUIRE_MESSAGE(summary, err_of(summary));
  auto all = rows(embed_source_message, 0);
  BOOST_REQUIRE_EQUAL(all.rows.size(), 4u);
  BOOST_TEST(all.rows[0].id == first); // archived now, still a row to embed
  BOOST_TEST(all.rows[3].id == summary->id);
  BOOST_TEST(all.rows[3].is_summary);
  BOOST_TEST(!all.rows[0].is_summary);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, a_batch_and_its_watermark_are_stored_together, both,
                       backend) {
  open(backend);
  auto s = session("alice");
  auto m1 = append(s, msg_role::user, "one");
  auto m2 = append(s, msg_role::user, "two");
  auto m3 = append(s, msg_role::user, "three");
  BOOST_TEST(progress().messages_through == 0);
  BOOST_TEST(progress().messages_backlog == 3);
  auto err = store->store_vectors(write_of(embed_source_message, m2,
                                           {{m1, "alice", vec(1)}, {m2, "alice", vec(0, 1)}}));
  BOOST_REQUIRE_MESSAGE(!err, render_error(err));
  auto p = progress();
  BOOST_TEST(p.messages_through == m2);
  BOOST_TEST(p.messages_backlog == 1);
  BOOST_TEST(p.stored_vectors == 2);
  auto loaded = load(embed_source_message);
  BOOST_REQUIRE_EQUAL(loaded.size(), 2u);
  BOOST_TEST(loaded[0].id == m1);
  BOOST_TEST(loaded[0].user_id == "alice");
  BOOST_TEST(loaded[1].vec == vec(0, 1), boost::test_tools::per_element());
  // A watermark never moves back; a batch of no vectors moves it past skipped rows.
  BOOST_REQUIRE(!store->store_vectors(write_of(embed_source_message, m1, {})));
  BOOST_TEST(progress().messages_through == m2);
  BOOST_REQUIRE(!store->store_vectors(write_of(embed_source_message, m3, {})));
  BOOST_TEST(progress().messages_through == m3);
  BOOST_TEST(progress().messages_backlog == 0);
  // Durable: a new connection sees the same.
  reopen();
  BOOST_TEST(progress().messages_through == m3);
  BOOST_TEST(load(embed_source_message).size() == 2u);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, a_refused_batch_stores_nothing_and_keeps_the_watermark,
                       both, backend) {
  open(backend);
  auto s = session("alice");
  auto m1 = append(s, msg_role::user, "one");
  auto m2 = append(s, msg_role::user, "two");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<embed_write> bad = {
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}, {m2, "alice", {1, 0}}}),
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}, {m2, "alice", vec(nan)}}),
    write_of(embed_source_message, m1, {{m2, "alice", vec(1)}}), // a row above `through`
    write_of(7, m2, {{m1, "alice", vec(1)}}),
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}}, "", dims),
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}}, "m1", 0),
  };
  for (const auto& w : bad) {
    auto err = store->store_vectors(w);
    BOOST_TEST(err == errc::bad_request, render_error(err));
  }
  BOOST_TEST(progress().messages_through == 0);
  BOOST_TEST(progress().stored_vectors == 0);
  BOOST_TEST(!store->rows_to_embed(embed_source_message, -1, 10));
  BOOST_TEST(!store->rows_to_embed(embed_source_message, 0, 0));
  BOOST_TEST(!store->rows_to_embed(3, 0, 10));
}

BOOST_DATA_TEST_CASE_F(embed_fixture, a_batch_failing_inside_its_transaction_leaves_nothing,
                       both, backend) {
  open(backend);
  auto s = session("alice");
  auto m1 = append(s, msg_role::user, "one");
  auto m2 = append(s, msg_role::user, "two");
  // The second insert of the batch fails inside the transaction.
  auto id = std::to_string(m2);
  bool armed = backend == store_backend::sqlite
                 ? testing::store_exec_ok(store, "CREATE TEMP TRIGGER fail_second BEFORE INSERT"
                                                 " ON main.embeddings WHEN NEW.row_id = " + id +
                                                   " BEGIN SELECT RAISE(ABORT, 'injected'); END;")
                 : testing::store_exec_ok(
                     store, "CREATE FUNCTION fail_second() RETURNS trigger LANGUAGE plpgsql AS $$"
                            " BEGIN IF NEW.row_id = " + id +
                              " THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$;"
                              " CREATE TRIGGER fail_second BEFORE INSERT ON embeddings"
                              " FOR EACH ROW EXECUTE FUNCTION fail_second();");
  BOOST_REQUIRE(armed);
  auto err = store->store_vectors(
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}, {m2, "alice", vec(0, 1)}}));
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(progress().messages_through == 0);
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM embeddings") == 0);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, a_vector_is_never_rewritten_nor_deleted, both, backend) {
  open(backend);
  auto s = session("alice");
  auto m1 = append(s, msg_role::user, "one");
  BOOST_REQUIRE(!store->store_vectors(write_of(embed_source_message, m1, {{m1, "alice", vec(1)}})));
  // Storing the same row again keeps the first vector.
  BOOST_REQUIRE(
    !store->store_vectors(write_of(embed_source_message, m1, {{m1, "alice", vec(0, 0, 1)}})));
  BOOST_TEST(load(embed_source_message).at(0).vec == vec(1), boost::test_tools::per_element());
  BOOST_TEST(!testing::store_exec_ok(store, "DELETE FROM embeddings"));
  BOOST_TEST(!testing::store_exec_ok(store, "UPDATE embeddings SET dims = 5"));
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM embeddings") == 1);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, a_model_change_starts_afresh_beside_the_old_vectors, both,
                       backend) {
  open(backend);
  auto s = session("alice");
  auto m1 = append(s, msg_role::user, "one");
  auto m2 = append(s, msg_role::user, "two");
  BOOST_REQUIRE(!store->store_vectors(
    write_of(embed_source_message, m2, {{m1, "alice", vec(1)}, {m2, "alice", vec(0, 1)}})));
  auto fresh = progress("m2", 3);
  BOOST_TEST(fresh.messages_through == 0);
  BOOST_TEST(fresh.messages_backlog == 2);
  BOOST_TEST(fresh.stored_vectors == 0);
  BOOST_TEST(progress("m1", 8).messages_through == 0); // new dimensions: a new start too
  BOOST_REQUIRE(!store->store_vectors(
    write_of(embed_source_message, m1, {{m1, "alice", {0, 0, 1}}}, "m2", 3)));
  BOOST_TEST(progress("m2", 3).messages_through == m1);
  BOOST_TEST(load(embed_source_message, 0, 100, "m2", 3).size() == 1u);
  // The old model's vectors and watermark are untouched.
  BOOST_TEST(progress("m1", dims).messages_through == m2);
  BOOST_TEST(load(embed_source_message).size() == 2u);
  BOOST_TEST(testing::store_scalar(store, "SELECT count(*) FROM embeddings") == 3);
}

BOOST_DATA_TEST_CASE_F(embed_fixture, stored_vectors_are_read_in_pages_per_source, both,
                       backend) {
  open(backend);
  auto s = session("alice");
  std::vector<stored_vector> batch;
  int64_t last = 0;
  for (int i = 0; i < 7; ++i) {
    last = append(s, msg_role::user, "row " + std::to_string(i));
    batch.push_back({last, "alice", vec(float(i + 1))});
  }
  BOOST_REQUIRE(!store->store_vectors(write_of(embed_source_message, last, batch)));
  auto page1 = load(embed_source_message, 0, 3);
  auto page2 = load(embed_source_message, page1.back().id, 3);
  auto page3 = load(embed_source_message, page2.back().id, 3);
  BOOST_TEST(page1.size() == 3u);
  BOOST_TEST(page2.size() == 3u);
  BOOST_TEST(page3.size() == 1u);
  BOOST_TEST(page3[0].id == last);
  BOOST_TEST(page3[0].vec == vec(7), boost::test_tools::per_element());
  BOOST_TEST(load(embed_source_fact).empty());
}

BOOST_DATA_TEST_CASE_F(embed_fixture, an_updated_fact_is_a_new_row_above_the_watermark, both,
                       backend) {
  open(backend);
  fact_record f;
  f.user_id = "alice";
  f.key = "editor";
  f.value = "vim";
  auto v1 = store->put_fact(f, 1000);
  BOOST_REQUIRE_MESSAGE(v1, err_of(v1));
  auto first = rows(embed_source_fact, 0);
  BOOST_REQUIRE_EQUAL(first.rows.size(), 1u);
  BOOST_TEST(first.rows[0].text == "editor: vim");
  BOOST_TEST(first.rows[0].role == "fact");
  BOOST_TEST(first.rows[0].active);
  BOOST_REQUIRE(!store->store_vectors(
    write_of(embed_source_fact, v1->id, {{v1->id, "alice", vec(1)}})));
  BOOST_TEST(progress().facts_backlog == 0);
  f.value = "emacs";
  auto v2 = store->put_fact(f, 2000);
  BOOST_REQUIRE_MESSAGE(v2, err_of(v2));
  BOOST_TEST(progress().facts_backlog == 1);
  auto next = rows(embed_source_fact, progress().facts_through);
  BOOST_REQUIRE_EQUAL(next.rows.size(), 1u);
  BOOST_TEST(next.rows[0].id == v2->id);
  BOOST_TEST(next.rows[0].text == "editor: emacs");
  // The retired version reads as inactive from the start.
  auto again = rows(embed_source_fact, 0);
  BOOST_REQUIRE_EQUAL(again.rows.size(), 2u);
  BOOST_TEST(!again.rows[0].active);
  BOOST_TEST(progress().messages_backlog == 0); // facts never count as messages
}

constexpr int sqlite_before_vectors = 14 - 1;
constexpr int pg_before_vectors = 11;

BOOST_DATA_TEST_CASE_F(embed_fixture, a_database_of_the_version_before_is_migrated_and_embeddable,
                       both, backend) {
  testing::use_backend(backend, params, dir);
  if (backend == store_backend::sqlite) {
    auto db = test::sqlite_at_version(params.path, sqlite_before_vectors);
    test::sqlite_exec_required(db.get(),
                               "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                               " VALUES ('s-old', 'alice', 'alice' || char(31) || 'k', 1);"
                               "INSERT INTO messages(session_id, role, content, timestamp_ms)"
                               " VALUES ('s-old', 'user', 'before', 2);");
  } else {
    test::write_pg_at_version(params.url, pg_before_vectors, [](pqxx::work& w) {
      w.exec0("INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
              " VALUES ('s-old', 'alice', 'alice'::bytea || '\\x1f'::bytea || 'k'::bytea, 1)");
      w.exec0("WITH m AS (INSERT INTO messages(session_id, role, content, timestamp_ms,"
              " search_words, search_text, search_unicode61)"
              " VALUES ('s-old', 'user', 'before', 2, '', 'before', '')"
              " RETURNING id, session_id)"
              " INSERT INTO message_state(id, session_id) SELECT id, session_id FROM m");
    });
  }
  reopen();
  BOOST_TEST(test::at_latest_schema(store, backend));
  auto p = progress();
  BOOST_TEST(p.messages_through == 0);
  BOOST_TEST(p.messages_backlog == 1);
  auto old = rows(embed_source_message, 0);
  BOOST_REQUIRE_EQUAL(old.rows.size(), 1u);
  BOOST_TEST(old.rows[0].text == "before");
  BOOST_TEST(old.rows[0].user_id == "alice");
  BOOST_REQUIRE(!store->store_vectors(
    write_of(embed_source_message, old.rows[0].id, {{old.rows[0].id, "alice", vec(1)}})));
  BOOST_TEST(progress().messages_backlog == 0);
}

BOOST_AUTO_TEST_CASE(vectors_encode_as_little_endian_float32_and_decode_strictly) {
  auto bytes = encode_vector({1.0f, -2.5f});
  BOOST_TEST(bytes.size() == 8u);
  BOOST_TEST(static_cast<unsigned char>(bytes[3]) == 0x3f); // 1.0f = 0x3f800000, LE
  BOOST_TEST(static_cast<unsigned char>(bytes[2]) == 0x80);
  auto back = decode_vector(bytes, 2);
  BOOST_REQUIRE(back.has_value());
  BOOST_TEST((*back == std::vector<float>{1.0f, -2.5f}));
  BOOST_TEST(!decode_vector(bytes, 3).has_value());
  BOOST_TEST(!decode_vector(bytes.substr(1), 2).has_value());
}

BOOST_AUTO_TEST_SUITE_END()
