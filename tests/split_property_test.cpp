// Property tests of the compaction split (policies/split*, SPEC §3) over
// thousands of generated transcripts (fixed-seed PRNG, so every run checks the
// same cases): random roles, tool groups of 1-4 calls, interleaved summaries,
// pre-existing orphans, pending calls at the end, very short transcripts,
// count and tokens tail modes, whole and local compaction. For every plan:
//   - head and tail rows reach the new transcript verbatim and in order;
//   - the new transcript has no orphan tool row and no unanswered call;
//   - every original row is either kept or archived, exactly once;
//   - no tool group is split by a cut;
//   - the tail holds min_tail_user_messages real user messages whenever the
//     part after the head has them; head and tail protections hold;
//   - the last visible reply (assistant text after the last real user message)
//     is never in the middle, even after a long tool loop;
//   - the turn in progress (the last real user message when no final text reply
//     follows it: the start of an open tool loop) is never in the middle, nor is
//     any row after it when it lies after the head, whatever min_tail_user_messages
//     or the tail mode say;
//   - the summary row sits between rows of another role.
// The checks below are written independently of the implementation.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policies/split.hpp"
#include "policies/split_apply.hpp"

BOOST_AUTO_TEST_SUITE(split_property_test)

using namespace mneme;

namespace {

constexpr uint64_t k_seed = 20261130;
constexpr int k_transcripts = 6000;

class generator {
 public:
  explicit generator(uint64_t seed) : rng_(seed) {}

  // Uniform in [0, k); plain modulo keeps the sequence identical on every
  // standard library (distributions are implementation-defined).
  std::size_t below(std::size_t k) { return static_cast<std::size_t>(rng_() % k); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }

  std::vector<message> transcript() {
    std::vector<message> live;
    const std::size_t size_class = below(10);
    const std::size_t target = size_class < 2   ? below(9)           // very short: 0-8
                               : size_class < 7 ? 9 + below(52)      // 9-60
                                                : 61 + below(240);   // 61-300
    if (target > 0 && chance(85)) push(live, msg_role::system);
    while (live.size() < target) {
      const std::size_t pick = below(100);
      if (pick < 33) {
        push(live, msg_role::user);
      } else if (pick < 55) {
        push(live, msg_role::assistant);
      } else if (pick < 80) {
        tool_group(live, /*pending=*/false);
      } else if (pick < 87) {
        push(live, chance(50) ? msg_role::user : msg_role::assistant).is_summary = true;
      } else if (pick < 92) {
        push(live, msg_role::tool).tool_call_id = "lost" + std::to_string(++calls_);
      } else if (pick < 95) {
        // A long tool loop: 5-40 steps, mostly without text.
        for (std::size_t k = 5 + below(36); k > 0; --k) tool_group(live, /*pending=*/false);
      } else {
        push(live, msg_role::user);
        push(live, msg_role::assistant);
      }
    }
    if (target > 0 && chance(15)) open_loop(live);
    else if (chance(10)) tool_group(live, /*pending=*/true);
    // Some ids out of order, as after an earlier summary got a fresh id.
    if (chance(20) && !live.empty()) live[below(live.size())].id += 1000000;
    return live;
  }

  compression_params params() {
    compression_params p;
    switch (below(4)) {
      case 0: break;  // the SPEC defaults
      case 1:
        p.protect_first_n = static_cast<int>(below(6));
        p.protect_last_n = static_cast<int>(below(26));
        p.min_tail_user_messages = static_cast<int>(below(4));
        break;
      default:
        p.tail_mode = tail_mode::tokens;
        p.min_tail_user_messages = static_cast<int>(below(3));
        break;
    }
    return p;
  }

  int64_t window() {
    static const int64_t windows[] = {32000, 64000, 128000, 200000, 400000, 1000000};
    return windows[below(6)];
  }

 private:
  message& push(std::vector<message>& live, msg_role role) {
    message m;
    m.id = static_cast<int64_t>(live.size()) + 1;
    m.session_id = "p";
    m.role = role;
    m.content = "c" + std::to_string(m.id);
    m.timestamp_ms = m.id;
    m.token_estimate = chance(5) ? 5000 + static_cast<int64_t>(below(20000))
                                 : 1 + static_cast<int64_t>(below(3000));
    live.push_back(m);
    return live.back();
  }

