// Two `mneme serve` nodes (this build's, MNEME_BINARY_DIR) on one PostgreSQL database (issue 26 items 4 and 5;
// docs/scale-out.md): the real daemons of this build with gateway.node_id, their model
// `mneme-fakellm`, a schema of the throw-away cluster (testing/pg_test_cluster.hpp).
//
// Failover: four writers append through both nodes (each request to either node, a
// key owned by the other forwarded there); one node is killed with SIGKILL mid-load;
// every key it owned continues on the other node once its lease expired, and then:
// every acknowledged message is stored exactly once, and no session was written by
// two owners (the rows of each key, in id order, carry non-decreasing fencing tokens,
// each token granted to one node).
// Pause: a node stopped with SIGSTOP past its lease while the other takes its key
// over, then resumed with a request for that key waiting in its socket, writes
// nothing under its old token; the key's later requests through it reach the owner.
// Clean stop: a node stopped with SIGTERM gives its leases up, so the other node takes
// its keys on their next request, long before the lease would have expired.
// Streams: a streamed turn and a streamed chat completion for a key the other node
// owns come through as streams, stored by the owner.
//
// Liveness bounds (how long a takeover may take) are generous and only end a hung
// test; the takeover times are printed (BOOST_TEST_MESSAGE), not judged.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <pqxx/pqxx>

#include "apps/common/api/json_codec.hpp"
#include "policies/key_namespace.hpp"
#include "testing/loopback_port.hpp"
#include "testing/pg_test_cluster.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(nodes_failover_test)

using json = mneme::api::json;
using mneme::testing::child_program;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr int lease_seconds = 3;

struct node {
  std::string id;
  int port = 0;
  child_program process;
  std::string said;
};

// Two nodes' configurations on one fresh schema, and the fake model.
struct two_node_cluster {
  mneme::testing::temp_dir dir{"mneme-nodes"};
  child_program fake;
  std::string url = mneme::testing::pg_test_cluster::shared().fresh_url();
  node a, b;

  explicit two_node_cluster(int lease = lease_seconds) {
    std::string said;
    int fake_port = mneme::testing::start_fakellm(fake, {}, said);
    BOOST_REQUIRE_MESSAGE(fake_port > 0, "mneme-fakellm said: " + said);
    a.id = "node-a";
    b.id = "node-b";
    for (auto* n : {&a, &b}) {
      n->port = mneme::testing::free_loopback_port();
      auto config = dir.file(n->id + ".yaml");
      std::ofstream{config} << "model:\n"
                               "  base_url: http://127.0.0.1:" << fake_port << "\n"
                               "database:\n"
                               "  backend: postgres\n"
                               "  url: \"" << url << "\"\n"
                               "gateway:\n"
                               "  node_id: " << n->id << "\n"
                               "  advertise_url: http://127.0.0.1:" << n->port << "\n"
                               "  lease_seconds: " << lease << "\n"
                               "logging:\n"
                               "  level: warn\n";
    }
    start(a);
    start(b);
  }

  void start(node& n) {
    BOOST_REQUIRE(n.process.start("mneme",
                                  {"serve", "--config", dir.file(n.id + ".yaml"), "--port",
                                   std::to_string(n.port)},
                                  dir.file(n.id + ".err")));
    int port = n.process.port_after(mneme::testing::serve_listening_marker,
                                    std::chrono::seconds(30), n.said);
    BOOST_REQUIRE_MESSAGE(port == n.port, n.id << " did not start: " << n.said);
  }

  // What a node wrote to stderr (its warnings), for failure messages.
  std::string log_of(const node& n) {
    std::ifstream in{dir.file(n.id + ".err")};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }

  pqxx::result query(const std::string& sql) {
    pqxx::connection c{url};
    pqxx::nontransaction t{c};
    return t.exec(sql);
  }
};

// One append through `port`: the HTTP status (0: no answer at all; `why` says what
// happened instead).
int append(int port, const std::string& key, const std::string& text,
           std::string* why = nullptr) {
  httplib::Client c{"127.0.0.1", port};
  c.set_connection_timeout(1, 0);
  c.set_read_timeout(30, 0);
  auto r = c.Post("/v1/sessions/" + key + "/messages",
                  json{{"user", "alice"}, {"role", "user"}, {"content", text}}.dump(),
                  "application/json");
  if (why)
    *why = r ? r->body : httplib::to_string(r.error());
  return r ? r->status : 0;
}

