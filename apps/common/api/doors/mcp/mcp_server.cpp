// The MCP door; see mcp_server.hpp.
#include "apps/common/api/doors/mcp/mcp_server.hpp"

#include <functional>
#include <memory>
#include <vector>

#include "actors/gateway/skills_loader.hpp"
#include "apps/common/api/doors/mcp/mcp_tools.hpp"
#include "apps/common/api/doors/mcp/mcp_wire.hpp"
#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/inner_request.hpp"
#include "policies/client_text.hpp"

namespace mneme::api::mcp {

namespace {

using reply_fn = std::function<void(json)>;

// The answers of one POST, filled as its requests finish (in the request's actor); the
// POST is answered once, when every request has its answer and close() was called.
class answer_set : public std::enable_shared_from_this<answer_set> {
 public:
  answer_set(call_ptr c, bool batch) : c_(std::move(c)), batch_(batch) {}

  // A slot for one request's answer: the function fills it.
  reply_fn open() {
    answers_.emplace_back();
    ++waiting_;
    return [self = shared_from_this(), slot = answers_.size() - 1](json answer) {
      self->answers_[slot] = std::move(answer);
      --self->waiting_;
      self->finish_if_done();
    };
  }
  void add(json answer) { answers_.push_back(std::move(answer)); }
  // Every message of the POST was seen.
  void close() {
    closed_ = true;
    finish_if_done();
  }

 private:
  void finish_if_done() {
    if (!closed_ || waiting_ > 0 || answered_)
      return;
    answered_ = true;
    if (answers_.empty())
      return c_->finish(http_response{202, "", "", {}, false});
    c_->finish(json_response(200, batch_ ? json(answers_) : answers_.front()));
  }

  call_ptr c_;
  bool batch_;
  bool closed_ = false;
  bool answered_ = false;
  size_t waiting_ = 0;
  std::vector<json> answers_;
};

void answer_alone(const call_ptr& c, int code, const std::string& message) {
  c->finish(json_response(400, error_message(json{}, code, message)));
}

json skills_list_result(bool structured) {
  json list = json::array();
  for (const auto& s : current_skills())
    list.push_back({{"name", s.name}, {"description", s.description}});
  return structured_tool_result(json{{"skills", std::move(list)}}, structured);
}

json viewed_skill(const std::string& name, bool structured) {
  auto found = find_skill(name);
  if (!found)
    return tool_result("no skill '" + name + "' (skills_list names them)", true);
  return tool_result(found->text, false,
                     structured ? json{{"name", name}, {"text", found->text}} : json(nullptr));
}

void call_tool(const call_ptr& c, const rpc_message& m, bool structured, reply_fn reply) {
  auto p = decode_tool_call(m.params);
  if (p.error.empty() && !known_tool(p.name))
    p.error = "unknown tool '" + p.name + "'";
  if (!p.error.empty())
    return reply(error_message(m.id, invalid_params, p.error));
  tool_caller who{c->who.is_admin() ? "" : c->who.user, c->api->opt.default_user};
  auto plan = plan_tool_call(p.name, p.arguments, who);
  c->api->log->debug("session=- event=mcp_tool tool={} action={}", log_quoted(p.name),
                     static_cast<int>(plan.action));
  switch (plan.action) {
    case tool_action::bad_arguments:
      return reply(result_message(m.id, tool_result(p.name + ": " + plan.error, true)));
    case tool_action::list_skills:
      return reply(result_message(m.id, skills_list_result(structured)));
    case tool_action::view_skill:
      return reply(result_message(m.id, viewed_skill(plan.skill_name, structured)));
    case tool_action::api_request:
      return run_inner_request(c, std::move(plan.step.method), std::move(plan.step.target),
                               std::move(plan.step.body),
                               [id = m.id, reply, structured](http_response r) {
                                 reply(result_message(
                                   id, tool_result_of_answer(r.status, r.body, structured)));
                               });
  }
}

void serve_request(const call_ptr& c, const rpc_message& m, bool structured, reply_fn reply) {
  switch (method_of(m.method)) {
    case mcp_method::initialize: {
      auto a = answer_initialize(m.params, c->api->opt.version);
      return reply(a.error.empty() ? result_message(m.id, std::move(a.result))
                                   : error_message(m.id, invalid_params, a.error));
    }
    case mcp_method::ping: return reply(result_message(m.id, json::object()));
    case mcp_method::tools_list: return reply(result_message(m.id, tools_list(structured)));
    case mcp_method::tools_call: return call_tool(c, m, structured, std::move(reply));
    case mcp_method::unknown:
      return reply(error_message(m.id, method_not_found, "method '" + m.method + "' is not served"));
  }
}

} // namespace

json tool_result_of_answer(int status, const std::string& body, bool structured) {
  if (status < 400 && !structured)
    return tool_result(body, false);
  if (status < 400) {
    auto value = body.empty() ? json(nullptr) : json::parse(body, nullptr, false);
    if (value.is_discarded()) // not JSON: the text alone
      return tool_result(body, false);
    auto out = structured_tool_result(value, true);
    out["content"][0]["text"] = body; // the API's own bytes, as without structure
    return out;
  }
  auto doc = json::parse(body, nullptr, false);
  std::string code = "error", message = body;
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
    code = doc["error"].value("code", code);
    message = doc["error"].value("message", std::string{});
  }
  return tool_result("error " + std::to_string(status) + " " + code + ": " + message, true);
}

void serve(const call_ptr& c) {
  auto origin = c->req.header("Origin");
  if (!origin.empty() && !origin_allowed(origin, !c->req.header("Authorization").empty()))
    return c->finish(json_response(
      403, error_message(json{}, server_refusal,
                         "forbidden: origin '" + origin
                           + "' is not a loopback host; send a bearer token from other origins")));
  auto version = c->req.header("MCP-Protocol-Version");
  if (!version.empty() && !spoken_version(version))
    return answer_alone(c, invalid_request,
                        "MCP-Protocol-Version '" + version
                          + "' is not spoken here (spoken: " + spoken_versions_text() + ")");
  auto in = decode_post(c->req.body);
  if (in.parse_failure)
    return answer_alone(c, parse_error, *in.parse_failure);
  if (in.batch && in.messages.empty())
    return answer_alone(c, invalid_request, "a batch holds at least one message");
  if (in.batch && !batch_allowed(version))
    return answer_alone(c, invalid_request,
                        "batches are not part of MCP " + version + " (send one message per POST)");
  if (!in.batch && in.messages.front().kind == message_kind::invalid)
    return c->finish(json_response(
      400, error_message(in.messages.front().id, invalid_request, in.messages.front().error)));
  bool structured = structured_output(version);
  auto answers = std::make_shared<answer_set>(c, in.batch);
  for (const auto& m : in.messages) {
    if (m.kind == message_kind::invalid)
      answers->add(error_message(m.id, invalid_request, m.error));
    else if (m.kind == message_kind::request)
      serve_request(c, m, structured, answers->open());
  }
  answers->close();
}

} // namespace mneme::api::mcp
