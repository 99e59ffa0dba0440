// The node agents' shared threads (work_pool.hpp has the contract).
#include "podref/node/work_pool.hpp"

#include <algorithm>
#include <utility>

#include <pthread.h>

namespace podref {

work_pool::work_pool(std::size_t threads, std::string name) {
  threads = std::max<std::size_t>(threads, 1);
  name.resize(std::min<std::size_t>(name.size(), 15)); // the kernel's limit
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this, name] {
      pthread_setname_np(pthread_self(), name.c_str());
      run();
    });
}

work_pool::~work_pool() {
  std::deque<task> dropped;
  decltype(timers_) dropped_timers;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
    dropped.swap(ready_);
    dropped_timers.swap(timers_);
  }
  cv_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void work_pool::post(task t) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_)
      return;
    ready_.push_back(std::move(t));
  }
  cv_.notify_one();
}

void work_pool::post_at(time_point when, task t) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopping_)
      return;
    timers_.push({when, seq_++, std::move(t)});
  }
  // The earliest timer may have changed: whoever waits re-reads it.
  cv_.notify_one();
}

bool work_pool::on_pool_thread() const noexcept {
  auto me = std::this_thread::get_id();
  return std::any_of(threads_.begin(), threads_.end(),
                     [me](const std::thread& t) { return t.get_id() == me; });
}

std::uint64_t work_pool::tasks_run() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return run_;
}

void work_pool::run() {
  std::unique_lock<std::mutex> guard{mtx_};
  for (;;) {
    if (stopping_)
      return;
    auto now = std::chrono::steady_clock::now();
    while (!timers_.empty() && timers_.top().when <= now) {
      // priority_queue::top is const: move out through a copy of the key.
      auto& top = const_cast<delayed&>(timers_.top());
      ready_.push_back(std::move(top.t));
      timers_.pop();
    }
    if (ready_.empty()) {
      if (timers_.empty())
        cv_.wait(guard);
      else {
        // A copy: wait_until reads its deadline again after waking, when a
        // push by another thread may have moved the heap's storage.
        auto when = timers_.top().when;
        cv_.wait_until(guard, when);
      }
      continue;
    }
    auto t = std::move(ready_.front());
    ready_.pop_front();
    ++run_;
    if (!ready_.empty())
      cv_.notify_one();
    guard.unlock();
    t();
    t = nullptr; // destroy captures outside the lock
    guard.lock();
  }
}

} // namespace podref
