// Which database a store runs on: SQLite (one file, the embedded default) or PostgreSQL
// (store/pg). Its names are the values of the configuration's `database.backend`.
// Pure; any thread.
#pragma once

#include <optional>
#include <ostream>
#include <string_view>

namespace mneme {

enum class store_backend { sqlite, postgres };

// "sqlite" or "postgres".
constexpr const char* to_string(store_backend b) {
  return b == store_backend::postgres ? "postgres" : "sqlite";
}

// The backend named `name` (exactly "sqlite" or "postgres"); nullopt for any other text.
inline std::optional<store_backend> parse_store_backend(std::string_view name) {
  for (auto b : {store_backend::sqlite, store_backend::postgres})
    if (name == to_string(b))
      return b;
  return std::nullopt;
}

inline std::ostream& operator<<(std::ostream& out, store_backend b) {
  return out << to_string(b);
}

} // namespace mneme
