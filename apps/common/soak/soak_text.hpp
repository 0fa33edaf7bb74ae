// The messages of the simulated users: what each one says, deterministically from the
// scenario's seed, the user and the message's sequence number. Every message starts with
// a unique tag ("[soak u12 n3]") so the end-of-run check finds each row in the store; a
// share of them carry marker words that recall must find afterwards: a Latin marker
// "mk<user>x<seq>" (in Chinese text glued to the CJK characters, SPEC §4's "youer" case)
// and, in Chinese text, a CJK marker "印记" + the sequence number in the heavenly stems.
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "apps/common/soak/soak_scenario.hpp"

namespace mneme::soak {

enum class turn_kind : uint8_t { english, chinese, tool_small, tool_large };
std::string_view to_string(turn_kind k);

struct planned_message {
  std::string tag;
  std::string content;
  turn_kind kind = turn_kind::english;
  std::string latin_marker;   // empty when this message carries none
  std::string cjk_marker;     // empty when this message carries none
};

// "[soak u<user> n<seq>]".
std::string message_tag(int64_t user, int64_t seq);
// The tag a stored row starts with, if it is one of ours.
std::optional<std::string> tag_of(std::string_view content);
std::string latin_marker(int64_t user, int64_t seq);
std::string cjk_marker(int64_t seq);

// The seq-th message (0, 1, ...) of `user`. `rng` is the user's own generator (seeded
// by user_rng); it decides kind and size.
planned_message plan_message(const message_mix& mix, int64_t user, int64_t seq,
                             std::mt19937_64& rng);
std::mt19937_64 user_rng(uint64_t seed, int64_t user);

// Tool output of about `bytes` bytes: rows "row N: service=api-S latency_ms=L status=ok".
std::string tool_payload(std::mt19937_64& rng, int64_t bytes);

// The largest message the mix can produce, as a local token estimate (for the
// derived live bound).
int64_t largest_message_tokens(const message_mix& mix);

} // namespace mneme::soak
