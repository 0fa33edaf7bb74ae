// Tests of the store's file handling: versioned migrations (new file, in-place
// upgrade, newer-than-binary refusal), WAL and the connections' settings, and
// every storage error code produced by a real failure (can't open, corrupt,
// locked by a foreign connection, disk full, read-only) with SQLite's message in
// the context.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <filesystem>
#include <fstream>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "policies/wal_checkpoint.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/migrations.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/sqlite/store_reader.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(store_schema_test)

using namespace mneme;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

// A fresh directory for one test's database files.
struct schema_dir : testing::temp_dir {
  schema_dir() : temp_dir("mneme-schema") {}
  store_params params(const std::string& name = "t.db") const {
    store_params p;
    p.path = file(name);
    return p;
  }
};

int64_t scalar(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  BOOST_REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  auto v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

message user_msg(const std::string& sid, std::string text) {
  message m;
  m.session_id = sid;
  m.content = std::move(text);
  return m;
}

} // namespace

BOOST_AUTO_TEST_CASE(migrations_are_numbered_one_to_n_without_gaps) {
  const auto& list = schema_migrations();
  BOOST_REQUIRE(!list.empty());
  for (size_t i = 0; i < list.size(); ++i)
    BOOST_TEST(list[i].version == static_cast<int>(i + 1));
  BOOST_TEST(latest_schema_version() == list.back().version);
  BOOST_TEST(latest_schema_version() >= 2);
}

BOOST_AUTO_TEST_CASE(a_new_file_gets_the_latest_schema_in_wal_mode_with_full_sync) {
  schema_dir dir;
  auto store = sqlite_store::open(dir.params());
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto* db = (*store)->connection().native_handle();
  BOOST_TEST(scalar(db, "PRAGMA user_version") == latest_schema_version());
  BOOST_TEST(scalar(db, "PRAGMA synchronous") == 2); // FULL
  BOOST_TEST(scalar(db, "PRAGMA page_size") == 8192);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  BOOST_TEST(std::string{reinterpret_cast<const char*>(sqlite3_column_text(st, 0))} == "wal");
  sqlite3_finalize(st);
}

// The writer keeps the indexer's merge pages in memory (store/sqlite/db_connection);
// a reader's cache is SQLite's default, so readers do not multiply the memory.
BOOST_AUTO_TEST_CASE(the_writer_has_a_16_mib_page_cache_and_readers_the_default) {
  schema_dir dir;
  auto store = sqlite_store::open(dir.params());
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  BOOST_TEST(writer_cache_kib == 16384);
  BOOST_TEST(scalar((*store)->connection().native_handle(), "PRAGMA cache_size") == -16384);
  auto reader = db_connection::open(dir.params(), open_mode::reader);
  BOOST_REQUIRE_MESSAGE(reader, err_of(reader));
  sqlite3* plain = nullptr; // SQLite's default as this library was built
  BOOST_REQUIRE(sqlite3_open(":memory:", &plain) == SQLITE_OK);
  auto library_default = scalar(plain, "PRAGMA cache_size");
  sqlite3_close(plain);
  BOOST_TEST(library_default != -16384);
  BOOST_TEST(scalar((*reader)->native_handle(), "PRAGMA cache_size") == library_default);
}

BOOST_AUTO_TEST_CASE(synchronous_normal_is_used_when_full_is_switched_off) {
  schema_dir dir;
  auto p = dir.params();
  p.synchronous_full = false;
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE(store);
  BOOST_TEST(scalar((*store)->connection().native_handle(), "PRAGMA synchronous") == 1);
}

