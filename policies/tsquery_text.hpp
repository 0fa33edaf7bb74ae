// A parsed recall query (policies/fts_query.hpp) as PostgreSQL tsquery text, for
// columns that hold mneme's own CJK bigram tokens (store/pg/pg_search_columns.hpp:
// `search_words`). Pure; any thread. Used by the PostgreSQL facts search
// (store/pg/pg_facts.cpp); written for any search over such a column.
//
// Mapping (the word and CJK bigram routes of SQLite in one index):
//   - each term is tokenized by tokenize_cjk_bigram, exactly as the column was; a
//     term of several tokens is a phrase (`'a' <-> 'b'`: adjacent positions, which
//     is also how the overlapping bigrams of one CJK run lie in the column);
//   - `prefix*` marks the term's last token `:*`;
//   - alternatives of a clause are OR-ed (`|`), clauses AND-ed (`&`), a negated
//     clause is `!( ... )`;
//   - a term with no token (punctuation only) is dropped; a clause left with no
//     alternative is dropped.
// Every lexeme is single-quoted with `'` and `\` backslash-escaped, so the result
// always parses as a tsquery and never injects an operator. "" when no positive
// clause remains (the search then finds nothing, as on SQLite).
#pragma once

#include <string>

#include "policies/fts_query.hpp"

namespace mneme {

std::string to_pg_tsquery(const parsed_query& q);

} // namespace mneme
