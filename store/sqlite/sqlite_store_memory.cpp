// The memory-tier and agent-tool operations of sqlite_store (store/message_store.hpp):
// the free functions of store/facts, store/session_tools, store/jsonl_import and the
// response records (sqlite_responses.hpp) on
// the writer connection. Thread: the store's owner.
#include "store/sqlite/sqlite_embeddings.hpp"
#include "store/sqlite/sqlite_facts.hpp"
#include "store/sqlite/sqlite_jsonl_import.hpp"
#include "store/sqlite/sqlite_responses.hpp"
#include "store/sqlite/sqlite_session_tools.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace mneme {

caf::expected<fact_record> sqlite_store::put_fact(const fact_record& f, time_ms now) {
  return mneme::put_fact(*db_, f, now);
}

caf::expected<fact_record> sqlite_store::remove_fact(const std::string& user_id,
                                                     const std::string& key, time_ms now) {
  return mneme::remove_fact(*db_, user_id, key, now);
}

caf::expected<std::vector<fact_record>> sqlite_store::query_facts(const fact_query& q) {
  return mneme::query_facts(*db_, q);
}

caf::expected<std::vector<fact_record>>
sqlite_store::facts_by_id(const std::string& user_id, const std::vector<int64_t>& ids) {
  return mneme::facts_by_id(*db_, user_id, ids);
}

caf::expected<embed_candidates> sqlite_store::rows_to_embed(int32_t source, int64_t after_id,
                                                             int64_t limit) {
  return sqlite_rows_to_embed(*db_, source, after_id, limit);
}

caf::error sqlite_store::store_vectors(const embed_write& w) {
  return store_sqlite_vectors(*db_, w);
}

caf::expected<embed_progress> sqlite_store::embed_progress_of(const std::string& model,
                                                              int32_t dims) {
  return sqlite_embed_progress(*db_, model, dims);
}

caf::expected<std::vector<stored_vector>>
sqlite_store::stored_vectors(const std::string& model, int32_t dims, int32_t source,
                             int64_t after_id, int64_t limit) {
  return sqlite_stored_vectors(*db_, model, dims, source, after_id, limit);
}

caf::error sqlite_store::put_session_tools(const std::string& session_key,
                                           const std::string& session_id,
                                           const std::string& tools, time_ms now) {
  return mneme::put_session_tools(*db_, session_key, session_id, tools, now);
}

caf::expected<std::string> sqlite_store::session_tools(const std::string& session_key) {
  return session_tools_of(*db_, session_key);
}

caf::error sqlite_store::put_response(const response_record& r) {
  return mneme::put_response(*db_, r);
}

caf::expected<response_record> sqlite_store::response(const std::string& id) {
  return response_of(*db_, id);
}

caf::expected<response_record> sqlite_store::delete_response(const std::string& id,
                                                             time_ms now) {
  return mneme::delete_response(*db_, id, now);
}

caf::expected<session_record> sqlite_store::import_jsonl(std::string_view jsonl,
                                                         session_record into, time_ms now) {
  return import_session_jsonl(*db_, jsonl, std::move(into), now, params_);
}

} // namespace mneme
