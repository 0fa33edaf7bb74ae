// A program of this build (MNEME_BINARY_DIR) run as a child process by an integration
// test: started with its arguments, its stdout read line by line (to find the line a
// server prints once it listens), stopped with SIGTERM or SIGKILL. The destructor kills
// a child still running. Shared by the tests that start `mneme serve`, `mneme-fakellm`
// and `mneme soak`. Thread: the test's own.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace mneme::testing {

struct child_program {
  pid_t pid = -1;
  int out_fd = -1;

  // Starts MNEME_BINARY_DIR/`program` with `args`; stdout is a pipe for read_line, stderr
  // goes to `stderr_path` when it is not empty. Returns false if fork or pipe failed.
  bool start(const std::string& program, const std::vector<std::string>& args,
             const std::string& stderr_path = "") {
    int fds[2];
    if (::pipe(fds) != 0)
      return false;
    pid = ::fork();
    if (pid < 0)
      return false;
    if (pid == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      if (!stderr_path.empty() && std::freopen(stderr_path.c_str(), "w", stderr) == nullptr)
        ::_exit(126);
      ::close(fds[0]);
      ::close(fds[1]);
      std::string path = std::string{MNEME_BINARY_DIR} + "/" + program;
      std::vector<std::string> all{path};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(path.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_fd = fds[0];
    return true;
  }

  // One line of stdout without its newline; what came so far when `max` passed or the
  // child closed stdout.
  std::string read_line(std::chrono::milliseconds max) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + max;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0)
        continue;
      char c;
      if (::read(out_fd, &c, 1) != 1)
        break;
      if (c == '\n')
        return line;
      line += c;
    }
    return line;
  }

  // The port in the first line that holds `marker` followed by a port number (e.g.
  // "listening on http://127.0.0.1:"); 0 when none came within `max`.
  int port_after(const std::string& marker, std::chrono::milliseconds max, std::string& seen) {
    auto deadline = std::chrono::steady_clock::now() + max;
    while (std::chrono::steady_clock::now() < deadline) {
      auto line = read_line(std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()));
      seen += line + "\n";
      auto at = line.find(marker);
      if (at != std::string::npos)
        return std::atoi(line.c_str() + at + marker.size());
      if (line.empty())
        return 0;
    }
    return 0;
  }

  // Sends `signal`, then waits up to `max` for the exit: the exit code (128 + signal
  // number when killed by one), -1 when it had to be SIGKILLed after `max`.
  int stop(int signal = SIGTERM,
           std::chrono::milliseconds max = std::chrono::milliseconds(30000)) {
    if (pid <= 0)
      return -1;
    ::kill(pid, signal);
    auto deadline = std::chrono::steady_clock::now() + max;
    int status = 0;
    int code = -1;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (code == -1) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    pid = -1;
    ::close(out_fd);
    out_fd = -1;
    return code;
  }

  ~child_program() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out_fd >= 0)
      ::close(out_fd);
  }
};

} // namespace mneme::testing
