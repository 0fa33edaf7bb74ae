// The compaction endpoint's wire format; see compaction_wire.hpp.
#include "actors/llm/compaction_wire.hpp"

#include <nlohmann/json.hpp>

#include "actors/llm/llm_wire.hpp"

namespace mneme::llm {

namespace {

using nlohmann::json;

constexpr std::string_view chat_suffix = "/chat/completions";
constexpr std::string_view compact_suffix = "/responses/compact";


} // namespace

std::string compaction_url(std::string_view chat_url) {
  std::string url{chat_url};
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  if (url.size() >= chat_suffix.size()
      && url.compare(url.size() - chat_suffix.size(), chat_suffix.size(), chat_suffix) == 0)
    url.erase(url.size() - chat_suffix.size());
  return url + std::string{compact_suffix};
}

std::string to_compaction_wire_json(const chat_request& req) {
  json j;
  j["model"] = req.model;
  auto input = json::array();
  for (const auto& m : req.messages) {
    if (m.role == msg_role::tool) {
      input.push_back(
        {{"type", "function_call_output"}, {"call_id", m.tool_call_id}, {"output", m.content}});
      continue;
    }
    if (!m.content.empty() || m.tool_calls.empty())
      input.push_back(
        {{"type", "message"}, {"role", std::string{to_string(m.role)}}, {"content", m.content}});
    for (const auto& c : m.tool_calls)
      input.push_back({{"type", "function_call"},
                       {"call_id", c.id},
                       {"name", c.name},
                       {"arguments", c.arguments}});
  }
  j["input"] = std::move(input);
  if (!req.instructions.empty())
    j["instructions"] = req.instructions;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

parsed_answer parse_compaction_answer(std::string_view body) {
  parsed_answer out;
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("output")
      || !doc["output"].is_array()) {
    out.kind = llm_error_kind::malformed;
    out.detail = "compaction answer has no output array";
    return out;
  }
  std::string text;
  for (const auto& item : doc["output"]) {
    if (!item.is_object() || !item.contains("type") || item["type"] != "message")
      continue;
    auto part = strip_reasoning_blocks(content_text(item.contains("content") ? item["content"]
                                                                              : json()));
    if (part.empty())
      continue;
    if (!text.empty())
      text += "\n\n";
    text += part;
  }
  auto& ans = out.answer;
  ans.content = std::move(text);
  ans.finish_reason = "compacted";
  if (doc.contains("usage")) {
    ans.prompt_tokens = json_int_or_zero(doc["usage"], "input_tokens");
    ans.completion_tokens = json_int_or_zero(doc["usage"], "output_tokens");
  }
  if (ans.content.empty()) {
    out.kind = llm_error_kind::empty_answer;
    out.detail = "compaction answer holds no text";
  }
  return out;
}

} // namespace mneme::llm
