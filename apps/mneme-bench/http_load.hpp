// The load of `mneme-bench http` (bench_http.cpp) against one HTTP server on loopback:
//   - turn clients: each holds one keep-alive connection and sends its turns one after
//     another (POST /v1/sessions/bench-<i>/turns); a turn is timed from the start of its
//     write to the end of its answer; a broken connection fails the turn and the next
//     turn reconnects; an answer with "Connection: close" makes the next turn reconnect;
//   - slow connections: each sends the start of a GET /v1/health request and then one
//     more header byte per tick, never finishing the header, for as long as the clients
//     run; a close by the server is counted with the time it took, apart from a
//     connection that TCP gave up on (the server never acknowledged its bytes);
//   - idle connections: each connects and sends nothing; when the server closes one, it
//     connects again on the next tick (a flood that keeps its sockets up);
//   - a health prober: every tick a new connection does GET /v1/health (connect, request
//     and answer timed; a timeout or an error, or a status other than 200, is a failure);
//   - a sampler of the server process (/proc/<pid>): its threads, open files and RSS.
// Threads: run_http_load() blocks its caller and runs the load on two threads of its own
// whatever the number of clients: one for the turn clients, one for the slow
// connections, the prober and the sampler. Results are written by those threads only
// and read after they are joined.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mneme::bench {

struct http_target {
  std::string host = "127.0.0.1"; // an IPv4 loopback address
  uint16_t port = 0;
  std::string token;              // bearer token sent with every request; empty = none
  std::string proc_dir;           // "/proc/self", "/proc/<pid>", or empty: no sampling
};

struct http_load_options {
  int clients = 1000;
  int turns = 20;                 // per client
  int slow = 200;                 // slow connections
  int idle = 0;                   // idle connections, reopened when closed
  std::chrono::milliseconds think{0};              // pause between a client's turns
  std::chrono::milliseconds turn_timeout{30000};   // one turn's write + answer
  std::chrono::milliseconds slow_tick{1000};       // one header byte per slow connection
  std::chrono::milliseconds health_every{50};
  std::chrono::milliseconds health_timeout{5000};  // connect + request + answer
  std::chrono::milliseconds sample_every{100};
  std::chrono::seconds max_duration{600};          // then every client stops
};

struct http_load_result {
  std::vector<double> turn_ms;                     // turns answered 200
  int64_t turns_ok = 0;
  int64_t turns_failed = 0;                        // by status + by error
  int64_t turns_not_run = 0;                       // not started before the deadline
  std::map<std::string, int64_t> failed_by_status; // "503" -> n
  std::map<std::string, int64_t> failed_by_error;  // connect, connection, timeout, deadline
  int64_t reconnects = 0;                          // connections opened after the first
  double wall_seconds = 0;                         // first turn sent .. last turn over
  bool deadline_hit = false;

  std::vector<double> health_ms;                   // probes answered 200
  int64_t health_probes = 0;
  int64_t health_failed = 0;

  int slow_connected = 0;
  int slow_closed_by_server = 0;                  // end of stream or reset
  int slow_timed_out = 0;                          // TCP gave up: never acknowledged
  std::vector<double> slow_closed_after_s;         // connect .. close by the server
  int64_t idle_connected = 0;                      // idle connects, reopens included
  int64_t idle_closed_by_server = 0;

  int threads_before = 0;                          // 0 without proc_dir
  int max_threads = 0;
  int max_fds = 0;                                 // open file descriptors, sampled
  int64_t rss_bytes = 0;                           // last sample while the clients ran
  int64_t peak_rss_bytes = 0;                      // max(VmHWM, sampled VmRSS)
  int client_threads = 2;                          // the load's own threads
};

// REQUIRES: target.host is a loopback address; clients, turns >= 1; slow, idle >= 0.
http_load_result run_http_load(const http_target& target, const http_load_options& opt);

// Threads of the process at `proc_dir` (0 when unreadable).
int count_threads(const std::string& proc_dir);
// Open file descriptors of the process at `proc_dir` (0 when unreadable).
int count_fds(const std::string& proc_dir);
// A "Vm...:" field of `proc_dir`/status in bytes (0 when unreadable).
int64_t status_bytes(const std::string& proc_dir, const std::string& field);

} // namespace mneme::bench