// One transaction longer than the writer's log bound (a migration of a big file
// is one) must not leave a log file that long on disk for good: the first commit
// after the log restarts cuts the file back to the bound.
BOOST_AUTO_TEST_CASE(a_log_file_grown_past_the_writers_bound_is_cut_back_when_the_log_restarts) {
  schema_dir dir;
  auto p = dir.params();
  p.synchronous_full = false;
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto& s = **store;
  session_record rec;
  rec.user_id = "u";
  rec.session_key = "k";
  auto session = s.create_session(rec, 1);
  BOOST_REQUIRE_MESSAGE(session, err_of(session));
  BOOST_TEST(scalar(s.connection().native_handle(), "PRAGMA journal_size_limit")
             == wal_inline_bound_bytes);
  // Three 28 MB messages in one group commit: ~84 MB of log in one transaction.
  std::vector<message> big;
  for (char c : {'a', 'b', 'c'})
    big.push_back(user_msg(session->id, std::string(28 << 20, c)));
  BOOST_REQUIRE(!s.begin_group());
  auto ids = s.insert_batch_in_group(big);
  BOOST_REQUIRE_MESSAGE(ids, err_of(ids));
  BOOST_REQUIRE(!s.commit_group());
  auto wal = p.path + "-wal";
  BOOST_REQUIRE(std::filesystem::file_size(wal) > static_cast<uintmax_t>(wal_inline_bound_bytes));
  // Everything copied back (no reader holds the log), then the next write restarts it.
  auto done = s.connection().checkpoint_passive();
  BOOST_REQUIRE_MESSAGE(done, err_of(done));
  BOOST_REQUIRE(!done->busy);
  BOOST_REQUIRE(done->checkpointed_pages == done->log_pages);
  auto small = s.append(user_msg(session->id, "after the big group"));
  BOOST_REQUIRE_MESSAGE(small, err_of(small));
  BOOST_TEST(std::filesystem::file_size(wal) <= static_cast<uintmax_t>(wal_inline_bound_bytes));
  // Nothing of the big group was lost by the cut.
  BOOST_TEST(scalar(s.connection().native_handle(),
                    "SELECT sum(length(content)) FROM messages WHERE length(content) > 1000")
             == int64_t{3} * (28 << 20));
}

// FTS5's merges free the pages of the segments they merge; the writer must not
// zero and rewrite each freed page (Debian's default secure delete), which only
// adds log writes: mneme deletes no row, the merged terms live on.
BOOST_AUTO_TEST_CASE(pages_freed_by_the_writer_are_not_rewritten_to_the_log) {
  schema_dir dir;
  auto store = sqlite_store::open(dir.params());
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto& db = (*store)->connection();
  auto* h = db.native_handle();
  // A table outside mneme's schema, so a delete is allowed: 1 MiB of overflow pages.
  BOOST_REQUIRE(sqlite3_exec(h, "CREATE TABLE freed(x BLOB); INSERT INTO freed VALUES (zeroblob(1048576))",
                             nullptr, nullptr, nullptr) == SQLITE_OK);
  auto page = scalar(h, "PRAGMA page_size");
  auto before = db.pages_written();
  BOOST_REQUIRE(sqlite3_exec(h, "DELETE FROM freed", nullptr, nullptr, nullptr) == SQLITE_OK);
  auto written = db.pages_written() - before;
  BOOST_TEST(scalar(h, "PRAGMA freelist_count") >= (1 << 20) / page); // the pages were freed
  BOOST_TEST(written < 8, written << " pages written to free " << (1 << 20) / page);
}

BOOST_AUTO_TEST_CASE(an_older_file_is_upgraded_in_place_and_keeps_its_rows) {
  schema_dir dir;
  auto p = dir.params();
  {
    // A file as the first release wrote it: schema version 1 only.
    sqlite3* raw = nullptr;
    BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &raw) == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(raw, schema_migrations()[0].sql, nullptr, nullptr, nullptr)
                  == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_exec(raw,
                               "PRAGMA user_version = 1;"
                               "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                               " VALUES ('old', 'u', 'k', 1);"
                               "INSERT INTO messages(session_id, role, content)"
                               " VALUES ('old', 'user', 'from v1');",
                               nullptr, nullptr, nullptr)
                  == SQLITE_OK);
    BOOST_TEST(scalar(raw, "SELECT count(*) FROM sqlite_master WHERE name = 'checkpoints'") == 0);
    BOOST_REQUIRE(scalar(raw, "PRAGMA page_size") == 4096); // SQLite's default then
    sqlite3_close(raw);
  }
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto* db = (*store)->connection().native_handle();
  BOOST_TEST(scalar(db, "PRAGMA user_version") == latest_schema_version());
  BOOST_TEST(scalar(db, "PRAGMA page_size") == 4096); // only a new file gets 8 KiB pages
  auto live = (*store)->live_context("old");
  BOOST_REQUIRE(live);
  BOOST_REQUIRE(live->size() == 1u);
  BOOST_TEST(live->front().content == "from v1");
  BOOST_TEST(static_cast<bool>((*store)->create_checkpoint("old", "cp", 2))); // v2 table works
}

