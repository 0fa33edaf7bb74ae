// Test fixture of the daemon's tests (gateway_ops_test, http_api_test): a runtime on
// a SQLite file in a fresh temporary directory against the in-process fake LLM server,
// with helpers to ask an actor and wait for the answer. The runtime can be stopped and
// started again on the same file (a daemon restart). Used from the test thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include <boost/test/unit_test.hpp>

#include "actors/llm/llm_endpoint.hpp"
#include "actors/runtime.hpp"
#include "apps/common/fake_llm/fake_llm_server.hpp"

namespace mneme {
inline std::ostream& operator<<(std::ostream& os, msg_role r) { return os << to_string(r); }
} // namespace mneme

BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::errc)
BOOST_TEST_DONT_PRINT_LOG_VALUE(caf::error)

namespace mneme::test {

template <class T>
std::string why(const caf::expected<T>& r) {
  return r ? std::string{"ok"} : render_error(r.error());
}

inline llm::llm_pool_config fake_pool(const std::string& base_url, llm_purpose purpose) {
  using namespace std::chrono_literals;
  llm::llm_pool_config c;
  c.name = purpose == llm_purpose::chat ? "chat" : "summary";
  c.endpoint.url = llm::chat_completions_url(base_url);
  c.endpoint.model = purpose == llm_purpose::chat ? "fake-chat" : "fake-summary";
  c.endpoint.purpose = purpose;
  c.endpoint.idle_timeout = 5s;
  c.endpoint.total_timeout = 10s;
  c.max_concurrency = 8;
  c.max_queue = 1024;
  return c;
}

struct serve_runtime_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  fakellm::fake_llm_server llm;
  std::string dir;
  runtime_config rc;
  std::unique_ptr<runtime> rt;

  serve_runtime_fixture() {
    register_mneme_types(cfg);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    BOOST_REQUIRE(llm.start());
    char tmpl[] = "/tmp/mneme-serve-XXXXXX";
    BOOST_REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    rc.database.path = dir + "/t.db";
    rc.database.synchronous_full = false;
    rc.chat = fake_pool(llm.base_url(), llm_purpose::chat);
    rc.summarizer = fake_pool(llm.base_url(), llm_purpose::summary);
    rc.model.name = "fake-chat";
    rc.gateway.idle_evict_seconds = 0; // no eviction timer
  }

  ~serve_runtime_fixture() {
    if (rt)
      rt->stop();
    llm.stop();
    std::filesystem::remove_all(dir);
  }

  void start() {
    auto r = runtime::start(*sys, rc);
    BOOST_REQUIRE_MESSAGE(r, why(r));
    rt = std::move(*r);
  }

  // Stops the runtime and starts a new one on the same database (a daemon restart:
  // the new gateway knows no key).
  void restart() {
    rt->stop();
    rt.reset();
    rc.metrics = nullptr;
    start();
  }

  template <class T, class Handle, class... Ts>
  caf::expected<T> call(const Handle& h, Ts... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out{caf::error{}};
    self->request(h, std::chrono::seconds(60), xs...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }
};

} // namespace mneme::test
