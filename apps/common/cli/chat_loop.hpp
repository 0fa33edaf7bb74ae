// `mneme chat KEY`: an interactive terminal chat with one session (docs/cli.md). Reads a
// line, sends it as a streamed turn, prints the answer's text as it arrives, then one
// dim line per turn that compacted; `/compress [focus]`, `/search QUERY` and
// `/rollback NAME` are the session's channel commands (their answer is printed);
// `/quit`, end of input or an interrupt leave with exit 0. A turn that fails prints its
// error and the chat goes on.
//
// The session is reached through a chat_channel: a running daemon (remote_chat_channel,
// streamed HTTP) or the database in this process (apps/common/host/local_chat.hpp).
// Thread: the caller's; the channel may call on_text from another thread while turn()
// blocks (the printer serializes).
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "apps/common/cli/cli_failure.hpp"

namespace mneme::cli {

class daemon_client;

// One session as the chat sees it.
class chat_channel {
 public:
  virtual ~chat_channel() = default;
  // Sends `content` as a streamed turn; text pieces go to on_text as they arrive (from
  // any thread); `reply` is the turn's reply JSON (docs/api.md) when it succeeded.
  virtual maybe_failure turn(const std::string& content,
                             const std::function<void(std::string_view)>& on_text,
                             nlohmann::json& reply) = 0;
};

// The daemon at `client` (POST /v1/sessions/{key}/turns with "stream": true).
class remote_chat_channel final : public chat_channel {
 public:
  remote_chat_channel(daemon_client& client, std::string key, std::string user,
                      std::function<bool()> interrupted);
  maybe_failure turn(const std::string& content,
                     const std::function<void(std::string_view)>& on_text,
                     nlohmann::json& reply) override;

 private:
  daemon_client& client_;
  std::string key_, user_;
  std::function<bool()> interrupted_;
};

struct chat_terminal {
  std::istream& in;
  std::ostream& out;
  bool color = false;                   // ANSI dim for the compaction line and prompt
  std::function<bool()> interrupted;    // an interrupt arrived: leave
};

// The one line that tells a reply's compactions ("" when it has none), e.g.
// "[compacted: t1_pre_call 48,213 -> 9,877 tokens]"; several joined by "; ".
std::string compaction_line(const nlohmann::json& reply);

// Runs the chat until /quit, end of input or an interrupt. Returns exit_ok.
int run_chat(chat_channel& channel, chat_terminal term);

} // namespace mneme::cli
