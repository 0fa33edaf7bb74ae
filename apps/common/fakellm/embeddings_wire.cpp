// The embeddings endpoint's wire format; see embeddings_wire.hpp.
#include "apps/common/fakellm/embeddings_wire.hpp"

#include <nlohmann/json.hpp>

#include "caf/make_message.hpp"  // messages/errc.hpp needs it for make_error with context
#include "messages/errc.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

namespace {

caf::error bad_embeddings(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

} // namespace

caf::expected<embeddings_call> parse_embeddings_call(std::string_view body) {
  using json = nlohmann::json;
  auto doc = json::parse(body.begin(), body.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return bad_embeddings("body must be a JSON object");
  embeddings_call call;
  auto model = doc.find("model");
  if (model == doc.end() || !model->is_string() || model->get<std::string>().empty())
    return bad_embeddings("model must be a non-empty string");
  call.model = model->get<std::string>();
  auto input = doc.find("input");
  if (input == doc.end()) return bad_embeddings("input is required");
  if (input->is_string()) {
    call.input.push_back(input->get<std::string>());
  } else if (input->is_array()) {
    if (input->empty()) return bad_embeddings("input must not be empty");
    if (input->size() > max_embedding_inputs)
      return bad_embeddings("input has more than " + std::to_string(max_embedding_inputs) +
                            " items");
    for (size_t i = 0; i < input->size(); ++i) {
      if (!(*input)[i].is_string())
        return bad_embeddings("input[" + std::to_string(i) + "] must be a string");
      call.input.push_back((*input)[i].get<std::string>());
    }
  } else {
    return bad_embeddings("input must be a string or an array of strings");
  }
  if (auto d = doc.find("dimensions"); d != doc.end()) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1 ||
        d->get<int64_t>() > static_cast<int64_t>(fake_embedding_max_dims))
      return bad_embeddings("dimensions must be an integer 1.." +
                            std::to_string(fake_embedding_max_dims));
    call.dimensions = static_cast<size_t>(d->get<int64_t>());
  }
  if (auto f = doc.find("encoding_format"); f != doc.end()) {
    if (!f->is_string() || f->get<std::string>() != "float")
      return bad_embeddings("encoding_format must be \"float\"");
  }
  return call;
}

std::string embeddings_body(const embeddings_call& call, fake_embedding_mode mode, bool empty) {
  using json = nlohmann::json;
  auto data = json::array();
  int64_t tokens = 0;
  for (size_t i = 0; i < call.input.size(); ++i) {
    tokens += estimate_text_tokens(call.input[i]);
    if (empty) continue;
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", fake_embedding(call.input[i], call.dimensions, mode)}});
  }
  json doc = {{"object", "list"},
              {"data", std::move(data)},
              {"model", call.model},
              {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}};
  return doc.dump();
}

std::string_view to_string(fake_embedding_mode m) {
  return m == fake_embedding_mode::paraphrase ? "paraphrase" : "bag_of_words";
}

bool parse_fake_embedding_mode(std::string_view s, fake_embedding_mode& out) {
  if (s == "bag_of_words") {
    out = fake_embedding_mode::bag_of_words;
    return true;
  }
  if (s == "paraphrase") {
    out = fake_embedding_mode::paraphrase;
    return true;
  }
  return false;
}

} // namespace mneme::fakellm
