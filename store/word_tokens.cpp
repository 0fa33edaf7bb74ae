// SQLite's unicode61 tokenizer outside FTS5 tables; see word_tokens.hpp.
#include "store/word_tokens.hpp"

#include <algorithm>
#include <climits>
#include <memory>

#include <sqlite3.h>

#include "store/sqlite/fts_tokenizers.hpp"

namespace mneme {

namespace {

// One in-memory connection and one unicode61 instance per thread.
class unicode61 {
public:
  unicode61() {
    if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr)
        != SQLITE_OK)
      return;
    fts5_api* api = fts5_api_of(db_);
    void* user_data = nullptr;
    if (api == nullptr
        || api->xFindTokenizer(api, "unicode61", &user_data, &module_) != SQLITE_OK)
      return;
    const char* args[] = {"remove_diacritics", "2"};
    if (module_.xCreate(user_data, args, 2, &tok_) != SQLITE_OK)
      tok_ = nullptr;
  }
  ~unicode61() {
    if (tok_ != nullptr)
      module_.xDelete(tok_);
    sqlite3_close(db_);
  }
  unicode61(const unicode61&) = delete;
  unicode61& operator=(const unicode61&) = delete;

  int tokenize(std::string_view text, void* ctx, bigram_token_sink sink) {
    if (tok_ == nullptr)
      return SQLITE_ERROR;
    if (text.empty())
      return 0;
    forward fwd{ctx, sink, text, 0};
    // FTS5 takes an int length: a text beyond 2 GiB is cut (never reached: the
    // store refuses contents above max_content_bytes).
    auto n = static_cast<int>(std::min<std::size_t>(text.size(), INT_MAX));
    int rc = module_.xTokenize(tok_, &fwd, FTS5_TOKENIZE_DOCUMENT, text.data(), n,
                               &unicode61::on_token);
    return fwd.stopped != 0 ? fwd.stopped : (rc == SQLITE_OK ? 0 : rc);
  }

private:
  struct forward {
    void* ctx;
    bigram_token_sink sink;
    std::string_view text;
    int stopped;
  };

  static int on_token(void* p, int, const char* token, int n, int begin, int end) {
    auto* f = static_cast<forward*>(p);
    f->stopped = f->sink(f->ctx, std::string_view{token, static_cast<std::size_t>(n)},
                         static_cast<std::size_t>(begin), static_cast<std::size_t>(end),
                         bigram_token_kind::word);
    return f->stopped == 0 ? SQLITE_OK : SQLITE_DONE;
  }

  sqlite3* db_ = nullptr;
  fts5_tokenizer module_{};
  Fts5Tokenizer* tok_ = nullptr;
};

unicode61& this_threads_tokenizer() {
  thread_local unicode61 instance;
  return instance;
}

} // namespace

int tokenize_unicode61(std::string_view text, void* ctx, bigram_token_sink sink) {
  return this_threads_tokenizer().tokenize(text, ctx, sink);
}

std::vector<bigram_token> unicode61_tokens(std::string_view text) {
  return collect_tokens(text, tokenize_unicode61);
}

} // namespace mneme
