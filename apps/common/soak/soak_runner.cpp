// One soak run; see soak_runner.hpp.
#include "apps/common/soak/soak_runner.hpp"

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

// yaml-cpp 0.7's node headers trip GCC 12's -Wdangling-pointer inside the library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop

#include "actors/runtime.hpp"
#include "apps/common/config/app_config.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/common/soak/soak_inprocess_target.hpp"
#include "apps/common/soak/soak_loop.hpp"
#include "apps/common/soak/soak_report.hpp"
#include "apps/common/soak/soak_text.hpp"
#include "policies/soak_checks.hpp"
#include "policies/threshold.hpp"

namespace mneme::soak {

namespace {


// `overlay` merged into `base`: mappings key by key, anything else replaced.
YAML::Node merged(const YAML::Node& base, const YAML::Node& overlay) {
  if (!overlay || overlay.IsNull())
    return YAML::Clone(base);
  if (!base || !base.IsMap() || !overlay.IsMap())
    return YAML::Clone(overlay);
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : overlay) {
    auto key = kv.first.as<std::string>();
    out[key] = merged(base[key], kv.second);
  }
  return out;
}

// The configuration: --config (or the defaults) under the scenario's `config:` block,
// through the one strict loader.
config_result load_merged_config(const soak_scenario& s, const std::string& config_file) {
  YAML::Node base;
  if (!config_file.empty()) {
    try {
      base = YAML::LoadFile(config_file);
    } catch (const YAML::Exception& e) {
      config_result r;
      r.origin = config_file;
      r.errors.push_back({"", std::string{"cannot read: "} + e.what(), 0, 0});
      return r;
    }
  }
  YAML::Node overlay;
  if (!s.config_yaml.empty())
    overlay = YAML::Load(s.config_yaml);
  auto doc = merged(base, overlay);
  if (!doc || doc.IsNull())
    return load_config_text("{}", "defaults");
  YAML::Emitter out;
  out << doc;
  auto origin = (config_file.empty() ? std::string{"defaults"} : config_file) + " + "
                + s.origin + " config:";
  return load_config_text(out.c_str(), origin);
}

} // namespace

int run_soak(soak_scenario sc, const soak_options& opt, std::ostream& out, std::ostream& err) {
  if (opt.users)
    sc.users = *opt.users;
  if (opt.duration_s)
    sc.duration_s = *opt.duration_s;
  auto loaded = load_merged_config(sc, opt.config_file);
  if (!loaded.ok()) {
    err << loaded.describe_errors();
    return exit_usage;
  }
  app_config cfg = *loaded.config;

  fakellm::fake_llm_options fo;
  if (sc.fake_llm.window_tokens)
    fo.answers.window_tokens = *sc.fake_llm.window_tokens;
  if (sc.fake_llm.answer_tokens)
    fo.answers.answer_tokens = *sc.fake_llm.answer_tokens;
  auto server = std::make_unique<fakellm::fake_llm_server>(fo);
  auto port = server->start();
  if (!port) {
    err << "fake LLM server: " << render_error(port.error()) << "\n";
    return exit_failure;
  }
  cfg.model.base_url = server->base_url();
  if (cfg.summarizer.base_url.empty() || cfg.summarizer.base_url == "builtin")
    cfg.summarizer.base_url = server->base_url();
  if (cfg.embeddings.base_url == "builtin")
    cfg.embeddings.base_url = server->base_url();
  auto made = runtime_config_of(cfg);
  if (!made) {
    err << render_error(made.error()) << "\n";
    return exit_usage;
  }
  auto& rc = *made;
  if (opt.db.empty()) {
    char tmpl[] = "/tmp/mneme-soak-XXXXXX";
    if (!mkdtemp(tmpl)) {
      err << "cannot create a temporary directory\n";
      return exit_failure;
    }
    rc.database.path = std::string{tmpl} + "/mneme.db";
    // A fresh scratch database: NORMAL sync (durable against a crash of this process,
    // which is what the run checks; not against power loss).
    rc.database.synchronous_full = false;
  } else {
    rc.database.path = opt.db;
  }

  auto th = compute_threshold(rc.compression, rc.model);
  int64_t live_bound = window_live_bound(rc.model.context_length, sc.invariants.max_live_tokens);

  out << fmt::format("mneme soak: scenario {} ({}), {} users for {:.0f} s\n", sc.name, sc.origin,
                     sc.users, sc.duration_s);
  out << fmt::format("fake LLM    {} with {} fault rules\n", server->base_url(),
                     sc.fake_llm.plan.rules.size());
  out << fmt::format("database    {}\n", rc.database.path);
  out << fmt::format("threshold   {}\n", describe(th));
  out << fmt::format("live bound  {} tokens{}\n", live_bound,
                     sc.invariants.max_live_tokens > 0 ? " (scenario)" : " (the window)");
  out.flush();

  soak_result result;
  result.scenario = &sc;
  result.database = rc.database.path;
  result.threshold_tokens = th.threshold;
  result.live_bound = live_bound;

  auto target = inprocess_target::start(std::move(server), sc.fake_llm, rc);
  if (!target) {
    err << "in-process runtime: " << render_error(target.error()) << "\n";
    return target.error() == errc::config_invalid ? exit_usage : exit_failure;
  }
  return drive_and_report(sc, **target, result, opt, out, err);
}

} // namespace mneme::soak