  // An assistant with 1-4 calls and their answers in a random order; sometimes
  // an answer is missing (a pre-existing unanswered call) or a row sits
  // between the answers. A pending group ends the transcript with some answers
  // still to come.
  void tool_group(std::vector<message>& live, bool pending) {
    const std::size_t n_calls = 1 + below(4);
    message& a = push(live, msg_role::assistant);
    if (chance(60)) a.content.clear();  // a tool-only step, no visible text
    else if (chance(5)) a.content = " \n";  // whitespace is not visible either
    std::vector<std::string> ids;
    for (std::size_t k = 0; k < n_calls; ++k) {
      ids.push_back("c" + std::to_string(++calls_));
      a.tool_calls.push_back(tool_call{ids.back(), "fn", "{}"});
    }
    for (std::size_t k = ids.size(); k > 1; --k) std::swap(ids[k - 1], ids[below(k)]);
    const std::size_t answers = pending ? below(n_calls) : n_calls;
    for (std::size_t k = 0; k < answers; ++k) {
      if (!pending && chance(4)) continue;                     // unanswered call
      if (!pending && k > 0 && chance(4)) push(live, msg_role::assistant);  // interleaved row
      message& t = push(live, msg_role::tool);
      t.tool_call_id = ids[k];
      t.tool_name = "fn";
    }
  }

  // An agent turn in progress: a user message, 1-12 tool rounds without a final
  // reply, sometimes a last round still waiting for its results.
  void open_loop(std::vector<message>& live) {
    push(live, msg_role::user);
    for (std::size_t k = 1 + below(12); k > 0; --k) tool_group(live, /*pending=*/false);
    if (chance(50)) tool_group(live, /*pending=*/true);
  }

  std::mt19937_64 rng_;
  int calls_ = 0;
};

bool same_row(const message& a, const message& b) {
  return a.id == b.id && a.session_id == b.session_id && a.role == b.role
         && a.content == b.content && a.tool_call_id == b.tool_call_id
         && a.tool_calls == b.tool_calls && a.tool_name == b.tool_name
         && a.timestamp_ms == b.timestamp_ms && a.token_estimate == b.token_estimate
         && a.active == b.active && a.compacted == b.compacted && a.is_summary == b.is_summary;
}

// For each tool row: the nearest earlier row declaring its call id, or -1.
std::vector<long> owners(const std::vector<message>& live) {
  std::vector<long> owner(live.size(), -1);
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i].role != msg_role::tool) continue;
    for (std::size_t j = i; j-- > 0;) {
      const auto& calls = live[j].tool_calls;
      if (live[j].role == msg_role::assistant
          && std::any_of(calls.begin(), calls.end(),
                         [&](const tool_call& c) { return c.id == live[i].tool_call_id; })) {
        owner[i] = static_cast<long>(j);
        break;
      }
    }
  }
  return owner;
}

// Problems of a transcript that would be sent to a model: tool rows answering
// no earlier call, and calls never answered (except by a trailing pending group).
std::string pairing_problems(const std::vector<message>& live) {
  std::ostringstream out;
  const auto owner = owners(live);
  std::set<std::pair<std::size_t, std::string>> answered;
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i].role != msg_role::tool) continue;
    if (owner[i] < 0)
      out << "orphan tool row at " << i << "; ";
    else
      answered.insert({static_cast<std::size_t>(owner[i]), live[i].tool_call_id});
  }
  std::size_t j = live.size();
  while (j > 0 && live[j - 1].role == msg_role::tool) --j;
  const std::size_t pending = j > 0 ? j - 1 : live.size();
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i].role != msg_role::assistant || i == pending) continue;
    for (const auto& c : live[i].tool_calls)
      if (!answered.count({i, c.id})) out << "unanswered call " << c.id << " at " << i << "; ";
  }
  return out.str();
}

enum class side { head, middle, tail };

side side_of(const compaction_plan& p, std::size_t i) {
  return i < p.head_end ? side::head : i < p.tail_begin ? side::middle : side::tail;
}

std::size_t real_users(const std::vector<message>& live, std::size_t from, std::size_t to) {
  std::size_t count = 0;
  for (std::size_t i = from; i < to; ++i) count += is_real_user_message(live[i]) ? 1 : 0;
  return count;
}

