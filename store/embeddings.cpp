// What both backends share about stored vectors; see embeddings.hpp.
#include "store/embeddings.hpp"

#include <cmath>
#include <cstring>

#include "caf/make_message.hpp" // errc.hpp needs it for make_error with a context
#include "messages/errc.hpp"

namespace mneme {

namespace {

caf::error bad(std::string what) {
  return caf::make_error(errc::bad_request, "embeddings: " + std::move(what));
}

bool little_endian() {
  const uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

} // namespace

std::string encode_vector(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v[i], 4);
    if (!little_endian())
      bits = __builtin_bswap32(bits);
    std::memcpy(&out[i * 4], &bits, 4);
  }
  return out;
}

std::optional<std::vector<float>> decode_vector(std::string_view bytes, int32_t dims) {
  if (dims < 1 || bytes.size() != static_cast<size_t>(dims) * 4)
    return std::nullopt;
  std::vector<float> v(static_cast<size_t>(dims));
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * 4, 4);
    if (!little_endian())
      bits = __builtin_bswap32(bits);
    std::memcpy(&v[i], &bits, 4);
  }
  return v;
}

caf::error check_embed_model(const std::string& model, int32_t dims) {
  if (model.empty() || model.size() > 256)
    return bad("model must be 1..256 bytes");
  if (dims < 1 || dims > embed_max_dims)
    return bad("dims " + std::to_string(dims) + " is outside 1.."
               + std::to_string(embed_max_dims));
  return {};
}

caf::error check_embed_read(int32_t source, int64_t after_id, int64_t limit) {
  if (source != embed_source_message && source != embed_source_fact)
    return bad("source " + std::to_string(source) + " is neither 0 (message) nor 1 (fact)");
  if (after_id < 0)
    return bad("after_id must be >= 0");
  if (limit < 1 || limit > embed_read_max_rows)
    return bad("limit " + std::to_string(limit) + " is outside 1.."
               + std::to_string(embed_read_max_rows));
  return {};
}

caf::error check_embed_write(const embed_write& w) {
  if (auto err = check_embed_model(w.model, w.dims))
    return err;
  if (w.source != embed_source_message && w.source != embed_source_fact)
    return bad("source " + std::to_string(w.source) + " is neither 0 (message) nor 1 (fact)");
  if (w.through < 0)
    return bad("through must be >= 0");
  for (const auto& r : w.rows) {
    if (r.vec.size() != static_cast<size_t>(w.dims))
      return bad("row " + std::to_string(r.id) + " has " + std::to_string(r.vec.size())
                 + " numbers, not " + std::to_string(w.dims));
    for (float x : r.vec)
      if (!std::isfinite(x))
        return bad("row " + std::to_string(r.id) + " has a non-finite number");
    if (r.id < 1 || r.id > w.through)
      return bad("row " + std::to_string(r.id) + " is not in 1..through ("
                 + std::to_string(w.through) + ")");
  }
  return {};
}

} // namespace mneme
