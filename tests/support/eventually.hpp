// eventually: polls a condition other threads make true, with a bound (a
// real condition, never a sleep that hides a race).
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace podref::test {

/// Polls `f` every 5 ms until it holds, at most `limit`; returns whether
/// it held.
inline bool eventually(const std::function<bool()>& f,
                       std::chrono::seconds limit = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return f();
}

} // namespace podref::test