// Index of the last assistant row with visible text after the last real user
// message (or anywhere, without one); -1 when there is none.
long last_visible_reply(const std::vector<message>& live) {
  for (std::size_t i = live.size(); i-- > 0;) {
    const message& m = live[i];
    if (m.role == msg_role::user && !m.is_summary) return -1;
    if (m.role == msg_role::assistant && !m.is_summary
        && m.content.find_first_not_of(" \t\r\n") != std::string::npos)
      return static_cast<long>(i);
  }
  return -1;
}

// Index of the last real user message when no final reply (assistant text without
// tool calls, not a summary) follows it; -1 otherwise.
long open_turn_start(const std::vector<message>& live) {
  for (std::size_t i = live.size(); i-- > 0;) {
    const message& m = live[i];
    if (m.role == msg_role::user && !m.is_summary) return static_cast<long>(i);
    if (m.role == msg_role::assistant && !m.is_summary && m.tool_calls.empty()
        && m.content.find_first_not_of(" \t\r\n") != std::string::npos)
      return -1;
  }
  return -1;
}

struct coverage {
  int compacted = 0, nothing = 0, merged = 0, dropped = 0, answered = 0, previous = 0,
      local = 0, tokens_mode = 0, reply_kept_past_tail = 0, open_turn_kept_past_tail = 0;
};

// The checks that hold for every plan, compacting or not.
void check_cuts(const std::vector<message>& live, const compaction_plan& p,
                const std::string& where) {
  BOOST_TEST_CONTEXT(where << " plan=" << p) {
    BOOST_TEST(p.transcript_size == live.size());
    BOOST_TEST(p.head_end <= p.tail_begin);
    BOOST_TEST(p.tail_begin <= live.size());
    const auto owner = owners(live);
    for (std::size_t i = 0; i < live.size(); ++i)
      if (owner[i] >= 0)
        BOOST_TEST((side_of(p, i) == side_of(p, static_cast<std::size_t>(owner[i]))),
                   "tool group split: row " << i << " owner " << owner[i]);
  }
}

// The checks of a whole-session plan's protections.
void check_protections(const std::vector<message>& live, const compaction_plan& p,
                       const compression_params& params, const std::string& where) {
  const std::size_t n = live.size();
  const std::size_t system = (n > 0 && live[0].role == msg_role::system) ? 1 : 0;
  BOOST_TEST_CONTEXT(where << " plan=" << p) {
    BOOST_TEST(p.head_end >= std::min(n, system + static_cast<std::size_t>(params.protect_first_n)));
    const std::size_t tail = n - p.tail_begin;
    const std::size_t after_head = n - p.head_end;
    if (params.tail_mode == tail_mode::count)
      BOOST_TEST(tail >= std::min(after_head, static_cast<std::size_t>(params.protect_last_n)));
    else
      BOOST_TEST(tail >= std::min(after_head, k_tail_floor_messages));
    const std::size_t wanted = static_cast<std::size_t>(params.min_tail_user_messages);
    BOOST_TEST(real_users(live, p.tail_begin, n)
               >= std::min(wanted, real_users(live, p.head_end, n)));
    const long reply = last_visible_reply(live);
    if (reply >= 0)
      BOOST_TEST((side_of(p, static_cast<std::size_t>(reply)) != side::middle),
                 "the last visible reply " << reply << " is summarized");
    // When that message sits in the protected head, the head keeps it and the loop's
    // earlier rounds after the head may be summarized (tool groups whole).
    const long open = open_turn_start(live);
    if (open >= 0)
      BOOST_TEST((side_of(p, static_cast<std::size_t>(open)) != side::middle));
    if (open >= 0 && static_cast<std::size_t>(open) >= p.head_end)
      for (std::size_t i = static_cast<std::size_t>(open); i < n; ++i)
        BOOST_TEST((side_of(p, i) != side::middle),
                   "row " << i << " of the turn in progress (from " << open << ") is summarized");
  }
}

// The open-turn rule did work: without it (count mode: the last protect_last_n rows and
// min_tail_user_messages; tokens mode: at most 8 rows) the turn's start was in reach.
bool open_turn_kept_past_tail(const std::vector<message>& live, const compaction_plan& p,
                              const compression_params& params) {
  const long open = open_turn_start(live);
  if (open < 0) return false;
  const auto o = static_cast<std::size_t>(open);
  const std::size_t n = live.size();
  const std::size_t keep = params.tail_mode == tail_mode::count
                             ? static_cast<std::size_t>(params.protect_last_n)
                             : k_tail_max_messages;
  return o >= p.head_end && o + keep < n && params.min_tail_user_messages == 0;
}

