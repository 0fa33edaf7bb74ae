// `mneme token add (--user NAME | --admin) --file F`, `mneme token revoke ID|TOKEN
// --file F`, `mneme token list --file F`: the scoped API tokens of gateway.tokens_file
// (docs/api.md "Authentication", docs/cli.md; the file's format in
// apps/common/api/tokens/token_store.hpp, its changes in apps/common/api/tokens/token_file.hpp).
//
// add prints the new token on stdout, alone on its line, once (it is stored nowhere;
// only its SHA-256 goes into the file) and, on stderr, its ID and scope; the file is
// created (mode 0600) when missing. revoke removes the line of the ID printed at add
// time (the 8 hex digits after "mneme_" in the token), or of the whole token when that
// is given instead. list prints "ID SCOPE" per token, never a hash. A running daemon
// applies a change after `kill -HUP`.
//
// Exit codes: 0 done; 1 an I/O failure, or revoke found no such token; 2 bad arguments,
// a bad user name, or a tokens file with a bad line (named, nothing is changed).
#include <iostream>
#include <memory>

#include "apps/common/api/http_status.hpp"
#include "apps/common/api/tokens/token_file.hpp"
#include "apps/common/cli/cli_failure.hpp"
#include "apps/mneme/command_registry.hpp"
#include "messages/errc.hpp"

namespace mneme::cli {

namespace {

struct token_options {
  std::string file;
  std::string user;       // add --user
  bool admin = false;     // add --admin
  std::string which;      // revoke: ID or token
};

int fail_with(const char* command, const caf::error& err) {
  auto msg = api::error_message_of(err);
  if (err == errc::config_invalid)
    return report_failure(command, failure::input(msg));
  return report_failure(command, failure::failed(msg));
}

int run_add(const token_options& opt) {
  if (!opt.admin && opt.user.empty())
    return report_failure("token add", failure::input("give --user NAME or --admin"));
  auto scope = opt.admin ? access_scope::admin() : access_scope::of_user(opt.user);
  auto issued = api::add_token(opt.file, scope);
  if (!issued)
    return fail_with("token add", issued.error());
  std::cout << issued->token << "\n" << std::flush;
  std::cerr << "mneme token: added " << issued->entry.id << " (" << to_string(scope) << ") to "
            << opt.file << "; the token above is shown only this once\n";
  return exit_ok;
}

int run_revoke(const token_options& opt) {
  auto gone = api::revoke_token(opt.file, opt.which);
  if (!gone)
    return fail_with("token revoke", gone.error());
  std::cout << "revoked " << gone->id << " (" << to_string(gone->scope) << ")\n";
  return exit_ok;
}

int run_list(const token_options& opt) {
  auto set = api::token_set::load(opt.file);
  if (!set)
    return fail_with("token list", set.error());
  for (const auto& e : set->entries())
    std::cout << e.id << " " << to_string(e.scope) << "\n";
  return exit_ok;
}

command_action setup_token(CLI::App& cmd) {
  auto opt = std::make_shared<token_options>();
  cmd.require_subcommand(1);
  auto file_option = [opt](CLI::App* sub) {
    sub->add_option("--file", opt->file, "the tokens file (gateway.tokens_file)")->required();
  };
  auto* add = cmd.add_subcommand("add", "make a new token and print it once");
  file_option(add);
  auto* user = add->add_option("--user", opt->user, "a token for this user's data only");
  auto* admin = add->add_flag("--admin", opt->admin, "a token for everything");
  user->excludes(admin);
  auto* revoke = cmd.add_subcommand("revoke", "remove a token by its ID (or the token itself)");
  revoke->add_option("ID", opt->which, "the ID printed by add, or the whole token")->required();
  file_option(revoke);
  auto* list = cmd.add_subcommand("list", "print each token's ID and scope");
  file_option(list);
  return [opt, add, revoke] {
    if (add->parsed())
      return run_add(*opt);
    if (revoke->parsed())
      return run_revoke(*opt);
    return run_list(*opt);
  };
}

} // namespace

MNEME_COMMAND("token", "scoped API tokens of gateway.tokens_file: add, revoke, list", setup_token);

} // namespace mneme::cli
