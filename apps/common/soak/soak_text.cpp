// The simulated users' messages; see soak_text.hpp.
#include "apps/common/soak/soak_text.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "messages/transcript.hpp"
#include "policies/token_estimate.hpp"

namespace mneme::soak {

namespace {

constexpr std::array<std::string_view, 10> stems{"甲", "乙", "丙", "丁", "戊",
                                                 "己", "庚", "辛", "壬", "癸"};

constexpr std::array<std::string_view, 8> english{
  "Please keep track of the deployment plan for the billing service and its rollback steps. ",
  "The staging cluster failed its health check after the config change at noon. ",
  "We agreed to move the nightly export to the cold storage bucket next week. ",
  "Remember that the customer prefers short answers and metric units. ",
  "The open question is whether the cache should be warmed before the migration. ",
  "Error E_TIMEOUT showed up twice in /var/log/gateway/api.log this morning. ",
  "Draft a checklist for the release: tests, changelog, tag, announcement. ",
  "The latency budget for the search endpoint is 200 ms at the 99th percentile. ",
};

constexpr std::array<std::string_view, 6> chinese{
  "请记住部署计划和回滚步骤，下周一之前完成数据库迁移。",
  "测试环境的健康检查在中午的配置变更之后失败了。",
  "客户希望回答简短，并且使用公制单位。",
  "还没有决定是否在迁移之前预热缓存。",
  "搜索接口的延迟预算是第九十九百分位两百毫秒。",
  "请列出发布清单：测试、变更日志、标签和公告。",
};

std::string fill(std::string head, std::mt19937_64& rng, int64_t chars, bool cjk) {
  std::uniform_int_distribution<size_t> pick(0, (cjk ? chinese.size() : english.size()) - 1);
  while (static_cast<int64_t>(head.size()) < chars)
    head += cjk ? chinese[pick(rng)] : english[pick(rng)];
  return head;
}

} // namespace

std::string tool_payload(std::mt19937_64& rng, int64_t bytes) {
  std::uniform_int_distribution<int> svc(1, 40), ms(3, 900), code(0, 9);
  std::string out;
  out.reserve(static_cast<size_t>(bytes) + 100);
  for (int row = 0; static_cast<int64_t>(out.size()) < bytes; ++row)
    out += fmt::format("row {}: service=api-{} latency_ms={} status={}\n", row, svc(rng), ms(rng),
                       code(rng) == 0 ? "error" : "ok");
  return out;
}

std::string_view to_string(turn_kind k) {
  switch (k) {
    case turn_kind::english: return "english";
    case turn_kind::chinese: return "chinese";
    case turn_kind::tool_small: return "tool_small";
    case turn_kind::tool_large: return "tool_large";
  }
  return "unknown";
}

std::string message_tag(int64_t user, int64_t seq) {
  return fmt::format("[soak u{} n{}]", user, seq);
}

std::optional<std::string> tag_of(std::string_view content) {
  if (content.rfind("[soak u", 0) != 0)
    return std::nullopt;
  auto end = content.find(']');
  if (end == std::string_view::npos || end > 40)
    return std::nullopt;
  return std::string{content.substr(0, end + 1)};
}

std::string latin_marker(int64_t user, int64_t seq) { return fmt::format("mk{}x{}", user, seq); }

std::string cjk_marker(int64_t seq) {
  std::string digits = std::to_string(seq);
  std::string out = "印记";
  for (char c : digits)
    out += stems[static_cast<size_t>(c - '0')];
  return out;
}

std::mt19937_64 user_rng(uint64_t seed, int64_t user) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(user), static_cast<uint32_t>(user >> 32)};
  return std::mt19937_64{seq};
}

planned_message plan_message(const message_mix& mix, int64_t user, int64_t seq,
                             std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u01(0, 1);
  planned_message m;
  m.tag = message_tag(user, seq);
  double roll = u01(rng);
  if (roll < mix.tool_large_share)
    m.kind = turn_kind::tool_large;
  else if (roll < mix.tool_large_share + mix.tool_small_share)
    m.kind = turn_kind::tool_small;
  else
    m.kind = u01(rng) < mix.chinese_share ? turn_kind::chinese : turn_kind::english;
  bool marked = mix.marker_every > 0 && seq % mix.marker_every == mix.marker_every - 1;
  std::uniform_int_distribution<int64_t> user_chars(mix.user_chars.min, mix.user_chars.max);
  switch (m.kind) {
    case turn_kind::english:
    case turn_kind::chinese: {
      bool cjk = m.kind == turn_kind::chinese;
      std::string head = m.tag + " ";
      if (marked) {
        m.latin_marker = latin_marker(user, seq);
        if (cjk) {
          m.cjk_marker = cjk_marker(seq);
          head += "关于" + m.latin_marker + "的任务" + m.cjk_marker + "。";
        } else {
          head += "Note " + m.latin_marker + " for later. ";
        }
      }
      m.content = fill(std::move(head), rng, user_chars(rng), cjk);
      break;
    }
    case turn_kind::tool_small:
    case turn_kind::tool_large: {
      int64_t bytes = 400;
      if (m.kind == turn_kind::tool_large) {
        std::uniform_int_distribution<int64_t> kb(mix.tool_large_kb.min, mix.tool_large_kb.max);
        bytes = kb(rng) * 1024;
      }
      std::string head = m.tag + " tool result of run_query";
      if (marked) {
        m.latin_marker = latin_marker(user, seq);
        head += " for " + m.latin_marker;
      }
      m.content = head + ":\n" + tool_payload(rng, bytes);
      break;
    }
  }
  return m;
}

int64_t largest_message_tokens(const message_mix& mix) {
  int64_t chars = std::max<int64_t>(mix.user_chars.max, 400 + 200);
  if (mix.tool_large_share > 0)
    chars = std::max<int64_t>(chars, mix.tool_large_kb.max * 1024 + 200);
  // Chinese text: one token per character, three bytes each; Latin: about four chars
  // per token. Take the larger reading of `chars` bytes.
  message m;
  m.role = msg_role::user;
  m.content.assign(static_cast<size_t>(chars), 'x');
  int64_t latin = estimate_message_tokens(m);
  int64_t cjk = mix.chinese_share > 0 ? mix.user_chars.max / 3 + 64 : 0;
  return std::max(latin, cjk);
}

} // namespace mneme::soak
