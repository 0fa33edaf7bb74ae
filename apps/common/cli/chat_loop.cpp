// The terminal chat; see chat_loop.hpp.
#include "apps/common/cli/chat_loop.hpp"

#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "apps/common/cli/daemon_client.hpp"

namespace mneme::cli {

namespace {

constexpr std::string_view dim = "\033[2m";
constexpr std::string_view reset = "\033[0m";

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string thousands(int64_t n) {
  auto digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

} // namespace

remote_chat_channel::remote_chat_channel(daemon_client& client, std::string key,
                                         std::string user, std::function<bool()> interrupted)
  : client_(client), key_(std::move(key)), user_(std::move(user)),
    interrupted_(std::move(interrupted)) {}

maybe_failure remote_chat_channel::turn(const std::string& content,
                                        const std::function<void(std::string_view)>& on_text,
                                        nlohmann::json& reply) {
  nlohmann::json body = {{"content", content}, {"stream", true}};
  if (!user_.empty())
    body["user"] = user_;
  maybe_failure failed;
  bool ended = false;
  auto on_event = [&](const sse_event_view& e) {
    auto data = nlohmann::json::parse(e.data, nullptr, false);
    if (e.name == "delta" && data.is_object() && data.contains("content")
        && data["content"].is_string()) {
      on_text(data["content"].get<std::string>());
    } else if (e.name == "reply" && data.is_object()) {
      reply = std::move(data);
      ended = true;
    } else if (e.name == "error") {
      failed = failure::failed(describe_error_body(std::string{e.data}));
      ended = true;
    }
  };
  auto keep_going = [this] { return !interrupted_ || !interrupted_(); };
  if (auto f = client_.post_events("/v1/sessions/" + url_encode(key_) + "/turns", body,
                                   on_event, keep_going))
    return f;
  if (failed)
    return failed;
  if (!ended)
    return failure::failed("the daemon's stream ended before the turn's reply");
  return std::nullopt;
}

std::string compaction_line(const nlohmann::json& reply) {
  if (!reply.is_object() || !reply.contains("compactions") || !reply["compactions"].is_array())
    return {};
  std::string parts;
  for (const auto& c : reply["compactions"]) {
    if (!c.is_object())
      continue;
    auto by = c.value("trigger", std::string{"?"});
    std::string part;
    if (c.value("committed", false))
      part = fmt::format("{} {} -> {} tokens{}", by, thousands(c.value("tokens_before", int64_t{0})),
                         thousands(c.value("tokens_after", int64_t{0})),
                         c.value("used_fallback", false) ? " (fallback summary)" : "");
    else if (c.value("nothing_to_compact", false))
      part = by + " nothing to compact";
    else
      part = by + " not compacted" + (c.value("summary_failed", false) ? " (summarizer failed)" : "");
    parts += (parts.empty() ? "" : "; ") + part;
  }
  return parts.empty() ? std::string{} : "[compacted: " + parts + "]";
}

int run_chat(chat_channel& channel, chat_terminal term) {
  auto interrupted = [&] { return term.interrupted && term.interrupted(); };
  std::mutex out_mu; // on_text may come from another thread
  for (;;) {
    if (interrupted())
      break;
    term.out << (term.color ? fmt::format("{}>{} ", dim, reset) : std::string{"> "})
             << std::flush;
    std::string line;
    if (!std::getline(term.in, line) || interrupted())
      break;
    line = trimmed(line);
    if (line.empty())
      continue;
    if (line == "/quit" || line == "/exit")
      break;
    bool printed = false;
    nlohmann::json reply;
    auto f = channel.turn(line, [&](std::string_view piece) {
      std::lock_guard lock{out_mu};
      term.out << piece << std::flush;
      printed = true;
    }, reply);
    std::lock_guard lock{out_mu};
    if (f) {
      term.out << (printed ? "\n" : "") << "error: " << f->message << "\n";
      continue;
    }
    auto answer = reply.value("answer", std::string{});
    if (!printed)
      term.out << answer; // a channel command, or an answer that came whole
    if (printed || !answer.empty())
      term.out << "\n";
    if (auto notice = reply.value("notice", std::string{}); !notice.empty())
      term.out << notice << "\n";
    if (auto c = compaction_line(reply); !c.empty())
      term.out << (term.color ? fmt::format("{}{}{}", dim, c, reset) : c) << "\n";
  }
  term.out << "\n" << std::flush;
  return 0;
}

} // namespace mneme::cli
