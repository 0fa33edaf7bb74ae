// The response records on PostgreSQL; see pg_responses.hpp.
#include "store/pg/pg_responses.hpp"

#include <pqxx/pqxx>

#include "store/conversation_rewrite.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

constexpr const char* pg_response_columns =
  "user_id, session_key, session_id, last_row_id, previous_id, created_at_ms, deleted_at_ms,"
  " body";

response_record pg_decode_response(const std::string& id, const pqxx::row& row) {
  response_record r;
  r.id = id;
  r.user_id = pg::text_of(row[0]);
  r.session_key = pg::text_of(row[1]);
  r.session_id = row[2].as<std::string>();
  r.last_row_id = row[3].as<int64_t>();
  r.previous_id = row[4].as<std::string>();
  r.created_at_ms = row[5].as<int64_t>();
  r.deleted_at_ms = row[6].as<int64_t>();
  r.body = pg::text_of(row[7]);
  return r;
}

} // namespace

caf::error pg_put_response(pqxx::connection& conn, const response_record& r) {
  if (auto err = check_response_record(r))
    return err;
  return pg::guarded("put response", [&]() -> caf::error {
    pqxx::work w{conn};
    if (is_conversation_record_id(r.id)) { // a stored one: its body replaced, or refused
      auto rows = w.exec_params(std::string{"SELECT "} + pg_response_columns
                                  + " FROM responses WHERE id = $1 FOR UPDATE",
                                r.id);
      if (!rows.empty()) {
        if (auto err = check_conversation_rewrite(pg_decode_response(r.id, rows[0]), r))
          return err;
        w.exec_params("UPDATE responses SET body = $2 WHERE id = $1 AND deleted_at_ms = 0",
                      r.id, pg::bytes(r.body));
        w.commit();
        return {};
      }
    }
    w.exec_params("INSERT INTO responses(id, user_id, session_key, session_id, last_row_id,"
                  " previous_id, created_at_ms, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                  r.id, pg::bytes(r.user_id), pg::bytes(r.session_key), r.session_id,
                  r.last_row_id, r.previous_id, r.created_at_ms, pg::bytes(r.body));
    w.commit();
    return {};
  });
}

caf::expected<response_record> pg_response(pqxx::connection& conn, const std::string& id) {
  return pg::guarded("read response", [&]() -> caf::expected<response_record> {
    pqxx::read_transaction t{conn};
    auto rows = t.exec_params(std::string{"SELECT "} + pg_response_columns
                                + " FROM responses WHERE id = $1",
                              id);
    if (rows.empty())
      return not_found("response '" + id + "'");
    return pg_decode_response(id, rows[0]);
  });
}

caf::expected<response_record> pg_delete_response(pqxx::connection& conn, const std::string& id,
                                                  time_ms now) {
  if (now <= 0)
    return bad_request("delete response: now must be > 0");
  return pg::guarded("delete response", [&]() -> caf::expected<response_record> {
    pqxx::work w{conn};
    auto rows = w.exec_params(std::string{"UPDATE responses SET deleted_at_ms = $2"
                                          " WHERE id = $1 AND deleted_at_ms = 0 RETURNING "}
                                + pg_response_columns,
                              id, now);
    if (rows.empty())
      return not_found("response '" + id + "'");
    auto r = pg_decode_response(id, rows[0]);
    w.commit();
    return r;
  });
}

} // namespace mneme
