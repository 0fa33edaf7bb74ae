// The rows of a PostgreSQL group commit, sent in one statement (issue 46): each
// validated append of the group is encoded into one array literal per column as it
// arrives, with the id reserved for it from the messages' identity sequence; at the
// group's commit one INSERT of unnest(...) writes every message row and its live state
// row, in id order. One round trip for the rows instead of one per row.
// Invariants: the rows are held in the order added, with ascending ids (reserved in
// ascending order, pg_reserve_message_ids); a row's text reaches PostgreSQL
// byte-exact (bytea elements in hex).
// Only for store/pg (pg_store). Thread: the store's owner.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include <pqxx/transaction_base>

#include "messages/transcript.hpp"

namespace mneme::pg {

// `n` new message ids from the identity sequence, ascending (one round trip). Ids a
// group reserves and does not use are gaps, as those of a rolled-back insert are.
std::deque<int64_t> reserve_message_ids(pqxx::transaction_base& t, int64_t n);

class group_rows {
public:
  group_rows() { clear(); }

  // Adds one row (position 0 means "= id"; fence_token 0: none).
  // REQUIRES: m validated; id reserved, above every id added since clear().
  void add(int64_t id, const message& m, int64_t position, int64_t fence_token);
  int64_t size() const { return rows_; }

  // Inserts every row added since clear() inside `t` (one statement); then empty.
  void insert(pqxx::transaction_base& t);
  void clear();

private:
  int64_t rows_ = 0;
  static constexpr int column_count = 15;
  std::string columns_[column_count]; // one array literal per column, without its '}' 
};

} // namespace mneme::pg
