// The full-history client load of mneme-bench; see proxy_load.hpp.
#include "apps/mneme-bench/proxy_load.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "actors/llm/curl_multi_loop.hpp"
#include "actors/llm/llm_call.hpp"
#include "actors/llm/messages_sse_answer.hpp"
#include "actors/llm/sse_answer.hpp"
#include "apps/mneme-bench/bench_registry.hpp"
#include "messages/errc.hpp"
#include "policies/percentile.hpp"

namespace mneme::bench {

namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

// The answer of a streamed Responses request: the text of its response.completed event
// (the last event but the stream's end); errc::internal when it has none.
caf::expected<chat_answer> responses_answer_of(const llm::http_outcome& out) {
  if (out.transport != llm_error_kind::none || out.status != 200)
    return caf::make_error(errc::internal, fmt::format("status {} transport {}", out.status,
                                                       to_string(out.transport)));
  constexpr std::string_view marker = "event: response.completed\ndata: ";
  auto at = out.body.rfind(marker);
  if (at == std::string::npos)
    return caf::make_error(errc::internal, "no response.completed event");
  auto from = at + marker.size();
  auto end = out.body.find('\n', from);
  auto event = json::parse(out.body.substr(from, end == std::string::npos ? end : end - from),
                           nullptr, false);
  chat_answer a;
  if (event.is_discarded())
    return caf::make_error(errc::internal, "response.completed is not JSON");
  for (const auto& item : event["response"]["output"])
    if (item.value("type", "") == "message")
      a.content = item["content"][0].value("text", "");
  return a;
}

// One client: its transcript and how many measured requests it still sends.
struct proxy_client {
  std::string key;
  json transcript = json::array();
  int left = 0;
  bool warm = false; // the unmeasured first request is done
  bool dead = false; // a request failed: it sends nothing more
};


// The transcript of client `i` with `n` messages, the last a user message.
json proxy_transcript(const std::string& tag, int i, int n) {
  json t = json::array();
  for (int j = 0; j < n; ++j) {
    bool user = (n - 1 - j) % 2 == 0;
    t.push_back({{"role", user ? "user" : "assistant"},
                 {"content", fmt::format("{} client {} message {}: step {} of the deploy plan",
                                         tag, i, j, j / 2)}});
  }
  return t;
}

// Runs one pass: every client's requests on one curl-multi loop; the measured phase
// starts when every client finished its unmeasured first request.
class proxy_driver {
 public:
  // `settle` runs between the unmeasured first requests and the measured ones.
  explicit proxy_driver(const proxy_pass_spec& spec)
    : spec_(spec), clients_(spec.clients), loop_("bench-proxy") {}

  proxy_pass run() {
    std::string tag = fmt::format("{}-h{}", to_string(spec_.target), spec_.history);
    for (int i = 0; i < clients_; ++i) {
      auto c = std::make_shared<proxy_client>();
      c->key = fmt::format("proxy-{}-{}", tag, i);
      c->transcript = proxy_transcript(tag, i, spec_.history);
      c->left = spec_.requests;
      all_.push_back(c);
    }
    auto deadline = steady::now() + std::chrono::seconds{spec_.max_seconds};
    for (auto& c : all_)
      send(c);
    std::unique_lock lock{mu_};
    bool warm = done_cv_.wait_until(lock, deadline, [&] { return warmed_ == clients_; });
    if (warm) {
      lock.unlock();
      spec_.settle();
      lock.lock();
      cpu_start_ = process_cpu_seconds();
      lock.unlock();
      for (auto& c : all_)
        if (!c->dead)
          next(c);
      lock.lock();
      warm = done_cv_.wait_until(lock, deadline, [&] { return finished_ == clients_; });
      result_.cpu_seconds = process_cpu_seconds() - cpu_start_;
    }
    result_.deadline_hit = !warm;
    stopping_ = true;
    return result_;
  }

  ~proxy_driver() {
    std::lock_guard lock{mu_};
    stopping_ = true;
  }

 private:
  void next(const std::shared_ptr<proxy_client>& c) {
    if (c->left-- <= 0) {
      std::lock_guard lock{mu_};
      if (++finished_ == clients_)
        done_cv_.notify_all();
      return;
    }
    c->transcript.push_back(
      {{"role", "user"}, {"content", fmt::format("request {} of {}", spec_.requests - c->left, c->key)}});
    send(c);
  }

