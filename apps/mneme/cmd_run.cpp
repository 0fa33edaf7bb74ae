// `mneme run [--config FILE]`: the main job on embedded defaults. Until the runtime
// lands it is a dry run: it validates the configuration, then walks one compaction of
// a deterministic sample transcript through every policy (threshold, trigger, split,
// budget, summarizer request, local fallback summary, plan application, failure
// protection) and prints what each decided. No network, no database, no clock read
// by a policy (`now` is taken once here).
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "apps/common/app_config.hpp"
#include "apps/common/sample_transcript.hpp"
#include "apps/mneme/command_registry.hpp"
#include "policies/failure_protection.hpp"
#include "policies/fallback_summary.hpp"
#include "policies/split.hpp"
#include "policies/split_apply.hpp"
#include "policies/summary_budget.hpp"
#include "policies/summary_markers.hpp"
#include "policies/summary_request.hpp"
#include "policies/threshold.hpp"
#include "policies/token_estimate.hpp"
#include "policies/trigger_eval.hpp"
#include "policies/utf8.hpp"

namespace mneme::cli {

namespace {

struct run_options {
  std::string config_file;  // empty = embedded defaults
  std::size_t messages = 800;
  uint64_t seed = 1;
};

void line(const char* label, const std::string& text) {
  std::cout << fmt::format("{:<11} {}\n", label, text);
}

int run_dry(const run_options& opt) {
  app_config cfg;
  if (!opt.config_file.empty()) {
    auto loaded = load_config_file(opt.config_file);
    if (!loaded.ok()) {
      std::cerr << loaded.describe_errors();
      return exit_usage;
    }
    cfg = *loaded.config;
  }
  std::cout << "mneme run: dry run of the compaction policies (no LLM, no database)\n";
  line("config", opt.config_file.empty() ? "embedded defaults (valid)"
                                         : opt.config_file + " (valid)");
  auto th = compute_threshold(cfg.compression, cfg.model);
  line("threshold", fmt::format("model={} {}", cfg.model.name, describe(th)));
  if (!th.ok() || th.threshold <= 0) {
    std::cerr << "the configured model gives no usable threshold\n";
    return exit_failure;
  }

  sample_shape shape;
  shape.min_messages = opt.messages;
  shape.min_tokens = th.threshold + th.threshold / 10; // 10% over: a compaction is due
  shape.seed = opt.seed;
  auto live = make_sample_transcript(shape);
  int64_t before = estimate_messages_tokens(live);
  line("transcript", fmt::format("{} messages, estimate {} tokens (sample, seed {})",
                                 live.size(), before, opt.seed));

  const time_ms now = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch()).count();
  trigger_state state;
  trigger_inputs in;
  in.phase = eval_phase::post_call;
  in.estimated_tokens = before;
  in.api_prompt_tokens = before; // the fake model reports the estimate as usage
  in.message_count = static_cast<int64_t>(live.size());
  trigger_limits limits;
  limits.threshold_tokens = th.threshold;
  limits.hygiene_token_limit = hygiene_token_limit(cfg.model.context_length);
  limits.idle_floor_tokens = threshold_floor_tokens;
  limits.context_window = cfg.model.context_length;
  limits.long_context_cap_tokens = long_context_window_cap_tokens;
  auto decision = evaluate_triggers(in, limits, cfg.compression, state, now);
  std::ostringstream d;
  d << decision;
  line("trigger", d.str());
  if (!decision.compact) {
    line("result", "no compaction due");
    return exit_ok;
  }

  auto plan = plan_compaction(live, cfg.compression, cfg.model.context_length);
  std::ostringstream p;
  p << plan;
  line("split", p.str());
  if (plan.nothing_to_compact()) {
    line("result", "nothing to compact");
    return exit_ok;
  }
  std::vector<message> middle(live.begin() + static_cast<std::ptrdiff_t>(plan.head_end),
                              live.begin() + static_cast<std::ptrdiff_t>(plan.tail_begin));
  auto budget = compute_summary_budget(plan.middle_tokens, cfg.model.context_length,
                                       cfg.compression.target_ratio);
  line("budget", fmt::format("{} tokens ({})", budget.tokens, to_string(budget.rule)));
  summary_request_params rp;
  rp.model = cfg.summarizer.model.empty() ? cfg.model.name : cfg.summarizer.model;
  rp.budget_tokens = budget.tokens;
  auto request = build_summary_request(middle, rp);
  line("request", fmt::format("summarizer prompt of {} chars to model {}, max_tokens {}",
                              count_code_points(request.messages.front().content), request.model,
                              request.max_tokens ? "set" : "not sent"));
  auto summary = wrap_summary(build_fallback_summary(middle));
  line("summary", fmt::format("local fallback summary, {} chars (the dry run calls no LLM)",
                              count_code_points(summary)));
  auto result = apply_plan(live, plan, summary);
  int64_t after = estimate_messages_tokens(result.live);
  line("result", fmt::format("{}: live {} messages, {} tokens ({:.1f}% saved), {} rows archived",
                             to_string(result.status), result.live.size(), after,
                             100.0 * static_cast<double>(before - after) / static_cast<double>(before),
                             result.archived_ids.size()));
  compaction_outcome outcome;
  outcome.by = decision.fired;
  outcome.tokens_before = before;
  outcome.tokens_after = after;
  outcome.summary_failed = true; // the dry run stands in for an unreachable summarizer
  outcome.used_fallback = true;
  outcome.failure_reason = "dry run: no summarizer";
  on_compaction_done(state, outcome, now, cfg.compression);
  line("protection", fmt::format("effective={} strikes={} compactions={} fallback_streak={} "
                                 "cooldown={}s ({})",
                                 is_effective(outcome, cfg.compression) ? "yes" : "no",
                                 state.anti_thrash_strikes, state.compaction_count,
                                 state.fallback_streak, (state.cooldown_until_ms - now) / 1000,
                                 state.cooldown_reason));
  return exit_ok;
}

command_action setup_run(CLI::App& cmd) {
  auto opt = std::make_shared<run_options>();
  cmd.add_option("--config", opt->config_file, "YAML configuration (default: embedded defaults)");
  cmd.add_option("--messages", opt->messages, "minimum size of the sample transcript")
    ->check(CLI::Range(8, 1'000'000));
  cmd.add_option("--seed", opt->seed, "seed of the sample transcript");
  return [opt] { return run_dry(*opt); };
}

} // namespace

MNEME_COMMAND("run", "Run the main job on embedded defaults (today: a dry run of the policies)",
              setup_run);

} // namespace mneme::cli
