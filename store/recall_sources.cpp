// The recall_source of each backend; see recall_sources.hpp.
#include "store/recall_sources.hpp"

#include "store/pg/pg_recall.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme {

namespace {

template <class Source>
caf::expected<std::unique_ptr<recall_source>> as_source(caf::expected<std::unique_ptr<Source>> s) {
  if (!s)
    return std::move(s.error());
  return std::unique_ptr<recall_source>{std::move(*s)};
}

} // namespace

caf::expected<std::unique_ptr<recall_source>> open_recall_source(const store_params& params) {
  if (params.backend == store_backend::postgres)
    return as_source(pg_recall_source::open(params));
  return as_source(store_reader::open(params));
}

} // namespace mneme
