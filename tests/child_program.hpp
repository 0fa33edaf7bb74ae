// A program of this build (MNEME_BINARY_DIR: mneme, mneme-fakellm, tests/tools/*) run as
// a child process by an integration test. child_program is one that runs beside the test:
// started with its arguments (and environment additions), its stdout read line by line or
// in bulk (to find the line a server prints once it listens), signalled, waited for with
// a bound; the destructor kills and reaps a child still running. run_program runs one to
// its end and returns its exit code and output. Every wait has a bound, so a hung child
// fails the test instead of hanging it; no verdict depends on how long anything took.
// Header-only and POSIX; a test using it names MNEME_BINARY_DIR itself (CMakeLists.txt
// adds the programs as its dependencies only then). Thread: the test's own.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

extern char** environ;

namespace mneme::testing {

// What `mneme serve` prints once it listens, right before its port.
inline const std::string serve_listening_marker = "listening on http://127.0.0.1:";
// What `mneme-fakellm` prints once it listens, right before its port.
inline const std::string fakellm_listening_marker = "listening http://127.0.0.1:";

namespace child_detail {

using clock = std::chrono::steady_clock;

inline std::chrono::milliseconds left_until(clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds{0};
}

// Forks and executes MNEME_BINARY_DIR/`program` with `args`; the child's stdout is
// `out_fd`, its stderr `err_fd` (-1: the test's own), its environment the test's with
// each "NAME=value" of `env` set. Everything the child touches is built before the
// fork (the test may run threads). The child's pid, -1 when fork failed.
inline pid_t spawn(const std::string& program, const std::vector<std::string>& args,
                   int out_fd, int err_fd, const std::vector<std::string>& env) {
  std::string path = std::string{MNEME_BINARY_DIR} + "/" + program;
  std::vector<std::string> argv_text{path};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto name_of = [](const std::string& setting) { return setting.substr(0, setting.find('=')); };
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string inherited{*e};
    bool overridden = false;
    for (const auto& setting : env)
      overridden = overridden || name_of(inherited) == name_of(setting);
    if (!overridden)
      env_text.push_back(inherited);
  }
  env_text.insert(env_text.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0)
      ::dup2(err_fd, STDERR_FILENO);
    ::execve(path.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// Waits up to `max` for `pid` to end: its exit code, 128 + the signal's number when a
// signal ended it; -1 when it still ran after `max`, in which case it is killed with
// SIGKILL and reaped.
inline int reap(pid_t pid, std::chrono::milliseconds max) {
  auto deadline = clock::now() + max;
  int status = 0;
  for (;;) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (got < 0 && errno != EINTR)
      return -1;
    if (clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Appends what `fd` holds to `into`, waiting at most `wait` for it: false once the
// writer closed it (end of file), true otherwise.
inline bool read_some(int fd, std::string& into, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
  if (ready <= 0)
    return ready == 0 || errno == EINTR;
  char chunk[4096];
  auto got = ::read(fd, chunk, sizeof chunk);
  if (got < 0)
    return errno == EINTR || errno == EAGAIN;
  into.append(chunk, static_cast<size_t>(got));
  return got > 0;
}

} // namespace child_detail

class child_program {
public:
  child_program() = default;
  child_program(const child_program&) = delete;
  child_program& operator=(const child_program&) = delete;

  // A child still running is killed with SIGKILL and reaped.
  ~child_program() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    close_stdout();
  }

  // Starts MNEME_BINARY_DIR/`program` with `args`; its stdout is a pipe read by the
  // read_* calls; its stderr goes to `stderr_path` (truncated) when that is not empty,
  // else to the test's stderr; `env` holds "NAME=value" settings added to the test's
  // environment. False when the pipe, the stderr file or the fork could not be made.
  // One child per object: a started one must have ended (wait, stop) first.
  bool start(const std::string& program, const std::vector<std::string>& args,
             const std::string& stderr_path = "", const std::vector<std::string>& env = {}) {
    if (pid_ > 0)
      return false;
    close_stdout();
    buffer_.clear();
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return false;
    int err_fd = -1;
    if (!stderr_path.empty()) {
      err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (err_fd < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return false;
      }
    }
    pid_ = child_detail::spawn(program, args, fds[1], err_fd, env);
    ::close(fds[1]);
    if (err_fd >= 0)
      ::close(err_fd);
    if (pid_ < 0) {
      ::close(fds[0]);
      return false;
    }
    out_fd_ = fds[0];
    return true;
  }

  // Whether a started child has not been waited for yet.
  bool running() const { return pid_ > 0; }

  // Sends `signal` to the running child; false when none runs or kill failed.
  bool signal(int signal) const { return pid_ > 0 && ::kill(pid_, signal) == 0; }

  // Waits up to `max` for the child to end: its exit code, 128 + the signal's number when
  // a signal ended it, -1 when it still ran after `max` (it is then killed and reaped)
  // or none was started. What it wrote to stdout stays readable.
  int wait(std::chrono::milliseconds max) {
    if (pid_ <= 0)
      return -1;
    int code = child_detail::reap(pid_, max);
    pid_ = -1;
    return code;
  }

  // Sends `signal`, then wait(max).
  int stop(int signal = SIGTERM, std::chrono::milliseconds max = std::chrono::seconds(30)) {
    this->signal(signal);
    return wait(max);
  }

  // One line of stdout without its newline; what came so far when `max` passed or the
  // child closed stdout first.
  std::string read_line(std::chrono::milliseconds max) {
    read_until_held([&] { return buffer_.find('\n') != std::string::npos; }, max);
    auto end = buffer_.find('\n');
    if (end == std::string::npos)
      return take(buffer_.size());
    auto line = take(end);
    buffer_.erase(0, 1);
    return line;
  }

  // Everything stdout gives until it holds `text` (included, with whatever came in the
  // same read), `max` passes or the child closes stdout.
  std::string read_until(const std::string& text, std::chrono::milliseconds max) {
    read_until_held([&] { return buffer_.find(text) != std::string::npos; }, max);
    return take(buffer_.size());
  }

  // Everything stdout gives until `max` passes or the child closes stdout.
  std::string read_for(std::chrono::milliseconds max) {
    read_until_held([] { return false; }, max);
    return take(buffer_.size());
  }

  // Everything stdout gives until the child (and whatever inherited its stdout) closes
  // it, or `max` passes.
  std::string read_to_end(std::chrono::milliseconds max) {
    read_until_held([&] { return out_fd_ < 0; }, max);
    return take(buffer_.size());
  }

  // The port in the first stdout line that holds `marker` followed by a port number; 0
  // when no such line came within `max` or stdout closed first. `seen` gets every line
  // read.
  int port_after(const std::string& marker, std::chrono::milliseconds max, std::string& seen) {
    auto deadline = child_detail::clock::now() + max;
    for (;;) {
      auto line = read_line(child_detail::left_until(deadline));
      seen += line + "\n";
      auto at = line.find(marker);
      if (at != std::string::npos)
        return std::atoi(line.c_str() + at + marker.size());
      bool nothing_more = out_fd_ < 0 && buffer_.empty();
      if (nothing_more || child_detail::left_until(deadline).count() == 0)
        return 0;
    }
  }

private:
  // Reads stdout into buffer_ until `held()`, `max` passes or stdout closes.
  template <class Condition>
  void read_until_held(Condition held, std::chrono::milliseconds max) {
    auto deadline = child_detail::clock::now() + max;
    while (!held() && out_fd_ >= 0) {
      auto left = child_detail::left_until(deadline);
      if (left.count() == 0)
        return;
      if (!child_detail::read_some(out_fd_, buffer_, std::min(left, poll_step)))
        close_stdout();
    }
  }

  std::string take(size_t n) {
    auto out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return out;
  }

  void close_stdout() {
    if (out_fd_ >= 0)
      ::close(out_fd_);
    out_fd_ = -1;
  }

  static constexpr std::chrono::milliseconds poll_step{100};

  pid_t pid_ = -1;
  int out_fd_ = -1;     // the read end of the child's stdout; -1 once it closed
  std::string buffer_;  // read from stdout, not yet returned
};

// Starts `mneme serve --port 0` with `args` (its database, its configuration) and reads
// its stdout until it says where it listens: the port, 0 when it could not be started or
// said nothing of the kind within `max` or before it closed stdout. `said` gets every
// line it printed meanwhile.
inline int start_mneme_serve(child_program& daemon, std::vector<std::string> args,
                             std::string& said, const std::string& stderr_path = "",
                             std::chrono::milliseconds max = std::chrono::seconds(20)) {
  args.insert(args.begin(), {"serve", "--port", "0"});
  if (!daemon.start("mneme", args, stderr_path))
    return 0;
  return daemon.port_after(serve_listening_marker, max, said);
}

// Starts `mneme-fakellm --port 0` with `args` as start_mneme_serve starts the daemon.
inline int start_fakellm(child_program& fake, std::vector<std::string> args, std::string& said,
                         const std::string& stderr_path = "",
                         std::chrono::milliseconds max = std::chrono::seconds(20)) {
  args.insert(args.begin(), {"--port", "0"});
  if (!fake.start("mneme-fakellm", args, stderr_path))
    return 0;
  return fake.port_after(fakellm_listening_marker, max, said);
}

// `mneme serve --port 0` with `args` for the length of a scope: construction starts it
// and fails the test unless it says where it listens within `max`; destruction stops one
// still running with SIGTERM (SIGKILL after 30 s).
struct mneme_daemon {
  child_program process;
  int port = 0;
  std::string said; // what it printed up to the line that says where it listens

  explicit mneme_daemon(const std::vector<std::string>& args, const std::string& stderr_path = "",
                        std::chrono::milliseconds max = std::chrono::seconds(20)) {
    port = start_mneme_serve(process, args, said, stderr_path, max);
    BOOST_REQUIRE_MESSAGE(port > 0, "mneme serve did not start; it said: " << said);
  }
  ~mneme_daemon() {
    if (process.running())
      process.stop(SIGTERM, std::chrono::seconds(30));
  }
  mneme_daemon(const mneme_daemon&) = delete;
  mneme_daemon& operator=(const mneme_daemon&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// How a program run to its end ended and what it printed.
struct program_result {
  int code = -1;     // exit code; 128 + signal number when a signal ended it; -1 when it
                     // did not end within the bound (it was killed) or did not start
  std::string out;   // its stdout (a pipe, so never a terminal); with stderr when merged
  std::string err;   // its stderr, unless merged into out
};

// Whether run_program keeps the child's stderr apart from its stdout or mixes both
// into one text in the order they were written.
enum class stderr_mode { separate, merged };

// Runs MNEME_BINARY_DIR/`program` with `args` until it ends, reading its stdout and
// stderr as they come; a child still running after `max` is killed (code -1).
inline program_result run_program(const std::string& program,
                                  const std::vector<std::string>& args,
                                  stderr_mode mode = stderr_mode::separate,
                                  std::chrono::milliseconds max = std::chrono::minutes(5)) {
  program_result r;
  auto deadline = child_detail::clock::now() + max;
  int out[2];
  int err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0)
    return r;
  if (mode == stderr_mode::separate && ::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return r;
  }
  pid_t pid = child_detail::spawn(program, args, out[1],
                                  mode == stderr_mode::merged ? out[1] : err[1], {});
  ::close(out[1]);
  if (err[1] >= 0)
    ::close(err[1]);
  if (pid > 0) {
    bool out_open = true;
    bool err_open = err[0] >= 0;
    // Both pipes are drained together: a child blocked writing one must not stall.
    while ((out_open || err_open) && child_detail::left_until(deadline).count() > 0) {
      auto wait_each = std::chrono::milliseconds(out_open && err_open ? 10 : 100);
      if (out_open)
        out_open = child_detail::read_some(out[0], r.out, wait_each);
      if (err_open)
        err_open = child_detail::read_some(err[0], r.err, wait_each);
    }
    r.code = child_detail::reap(pid, child_detail::left_until(deadline));
  }
  ::close(out[0]);
  if (err[0] >= 0)
    ::close(err[0]);
  return r;
}

} // namespace mneme::testing
