// Model tool loops of the simulated users (issue 29 item 6): a share of the prose turns
// (mix.tools_offered_share) offers the users' tools to the model through the agent-turn
// route (gw_turn_atom in process, POST /v1/sessions/{key}/turns with --server); while the
// model answers with tool calls the runner "executes" them and sends every result back as
// `tool_results` (small ones, and a share mix.tool_result_large_share of tool_large_kb),
// until the model answers text, the gateway refuses the next round (tool_round_cap) or a
// call fails. `agent_loop` is that state machine for one user message, shared by the
// in-process driver (soak_agent_driver.hpp) and the HTTP driver; it records everything in
// the ledger: the user message and every result (tagged "[soak u<user> n<seq> r<round>
// c<k>]", checked stored once at the end), each call's latency, and the loop's end.
//
// Thread: an agent_loop belongs to the one user it plays (one call in flight at a time);
// the ledger is the only shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/soak/soak_ledger.hpp"
#include "apps/common/soak/soak_scenario.hpp"
#include "apps/common/soak/soak_text.hpp"
#include "messages/agent_turn.hpp"
#include "messages/session_messages.hpp"

namespace mneme::soak {

// The tools every simulated user offers: a JSON array of OpenAI function tools.
const std::string& soak_tools_json();

// Whether message `seq` of `user` offers the tools (mix.tools_offered_share), a
// deterministic function of the seed, the user and the sequence number.
bool offers_tools(const message_mix& mix, uint64_t seed, int64_t user, int64_t seq);

// "[soak u<user> n<seq> r<round> c<call>]": the tag of one tool result the runner sends.
std::string tool_result_tag(int64_t user, int64_t seq, int64_t round, size_t call);

// The error name errc::tool_round_cap arrives under (the API's code, CAF's enum name).
inline constexpr std::string_view round_cap_error = "tool_round_cap";

struct agent_context {
  std::shared_ptr<soak_ledger> ledger;
  message_mix mix;
  uint64_t seed = 1;
  int64_t user = 0;
  int64_t seq = 0;
  std::string key;
  std::string user_id;
  planned_message msg;
  std::chrono::steady_clock::time_point t0;   // the run's time origin
};

class agent_loop {
 public:
  explicit agent_loop(agent_context ctx);

  // The user message with the tools; `abandon_pending` when the user's previous loop
  // ended with an error (its calls may still wait for results). Starts the loop.
  turn_input first_input(bool abandon_pending);
  // The reply to the call in flight: the next input (the results of every call of the
  // reply), or nullopt when the loop ended with text.
  std::optional<turn_input> on_reply(const turn_reply& r);
  // The call in flight failed with `error_name`: the loop ended (by the round cap, its
  // results stored, or by the error). Returns whether calls may have been left pending.
  bool on_error(const std::string& error_name, bool timed_out);

  int64_t rounds() const { return rounds_; }
  const agent_context& context() const { return c_; }

 private:
  double ms_since(std::chrono::steady_clock::time_point t) const;
  void end(loop_end how);

  agent_context c_;
  std::chrono::steady_clock::time_point loop_started_;
  std::chrono::steady_clock::time_point call_started_;
  int64_t rounds_ = 0;
  bool first_answered_ = false;
  size_t results_first_ = 0;   // the ledger's records of the results in flight
  size_t results_n_ = 0;
};

} // namespace mneme::soak