// Every acknowledged text stored exactly once; per key, fencing tokens never go back
// in id order, and each token was granted to one node.
void check_stored_once_and_fenced(two_node_cluster& cluster, const std::set<std::string>& acked) {
  std::map<std::string, int> copies;
  for (const auto& row : cluster.query("SELECT convert_from(content, 'UTF8') FROM messages"
                                       " WHERE role = 'user'"))
    ++copies[row[0].as<std::string>()];
  for (const auto& text : acked)
    BOOST_TEST(copies[text] == 1, text << " stored " << copies[text] << " times");
  std::map<int64_t, std::string> owner_of;
  for (const auto& row : cluster.query("SELECT token, owner_node FROM mneme_lease_grants"))
    owner_of[row[0].as<int64_t>()] = row[1].as<std::string>();
  std::map<std::string, int64_t> last_token;
  int unfenced = 0;
  for (const auto& row : cluster.query(
         "SELECT convert_from(s.session_key, 'UTF8'), m.fence_token FROM messages m"
         " JOIN sessions s ON s.id = m.session_id ORDER BY m.id")) {
    if (row[1].is_null()) {
      ++unfenced;
      continue;
    }
    auto key = row[0].as<std::string>();
    auto token = row[1].as<int64_t>();
    BOOST_TEST(owner_of.count(token) == 1u, "token " << token << " was never granted");
    BOOST_TEST(token >= last_token[key],
               "key " << key << ": token " << token << " wrote after " << last_token[key]);
    last_token[key] = token;
  }
  BOOST_TEST(unfenced == 0);
}

} // namespace

