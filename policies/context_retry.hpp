// The context service's advice after a model error (issue 27 item 2; POST
// /v1/sessions/{key}/model_error): whether the agent should send its request again, and
// whether it should wait first. The error itself is classified by policies/
// error_classifier.hpp and handled by the session exactly as its own calls' errors
// (T6-T9 compact, then the call is retried); this table only says what an agent calling
// its model itself should do with the answer. Pure: standard library only; safe from any
// thread. Called by actors/session/session_context.cpp.
//
// Table (first match wins):
//   1. a compaction ran for the error (T6-T9)      -> retry now, with the new messages
//   2. transient kinds: rate_limited, server_error, refused, network, idle_timeout,
//      total_timeout, malformed, empty_answer      -> retry after a backoff, same messages
//   3. everything else: auth, quota, bad_request, unsupported_parameter, dns, tls, and
//      an error trigger whose compaction did not run -> do not retry (a retry fails the
//      same way until the caller changes its request or its credentials)
// Invariant: retry_after_backoff implies retry.
#pragma once

#include <ostream>

#include "messages/llm_error_kind.hpp"

namespace mneme {

struct model_error_advice {
  bool retry = false;
  bool retry_after_backoff = false;
  bool operator==(const model_error_advice& o) const {
    return retry == o.retry && retry_after_backoff == o.retry_after_backoff;
  }
};

std::ostream& operator<<(std::ostream& os, const model_error_advice& a);

// `compacted`: the session ran a compaction for this error (committed or not: the
// session's own call is retried either way).
model_error_advice advise_after_model_error(llm_error_kind kind, bool compacted);

} // namespace mneme
