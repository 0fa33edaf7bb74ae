// CAF inspect() overloads for the LLM client's vocabulary (messages/chat_request.hpp)
// and the pool's statistics. Owned by the LLM client module (actors/llm); included by
// mneme_types.hpp, whose "LLM client" section lists their type IDs. Values only.
#pragma once

#include <cstdint>

#include "caf/meta/load_callback.hpp"
#include "caf/meta/type_name.hpp"

#include "messages/chat_request.hpp"

namespace mneme {

// A snapshot of one LLM pool (actors/llm/llm_pool.hpp), answered to llm_stats_atom.
struct llm_pool_stats {
  uint64_t in_flight = 0;     // HTTP calls running now (<= max_concurrency)
  uint64_t queued = 0;        // waiting for a slot (<= max_queue)
  uint64_t max_in_flight = 0; // high-water mark of in_flight since start
  uint64_t succeeded = 0;
  uint64_t failed = 0;        // answered with an error, overload and expiry included
  uint64_t overloaded = 0;    // refused at once because the queue was full
  uint64_t expired_in_queue = 0; // deadline passed before a slot was free
};

// CAF 0.17 has no std::optional support: optionals travel as (present, value) pairs.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chat_request& x) {
  bool has_max_tokens = x.max_tokens.has_value();
  int64_t max_tokens = x.max_tokens.value_or(0);
  bool has_temperature = x.temperature.has_value();
  double temperature = x.temperature.value_or(0.0);
  auto restore = caf::meta::load_callback([&]() -> caf::error {
    x.max_tokens = has_max_tokens ? std::optional<int64_t>{max_tokens} : std::nullopt;
    x.temperature = has_temperature ? std::optional<double>{temperature} : std::nullopt;
    return caf::none;
  });
  return f(caf::meta::type_name("mneme::chat_request"), x.model, x.messages, has_max_tokens,
           max_tokens, has_temperature, temperature, x.stream, x.purpose,
           x.server_compact_threshold, x.instructions, x.tools_json, x.extra_json, restore);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, chat_answer& x) {
  return f(caf::meta::type_name("mneme::chat_answer"), x.content, x.finish_reason,
           x.stop_sequence, x.prompt_tokens, x.completion_tokens, x.tool_calls,
           x.server_compacted);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, llm_pool_stats& x) {
  return f(caf::meta::type_name("mneme::llm_pool_stats"), x.in_flight, x.queued,
           x.max_in_flight, x.succeeded, x.failed, x.overloaded, x.expired_in_queue);
}

} // namespace mneme
