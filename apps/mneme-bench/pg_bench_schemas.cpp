// A benchmark's PostgreSQL schemas; see pg_bench_schemas.hpp.
#include "apps/mneme-bench/pg_bench_schemas.hpp"

#include <unistd.h>

#include <cstdio>

#include <pqxx/pqxx>

namespace mneme::bench {

pg_bench_schemas::pg_bench_schemas(std::string url, std::string prefix, std::string who)
  : base_(std::move(url)), prefix_(std::move(prefix)), who_(std::move(who)) {
  pqxx::connection c{base_};
  pqxx::work w{c};
  w.exec0("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public");
  w.commit();
}

pg_bench_schemas::~pg_bench_schemas() {
  try {
    pqxx::connection c{base_};
    pqxx::work w{c};
    for (auto& s : schemas_)
      w.exec0("DROP SCHEMA IF EXISTS " + w.quote_name(s) + " CASCADE");
    w.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: could not drop the bench schemas: %s\n", who_.c_str(), e.what());
  }
}

std::string pg_bench_schemas::fresh_url() {
  auto schema = prefix_ + "_" + std::to_string(::getpid()) + "_" + std::to_string(schemas_.size());
  pqxx::connection c{base_};
  pqxx::work w{c};
  w.exec0("CREATE SCHEMA " + w.quote_name(schema));
  w.commit();
  schemas_.push_back(schema);
  return base_ + (base_.find('?') == std::string::npos ? "?" : "&")
         + "options=-csearch_path%3D" + schema + "%2Cpublic";
}

store_params pg_bench_schemas::fresh() {
  store_params params;
  params.backend = store_backend::postgres;
  params.url = fresh_url();
  return params;
}

} // namespace mneme::bench