  void send(const std::shared_ptr<proxy_client>& c) {
    llm::http_call call;
    call.url = spec_.url;
    call.headers = {"Content-Type: application/json"};
    json body;
    switch (spec_.target) {
      case proxy_target::direct:
        body = {{"model", "fake-chat"}, {"messages", c->transcript}};
        break;
      case proxy_target::chat_door:
        call.headers.push_back("X-Mneme-Session: " + c->key);
        body = {{"model", "mneme"}, {"messages", c->transcript}};
        break;
      case proxy_target::responses_door:
        call.headers.push_back("session-id: " + c->key);
        body = {{"model", "mneme"}, {"input", c->transcript}, {"store", false}};
        break;
      case proxy_target::anthropic_door:
        call.headers.push_back("X-Mneme-Session: " + c->key);
        call.headers.push_back("anthropic-version: 2023-06-01");
        body = {{"model", "claude-bench"}, {"max_tokens", 1024}, {"messages", c->transcript}};
        break;
    }
    body["stream"] = true;
    bool chat_wire = spec_.target == proxy_target::direct || spec_.target == proxy_target::chat_door;
    if (chat_wire)
      body["stream_options"] = {{"include_usage", true}};
    call.body = body.dump();
    call.idle_timeout = std::chrono::seconds{60};
    call.total_timeout = std::chrono::seconds{300};
    std::shared_ptr<llm::streamed_answer> assembler;
    auto api = llm_api::openai;
    if (chat_wire) {
      assembler = std::make_shared<llm::sse_answer>(nullptr);
    } else if (spec_.target == proxy_target::anthropic_door) {
      assembler = std::make_shared<llm::messages_sse_answer>(nullptr);
      api = llm_api::anthropic;
    }
    if (assembler)
      call.on_body_piece = [assembler](std::string_view piece) { assembler->feed(piece); };
    auto sent = steady::now();
    loop_.submit(std::move(call), [this, c, sent, assembler, api](llm::http_outcome out) {
      auto ms = std::chrono::duration<double, std::milli>(steady::now() - sent).count();
      auto answer = assembler
                      ? llm::read_http_outcome(out, llm_purpose::chat, "", assembler.get(), api)
                      : responses_answer_of(out);
      on_answer(c, answer, ms);
    });
  }

  // On the loop thread.
  void on_answer(const std::shared_ptr<proxy_client>& c, caf::expected<chat_answer>& answer,
                 double ms) {
    {
      std::lock_guard lock{mu_};
      if (stopping_)
        return;
      if (!answer) {
        ++result_.failures[std::string{to_string(static_cast<errc>(answer.error().code()))}];
        c->dead = true;
        if (!c->warm)
          ++warmed_;
        ++finished_;
        done_cv_.notify_all();
        return;
      }
      if (c->warm) {
        ++result_.ok;
        result_.request_ms.push_back(ms);
      }
    }
    c->transcript.push_back({{"role", "assistant"}, {"content", answer->content}});
    if (!c->warm) {
      c->warm = true;
      std::lock_guard lock{mu_};
      if (++warmed_ == clients_)
        done_cv_.notify_all();
      return;
    }
    next(c);
  }

  const proxy_pass_spec& spec_;
  int clients_;
  std::vector<std::shared_ptr<proxy_client>> all_;
  std::mutex mu_; // guards everything below
  std::condition_variable done_cv_;
  proxy_pass result_;
  int warmed_ = 0, finished_ = 0;
  bool stopping_ = false;
  double cpu_start_ = 0;
  llm::curl_multi_loop loop_; // last: stopped first, before what its completions use
};

} // namespace

std::string_view to_string(proxy_target t) {
  switch (t) {
    case proxy_target::direct: return "direct";
    case proxy_target::chat_door: return "chat";
    case proxy_target::responses_door: return "responses";
    case proxy_target::anthropic_door: return "anthropic";
  }
  return "unknown";
}

proxy_pass run_proxy_pass(const proxy_pass_spec& spec) { return proxy_driver{spec}.run(); }

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }

json pass_json(const proxy_pass& p) {
  return {{"requests_ok", p.ok},
          {"failures", p.failures},
          {"deadline_hit", p.deadline_hit},
          {"request_ms_p50", round2(percentile_or_zero(p.request_ms, 0.5))},
          {"request_ms_p99", round2(percentile_or_zero(p.request_ms, 0.99))},
          {"cpu_seconds", round2(p.cpu_seconds)}};
}

double cpu_us_per_request(const proxy_pass& mneme, const proxy_pass& direct) {
  if (mneme.ok == 0)
    return 0;
  return std::round((mneme.cpu_seconds - direct.cpu_seconds) * 1e6 / static_cast<double>(mneme.ok));
}

bool clean(const proxy_pass& p, int64_t expected) {
  return p.failures.empty() && !p.deadline_hit && p.ok == expected;
}

void add_history_load_flags(CLI::App& cmd, int& clients, int& history, int& requests) {
  cmd.add_option("--clients", clients, "full-history clients at once")
    ->check(integer_range(1, 100000))->capture_default_str();
  cmd.add_option("--history", history, "messages of each client's transcript before it is measured")
    ->check(integer_range(1, 100000))->capture_default_str();
  cmd.add_option("--requests", requests, "measured requests per client")
    ->check(integer_range(1, 10000))->capture_default_str();
}

} // namespace mneme::bench
