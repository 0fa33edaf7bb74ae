// What the OpenAI-shaped doors share (the chat-completions door in openai_chat/, the
// Responses door in openai_responses/; docs/api.md "OpenAI door", "Responses door"): an
// error as OpenAI answers it, {"error":{"message","type","param","code"}}, with the
// status and type of policies/openai_errors.hpp, and a JSON answer. Pure functions; safe
// from any thread; they never throw.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "apps/common/api/front/http_exchange.hpp"

namespace mneme::api {

// The `param` of an OpenAI error from a decoder message ("field 'x' ..." -> "x"), or
// null.
nlohmann::json param_of(const std::string& message);

// {"error":{"message","type","param","code"}}
nlohmann::json openai_error_json(const std::string& message, const std::string& type,
                                 const nlohmann::json& param, const std::string& code);

// A JSON answer (invalid UTF-8 in strings replaced, never thrown).
http_response openai_json_response(int status, const nlohmann::json& body,
                                   header_list headers = {});

// An OpenAI-shaped error answer of mneme's (mneme's status and code, mapped by
// openai_error_of).
http_response openai_error_response(int status, const std::string& code,
                                    const std::string& message, header_list headers = {});

} // namespace mneme::api
