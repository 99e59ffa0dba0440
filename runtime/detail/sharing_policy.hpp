// sharing_policy: podref's CAF scheduler policy ("sharing").
//
// Work sharing as CAF's own policy does it (one queue of runnable actors for
// all workers, idle workers wait on a condition variable), with these
// differences:
// - the number of jobs queued or running is published (`pending`), so that
//   threads reading snapshots can give way to actors waiting for a CPU (see
//   give_way.hpp);
// - a worker is woken after the queue's lock is released, not under it: a
//   woken worker then does not preempt the enqueuing thread only to wait for
//   the lock it holds;
// - optionally (runtime_options::idle_spin_us), a worker whose last wait
//   for a job was short (under busy_gap: jobs come often) polls the queue
//   that long before it sleeps again, so that a job queued meanwhile runs
//   without a wake-up; after a long wait it sleeps at once, so a quiet
//   engine still costs no CPU.
//
// Only runtime.cpp (which installs it) and give_way.cpp (which finds its
// count) include this header: it pulls in CAF's scheduler.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include <caf/actor_system_config.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>

namespace caf::scheduler {
class abstract_coordinator;
} // namespace caf::scheduler

namespace podref::detail {

/// The configuration of an actor system on sharing_policy.
struct sharing_config : caf::actor_system_config {
  /// How long an idle worker polls for a job before it sleeps.
  std::chrono::microseconds idle_spin{0};
};

class sharing_policy : public caf::policy::unprofiled {
public:
  struct coordinator_data {
    /// Takes idle_spin from the actor system's configuration when it is a
    /// sharing_config (runtime.cpp's), else none.
    explicit coordinator_data(caf::scheduler::abstract_coordinator* parent);

    std::mutex lock;
    std::condition_variable cv;
    std::deque<caf::resumable*> queue;
    /// queue.size(), for idle workers to poll without the lock.
    std::atomic<std::size_t> queued{0};
    /// How long an idle worker polls before it sleeps.
    std::chrono::microseconds idle_spin{0};
    /// Jobs queued or being resumed: a job preempted while it runs waits
    /// for a CPU as much as a queued one.
    std::atomic<std::uint32_t> pending{0};
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {
      // nop
    }

    /// The worker's last wait for a job was short: jobs come often, so it
    /// polls before it sleeps again.
    bool busy = false;
  };

  // -- enqueueing: every job goes to the one queue ----------------------------

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    push(d(self), job);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  // -- dequeueing -------------------------------------------------------------

  /// Blocks until a job is queued.
  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& x = d(self->parent());
    auto& w = d(self);
    bool polls = x.idle_spin.count() > 0;
    if (polls && w.busy)
      spin(x);
    std::unique_lock<std::mutex> guard{x.lock};
    if (!polls) {
      x.cv.wait(guard, [&] { return !x.queue.empty(); });
    } else if (x.queue.empty()) {
      auto slept = std::chrono::steady_clock::now();
      x.cv.wait(guard, [&] { return !x.queue.empty(); });
      w.busy = std::chrono::steady_clock::now() - slept < busy_gap;
    } else {
      w.busy = true;
    }
    auto* job = x.queue.front();
    x.queue.pop_front();
    x.queued.store(x.queue.size(), std::memory_order_relaxed);
    return job;
  }

  /// Every job resumed was counted when it was queued.
  template <class Worker>
  void after_resume(Worker* self, caf::resumable*) {
    d(self->parent()).pending.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Workers keep no jobs of their own.
  template <class Worker, class F>
  void foreach_resumable(Worker*, F) {
    // nop
  }

  /// Calls f on every queued job until the queue stays empty (at shutdown,
  /// after the workers stopped); f runs without the lock.
  template <class Coordinator, class F>
  void foreach_central_resumable(Coordinator* self, F f) {
    auto& x = d(self);
    for (;;) {
      std::deque<caf::resumable*> jobs;
      {
        std::lock_guard<std::mutex> guard{x.lock};
        jobs.swap(x.queue);
        x.queued.store(0, std::memory_order_relaxed);
      }
      if (jobs.empty())
        return;
      x.pending.fetch_sub(static_cast<std::uint32_t>(jobs.size()),
                          std::memory_order_relaxed);
      for (auto* job : jobs)
        f(job);
    }
  }

  /// A wait shorter than this keeps a worker polling (see worker_data).
  static constexpr std::chrono::microseconds busy_gap{250};

private:
  static void push(coordinator_data& x, caf::resumable* job) {
    x.pending.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> guard{x.lock};
      x.queue.push_back(job);
      x.queued.store(x.queue.size(), std::memory_order_relaxed);
    }
    x.cv.notify_one();
  }

  /// Polls for a queued job for at most x.idle_spin.
  static void spin(const coordinator_data& x) noexcept;
};

} // namespace podref::detail
