// The HTTP soak driver: plays every simulated user against a running daemon through its
// API, the way the in-process driver (soak_driver.hpp) plays them through the gateway:
// a user sends a message (POST .../turns, offering tools and playing the model's tool loop
// to its end for a share of them, soak_agent.hpp; a tool turn is two POST .../messages, the
// assistant's call and the tagged result), waits for the answer, thinks for the
// scenario's think time and sends the next; each user's messages in order, the users
// at once up to `connections` calls in flight (one blocking client per worker thread and
// node).
// Every message and reply goes into the ledger; once ledger.stopping is set no new
// message leaves and the calls in flight finish (ledger.in_flight counts them).
//
// Thread: its own worker threads; construct and stop from one thread (main). The
// ledger is the only state it shares.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "apps/common/soak/soak_http_client.hpp"
#include "apps/common/soak/soak_target.hpp"

namespace mneme::soak {

struct http_driver_params {
  // The nodes (http://HOST:PORT each, one or more): a user's calls go to them in turn,
  // starting at node user % n, so with several nodes most keys get requests through a
  // node that does not own them (forwarded there).
  std::vector<std::string> base_urls;
  std::string token;
  std::chrono::milliseconds turn_timeout{360000};
  int64_t connections = 16;     // worker threads = calls in flight at most
  drive_plan plan;
};

class http_driver {
 public:
  // REQUIRES: connections >= 1, plan.users >= 1, plan.ledger set.
  // Starts the workers; the first message of every user leaves within one think time.
  explicit http_driver(http_driver_params params);
  ~http_driver();  // stop()
  http_driver(const http_driver&) = delete;
  http_driver& operator=(const http_driver&) = delete;

  // Ends the workers: the calls still in flight are aborted (they count as failed),
  // then joins. Idempotent.
  void stop();

 private:
  struct due_user {
    std::chrono::steady_clock::time_point due;
    int64_t user = 0;
    bool operator>(const due_user& o) const { return due > o.due; }
  };
  struct user_state {
    std::mt19937_64 rng;
    int64_t next_seq = 0;
    bool left_pending = false;   // the last tool loop ended with an error
    size_t next_node = 0;        // the node of the user's next call
  };
  using node_clients = std::vector<std::unique_ptr<daemon_client>>;  // one per node

  void work(node_clients& clients);
  void play(node_clients& clients, int64_t user);
  std::chrono::milliseconds think();   // REQUIRES: mu_ held

  http_driver_params p_;
  std::vector<user_state> users_;      // a user's entry: only the worker playing it
  std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<due_user, std::vector<due_user>, std::greater<>> queue_;
  std::mt19937_64 think_rng_;
  bool stopped_ = false;
  std::vector<std::unique_ptr<node_clients>> clients_;   // one set per worker
  std::vector<std::thread> workers_;
};

} // namespace mneme::soak
