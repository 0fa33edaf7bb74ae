// Stored vectors on PostgreSQL; see pg_embeddings.hpp.
#include "store/pg/pg_embeddings.hpp"

#include <pqxx/pqxx>

#include "caf/make_message.hpp" // errc.hpp needs it for make_error with a context
#include "messages/errc.hpp"
#include "store/embeddings.hpp"
#include "store/pg/pg_rows.hpp"

namespace mneme {

caf::expected<embed_candidates> pg_rows_to_embed(pqxx::connection& conn, int32_t source,
                                                 int64_t after_id, int64_t limit) {
  if (auto err = check_embed_read(source, after_id, limit))
    return err;
  return pg::guarded("read rows to embed", [&]() -> caf::expected<embed_candidates> {
    pqxx::read_transaction t{conn};
    const bool messages = source == embed_source_message;
    auto rows = messages
                  ? t.exec_params("SELECT m.id, s.user_id, m.role, m.is_summary, m.content"
                                  " FROM messages m JOIN sessions s ON s.id = m.session_id"
                                  " WHERE m.id > $1 ORDER BY m.id LIMIT $2",
                                  after_id, limit)
                  : t.exec_params("SELECT id, user_id, key, value, active FROM facts"
                                  " WHERE id > $1 ORDER BY id LIMIT $2",
                                  after_id, limit);
    embed_candidates out;
    out.scanned_through = after_id;
    out.rows.reserve(rows.size());
    for (const auto& r : rows) {
      embed_candidate c;
      c.id = r[0].as<int64_t>();
      c.user_id = pg::text_of(r[1]);
      if (messages) {
        c.role = r[2].as<std::string>();
        c.is_summary = r[3].as<int64_t>() != 0;
        c.text = pg::text_of(r[4]);
      } else {
        c.role = "fact";
        c.text = pg::text_of(r[2]) + ": " + pg::text_of(r[3]);
        c.active = r[4].as<int64_t>() != 0;
      }
      out.scanned_through = c.id;
      out.rows.push_back(std::move(c));
    }
    return out;
  });
}

caf::error pg_store_vectors(pqxx::connection& conn, const embed_write& w) {
  if (auto err = check_embed_write(w))
    return err;
  return pg::guarded("store vectors", [&]() -> caf::error {
    pqxx::work t{conn};
    for (const auto& r : w.rows)
      t.exec_params("INSERT INTO embeddings(model, dims, source, row_id, user_id, vector)"
                    " VALUES ($1, $2, $3, $4, $5, $6)"
                    " ON CONFLICT (model, dims, source, row_id) DO NOTHING",
                    pg::bytes(w.model), w.dims, w.source, r.id, pg::bytes(r.user_id),
                    pg::bytes(encode_vector(r.vec)));
    t.exec_params("INSERT INTO embed_state(model, dims, source, through) VALUES ($1, $2, $3, $4)"
                  " ON CONFLICT (model, dims, source)"
                  " DO UPDATE SET through = greatest(embed_state.through, excluded.through)",
                  pg::bytes(w.model), w.dims, w.source, w.through);
    t.commit();
    return {};
  });
}

caf::expected<embed_progress> pg_embed_progress(pqxx::connection& conn, const std::string& model,
                                                int32_t dims) {
  if (auto err = check_embed_model(model, dims))
    return err;
  return pg::guarded("read embedding progress", [&]() -> caf::expected<embed_progress> {
    pqxx::read_transaction t{conn};
    embed_progress p;
    for (int32_t source : {embed_source_message, embed_source_fact}) {
      auto mark = t.exec_params("SELECT through FROM embed_state"
                                " WHERE model = $1 AND dims = $2 AND source = $3",
                                pg::bytes(model), dims, source);
      int64_t through = mark.empty() ? 0 : mark[0][0].as<int64_t>();
      auto above = t.exec_params1(source == embed_source_message
                                    ? "SELECT count(*) FROM messages WHERE id > $1"
                                    : "SELECT count(*) FROM facts WHERE id > $1",
                                  through)[0]
                     .as<int64_t>();
      (source == embed_source_message ? p.messages_through : p.facts_through) = through;
      (source == embed_source_message ? p.messages_backlog : p.facts_backlog) = above;
    }
    p.stored_vectors = t.exec_params1("SELECT count(*) FROM embeddings"
                                      " WHERE model = $1 AND dims = $2",
                                      pg::bytes(model), dims)[0]
                         .as<int64_t>();
    return p;
  });
}

caf::expected<std::vector<stored_vector>> pg_stored_vectors(pqxx::connection& conn,
                                                            const std::string& model,
                                                            int32_t dims, int32_t source,
                                                            int64_t after_id, int64_t limit) {
  if (auto err = check_embed_model(model, dims))
    return err;
  if (auto err = check_embed_read(source, after_id, limit))
    return err;
  return pg::guarded("read stored vectors", [&]() -> caf::expected<std::vector<stored_vector>> {
    pqxx::read_transaction t{conn};
    auto rows = t.exec_params("SELECT row_id, user_id, vector FROM embeddings"
                              " WHERE model = $1 AND dims = $2 AND source = $3 AND row_id > $4"
                              " ORDER BY row_id LIMIT $5",
                              pg::bytes(model), dims, source, after_id, limit);
    std::vector<stored_vector> out;
    out.reserve(rows.size());
    for (const auto& r : rows) {
      stored_vector v;
      v.id = r[0].as<int64_t>();
      v.user_id = pg::text_of(r[1]);
      auto vec = decode_vector(pg::text_of(r[2]), dims);
      if (!vec)
        return caf::make_error(errc::storage_corrupt,
                               "stored vector " + std::to_string(v.id) + " is not "
                                 + std::to_string(dims) + " float32 values");
      v.vec = std::move(*vec);
      out.push_back(std::move(v));
    }
    return out;
  });
}

} // namespace mneme