BOOST_AUTO_TEST_CASE(a_killed_node_s_keys_continue_on_the_other_and_nothing_is_lost_or_doubled) {
  two_node_cluster cluster;
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"};
  // Each key first through alternating nodes: each node owns half of them.
  std::set<std::string> acked;
  std::mutex acked_mu;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto text = keys[i] + "-open";
    auto status = append(i % 2 == 0 ? cluster.a.port : cluster.b.port, keys[i], text);
    BOOST_REQUIRE_MESSAGE(status == 201, keys[i] << ": " << status);
    acked.insert(text);
  }
  auto owners = cluster.query("SELECT convert_from(session_key, 'UTF8'), owner_node"
                              " FROM mneme_leases");
  std::set<std::string> owned_by_a;
  for (const auto& row : owners)
    if (row[1].as<std::string>() == "node-a")
      owned_by_a.insert(mneme::visible_key(row[0].as<std::string>())); // leases hold stored keys
  BOOST_TEST(owned_by_a.size() == keys.size() / 2);

  // Four writers, every request to a random node; a failed request is not retried
  // with the same text (its outcome is unknown), the next one gets a new text.
  std::atomic<bool> a_alive{true}, stop{false};
  std::atomic<int> forwarded_ok{0};
  std::map<std::string, clock_type::time_point> first_ok_after_kill;
  clock_type::time_point killed_at{};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&, w] {
      std::mt19937 rng(static_cast<unsigned>(w));
      for (int n = 0; !stop.load(); ++n) {
        const auto& key = keys[rng() % keys.size()];
        bool to_a = a_alive.load() && rng() % 2 == 0;
        auto text = key + "-w" + std::to_string(w) + "-" + std::to_string(n);
        auto status = append(to_a ? cluster.a.port : cluster.b.port, key, text);
        if (status != 201) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        std::lock_guard lock{acked_mu};
        acked.insert(text);
        if (!a_alive.load() && owned_by_a.count(key) != 0 && !first_ok_after_kill.count(key))
          first_ok_after_kill[key] = clock_type::now();
        if (!to_a && owned_by_a.count(key) != 0 && a_alive.load())
          ++forwarded_ok;
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(2));
  a_alive = false;
  BOOST_REQUIRE(cluster.a.process.signal(SIGKILL));
  killed_at = clock_type::now();
  cluster.a.process.wait(std::chrono::seconds(10));
  // Wait until every key a owned was written through b (bounded: a hung test ends).
  auto give_up = killed_at + std::chrono::seconds(lease_seconds + 60);
  for (;;) {
    {
      std::lock_guard lock{acked_mu};
      if (first_ok_after_kill.size() == owned_by_a.size())
        break;
    }
    BOOST_REQUIRE_MESSAGE(clock_type::now() < give_up,
                          "a killed node's keys did not continue on the other node");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop = true;
  for (auto& t : writers)
    t.join();
  double slowest = 0;
  for (const auto& [key, at] : first_ok_after_kill)
    slowest = std::max(slowest, std::chrono::duration<double>(at - killed_at).count());
  BOOST_TEST_MESSAGE("takeover: every key of the killed node written again within "
                     << slowest << " s of the kill (lease " << lease_seconds << " s); "
                     << acked.size() << " acknowledged appends, " << forwarded_ok.load()
                     << " of them forwarded before the kill");
  BOOST_TEST(forwarded_ok.load() > 0); // requests for a's keys through b went to a

  httplib::Client b{"127.0.0.1", cluster.b.port};
  auto metrics = b.Get("/metrics");
  BOOST_REQUIRE(metrics);
  BOOST_TEST(metrics->body.find("mneme_leases_taken_over_total " + std::to_string(owned_by_a.size()))
               != std::string::npos,
             metrics->body.substr(0, 200));
  BOOST_TEST(cluster.b.process.stop(SIGTERM, std::chrono::seconds(30)) == 0);
  check_stored_once_and_fenced(cluster, acked);
  // Every key a owned has rows under b's token after the kill.
  auto b_rows = cluster.query(
    "SELECT count(DISTINCT s.session_key) FROM messages m JOIN sessions s ON s.id = m.session_id"
    " JOIN mneme_lease_grants g ON g.token = m.fence_token WHERE g.took_over_from = 'node-a'");
  BOOST_TEST(b_rows[0][0].as<int64_t>() == static_cast<int64_t>(owned_by_a.size()));
}

BOOST_AUTO_TEST_CASE(a_paused_node_resumed_after_a_takeover_writes_nothing) {
  two_node_cluster cluster;
  std::set<std::string> acked;
  BOOST_REQUIRE_EQUAL(append(cluster.a.port, "p", "p-before"), 201);
  acked.insert("p-before");
  BOOST_REQUIRE(cluster.a.process.signal(SIGSTOP));
  // A request for the key reaches a while it is stopped: it waits in a's socket.
  std::atomic<int> queued_status{-1};
  std::string queued_said;
  std::thread queued(
    [&] { queued_status = append(cluster.a.port, "p", "p-queued-at-a", &queued_said); });
  // Past the lease, b takes the key over.
  std::this_thread::sleep_for(std::chrono::seconds(lease_seconds + 1));
  int taken = 0;
  for (int attempt = 0; attempt < 100 && taken != 201; ++attempt) {
    taken = append(cluster.b.port, "p", "p-at-b-" + std::to_string(attempt));
    if (taken == 201)
      acked.insert("p-at-b-" + std::to_string(attempt));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  BOOST_REQUIRE_EQUAL(taken, 201);
  BOOST_REQUIRE(cluster.a.process.signal(SIGCONT));
  queued.join();
  // a answered the queued request either by forwarding it to b (it learned first that
  // it lost the key) or by refusing it (its fenced write was refused): never by
  // writing under its old token.
  BOOST_TEST((queued_status == 201 || queued_status == 503),
             queued_status.load() << ": " << queued_said << "\nnode-a said:\n"
                                   << cluster.log_of(cluster.a));
  if (queued_status == 201)
    acked.insert("p-queued-at-a");
  // From now on a sends the key's requests to b.
  int later = 0;
  for (int attempt = 0; attempt < 100 && later != 201; ++attempt) {
    later = append(cluster.a.port, "p", "p-later-" + std::to_string(attempt));
    if (later == 201)
      acked.insert("p-later-" + std::to_string(attempt));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  BOOST_TEST(later == 201);
  BOOST_TEST(cluster.a.process.stop(SIGTERM, std::chrono::seconds(30)) == 0);
  BOOST_TEST(cluster.b.process.stop(SIGTERM, std::chrono::seconds(30)) == 0);
  check_stored_once_and_fenced(cluster, acked);
  // Nothing under a's token after b's first row.
  auto late = cluster.query(
    "SELECT count(*) FROM messages m JOIN mneme_lease_grants g ON g.token = m.fence_token"
    " WHERE g.owner_node = 'node-a' AND m.id > (SELECT min(m2.id) FROM messages m2"
    " JOIN mneme_lease_grants g2 ON g2.token = m2.fence_token WHERE g2.owner_node = 'node-b')");
  BOOST_TEST(late[0][0].as<int64_t>() == 0);
}

BOOST_AUTO_TEST_CASE(a_node_stopped_cleanly_gives_its_keys_up_at_once) {
  two_node_cluster cluster{600}; // a lease that would outlast the test
  BOOST_REQUIRE_EQUAL(append(cluster.a.port, "r", "r-at-a"), 201);
  BOOST_TEST(cluster.a.process.stop(SIGTERM, std::chrono::seconds(30)) == 0);
  // b takes the key on its first request: no forward to the stopped node, no wait.
  std::string said;
  BOOST_TEST(append(cluster.b.port, "r", "r-at-b", &said) == 201, said);
  auto grant = cluster.query("SELECT took_over_from FROM mneme_lease_grants"
                             " WHERE owner_node = 'node-b'");
  BOOST_REQUIRE_EQUAL(grant.size(), 1u);
  BOOST_TEST(grant[0][0].as<std::string>() == "node-a");
  check_stored_once_and_fenced(cluster, {"r-at-a", "r-at-b"});
}

// A streamed answer through the node that does not own the key is relayed as a stream
// (http_forward_test shows it goes piece by piece): the client gets the owner's
// events, the final one and [DONE], on both doors.
BOOST_AUTO_TEST_CASE(a_streamed_answer_for_a_key_owned_elsewhere_comes_through_the_other_node) {
  two_node_cluster cluster{600};
  BOOST_REQUIRE_EQUAL(append(cluster.a.port, "t", "t-at-a"), 201); // a owns "t"
  httplib::Client c{"127.0.0.1", cluster.b.port};
  c.set_read_timeout(60, 0);
  const auto streamed = [&](const std::string& path, const json& body,
                            const httplib::Headers& headers) {
    auto r = c.Post(path, headers, body.dump(), "application/json");
    BOOST_REQUIRE_MESSAGE(r, path << ": " << httplib::to_string(r.error()));
    BOOST_TEST(r->status == 200, path << ": " << r->body);
    BOOST_TEST(r->get_header_value("Content-Type").rfind("text/event-stream", 0) == 0u,
               path << ": " << r->get_header_value("Content-Type"));
    return r->body;
  };
  auto turn = streamed("/v1/sessions/t/turns",
                       json{{"user", "alice"}, {"content", "streamed through b"}, {"stream", true}},
                       {});
  BOOST_TEST(turn.find("\"session_id\"") != std::string::npos, turn); // the final event
  BOOST_TEST(turn.size() >= 14u);
  BOOST_TEST(turn.substr(turn.size() - 14) == "data: [DONE]\n\n", turn);
  auto door = streamed("/v1/chat/completions",
                       json{{"model", "mneme"}, {"stream", true}, {"user", "alice"},
                            {"messages", json::array({json{{"role", "user"},
                                                           {"content", "through the door"}}})}},
                       {{"X-Mneme-Session", "t"}});
  BOOST_TEST(door.find("chat.completion.chunk") != std::string::npos, door);
  BOOST_TEST(door.substr(door.size() - 14) == "data: [DONE]\n\n", door);
  auto metrics = httplib::Client{"127.0.0.1", cluster.b.port}.Get("/metrics");
  BOOST_REQUIRE(metrics);
  const std::string counter = "\nmneme_requests_forwarded_total ";
  auto at = metrics->body.find(counter);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, metrics->body);
  BOOST_TEST(std::stod(metrics->body.substr(at + counter.size())) == 2.0);
  // Both turns were stored by the owner, under its token.
  check_stored_once_and_fenced(cluster, {"t-at-a", "streamed through b", "through the door"});
  auto owners = cluster.query("SELECT DISTINCT g.owner_node FROM messages m"
                              " JOIN mneme_lease_grants g ON g.token = m.fence_token");
  BOOST_REQUIRE_EQUAL(owners.size(), 1u);
  BOOST_TEST(owners[0][0].as<std::string>() == "node-a");
}

BOOST_AUTO_TEST_SUITE_END()
