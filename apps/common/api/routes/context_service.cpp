// The context service's bodies; see context_service.hpp.
#include "apps/common/api/routes/context_service.hpp"

#include <algorithm>

#include "actors/llm/llm_wire.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/doors/openai_chat/openai_wire.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"

namespace mneme::api {

namespace {

caf::error refused(std::string what) {
  return caf::make_error(errc::bad_request, std::move(what));
}

caf::error non_negative(const json& obj, const char* name, bool required, int64_t& out) {
  std::optional<int64_t> v;
  if (auto err = int_field(obj, name, v))
    return err;
  if (!v) {
    if (required)
      return refused(std::string{"missing field '"} + name + "'");
    return {};
  }
  if (*v < 0)
    return refused(std::string{"field '"} + name + "' must be 0 or more, not "
                   + std::to_string(*v));
  out = *v;
  return {};
}

json messages_json(const std::vector<message>& rows) {
  auto out = json::array();
  for (const auto& m : rows)
    out.push_back(llm::message_to_json(m));
  return out;
}

} // namespace

caf::expected<context_call> decode_context_call(std::string_view body) {
  auto j = parse_fields(body, {"messages", "model", "tools", "max_tokens", "user"}, true);
  if (!j)
    return j.error();
  context_call out;
  out.rq.op = context_op::context;
  if (auto err = string_field(*j, "user", out.user, false))
    return err;
  if (auto err = string_field(*j, "model", out.rq.model, false))
    return err;
  if (out.rq.model.size() > context_model_max_bytes)
    return refused("field 'model' is longer than " + std::to_string(context_model_max_bytes)
                   + " bytes");
  if (auto it = j->find("messages"); it != j->end()) {
    if (!it->is_array())
      return refused(std::string{"field 'messages' must be an array, not "} + it->type_name());
    for (size_t i = 0; i < it->size(); ++i) {
      auto m = decode_openai_message((*it)[i], "messages[" + std::to_string(i) + "]");
      if (!m)
        return m.error();
      out.rq.rows.push_back(std::move(*m));
    }
  }
  turn_input tools;
  if (auto err = decode_turn_tools(*j, tools))
    return err;
  out.rq.tools_json = tools.set_tools ? std::move(tools.tools_json) : std::string{};
  std::optional<int64_t> max_tokens;
  if (auto err = int_field(*j, "max_tokens", max_tokens))
    return err;
  if (max_tokens && *max_tokens < 1)
    return refused("field 'max_tokens' must be 1 or more, not " + std::to_string(*max_tokens));
  out.rq.max_tokens = max_tokens.value_or(0);
  return out;
}

caf::expected<context_call> decode_usage_call(std::string_view body) {
  auto j = parse_fields(body, {"prompt_tokens", "completion_tokens", "total_tokens", "answer"});
  if (!j)
    return j.error();
  context_call out;
  auto& rq = out.rq;
  rq.op = context_op::usage;
  int64_t total = 0;
  if (auto err = non_negative(*j, "prompt_tokens", true, rq.prompt_tokens))
    return err;
  if (auto err = non_negative(*j, "completion_tokens", false, rq.completion_tokens))
    return err;
  if (auto err = non_negative(*j, "total_tokens", false, total))
    return err;
  if (auto it = j->find("answer"); it != j->end() && !it->is_null()) {
    auto m = decode_openai_message(*it, "answer");
    if (!m)
      return m.error();
    if (m->role != msg_role::assistant)
      return refused("field 'answer.role' must be \"assistant\", not \""
                     + std::string{to_string(m->role)} + "\"");
    rq.has_answer = true;
    rq.answer = std::move(*m);
  }
  return out;
}

caf::expected<context_call> decode_model_error_call(std::string_view body) {
  auto j = parse_fields(body, {"status", "body"});
  if (!j)
    return j.error();
  context_call out;
  auto& rq = out.rq;
  rq.op = context_op::model_error;
  std::optional<int64_t> status;
  if (auto err = int_field(*j, "status", status))
    return err;
  if (!status)
    return refused("missing field 'status'");
  if (*status < 100 || *status > 599)
    return refused("field 'status' must be an HTTP status (100..599), not "
                   + std::to_string(*status));
  if (*status >= 200 && *status <= 299)
    return refused("field 'status' is " + std::to_string(*status)
                   + ": a 2xx answer is not an error (report it with /usage)");
  rq.status = *status;
  if (auto it = j->find("body"); it != j->end() && !it->is_null())
    rq.body = it->is_string() ? it->get<std::string>()
                              : it->dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

json context_reply_json(const context_reply& r, context_op op) {
  auto reports = json::array();
  for (const auto& c : r.compactions)
    reports.push_back(to_json(c));
  json out{{"session_id", r.session_id},
           {"threshold_tokens", r.threshold_tokens},
           {"context_window", r.context_window},
           {"live_messages", r.live_messages},
           {"live_tokens", r.live_tokens},
           {"compactions", std::move(reports)}};
  if (r.has_messages) {
    out["messages"] = messages_json(r.messages);
    out["estimated_tokens"] = r.estimated_tokens;
  }
  switch (op) {
    case context_op::context:
      out["appended_ids"] = r.appended_ids;
      break;
    case context_op::usage:
      out["answer_id"] = r.answer_id > 0 ? json(r.answer_id) : json(nullptr);
      break;
    case context_op::model_error:
      out["kind"] = std::string{to_string(r.error_kind)};
      out["trigger"] = r.fired == trigger::none ? json(nullptr)
                                                : json(std::string{to_string(r.fired)});
      out["retry"] = r.retry;
      out["retry_after_backoff"] = r.retry_after_backoff;
      out["compacted"] = std::any_of(r.compactions.begin(), r.compactions.end(),
                                     [](const compaction_report& c) { return c.committed; });
      break;
    case context_op::count_: // not an operation
      break;
  }
  return out;
}

} // namespace mneme::api
