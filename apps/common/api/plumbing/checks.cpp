// The checks before a route asks; see checks.hpp.
#include "apps/common/api/plumbing/checks.hpp"

#include "apps/common/api/plumbing/answer.hpp"
#include "apps/common/api/plumbing/api_state.hpp"
#include "apps/common/api/plumbing/request_decoder.hpp"
#include "policies/client_text.hpp"
#include "policies/key_namespace.hpp"

namespace mneme::api {

std::optional<refusal> name_refusal(std::string_view what, std::string_view text,
                                    size_t max_bytes) {
  auto v = check_name(text, max_bytes);
  if (v.ok())
    return std::nullopt;
  return refusal{400, "bad_request", describe_name_problem(v, what, max_bytes)};
}

std::optional<refusal> scope_refusal(const access_scope& who, std::string_view what,
                                     std::string& user) {
  access_question q{route_access::user_named, who, user, std::nullopt};
  if (decide_access(q) != access_verdict::allow)
    return refusal{403, "forbidden",
                   std::string{what} + ": a token of " + to_string(who)
                     + " may not act for another user"};
  user = acting_user(who, user);
  return std::nullopt;
}

std::optional<refusal> user_refusal(const access_scope& who, std::string_view what,
                                    std::string& user) {
  if (!user.empty())
    if (auto no = name_refusal(what, user, user_max_bytes))
      return no;
  return scope_refusal(who, what, user);
}

void refuse_scope(const call_ptr& c, const std::string& why) {
  c->refused_for_scope();
  c->api->log->debug("event=forbidden scope={} method={} path={}", log_quoted(to_string(c->who)),
                     c->req.method, log_quoted(raw_path_of(c->req.target)));
  send_error(c, 403, "forbidden", why);
}

namespace {

bool refused(const call_ptr& c, const std::optional<refusal>& no) {
  if (!no)
    return false;
  if (no->status == 403)
    refuse_scope(c, no->message);
  else
    send_error(c, no->status, no->code, no->message);
  return true;
}

} // namespace

bool check(const call_ptr& c, std::string_view what, std::string_view text, size_t max_bytes) {
  return !refused(c, name_refusal(what, text, max_bytes));
}

bool check_key(const call_ptr& c, const std::string& key) {
  auto why = key_refusal(key, session_key_max_bytes);
  if (why.empty())
    return true;
  send_error(c, 400, "bad_request", why);
  return false;
}

bool scoped_user(const call_ptr& c, std::string_view what, std::string& user) {
  return !refused(c, scope_refusal(c->who, what, user));
}

bool check_optional_user(const call_ptr& c, std::string_view what, std::string& user) {
  return !refused(c, user_refusal(c->who, what, user));
}

bool check_read_key(const call_ptr& c, const std::string& key) {
  if (key.find(key_namespace_separator) != std::string::npos) {
    send_error(c, 400, "bad_request", key_refusal(key, session_key_max_bytes));
    return false;
  }
  if (key.size() <= session_key_max_bytes)
    return true;
  send_error(c, 400, "bad_request",
             "the session key is longer than " + std::to_string(session_key_max_bytes)
               + " bytes");
  return false;
}

bool bool_param(const call_ptr& c, const char* name, bool& out) {
  auto v = c->query.find(name);
  if (!v)
    return true;
  auto b = parse_bool_param(name, *v);
  if (!b) {
    fail(c, b.error());
    return false;
  }
  out = *b;
  return true;
}

bool int_param(const call_ptr& c, const char* name, int64_t min, int64_t max, int64_t& out) {
  auto v = c->query.find(name);
  if (!v)
    return true;
  auto n = parse_int_param(name, *v, min, max);
  if (!n) {
    fail(c, n.error());
    return false;
  }
  out = *n;
  return true;
}

bool utf8_param(const call_ptr& c, const char* name, const std::string& text) {
  if (auto at = first_invalid_utf8(text)) {
    send_error(c, 400, "bad_request",
               std::string{"parameter '"} + name + "' is not valid UTF-8 (byte "
                 + std::to_string(*at) + ")");
    return false;
  }
  return true;
}

} // namespace mneme::api
