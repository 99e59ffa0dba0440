// work_pool: a few threads that run the node agents' work (pod events,
// reads, rechecks, replies), shared by any number of agents so that many
// agents in one process cost no thread each (`podref hollow`). Each agent
// keeps its own work in order (one task of an agent at a time: see
// node_agent.cpp); the pool only provides threads and a timer.
//
// Tasks may block (a read waiting for an object's first list, at most the
// managers' sync timeout): the thread count bounds how many agents wait at
// once, not how many exist.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace podref {

class work_pool {
public:
  using task = std::function<void()>;
  using time_point = std::chrono::steady_clock::time_point;

  /// Starts `threads` threads (at least one), named `name`.
  explicit work_pool(std::size_t threads, std::string name = "podref-work");

  /// Stops: tasks already running finish, queued and delayed ones are
  /// dropped (destroyed on this thread), the threads join.
  ~work_pool();

  work_pool(const work_pool&) = delete;
  work_pool& operator=(const work_pool&) = delete;

  /// Runs `t` on a pool thread soon. Any thread; dropped after shutdown.
  void post(task t);

  /// Runs `t` on a pool thread at `when` (or soon after).
  void post_at(time_point when, task t);

  std::size_t threads() const noexcept {
    return threads_.size();
  }

  /// Whether the calling thread is one of the pool's.
  bool on_pool_thread() const noexcept;

  /// Tasks run so far.
  std::uint64_t tasks_run() const;

private:
  struct delayed {
    time_point when;
    std::uint64_t seq; // FIFO among equal times
    task t;
    bool operator>(const delayed& other) const {
      return when != other.when ? when > other.when : seq > other.seq;
    }
  };

  void run();

  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<task> ready_;
  std::priority_queue<delayed, std::vector<delayed>, std::greater<>> timers_;
  std::uint64_t seq_ = 0;
  std::uint64_t run_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

} // namespace podref
