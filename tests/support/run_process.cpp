#include "support/run_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <system_error>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace podref::test {

namespace {

[[noreturn]] void throw_errno(int code, const char* what) {
  throw std::system_error(code, std::generic_category(), what);
}

/// A file descriptor that closes itself.
class fd_guard {
public:
  fd_guard() = default;
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    reset();
  }
  int get() const noexcept {
    return fd_;
  }
  /// Closes the descriptor held, if any, and takes `fd` instead.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

/// A pipe whose ends are closed on exec; the child gets its ends via dup2.
struct pipe_pair {
  fd_guard read_end;
  fd_guard write_end;
  pipe_pair() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw_errno(errno, "pipe2");
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
};

/// posix_spawn's file actions and attributes, destroyed on every path.
struct spawn_setup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  spawn_setup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  spawn_setup(const spawn_setup&) = delete;
  spawn_setup& operator=(const spawn_setup&) = delete;
  ~spawn_setup() {
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
};

/// Appends what is readable on `fd` to `sink`; false once it reaches EOF.
bool drain(int fd, std::string& sink) {
  char buf[8192];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink.append(buf, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0)
      return false;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN)
      return true;
    throw_errno(errno, "read");
  }
}

} // namespace

namespace {

process_result run_bounded(const std::vector<std::string>& argv,
                           const std::string& input,
                           const std::string& working_directory,
                           const run_limits& limits) {
  if (argv.empty())
    throw_errno(EINVAL, "run_process: empty argv");
  std::signal(SIGPIPE, SIG_IGN);

  pipe_pair in;
  pipe_pair out;
  pipe_pair err;
  spawn_setup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, in.read_end.get(), 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write_end.get(), 2);
  if (!working_directory.empty())
    posix_spawn_file_actions_addchdir_np(&setup.actions,
                                         working_directory.c_str());
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);
  posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  if (int rc = posix_spawn(&pid, args[0], &setup.actions, &setup.attributes,
                           args.data(), environ);
      rc != 0)
    throw_errno(rc, "posix_spawn");
  if (limits.started)
    limits.started(static_cast<int>(pid));
  auto deadline = std::chrono::steady_clock::now() + limits.limit;
  bool killed = false;

  // Only the child may hold these ends, or EOF would never arrive.
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  if (input.empty())
    in.write_end.reset();
  else
    ::fcntl(in.write_end.get(), F_SETFL, O_NONBLOCK);

  process_result result;
  std::size_t written = 0;
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open || in.write_end.get() >= 0) {
    pollfd fds[3];
    nfds_t count = 0;
    auto watch = [&](int fd, short events) {
      fds[count++] = pollfd{fd, events, 0};
    };
    if (out_open)
      watch(out.read_end.get(), POLLIN);
    if (err_open)
      watch(err.read_end.get(), POLLIN);
    if (in.write_end.get() >= 0)
      watch(in.write_end.get(), POLLOUT);
    int wait_ms = -1;
    if (limits.limit.count() > 0 && !killed) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ::kill(pid, SIGKILL); // its pipes close: the loop ends
        killed = true;
      } else {
        wait_ms = static_cast<int>(std::min<std::int64_t>(left.count(), 1000));
      }
    }
    auto ready = ::poll(fds, count, wait_ms);
    if (ready == 0)
      continue;
    if (ready < 0) {
      if (errno == EINTR)
        continue;
      throw_errno(errno, "poll");
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0)
        continue;
      if (fds[i].fd == out.read_end.get()) {
        out_open = drain(fds[i].fd, result.out);
      } else if (fds[i].fd == err.read_end.get()) {
        err_open = drain(fds[i].fd, result.err);
      } else {
        auto n = ::write(fds[i].fd, input.data() + written,
                         input.size() - written);
        if (n > 0)
          written += static_cast<std::size_t>(n);
        else if (errno != EINTR && errno != EAGAIN)
          written = input.size(); // EPIPE: the child stopped reading.
        if (written == input.size())
          in.write_end.reset();
      }
    }
  }

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw_errno(errno, "waitpid");
  if (WIFEXITED(status))
    result.status = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.status = 128 + WTERMSIG(status);
  return result;
}

} // namespace

process_result run_process(const std::vector<std::string>& argv,
                           const std::string& input,
                           const std::string& working_directory) {
  return run_bounded(argv, input, working_directory, {});
}

process_result run_process(const std::vector<std::string>& argv,
                           const run_limits& limits) {
  return run_bounded(argv, {}, {}, limits);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

} // namespace podref::test
