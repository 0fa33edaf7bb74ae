// The simulated users' model tool loops; see soak_agent.hpp.
#include "apps/common/soak/soak_agent.hpp"

#include <random>

#include <fmt/format.h>

#include "policies/soak_checks.hpp"

namespace mneme::soak {

namespace {

constexpr int64_t small_result_bytes = 400;

double since_s(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

const std::string& soak_tools_json() {
  static const std::string tools = R"([
{"type":"function","function":{"name":"run_query","description":"Run a read-only query on the service database.","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},
{"type":"function","function":{"name":"read_log","description":"Read the last lines of a log file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"integer","minimum":10}},"required":["path","lines"]}}},
{"type":"function","function":{"name":"get_metric","description":"Read one service metric.","parameters":{"type":"object","properties":{"name":{"type":"string","enum":["latency_p99","error_rate"]},"window_s":{"type":"integer","minimum":60}},"required":["name","window_s"]}}}
])";
  return tools;
}

bool offers_tools(const message_mix& mix, uint64_t seed, int64_t user, int64_t seq) {
  if (mix.tools_offered_share >= 1)
    return true;
  std::mt19937_64 rng{content_hash(fmt::format("{}/{}/{}", seed, user, seq))};
  return std::uniform_real_distribution<double>(0, 1)(rng) < mix.tools_offered_share;
}

std::string tool_result_tag(int64_t user, int64_t seq, int64_t round, size_t call) {
  return fmt::format("[soak u{} n{} r{} c{}]", user, seq, round, call);
}

agent_loop::agent_loop(agent_context ctx) : c_(std::move(ctx)) {}

double agent_loop::ms_since(std::chrono::steady_clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

turn_input agent_loop::first_input(bool abandon_pending) {
  loop_started_ = call_started_ = std::chrono::steady_clock::now();
  c_.ledger->loop_started();
  turn_input in;
  in.content = c_.msg.content;
  in.set_tools = true;
  in.tools_json = soak_tools_json();
  in.abandon_pending = abandon_pending;
  return in;
}

std::optional<turn_input> agent_loop::on_reply(const turn_reply& r) {
  auto t = since_s(c_.t0);
  auto latency = ms_since(call_started_);
  if (!first_answered_) {
    first_answered_ = true;
    c_.ledger->answered(c_.user, c_.seq, c_.key, c_.msg, c_.user_id, r, t, latency);
  } else {
    c_.ledger->continued(c_.user, c_.key, r, t, latency);
    c_.ledger->tool_results_acknowledged(results_first_, results_n_);
  }
  results_n_ = 0;
  if (r.tool_calls.empty()) {
    end(loop_end::text);
    return std::nullopt;
  }
  ++rounds_;
  turn_input in;
  std::vector<sent_record> records;
  for (size_t k = 0; k < r.tool_calls.size(); ++k) {
    const auto& call = r.tool_calls[k];
    auto tag = tool_result_tag(c_.user, c_.seq, rounds_, k);
    std::mt19937_64 rng{content_hash(tag) ^ c_.seed};
    int64_t bytes = small_result_bytes;
    if (std::uniform_real_distribution<double>(0, 1)(rng) < c_.mix.tool_result_large_share)
      bytes = std::uniform_int_distribution<int64_t>(c_.mix.tool_large_kb.min,
                                                     c_.mix.tool_large_kb.max)(rng) * 1024;
    tool_result_input result;
    result.tool_call_id = call.id;
    result.content = tag + " result of " + call.name + ":\n" + tool_payload(rng, bytes);
    records.push_back({tag, content_hash(result.content), false});
    in.tool_results.push_back(std::move(result));
  }
  results_n_ = records.size();
  results_first_ = c_.ledger->tool_results_sent(std::move(records));
  call_started_ = std::chrono::steady_clock::now();
  return in;
}

bool agent_loop::on_error(const std::string& error_name, bool timed_out) {
  if (error_name == round_cap_error && results_n_ > 0) {
    // The results of the last allowed round are stored; the model is not called.
    c_.ledger->tool_results_acknowledged(results_first_, results_n_);
    end(loop_end::round_cap);
    return false;
  }
  c_.ledger->failed(error_name, since_s(c_.t0), ms_since(call_started_), timed_out, true);
  end(loop_end::error);
  return true;
}

void agent_loop::end(loop_end how) {
  c_.ledger->loop_ended({rounds_, how, ms_since(loop_started_)});
}

} // namespace mneme::soak
