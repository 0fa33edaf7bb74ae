// The soak target of `mneme soak --server URL[,URL2...]`: a running daemon, or several
// nodes sharing one PostgreSQL database (docs/scale-out.md "Several nodes"), driven over
// their HTTP API (docs/api.md) by the HTTP driver (soak_http_driver.hpp: each user's
// calls go to the nodes in turn, so keys are reached through non-owners and forwarded),
// and optionally the fake
// LLM the daemon talks to (--fakellm URL2), whose /control/faults gets the scenario's
// fake_llm section when the drive starts (time 0 of the scenario's fault windows) and
// whose /control/stats gives the faults injected during the run.
//
// What each check reads: session state = GET /v1/sessions/{key}?live=false; committed
// compactions and crashed session actors = GET /metrics; RSS = GET /v1/health's
// rss_bytes (the daemon's own; none when the daemon does not report it); liveness =
// GET /v1/health; stored rows = GET /v1/sessions?user=U then .../export of each
// session; markers = GET /v1/search. The daemon's configuration is its own: the
// scenario's config: block is not applied (the runner says so in the report).
// Several nodes: the reads of one daemon's view (session state, stored rows, search,
// a turn of the model-recall check) go to the nodes in turn (they read the shared
// database, a key's state is forwarded to its owner); the /metrics figures are summed
// over every node (unreadable when one node's are); liveness and RSS are per node, a
// node that stops answering is named.
//
// Thread: see soak_target.hpp (main only); the driver has its own threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/soak/soak_http_client.hpp"
#include "apps/common/soak/soak_http_driver.hpp"
#include "apps/common/soak/soak_target.hpp"

namespace mneme::soak {

struct http_target_options {
  std::vector<std::string> server_urls;   // http://HOST:PORT of each node (one or more)
  std::string token;            // bearer token, "" = none
  std::string fakellm_url;      // "" = the fake LLM is not controlled
  bool set_faults = true;       // false: --no-faults (the fake LLM's faults untouched)
  int64_t connections = 16;
  std::chrono::milliseconds turn_timeout{360000};
};

class http_target final : public soak_target {
 public:
  // Checks that the daemon answers and takes the token, and that the fake LLM answers.
  // On failure returns nullptr with `why` saying which and how.
  static std::unique_ptr<http_target> connect(const http_target_options& opt,
                                              nlohmann::json faults, std::string& why);
  ~http_target() override;

  // Facts for the report found while connecting (e.g. the daemon reports no RSS).
  const std::vector<std::string>& notes() const { return notes_; }
  // The version of the first node (every node's, when they differ: "x / y").
  const std::string& daemon_version() const { return version_; }

  void start_driving(const drive_plan& plan) override;
  void stop_driving() override;
  std::chrono::milliseconds turn_timeout() const override { return opt_.turn_timeout; }
  std::optional<session_poll> poll_session(const std::string& key,
                                           const std::string& user) override;
  std::optional<compaction_counts> compactions() override;
  std::optional<supervisor_stats> supervisor() override;
  std::optional<rss_figures> rss() override;
  std::vector<std::pair<std::string, int64_t>> rss_by_node() override;
  fault_figures faults() override;
  std::string liveness_problem() override;
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
  explicit http_target(const http_target_options& opt, nlohmann::json faults);
  // `visit` for every session id of every user of the run (GET /v1/sessions?user=U); it
  // returns a problem text or "". Returns every problem met.
  std::vector<std::string> each_session(
    const std::function<std::string(const std::string& session_id)>& visit);

  http_target_options opt_;
  nlohmann::json faults_;
  daemon_client& reader();                      // the next node's client, in turn

  std::vector<std::unique_ptr<daemon_client>> api_;  // the main thread's own, one per node
  size_t read_cursor_ = 0;
  std::unique_ptr<fakellm_control> llm_;
  fakellm_counts llm_baseline_;                 // the fake LLM's counts at time 0
  std::string fault_problem_;                   // setting the faults failed
  bool reports_rss_ = false;
  std::string version_;
  std::vector<std::string> notes_;
  int64_t users_ = 0;
  std::unique_ptr<http_driver> driver_;
  fault_figures last_faults_;                   // kept when the fake LLM stops answering
};

} // namespace mneme::soak
