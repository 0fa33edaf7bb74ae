// The in-process soak target: the in-process fake LLM with the scenario's faults, one
// runtime on the scenario's configuration in this process, and the driver actor
// (soak_driver.hpp) playing every user through the gateway. The end checks read the
// database through a read-only connection beside the writer and search with recall
// directly; RSS is this process's own, minus the ledger's records.
//
// Thread: see soak_target.hpp (main only).
#pragma once

#include <memory>

#include "actors/runtime.hpp"
#include "apps/common/host/runtime_host.hpp"
#include "apps/common/fakellm/fake_llm_server.hpp"
#include "apps/common/soak/soak_target.hpp"
#include "caf/all.hpp"
#include "store/sqlite/store_reader.hpp"

namespace mneme::soak {

class inprocess_target final : public soak_target {
 public:
  // REQUIRES: `llm` started; `rc` points the model and summarizer at it.
  // Starts the runtime. Errors: errc::config_invalid (a fault rule), runtime::start's.
  static caf::expected<std::unique_ptr<inprocess_target>>
  start(std::unique_ptr<fakellm::fake_llm_server> llm, fakellm::scenario faults,
        runtime_config rc);
  ~inprocess_target() override;

  void start_driving(const drive_plan& plan) override;
  void stop_driving() override;
  std::chrono::milliseconds turn_timeout() const override;
  int64_t max_tool_rounds() const override;
  std::optional<session_poll> poll_session(const std::string& key,
                                           const std::string& user) override;
  std::optional<compaction_counts> compactions() override;
  std::optional<supervisor_stats> supervisor() override;
  std::optional<rss_figures> rss() override;
  fault_figures faults() override;
  std::string liveness_problem() override { return {}; }
  std::vector<std::string> visit_stored_rows(
    const std::function<void(const std::string&, const std::string&)>& visit) override;
  std::vector<std::string> visit_compaction_log(
    const std::function<void(const compaction_log_entry&)>& visit) override;
  caf::expected<std::string> ask(const std::string& key, const std::string& user,
                                 const std::string& text) override;
  caf::expected<std::vector<marker_hit>> search(const std::string& user_id,
                                                const std::string& query) override;
  void shutdown() override;

 private:
  inprocess_target(std::unique_ptr<fakellm::fake_llm_server> llm, fakellm::scenario faults,
                   runtime_config rc);
  // `visit` for every stored session through one read-only connection; it returns a
  // problem text or "". Returns every problem met, each naming its session.
  std::vector<std::string> each_session(
    const std::function<std::string(store_reader& reader, const std::string& session_id)>&
      visit);

  std::unique_ptr<fakellm::fake_llm_server> llm_;
  fakellm::scenario faults_;
  runtime_config rc_;
  std::unique_ptr<runtime_host> host_;
  runtime* rt_ = nullptr;                   // host_'s runtime
  std::unique_ptr<caf::scoped_actor> self_; // destroyed before host_
  caf::actor driver_;
  std::shared_ptr<soak_ledger> ledger_;
  std::unique_ptr<store_reader> reader_;   // the end checks' searches, opened once
};

} // namespace mneme::soak
