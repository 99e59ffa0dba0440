// The workers' time slice: a thread's request reaches the kernel where the
// kernel supports it (Linux 6.12+), and the runtime's workers ask for
// runtime_options::worker_slice.
#include <chrono>
#include <future>
#include <thread>
#include <tuple>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <catch2/catch.hpp>

#include "podref/runtime/detail/thread_slice.hpp"
#include "podref/runtime/runtime.hpp"

using namespace podref;
using namespace std::chrono_literals;
using detail::request_thread_slice;
using detail::thread_slice;

namespace {

/// Runs `f` on a new thread (slices are per thread: the test's own thread
/// keeps its default).
template <class F>
auto on_new_thread(F f) {
  auto task = std::async(std::launch::async, f);
  return task.get();
}

/// Whether this kernel takes slice requests.
bool kernel_takes_slices() {
  return on_new_thread([] { return request_thread_slice(300us); });
}

} // namespace

TEST_CASE("a slice request reaches the kernel or changes nothing",
          "[thread_slice]") {
  auto [taken, before, after] = on_new_thread([] {
    auto before = thread_slice();
    bool taken = request_thread_slice(200us);
    return std::tuple{taken, before, thread_slice()};
  });
  if (taken)
    CHECK(after == 200us);
  else
    CHECK(after == before);
}

TEST_CASE("a zero slice asks for nothing", "[thread_slice]") {
  auto [taken, before, after] = on_new_thread([] {
    auto before = thread_slice();
    bool taken = request_thread_slice(0ns);
    return std::tuple{taken, before, thread_slice()};
  });
  CHECK_FALSE(taken);
  CHECK(after == before);
}

TEST_CASE("the runtime's workers ask for the worker slice",
          "[thread_slice][runtime]") {
  if (!kernel_takes_slices()) {
    WARN("this kernel ignores slice requests; nothing to check");
    return;
  }
  auto slice_of_a_worker = [](std::chrono::microseconds worker_slice) {
    runtime_options opts;
    opts.worker_slice = worker_slice;
    runtime rt{opts};
    auto reporter = rt.system().spawn([]() -> caf::behavior {
      return {[](int) { return thread_slice().count(); }};
    });
    caf::scoped_actor self{rt.system()};
    std::chrono::nanoseconds::rep res = -1;
    self->request(reporter, caf::infinite, 0)
      .receive([&](std::chrono::nanoseconds::rep x) { res = x; },
               [](caf::error&) {});
    self->send_exit(reporter, caf::exit_reason::user_shutdown);
    return std::chrono::nanoseconds{res};
  };
  CHECK(slice_of_a_worker(150us) == 150us);
  auto kernel_default = on_new_thread([] { return thread_slice(); });
  CHECK(slice_of_a_worker(0us) == kernel_default);
}
