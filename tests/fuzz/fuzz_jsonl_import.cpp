// libFuzzer target: the JSONL session importer (store/jsonl_import) on a real in-memory
// store. No crash; a refused file writes nothing; an accepted one is one new session
// whose rows are all there.
#include <sqlite3.h>

#include <memory>
#include <string>

#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_jsonl_import.hpp"
#include "store/store_params.hpp"
#include "tests/fuzz/fuzz_common.hpp"

namespace {

int64_t count_rows(mneme::db_connection& db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  MNEME_FUZZ_CHECK(sqlite3_prepare_v2(db.native_handle(), sql, -1, &s, nullptr) == SQLITE_OK);
  MNEME_FUZZ_CHECK(sqlite3_step(s) == SQLITE_ROW);
  auto n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return n;
}

std::unique_ptr<mneme::db_connection> fresh_store(const mneme::store_params& params) {
  auto db = mneme::db_connection::open(params, mneme::open_mode::writer);
  MNEME_FUZZ_CHECK(static_cast<bool>(db));
  return std::move(*db);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mneme::store_params params = [] {
    mneme::store_params p;
    p.path = ":memory:";
    return p;
  }();
  static std::unique_ptr<mneme::db_connection> db;
  static int64_t imports = 0;
  if (!db || imports % 256 == 0)
    db = fresh_store(params); // the database holds what was imported: start afresh now and then
  ++imports;
  mneme::session_record into;
  into.id = "fz-" + std::to_string(imports);
  into.user_id = "fuzz";
  auto sessions_before = count_rows(*db, "SELECT count(*) FROM sessions");
  auto messages_before = count_rows(*db, "SELECT count(*) FROM messages");
  auto rec = mneme::import_session_jsonl(*db, mneme::fuzz::as_text(data, size), into, 5000,
                                         params);
  auto sessions_after = count_rows(*db, "SELECT count(*) FROM sessions");
  auto messages_after = count_rows(*db, "SELECT count(*) FROM messages");
  if (!rec) {
    MNEME_FUZZ_CHECK(sessions_after == sessions_before && messages_after == messages_before);
  } else {
    MNEME_FUZZ_CHECK(rec->id == into.id && sessions_after == sessions_before + 1);
    MNEME_FUZZ_CHECK(messages_after >= messages_before);
  }
  MNEME_FUZZ_CHECK(!db->in_transaction());
  return 0;
}
