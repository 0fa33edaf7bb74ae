// Registration of mneme's FTS5 tokenizers on a SQLite connection; see fts_tokenizers.hpp.
//
// `mneme_cjk`: the CJK bigram tokenizer of policies/cjk_bigram, exposed through the
// FTS5 C API. It is stateless, so one static fts5_tokenizer serves every connection
// and every index; xCreate hands out a dummy instance pointer.
#include "store/sqlite/fts_tokenizers.hpp"

#include <cassert>
#include <climits>

#include <sqlite3.h>

#include "policies/cjk_bigram.hpp"

namespace mneme {

namespace {

// The tokenizer instance carries no state; FTS5 needs a non-null pointer.
Fts5Tokenizer* instance() {
  static char dummy = 0;
  return reinterpret_cast<Fts5Tokenizer*>(&dummy);
}

int cjk_create(void*, const char**, int n_args, Fts5Tokenizer** out) {
  if (n_args != 0) // `tokenize='mneme_cjk'` takes no options
    return SQLITE_ERROR;
  *out = instance();
  return SQLITE_OK;
}

void cjk_delete(Fts5Tokenizer*) {
  // stateless
}

struct token_forward {
  void* fts_ctx;
  int (*x_token)(void*, int, const char*, int, int, int);
};

int cjk_tokenize(Fts5Tokenizer*, void* ctx, int /*flags*/, const char* text, int n_text,
                 int (*x_token)(void*, int, const char*, int, int, int)) {
  if (text == nullptr || n_text <= 0)
    return SQLITE_OK;
  token_forward fwd{ctx, x_token};
  return tokenize_cjk_bigram(
    std::string_view{text, static_cast<std::size_t>(n_text)}, &fwd,
    [](void* c, std::string_view tok, std::size_t begin, std::size_t end, bigram_token_kind) {
      auto* f = static_cast<token_forward*>(c);
      return f->x_token(f->fts_ctx, 0, tok.data(), static_cast<int>(tok.size()),
                        static_cast<int>(begin), static_cast<int>(end));
    });
}

} // namespace

fts5_api* fts5_api_of(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  return api;
}

int register_fts_tokenizers(sqlite3* db) {
  assert(db != nullptr);
  fts5_api* api = fts5_api_of(db);
  if (api == nullptr || api->iVersion < 2)
    return SQLITE_ERROR; // SQLite built without FTS5
  static fts5_tokenizer cjk{cjk_create, cjk_delete, cjk_tokenize};
  return api->xCreateTokenizer(api, cjk_bigram_tokenizer_name, nullptr, &cjk, nullptr);
}

} // namespace mneme
