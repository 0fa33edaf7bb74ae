// Deterministic sample transcripts; see sample_transcript.hpp.
#include "apps/common/sample_transcript.hpp"

#include <random>
#include <string>

#include "policies/token_estimate.hpp"

namespace mneme {

namespace {

const char* english_topics[] = {
  "the deployment pipeline for service billing-api", "a flaky test in tests/net/retry_test.cpp",
  "migrating the cache from redis to the new cluster", "the quarterly report numbers",
  "error ECONNRESET from https://api.example.com/v2/orders", "renaming the config key max_conns",
};
const char* chinese_topics[] = {
  "修改youer服务端的超时配置", "数据库迁移到新的集群", "桂林出差的行程安排",
  "排查 /var/log/nginx/error.log 里的 502 错误", "季度报告里的数字核对",
};

std::string paragraph(std::mt19937_64& rng, bool chinese, std::size_t sentences) {
  std::string out;
  for (std::size_t i = 0; i < sentences; ++i) {
    if (chinese) {
      out += "关于";
      out += chinese_topics[rng() % std::size(chinese_topics)];
      out += "，我们需要确认第" + std::to_string(rng() % 90 + 10) + "项的细节并记录结论。";
    } else {
      out += "Regarding ";
      out += english_topics[rng() % std::size(english_topics)];
      out += ", step " + std::to_string(rng() % 90 + 10) +
             " needs a decision and a note in the tracker. ";
    }
  }
  return out;
}

message make_row(int64_t id, msg_role role, std::string content) {
  message m;
  m.id = id;
  m.session_id = "sample";
  m.role = role;
  m.content = std::move(content);
  m.timestamp_ms = 1'700'000'000'000 + id * 1000;
  return m;
}

} // namespace

std::vector<message> make_sample_transcript(const sample_shape& shape) {
  std::mt19937_64 rng(shape.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<message> rows;
  int64_t tokens = 0;
  auto push = [&](message m) {
    m.token_estimate = estimate_message_tokens(m);
    tokens += m.token_estimate;
    rows.push_back(std::move(m));
  };
  push(make_row(1, msg_role::system, "You are a helpful assistant for an engineering team."));
  int64_t call_seq = 0;
  while (rows.size() < shape.min_messages || tokens < shape.min_tokens) {
    bool chinese = rng() % 3 == 0;
    auto next_id = [&] { return static_cast<int64_t>(rows.size()) + 1; };
    push(make_row(next_id(), msg_role::user, paragraph(rng, chinese, 1 + rng() % 3)));
    if (unit(rng) < shape.tool_turn_share) {
      message call = make_row(next_id(), msg_role::assistant, "");
      std::string call_id = "call_" + std::to_string(++call_seq);
      call.tool_calls.push_back(tool_call{call_id, "search_logs",
                                          R"({"query":"timeout","limit":)" +
                                            std::to_string(rng() % 50 + 1) + "}"});
      push(std::move(call));
      std::size_t result_chars = unit(rng) < shape.large_result_share
                                   ? 20'000 + rng() % 180'000
                                   : 200 + rng() % 1'800;
      std::string result;
      while (result.size() < result_chars)
        result += "line " + std::to_string(result.size()) + ": GET /v2/orders 200 12ms\n";
      message answer = make_row(next_id(), msg_role::tool, std::move(result));
      answer.tool_call_id = call_id;
      answer.tool_name = "search_logs";
      push(std::move(answer));
    }
    push(make_row(next_id(), msg_role::assistant, paragraph(rng, chinese, 2 + rng() % 4)));
  }
  return rows;
}

} // namespace mneme
