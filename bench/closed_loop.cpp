// The caller threads of the closed-loop runner and the main thread's clock.
#include "bench/closed_loop.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace podref::bench {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t chunk = 64;

/// One caller's counters, on its own cache line.
struct alignas(64) caller {
  std::atomic<std::uint64_t> done{0};
  histogram latency;
};

std::uint64_t to_ns(clock_type::duration d) {
  return static_cast<std::uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

} // namespace

loop_result run_closed_loop(const loop_spec& spec, const loop_op& op) {
  auto n = std::max<std::size_t>(spec.threads, 1);
  std::vector<std::unique_ptr<caller>> callers;
  for (std::size_t i = 0; i < n; ++i)
    callers.push_back(std::make_unique<caller>());
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::size_t> running{n};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      auto& self = *callers[t];
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      std::uint64_t done = 0;
      const std::uint32_t every = std::max<std::uint32_t>(spec.sample_every,
                                                          1);
      std::uint32_t countdown = every;
      auto prev = clock_type::now();
      auto step = [&](std::uint64_t index) {
        if (every == 1) {
          op(t, index);
          auto now = clock_type::now();
          self.latency.record(to_ns(now - prev));
          prev = now;
        } else if (--countdown == 0) {
          countdown = every;
          auto start = clock_type::now();
          op(t, index);
          self.latency.record(to_ns(clock_type::now() - start));
        } else {
          op(t, index);
        }
        if ((++done & 255) == 0)
          self.done.store(done, std::memory_order_relaxed);
      };
      if (spec.ops > 0) {
        for (;;) {
          auto first = next.fetch_add(chunk, std::memory_order_relaxed);
          if (first >= spec.ops)
            break;
          auto last = std::min(first + chunk, spec.ops);
          for (auto i = first; i < last; ++i)
            step(i);
        }
      } else {
        for (std::uint64_t k = 0; !stop.load(std::memory_order_relaxed);
             ++k)
          step(t + k * n);
      }
      self.done.store(done, std::memory_order_relaxed);
      running.fetch_sub(1, std::memory_order_acq_rel);
    });
  }
  auto start = clock_type::now();
  go.store(true, std::memory_order_release);
  auto deadline = start + std::chrono::duration_cast<clock_type::duration>(
                            std::chrono::duration<double>(spec.seconds));
  auto total = [&] {
    std::uint64_t sum = 0;
    for (auto& c : callers)
      sum += c->done.load(std::memory_order_relaxed);
    return sum;
  };
  while (running.load(std::memory_order_acquire) > 0) {
    auto now = clock_type::now();
    if (spec.ops == 0 && now >= deadline) {
      stop.store(true, std::memory_order_relaxed);
      break;
    }
    auto wake = now + std::chrono::milliseconds(100);
    if (spec.ops == 0)
      wake = std::min(wake, deadline);
    while (running.load(std::memory_order_acquire) > 0
           && clock_type::now() < wake)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (spec.progress)
      spec.progress(std::chrono::duration<double>(clock_type::now() - start)
                      .count(),
                    total());
  }
  for (auto& th : threads)
    th.join();
  loop_result res;
  res.seconds
    = std::chrono::duration<double>(clock_type::now() - start).count();
  res.ops = total();
  for (auto& c : callers)
    res.latency.merge(c->latency);
  return res;
}

} // namespace podref::bench
