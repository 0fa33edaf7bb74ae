// Placeholder registration of the FTS5 tokenizers: none yet. The recall module
// replaces this file with the real tokenizers; see fts_tokenizers.hpp.
#include "store/fts_tokenizers.hpp"

#include <cassert>

#include <sqlite3.h>

namespace mneme {

int register_fts_tokenizers(sqlite3* db) {
  assert(db != nullptr);
  (void)db;
  return SQLITE_OK;
}

} // namespace mneme
