// `mneme export SESSION [--out FILE]`: the JSONL export of one session (SESSION = its
// key or its id): every row in id order whatever its state, one JSON object a line
// (store/jsonl_export.hpp), to standard output or FILE. From a database file
// (read-only) or a running daemon (GET /v1/sessions/{key}/export).
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "apps/common/cli/daemon_client.hpp"
#include "apps/common/cli/data_source.hpp"
#include "apps/mneme/command_registry.hpp"

namespace mneme::cli {

namespace {

struct export_options {
  source_options source;
  std::string session;
  std::string user; // whose key SESSION is (empty: gateway.default_user; a token's own user)
  std::string out_file;   // empty = standard output
};

maybe_failure export_file(const export_options& opt, std::ostream& out) {
  app_config cfg;
  if (auto f = load_config(opt.source, cfg))
    return f;
  std::unique_ptr<read_source> reader;
  if (auto f = open_reader(cfg, reader))
    return f;
  session_record rec;
  if (auto f = find_session(*reader, opt.session, opt.user, cfg.gateway.default_user,
                                rec))
    return f;
  auto lines = reader->export_jsonl(rec.id, out);
  if (!lines)
    return failure_of(lines.error(), "cannot export " + rec.id);
  return std::nullopt;
}

maybe_failure export_daemon(const export_options& opt, std::ostream& out) {
  daemon_client client{opt.source.server, opt.source.token};
  std::string body;
  if (auto f = client.get_text("/v1/sessions/" + url_encode(opt.session) + "/export" + user_query(opt.user), body))
    return f;
  out << body;
  return std::nullopt;
}

int run_export(const export_options& opt) {
  // Into memory first, so a failure leaves no half-written file behind.
  std::ostringstream buffer;
  auto f = opt.source.remote() ? export_daemon(opt, buffer) : export_file(opt, buffer);
  if (f)
    return report_failure("export", *f);
  if (opt.out_file.empty()) {
    std::cout << buffer.str() << std::flush;
    return std::cout ? exit_ok : exit_failure;
  }
  std::ofstream file{opt.out_file, std::ios::binary | std::ios::trunc};
  if (!file)
    return report_failure("export", failure::input("cannot write " + opt.out_file));
  file << buffer.str();
  file.close();
  if (!file)
    return report_failure("export", failure::failed("writing " + opt.out_file + " failed"));
  return exit_ok;
}

} // namespace

MNEME_COMMAND("export", "a session's rows as JSONL, every state, with their flags",
              [](CLI::App& cmd) -> command_action {
                auto opt = std::make_shared<export_options>();
                cmd.add_option("SESSION", opt->session, "session key or session id")
                  ->required();
                cmd.add_option("--user", opt->user,
                               "whose key SESSION is (default: gateway.default_user)");
                cmd.add_option("--out", opt->out_file, "write to FILE instead of stdout");
                add_source_options(cmd, opt->source, false);
                return [opt] { return run_export(*opt); };
              });

} // namespace mneme::cli