// The reply rule did work: the protections alone (count mode: the last
// protect_last_n rows) would not have kept the reply.
bool reply_kept_past_count_tail(const std::vector<message>& live, const compaction_plan& p,
                                const compression_params& params) {
  const long reply = last_visible_reply(live);
  if (reply < 0 || params.tail_mode != tail_mode::count) return false;
  const std::size_t keep = static_cast<std::size_t>(params.protect_last_n);
  const std::size_t base = live.size() > keep ? live.size() - keep : 0;
  const auto r = static_cast<std::size_t>(reply);
  return r >= p.head_end && r < base && real_users(live, r, live.size()) == 0;
}

// The checks of applying a compacting plan.
void check_applied(const std::vector<message>& live, const compaction_plan& p,
                   coverage& seen, const std::string& where) {
  const auto out = apply_plan(live, p, "SUMMARY");
  BOOST_TEST_CONTEXT(where << " plan=" << p) {
    BOOST_TEST(out.status == apply_status::applied);
    if (out.status != apply_status::applied) return;
    BOOST_TEST(pairing_problems(out.live).empty(), pairing_problems(out.live));

    // Exactly once: kept originals and archived ids partition the original ids.
    std::multiset<int64_t> accounted(out.archived_ids.begin(), out.archived_ids.end());
    std::vector<const message*> kept;
    for (const auto& m : out.live)
      if (m.id != 0) {
        accounted.insert(m.id);
        kept.push_back(&m);
      }
    std::multiset<int64_t> original;
    for (const auto& m : live) original.insert(m.id);
    BOOST_TEST((accounted == original));

    // Verbatim and in order: every kept original, head rows before the summary.
    std::set<int64_t> archived(out.archived_ids.begin(), out.archived_ids.end());
    const auto owner = owners(live);
    std::size_t k = 0;
    for (std::size_t i = 0; i < live.size(); ++i) {
      if (archived.count(live[i].id)) {
        // Archived: a middle row, the merge target, or a kept tool row that
        // answers no call (dropped orphan).
        const bool merged = p.merge_target_index && *p.merge_target_index == i;
        const bool orphan = live[i].role == msg_role::tool && owner[i] < 0;
        BOOST_TEST((side_of(p, i) == side::middle || merged || orphan),
                   "row " << i << " archived without reason");
        continue;
      }
      BOOST_TEST((side_of(p, i) != side::middle), "a middle row stayed live: " << i);
      BOOST_TEST(k < kept.size());
      if (k >= kept.size()) return;
      BOOST_TEST(same_row(*kept[k], live[i]), "row " << i << " changed or moved");
      ++k;
    }
    BOOST_TEST(k == kept.size());
    for (int64_t id : p.middle_ids) BOOST_TEST(archived.count(id) == 1u);

    // One summary, at summary_index, with the middle's range and a role unlike
    // its neighbours.
    std::size_t summaries = 0;
    for (const auto& m : out.live) summaries += (m.id == 0 && m.is_summary) ? 1 : 0;
    BOOST_TEST(summaries == 1u);
    const message& s = out.live[out.summary_index];
    BOOST_TEST(s.is_summary);
    BOOST_TEST(s.id == 0);
    BOOST_TEST((s.role == p.summary_role));
    BOOST_TEST(s.content.rfind("SUMMARY", 0) == 0u);
    BOOST_TEST(s.replaced_first_id <= *std::min_element(p.middle_ids.begin(), p.middle_ids.end()));
    BOOST_TEST(s.replaced_last_id >= *std::max_element(p.middle_ids.begin(), p.middle_ids.end()));
    if (out.summary_index > 0) {
      const msg_role before = out.live[out.summary_index - 1].role;
      BOOST_TEST((before != s.role || before == msg_role::system));
    }
    if (!p.merge_into_first_tail && out.summary_index + 1 < out.live.size())
      BOOST_TEST((out.live[out.summary_index + 1].role != s.role));

    ++seen.compacted;
    seen.merged += p.merge_into_first_tail ? 1 : 0;
    seen.previous += p.previous_summary_index ? 1 : 0;
    for (const auto& f : p.orphan_fixes)
      (f.what == orphan_fix::kind::drop_orphan_result ? seen.dropped : seen.answered) += 1;
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(every_generated_transcript_compacts_into_a_well_formed_live_context) {
  generator gen{k_seed};
  coverage seen;
  for (int t = 0; t < k_transcripts; ++t) {
    const auto live = gen.transcript();
    const auto params = gen.params();
    const int64_t window = gen.window();
    const std::string where = "transcript " + std::to_string(t);
    seen.tokens_mode += params.tail_mode == tail_mode::tokens ? 1 : 0;

    const auto plan = plan_compaction(live, params, window);
    check_cuts(live, plan, where);
    check_protections(live, plan, params, where);
    seen.reply_kept_past_tail += reply_kept_past_count_tail(live, plan, params) ? 1 : 0;
    seen.open_turn_kept_past_tail += open_turn_kept_past_tail(live, plan, params) ? 1 : 0;
    BOOST_TEST((plan.nothing_to_compact() == (plan.head_end == plan.tail_begin)), where);
    if (plan.nothing_to_compact()) {
      ++seen.nothing;
      const auto out = apply_plan(live, plan, "SUMMARY");
      BOOST_TEST(out.status == apply_status::nothing_to_compact);
      BOOST_TEST(out.live.size() == live.size());
      BOOST_TEST(out.archived_ids.empty());
    } else {
      check_applied(live, plan, seen, where);
    }

    if (live.empty()) continue;
    const std::size_t center = gen.below(live.size());
    const auto local = plan_local_compaction(live, center, gen.below(12), params, window);
    check_cuts(live, local, where + " local");
    if (local.outcome != split_outcome::compact) continue;
    ++seen.local;
    BOOST_TEST_CONTEXT(where << " local center=" << center << " plan=" << local) {
      BOOST_TEST(local.head_end <= center);
      BOOST_TEST(center < local.tail_begin);
      BOOST_TEST(local.head_end >= plan.head_end);
      BOOST_TEST(local.tail_begin <= plan.tail_begin);
    }
    check_applied(live, local, seen, where + " local");
  }
  // The generator must exercise every rule, or the properties prove little.
  BOOST_TEST_MESSAGE("compacted=" << seen.compacted << " nothing=" << seen.nothing
                     << " merged=" << seen.merged << " dropped_orphans=" << seen.dropped
                     << " synthetic_answers=" << seen.answered
                     << " previous_summary=" << seen.previous << " local=" << seen.local
                     << " tokens_mode=" << seen.tokens_mode
                     << " reply_kept_past_tail=" << seen.reply_kept_past_tail
                     << " open_turn_kept_past_tail=" << seen.open_turn_kept_past_tail);
  BOOST_TEST(seen.compacted > k_transcripts / 2);
  BOOST_TEST(seen.nothing > 100);
  BOOST_TEST(seen.merged > 100);
  BOOST_TEST(seen.dropped > 100);
  BOOST_TEST(seen.answered > 100);
  BOOST_TEST(seen.previous > 100);
  BOOST_TEST(seen.local > 1000);
  BOOST_TEST(seen.tokens_mode > 1000);
  BOOST_TEST(seen.reply_kept_past_tail > 50);
  BOOST_TEST(seen.open_turn_kept_past_tail > 20);
}

BOOST_AUTO_TEST_CASE(a_plan_applied_to_a_grown_transcript_keeps_the_new_rows_after_the_tail) {
  generator gen{k_seed + 1};
  const compression_params defaults;
  int applied = 0;
  for (int t = 0; t < 500; ++t) {
    const auto live = gen.transcript();
    const auto plan = plan_compaction(live, defaults, 200000);
    if (plan.nothing_to_compact()) continue;
    auto grown = live;
    auto extra = gen.transcript();
    for (auto& m : extra) m.id += 10000000;
    grown.insert(grown.end(), extra.begin(), extra.end());
    const auto out = apply_plan(grown, plan, "S");
    BOOST_REQUIRE(out.status == apply_status::applied);
    BOOST_REQUIRE(out.live.size() >= extra.size());
    for (std::size_t i = 0; i < extra.size(); ++i)
      BOOST_TEST(same_row(out.live[out.live.size() - extra.size() + i], extra[i]));
    ++applied;
  }
  BOOST_TEST(applied > 100);
}

BOOST_AUTO_TEST_SUITE_END() // split_property_test
