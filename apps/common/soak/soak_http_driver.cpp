// The HTTP soak driver; see soak_http_driver.hpp.
#include "apps/common/soak/soak_http_driver.hpp"

#include <cassert>

#include <fmt/format.h>

#include "apps/common/soak/soak_agent.hpp"
#include "apps/common/soak/soak_driver.hpp"
#include "apps/common/soak/soak_text.hpp"

namespace mneme::soak {

namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

} // namespace

http_driver::http_driver(http_driver_params params) : p_(std::move(params)) {
  assert(p_.connections >= 1 && p_.plan.users >= 1 && p_.plan.ledger
         && !p_.base_urls.empty());
  think_rng_.seed(p_.plan.seed ^ 0x5eed);
  for (int64_t u = 0; u < p_.plan.users; ++u)
    users_.push_back({user_rng(p_.plan.seed, u), 0, false,
                      static_cast<size_t>(u) % p_.base_urls.size()});
  {
    std::lock_guard<std::mutex> lock{mu_};
    // The first messages spread over one think time so the users do not start in step.
    auto now = clock_type::now();
    for (int64_t u = 0; u < p_.plan.users; ++u)
      queue_.push({now + think(), u});
  }
  auto n = std::min(p_.connections, p_.plan.users);
  for (int64_t i = 0; i < n; ++i) {
    auto set = std::make_unique<node_clients>();
    for (const auto& url : p_.base_urls)
      set->push_back(std::make_unique<daemon_client>(url, p_.token, p_.turn_timeout));
    clients_.push_back(std::move(set));
  }
  for (auto& c : clients_)
    workers_.emplace_back([this, set = c.get()] { work(*set); });
}

http_driver::~http_driver() { stop(); }

void http_driver::stop() {
  {
    std::lock_guard<std::mutex> lock{mu_};
    if (stopped_ && workers_.empty())
      return;
    stopped_ = true;
  }
  wake_.notify_all();
  for (auto& set : clients_)
    for (auto& c : *set)
      c->stop();
  for (auto& w : workers_)
    w.join();
  workers_.clear();
}

std::chrono::milliseconds http_driver::think() {
  std::uniform_int_distribution<int64_t> d(p_.plan.think_ms.min, p_.plan.think_ms.max);
  return std::chrono::milliseconds(d(think_rng_));
}

void http_driver::work(node_clients& clients) {
  auto& ledger = *p_.plan.ledger;
  std::unique_lock<std::mutex> lock{mu_};
  for (;;) {
    if (stopped_ || ledger.stopping.load())
      return;
    if (queue_.empty() || queue_.top().due > clock_type::now()) {
      // Wakes for the next due user, a push, stop() - and every 200 ms for `stopping`.
      auto until = queue_.empty() ? clock_type::now() + std::chrono::milliseconds(200)
                                  : std::min(queue_.top().due,
                                             clock_type::now() + std::chrono::milliseconds(200));
      wake_.wait_until(lock, until);
      continue;
    }
    auto user = queue_.top().user;
    queue_.pop();
    lock.unlock();
    play(clients, user);
    lock.lock();
    queue_.push({clock_type::now() + think(), user});
    wake_.notify_one();
  }
}

void http_driver::play(node_clients& clients, int64_t user) {
  auto& ledger = *p_.plan.ledger;
  auto& us = users_[static_cast<size_t>(user)];
  // Each call of this user to the next node in turn.
  auto node = [&]() -> daemon_client& {
    auto& c = *clients[us.next_node];
    us.next_node = (us.next_node + 1) % clients.size();
    return c;
  };
  auto seq = us.next_seq++;
  auto msg = plan_message(p_.plan.mix, user, seq, us.rng);
  ledger.sent(user, seq, msg);
  ledger.in_flight.fetch_add(1);
  auto started = clock_type::now();
  auto key = user_key(user);
  auto uid = user_id(user);
  auto failed = [&](const call_error& e, bool was_turn) {
    ledger.failed(e.code, seconds_since(p_.plan.t0), ms_since(started), e.timed_out, was_turn);
    ledger.in_flight.fetch_sub(1);
  };
  if (msg.kind == turn_kind::tool_small || msg.kind == turn_kind::tool_large) {
    // The model's call and its result, appended without a model call; the user's next
    // message is the turn that answers after them.
    auto call_id = fmt::format("call-{}-{}", user, seq);
    message call;
    call.role = msg_role::assistant;
    call.tool_calls.push_back({call_id, "run_query", R"({"query":"latest service rows"})"});
    message result;
    result.role = msg_role::tool;
    result.tool_call_id = call_id;
    result.tool_name = "run_query";
    result.content = msg.content;
    auto first = node().append(key, uid, call);
    if (!first)
      return failed(first.error(), false);
    auto second = node().append(key, uid, result);
    if (!second)
      return failed(second.error(), false);
    ledger.appended(user, seq, msg, uid);
    ledger.in_flight.fetch_sub(1);
    return;
  }
  if (offers_tools(p_.plan.mix, p_.plan.seed, user, seq)) {
    agent_loop loop{{p_.plan.ledger, p_.plan.mix, p_.plan.seed, user, seq, key, uid, msg,
                     p_.plan.t0}};
    auto in = loop.first_input(us.left_pending);
    for (;;) {
      auto reply = node().agent_turn(key, uid, in);
      if (!reply) {
        us.left_pending = loop.on_error(reply.error().code, reply.error().timed_out);
        break;
      }
      auto next = loop.on_reply(*reply);
      us.left_pending = false;
      if (!next)
        break;
      in = std::move(*next);
    }
    ledger.in_flight.fetch_sub(1);
    return;
  }
  auto reply = node().turn(key, uid, msg.content);
  if (!reply)
    return failed(reply.error(), true);
  // The key keeps the tools of its agent turns: calls this user does not run stay
  // pending until its next agent turn abandons them.
  us.left_pending = us.left_pending || !reply->tool_calls.empty();
  ledger.answered(user, seq, key, msg, uid, *reply, seconds_since(p_.plan.t0), ms_since(started));
  ledger.in_flight.fetch_sub(1);
}

} // namespace mneme::soak
