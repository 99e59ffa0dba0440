// Runs a child process for the command-line tests and captures its output.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace podref::test {

/// What a finished child process left behind.
struct process_result {
  /// The exit code if the child exited, else 128 + the signal that killed it
  /// (as a shell reports it).
  int status = -1;
  /// Everything the child wrote to standard output.
  std::string out;
  /// Everything the child wrote to standard error.
  std::string err;
};

/// Runs `argv` (argv[0] is the program's path; PATH is not searched) with
/// `input` on its standard input, in `working_directory` unless that is
/// empty, and waits for it to exit. Standard output and error are read
/// concurrently with feeding the input, so no amount of output can deadlock.
/// Throws std::system_error if the child cannot be started.
///
/// Ignores SIGPIPE in the calling process (the child may exit before reading
/// all of `input`); the child starts with the default disposition.
process_result run_process(const std::vector<std::string>& argv,
                           const std::string& input = {},
                           const std::string& working_directory = {});

/// Bounds and hooks of run_process.
struct run_limits {
  /// Kills the child (SIGKILL) when it still runs this long after its
  /// start (its status is then 137); zero: never.
  std::chrono::milliseconds limit{0};
  /// Called with the child's pid once it started (on the calling thread),
  /// e.g. to signal it from another thread.
  std::function<void(int pid)> started;
};

/// run_process without input, within `limits`.
process_result run_process(const std::vector<std::string>& argv,
                           const run_limits& limits);

/// The lines of `text`, without their '\n'; a final line without '\n' counts.
std::vector<std::string> split_lines(const std::string& text);

} // namespace podref::test