BOOST_AUTO_TEST_CASE(a_file_from_a_newer_binary_is_refused_by_writer_and_reader) {
  schema_dir dir;
  auto p = dir.params();
  {
    auto store = sqlite_store::open(p);
    BOOST_REQUIRE(store);
    BOOST_REQUIRE(!(*store)->connection().exec("PRAGMA user_version = 99", "bump"));
  }
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE(!store);
  BOOST_TEST((store.error() == errc::storage_schema_too_new));
  BOOST_TEST(err_of(store).find("99") != std::string::npos);
  auto reader = store_reader::open(p);
  BOOST_REQUIRE(!reader);
  BOOST_TEST((reader.error() == errc::storage_schema_too_new));
}

BOOST_AUTO_TEST_CASE(a_file_that_is_not_a_database_is_reported_corrupt) {
  schema_dir dir;
  auto p = dir.params();
  std::ofstream{p.path} << std::string(8192, 'g');
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE(!store);
  BOOST_TEST((store.error() == errc::storage_corrupt), err_of(store));
  BOOST_TEST(err_of(store).find("not a database") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_path_in_a_missing_directory_cannot_be_opened) {
  schema_dir dir;
  auto p = dir.params("missing/dir/t.db");
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE(!store);
  BOOST_TEST((store.error() == errc::storage_cant_open), err_of(store));
  auto reader = store_reader::open(dir.params("absent.db"));
  BOOST_REQUIRE(!reader);
  BOOST_TEST((reader.error() == errc::storage_cant_open), err_of(reader));
}

BOOST_AUTO_TEST_CASE(a_write_lock_held_by_a_foreign_connection_is_reported_locked) {
  schema_dir dir;
  auto p = dir.params();
  p.busy_timeout_ms = 50;
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE(store);
  auto s = (*store)->create_session(session_record{}, 1);
  BOOST_REQUIRE(s);
  sqlite3* foreign = nullptr;
  BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &foreign) == SQLITE_OK);
  BOOST_REQUIRE(sqlite3_exec(foreign, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  auto id = (*store)->append(user_msg(s->id, "blocked"));
  BOOST_REQUIRE(!id);
  BOOST_TEST((id.error() == errc::storage_locked), err_of(id));
  BOOST_TEST(err_of(id).find("locked") != std::string::npos);
  sqlite3_exec(foreign, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(foreign);
  BOOST_TEST(static_cast<bool>((*store)->append(user_msg(s->id, "free again"))));
}

BOOST_AUTO_TEST_CASE(a_full_disk_is_reported_and_the_store_keeps_working_after_space_returns) {
  schema_dir dir;
  auto store = sqlite_store::open(dir.params());
  BOOST_REQUIRE(store);
  auto s = (*store)->create_session(session_record{}, 1);
  BOOST_REQUIRE(s);
  auto* db = (*store)->connection().native_handle();
  auto pages = scalar(db, "PRAGMA page_count");
  // Test seam for a full disk: cap the file at its current size.
  BOOST_REQUIRE(scalar(db, ("PRAGMA max_page_count = " + std::to_string(pages)).c_str()) == pages);
  auto id = (*store)->append(user_msg(s->id, std::string(64 * 1024, 'x')));
  BOOST_REQUIRE(!id);
  BOOST_TEST((id.error() == errc::storage_disk_full), err_of(id));
  BOOST_TEST(err_of(id).find("full") != std::string::npos);
  scalar(db, "PRAGMA max_page_count = 1073741823");
  BOOST_TEST(static_cast<bool>((*store)->append(user_msg(s->id, "fits"))));
  BOOST_TEST((*store)->live_context(s->id)->size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_read_only_connection_is_reported_read_only) {
  schema_dir dir;
  auto store = sqlite_store::open(dir.params());
  BOOST_REQUIRE(store);
  auto s = (*store)->create_session(session_record{}, 1);
  BOOST_REQUIRE(!(*store)->connection().exec("PRAGMA query_only = 1", "seam"));
  auto id = (*store)->append(user_msg(s->id, "x"));
  BOOST_REQUIRE(!id);
  BOOST_TEST((id.error() == errc::storage_readonly), err_of(id));
}

BOOST_AUTO_TEST_CASE(a_reader_on_a_file_without_schema_is_refused) {
  schema_dir dir;
  auto p = dir.params();
  sqlite3* raw = nullptr;
  BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &raw) == SQLITE_OK);
  sqlite3_exec(raw, "CREATE TABLE other(x)", nullptr, nullptr, nullptr);
  sqlite3_close(raw);
  auto reader = store_reader::open(p);
  BOOST_REQUIRE(!reader);
  BOOST_TEST((reader.error() == errc::storage_failed), err_of(reader));
}

BOOST_DATA_TEST_CASE(sqlite_result_codes_map_to_storage_error_codes,
                     data::make({SQLITE_FULL, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_BUSY,
                                 SQLITE_LOCKED, SQLITE_BUSY_SNAPSHOT, SQLITE_READONLY,
                                 SQLITE_READONLY_DBMOVED, SQLITE_PERM, SQLITE_CANTOPEN,
                                 SQLITE_IOERR, SQLITE_CONSTRAINT})
                       ^ data::make({errc::storage_disk_full, errc::storage_corrupt,
                                     errc::storage_corrupt, errc::storage_locked,
                                     errc::storage_locked, errc::storage_locked,
                                     errc::storage_readonly, errc::storage_readonly,
                                     errc::storage_readonly, errc::storage_cant_open,
                                     errc::storage_failed, errc::storage_failed}),
                     rc, code) {
  BOOST_TEST((storage_errc(rc) == code));
  auto err = sqlite_failure(nullptr, rc, "what");
  BOOST_TEST((err == code));
  BOOST_TEST(render_error(err).find("what: ") != std::string::npos);
}

// Schema v6 (memory tiers): a file written at version 5 upgrades in place, keeps its
// rows, gains the facts table with its three full-text indexes, the cold-storage
// mark and the checkpoint retirement column.
// Writes a file as a binary at schema `version` left it: the migrations up to
// it, its user_version, then `rows_sql` (rows an old binary wrote).
void write_file_at_version(const std::string& path, int version, const char* rows_sql) {
  sqlite3* raw = nullptr;
  BOOST_REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  BOOST_REQUIRE(register_fts_tokenizers(raw) == SQLITE_OK);
  for (const auto& m : schema_migrations())
    if (m.version <= version)
      BOOST_REQUIRE(sqlite3_exec(raw, m.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  auto pragma = "PRAGMA user_version = " + std::to_string(version);
  BOOST_REQUIRE(sqlite3_exec(raw, pragma.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  BOOST_REQUIRE_MESSAGE(sqlite3_exec(raw, rows_sql, nullptr, nullptr, nullptr) == SQLITE_OK,
                        sqlite3_errmsg(raw));
  sqlite3_close(raw);
}

BOOST_AUTO_TEST_CASE(a_version_5_file_upgrades_to_6_in_place_with_facts_and_marks) {
  schema_dir dir;
  auto p = dir.params();
  write_file_at_version(p.path, 5,
                        "INSERT INTO sessions(id, user_id, session_key, started_at_ms,"
                        " ended_at_ms) VALUES ('v5', 'u', 'k', 1, 2);"
                        "INSERT INTO messages(session_id, role, content)"
                        " VALUES ('v5', 'user', 'from v5');"
                        "INSERT INTO checkpoints VALUES ('v5', 'cp', 1, 1);");
  {
    sqlite3* raw = nullptr;
    BOOST_REQUIRE(sqlite3_open(p.path.c_str(), &raw) == SQLITE_OK);
    BOOST_TEST(scalar(raw, "SELECT count(*) FROM sqlite_master WHERE name = 'facts'") == 0);
    sqlite3_close(raw);
  }
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto* db = (*store)->connection().native_handle();
  BOOST_TEST(scalar(db, "PRAGMA user_version") == latest_schema_version());
  BOOST_TEST(scalar(db, "SELECT count(*) FROM messages WHERE content = 'from v5'") == 1);
  for (auto name : {"facts", "facts_fts_words", "facts_fts_cjk", "facts_fts_trigram"})
    BOOST_TEST(scalar(db, (std::string{"SELECT count(*) FROM sqlite_master WHERE name = '"}
                           + name + "'").c_str()) == 1, name);
  // The ended v5 session awaits its cold copy; its checkpoint is usable.
  BOOST_TEST(scalar(db, "SELECT cold_stored_at_ms FROM sessions WHERE id = 'v5'") == 0);
  BOOST_TEST(scalar(db, "SELECT count(*) FROM checkpoints WHERE retired_by = ''") == 1);
}

// Schema v7 (a watermark per recall index): a version 6 file whose indexes were
// filled through some id upgrades in place with every index's watermark there,
// and the rows above it stay pending for every index.
BOOST_AUTO_TEST_CASE(a_version_6_file_upgrades_to_7_with_each_index_at_the_old_watermark) {
  schema_dir dir;
  auto p = dir.params();
  write_file_at_version(p.path, 6,
                        "INSERT INTO sessions(id, user_id, session_key, started_at_ms)"
                        " VALUES ('v6', 'u', 'k', 1);"
                        "INSERT INTO messages(session_id, role, content)"
                        " VALUES ('v6', 'user', 'indexed in v6');"
                        "INSERT INTO fts_words(rowid, content) SELECT id, content FROM messages;"
                        "INSERT INTO fts_cjk(rowid, content) SELECT id, content FROM messages;"
                        "INSERT INTO fts_trigram(rowid, content) SELECT id, content FROM messages;"
                        "UPDATE fts_state SET indexed_through = 1;"
                        "INSERT INTO messages(session_id, role, content)"
                        " VALUES ('v6', 'user', 'pending in v6');");
  auto store = sqlite_store::open(p);
  BOOST_REQUIRE_MESSAGE(store, err_of(store));
  auto& conn = (*store)->connection();
  auto* db = conn.native_handle();
  BOOST_TEST(scalar(db, "PRAGMA user_version") == latest_schema_version());
  BOOST_TEST(scalar(db, "SELECT words_through FROM fts_state") == 1);
  BOOST_TEST(scalar(db, "SELECT cjk_through FROM fts_state") == 1);
  BOOST_TEST(scalar(db, "SELECT trigram_through FROM fts_state") == 1);
  BOOST_TEST(*fts_watermark(conn) == 1);
  auto backlogs = fts_index_backlogs(conn);
  BOOST_REQUIRE(backlogs);
  BOOST_TEST(*backlogs == (std::array<int64_t, 3>{1, 1, 1}), boost::test_tools::per_element());
  auto n = index_all_pending(conn);
  BOOST_REQUIRE(n);
  BOOST_TEST(*n == 1); // the pending row, into each index
  BOOST_TEST(*fts_watermark(conn) == 2);
  for (auto* t : {"fts_words_docsize", "fts_cjk_docsize", "fts_trigram_docsize"})
    BOOST_TEST(scalar(db, (std::string{"SELECT count(*) FROM "} + t).c_str()) == 2, t);
}

BOOST_AUTO_TEST_SUITE_END() // store_schema_test
