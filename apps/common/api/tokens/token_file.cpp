// Changes to a tokens file; see token_file.hpp.
#include "apps/common/api/tokens/token_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "messages/errc.hpp"
#include "policies/client_text.hpp"
#include "store/os_random.hpp"

namespace mneme::api {

namespace {

caf::error io_error(const std::string& path, const std::string& what) {
  return caf::make_error(errc::internal, path + ": " + what + ": " + std::strerror(errno));
}

// An exclusive flock on PATH.lock for the length of a change.
class file_lock {
 public:
  explicit file_lock(const std::string& path)
    : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~file_lock() {
    if (fd_ >= 0)
      ::close(fd_); // releases the lock
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

// The file as a change finds it under its lock.
struct current_file {
  bool exists = false; // false: no file yet (text and tokens empty)
  std::string text;
  token_set tokens;
};

caf::expected<current_file> read_locked(const std::string& path, const file_lock& lock) {
  if (!lock.held())
    return io_error(path + ".lock", "cannot lock");
  current_file out;
  std::error_code ec;
  out.exists = std::filesystem::exists(path, ec);
  if (!out.exists)
    return out;
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return io_error(path, "cannot open the tokens file");
  std::stringstream ss;
  ss << in.rdbuf();
  out.text = ss.str();
  auto parsed = token_set::parse(out.text, path);
  if (!parsed)
    return parsed.error();
  out.tokens = std::move(*parsed);
  return out;
}

// Replaces the file with `text`: temporary file, fsync, rename, fsync of the folder.
caf::error write_atomically(const std::string& path, const std::string& text) {
  auto tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return io_error(tmp, "cannot create");
  size_t done = 0;
  while (done < text.size()) {
    auto w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      auto err = io_error(tmp, "cannot write");
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<size_t>(w);
  }
  if (::fchmod(fd, 0600) != 0 || ::fsync(fd) != 0) {
    auto err = io_error(tmp, "cannot sync");
    ::close(fd);
    ::unlink(tmp.c_str());
    return err;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto err = io_error(path, "cannot replace");
    ::unlink(tmp.c_str());
    return err;
  }
  auto slash = path.rfind('/');
  auto dir = slash == std::string::npos ? std::string{"."} : path.substr(0, slash + 1);
  if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);
    ::close(d);
  }
  return {};
}

const char* const new_file_header =
  "# mneme API tokens (gateway.tokens_file): ID sha256:HASH SCOPE, one token a line.\n"
  "# Managed with `mneme token add|revoke|list`; tokens themselves are never stored.\n";

} // namespace

caf::expected<std::string> generate_token() {
  unsigned char id[token_id_chars / 2];
  unsigned char secret[token_secret_bytes];
  if (!fill_os_random(id, sizeof id) || !fill_os_random(secret, sizeof secret))
    return caf::make_error(errc::internal,
                           std::string{"getrandom failed: "} + std::strerror(errno));
  return std::string{token_prefix} + lower_hex(id, sizeof id) + "_"
         + lower_hex(secret, sizeof secret);
}

caf::expected<issued_token> add_token(const std::string& path, const access_scope& scope) {
  if (!scope.is_admin()) {
    auto v = check_name(scope.user, user_max_bytes);
    if (!v.ok())
      return caf::make_error(errc::config_invalid,
                             describe_name_problem(v, "the user", user_max_bytes));
  }
  file_lock lock{path};
  auto current = read_locked(path, lock);
  if (!current)
    return current.error();
  issued_token out;
  // An ID already in the file is drawn again (32 bits: a clash is rare).
  for (bool clash = true; clash;) {
    auto token = generate_token();
    if (!token)
      return token.error();
    out.token = std::move(*token);
    out.entry.id = *token_id_of(out.token);
    clash = false;
    for (const auto& e : current->tokens.entries())
      clash = clash || e.id == out.entry.id;
  }
  out.entry.sha256_hex = sha256_hex(out.token);
  out.entry.scope = scope;
  auto text = current->exists ? current->text : std::string{new_file_header};
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  text += token_line(out.entry) + "\n";
  if (auto err = write_atomically(path, text))
    return err;
  return out;
}

caf::expected<token_entry> revoke_token(const std::string& path, const std::string& id_or_token) {
  file_lock lock{path};
  auto current = read_locked(path, lock);
  if (!current)
    return current.error();
  if (!current->exists)
    return caf::make_error(errc::not_found, path + ": no such tokens file");
  auto hash = sha256_hex(id_or_token);
  const token_entry* gone = nullptr;
  for (const auto& e : current->tokens.entries())
    if (e.id == id_or_token || e.sha256_hex == hash)
      gone = &e;
  if (!gone)
    return caf::make_error(errc::not_found,
                           path + ": no token has the given ID (or is the given token)");
  // Keep every line but the revoked one, byte for byte.
  auto line = token_line(*gone);
  std::string kept;
  std::string_view rest{current->text};
  while (!rest.empty()) {
    auto end = rest.find('\n');
    auto one = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    rest.remove_prefix(one.size());
    auto bare = one;
    while (!bare.empty() && (bare.back() == '\n' || bare.back() == '\r'))
      bare.remove_suffix(1);
    if (bare != line)
      kept += one;
  }
  auto removed = *gone;
  if (auto err = write_atomically(path, kept))
    return err;
  return removed;
}

} // namespace mneme::api
