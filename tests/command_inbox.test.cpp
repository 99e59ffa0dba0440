// The command inbox between caller threads and the manager: ticket order
// through the ring and the spill list, parking and waking the consumer,
// back-pressure (bounded backlog, waiting callers released by the consumer
// or by close, worker threads that never wait), and callers giving way to a
// lagging consumer on its core (threads pinned to cores).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sched.h>

#include <catch2/catch.hpp>

#include "podref/actors/command_inbox.hpp"

using namespace podref;
using detail::command;
using detail::command_inbox;

namespace {

pod_registration_ptr reg(int i) {
  return make_registration("ns", "pod-" + std::to_string(i), "uid", {});
}

/// Pops everything stored and returns the pod names in pop order, each
/// with "-" appended for an unregistration.
std::vector<std::string> take_names(command_inbox& box) {
  std::vector<std::string> res;
  command cmd;
  while (box.try_pop(cmd)) {
    res.emplace_back(cmd.reg->name());
    if (cmd.what == command::kind::unreg)
      res.back() += '-';
  }
  return res;
}

std::vector<std::string> names(int first, int last) {
  std::vector<std::string> res;
  for (int i = first; i < last; ++i)
    res.emplace_back("pod-" + std::to_string(i));
  return res;
}

/// Waits until `cond` holds; the condition is another thread's progress.
template <class Cond>
void wait_until(Cond cond) {
  while (!cond())
    std::this_thread::yield();
}

/// The cores this process may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> res;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set))
        res.push_back(i);
  return res;
}

/// Runs f() on a thread pinned to `cpu`; false if it could not be pinned.
template <class F>
bool run_on_cpu(int cpu, F f) {
  bool pinned = false;
  std::thread th{[&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pinned = pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0
             && sched_getcpu() == cpu;
    if (pinned)
      f();
  }};
  th.join();
  return pinned;
}

/// Pushes registrations first .. last-1 from the calling thread.
void push_range(command_inbox& box, int first, int last) {
  for (int i = first; i < last; ++i)
    box.push(command::kind::reg, reg(i));
}

} // namespace

TEST_CASE("commands come out in push order; only the parked consumer is woken") {
  command_inbox box;
  CHECK(box.idle());
  // A new inbox's consumer waits for the first command.
  CHECK(box.push(command::kind::reg, reg(0)));
  CHECK_FALSE(box.push(command::kind::unreg, reg(1)));
  CHECK_FALSE(box.push(command::kind::reg, reg(2)));
  CHECK(box.unapplied() == 3);
  CHECK(box.drawn() == 3);
  CHECK(take_names(box)
        == std::vector<std::string>{"pod-0", "pod-1-", "pod-2"});
  CHECK(box.idle());
  CHECK(box.popped() == 3);
  // Popped is not applied: the backlog shrinks only when the consumer says.
  CHECK(box.unapplied() == 3);
  box.applied(3);
  CHECK(box.unapplied() == 0);
  // A consumer that has not parked is not woken...
  CHECK_FALSE(box.push(command::kind::reg, reg(3)));
  // ... and one that parks finds the command and is told to go on.
  CHECK_FALSE(box.park());
  CHECK(take_names(box) == std::vector<std::string>{"pod-3"});
  // Parked on an empty inbox: the next push wakes it, once.
  CHECK(box.park());
  CHECK(box.push(command::kind::reg, reg(4)));
  CHECK_FALSE(box.push(command::kind::reg, reg(5)));
  CHECK(take_names(box) == std::vector<std::string>{"pod-4", "pod-5"});
  CHECK(box.spills() == 0);
}

TEST_CASE("the registration of the next commands is there to load ahead") {
  command_inbox box;
  auto x = reg(0);
  auto y = reg(1);
  box.push(command::kind::reg, x);
  box.push(command::kind::reg, y);
  CHECK(box.peek(0) == x.get());
  CHECK(box.peek(1) == y.get());
  CHECK(box.peek(2) == nullptr);
  command cmd;
  REQUIRE(box.try_pop(cmd));
  CHECK(box.peek(0) == y.get());
  CHECK(box.peek(1) == nullptr);
}

TEST_CASE("commands past a full ring spill and still come out in order") {
  // 4 slots, nothing applied: the fifth push finds its slot taken.
  command_inbox box{0, 4};
  for (int i = 0; i < 10; ++i)
    box.push(command::kind::reg, reg(i));
  CHECK(box.spills() == 6);
  CHECK(box.peek(4) == nullptr); // spilled commands are no hint
  auto first = take_names(box);
  CHECK(first == names(0, 10));
  box.applied(10);
  // Slots free again: the ring takes the next ones, and a ring command
  // behind a spilled one waits for it.
  for (int i = 10; i < 14; ++i)
    box.push(command::kind::reg, reg(i));
  CHECK(box.spills() == 6);
  CHECK(take_names(box) == names(10, 14));
  box.applied(2); // 2 of 4 applied: the ring has room for 2 more
  for (int i = 14; i < 20; ++i)
    box.push(command::kind::reg, reg(i));
  CHECK(box.spills() == 10);
  CHECK(take_names(box) == names(14, 20));
  // A consumer parked on a command that spills is woken by its push.
  CHECK(box.park());
  CHECK(box.push(command::kind::unreg, reg(20)));
  CHECK(take_names(box) == std::vector<std::string>{"pod-20-"});
}

TEST_CASE("many callers: every command once, each caller's in its order, "
          "one wake-up per park") {
  // A small ring, and a consumer that reports what it applied only every
  // 256 commands: pushes past the first 64 spill for sure.
  constexpr int callers = 4;
  constexpr int per_caller = 20000;
  command_inbox box{0, 64};
  std::atomic<int> wakes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_caller; ++i)
        if (box.push(command::kind::reg,
                     make_registration("ns", std::to_string(t), std::to_string(i),
                                       {})))
          wakes.fetch_add(1);
    });
  std::vector<int> last(callers, -1);
  int received = 0;
  int parks = 0;
  bool ordered = true;
  // The consumer: starts when woken (a new inbox's consumer is parked),
  // pops what is there, parks when the next is missing and then waits for
  // a push to report the wake-up.
  wait_until([&] { return wakes.load() > 0; });
  int seen_wakes = 1;
  std::size_t unreported = 0;
  while (received < callers * per_caller) {
    command cmd;
    while (box.try_pop(cmd)) {
      auto t = std::stoi(std::string{cmd.reg->name()});
      auto i = std::stoi(std::string{cmd.reg->uid()});
      ordered = ordered && i == last[t] + 1;
      last[t] = i;
      ++received;
      ++unreported;
    }
    if (unreported >= 256 || received == callers * per_caller) {
      box.applied(unreported);
      unreported = 0;
    }
    if (received == callers * per_caller)
      break;
    if (box.park()) {
      ++parks;
      wait_until([&] { return wakes.load() > seen_wakes; });
      seen_wakes = wakes.load();
    }
  }
  for (auto& x : threads)
    x.join();
  CHECK(ordered);
  CHECK(received == callers * per_caller);
  CHECK(box.unapplied() == 0);
  // Every park was answered by exactly one push (the first push answers the
  // park of a new inbox).
  CHECK(wakes.load() == parks + 1);
  CHECK(box.spills() > 0);
}

TEST_CASE("a push that returned before another began comes out first") {
  command_inbox box;
  std::atomic<bool> first_done{false};
  std::thread a{[&] {
    box.push(command::kind::reg, reg(0));
    first_done = true;
  }};
  std::thread b{[&] {
    wait_until([&] { return first_done.load(); });
    box.push(command::kind::reg, reg(1));
  }};
  a.join();
  b.join();
  CHECK(take_names(box) == names(0, 2));
}

TEST_CASE("a waiting registration is kept alive by the inbox alone") {
  std::weak_ptr<const pod_registration> first;
  std::weak_ptr<const pod_registration> second;
  {
    command_inbox box;
    auto x = reg(0);
    first = x;
    box.push(command::kind::reg, std::move(x));
    auto y = reg(1);
    second = y;
    box.push(command::kind::unreg, std::move(y));
    CHECK_FALSE(first.expired());
    {
      command cmd;
      REQUIRE(box.try_pop(cmd));
      CHECK(cmd.reg.use_count() == 1); // the inbox's reference, handed over
      CHECK_FALSE(second.expired());   // still waiting in the ring
    }
    CHECK(first.expired());
    CHECK_FALSE(second.expired());
    auto z = reg(2);
    first = z;
    box.push(command::kind::reg, std::move(z));
  }
  CHECK(first.expired()); // the inbox dropped what nobody took
  CHECK(second.expired());
}

TEST_CASE("an inbox drops spilled commands nobody took") {
  std::vector<std::weak_ptr<const pod_registration>> pushed;
  {
    command_inbox box{0, 2};
    for (int i = 0; i < 5; ++i) {
      auto x = reg(i);
      pushed.emplace_back(x);
      box.push(command::kind::reg, std::move(x));
    }
    CHECK(box.spills() == 3);
    command cmd;
    REQUIRE(box.try_pop(cmd));
    REQUIRE(box.try_pop(cmd));
    REQUIRE(box.try_pop(cmd)); // the spill list is now the consumer's
  }
  for (auto& x : pushed)
    CHECK(x.expired());
}

TEST_CASE("a caller over the bound waits until half the backlog is applied") {
  constexpr int bound = 8;
  command_inbox box{bound};
  for (int i = 0; i < bound; ++i)
    box.push(command::kind::reg, reg(i));
  CHECK(box.waits() == 0);
  std::atomic<bool> pushed{false};
  std::thread caller{[&] {
    box.push(command::kind::reg, reg(bound));
    pushed = true;
  }};
  wait_until([&] { return box.waits() == 1; });
  CHECK(take_names(box).size() == bound);
  // Applying down to just above half keeps the caller waiting...
  box.applied(bound / 2 - 1);
  CHECK_FALSE(pushed.load());
  // ... half releases it.
  box.applied(1);
  caller.join();
  CHECK(pushed.load());
  CHECK(box.unapplied() == bound / 2 + 1);
  CHECK(take_names(box) == std::vector<std::string>{"pod-8"});
}

TEST_CASE("an unregistration waits while releases fill the backlog") {
  constexpr int bound = 8;
  command_inbox box{0, 0, 0, bound};
  for (int i = 0; i < bound; ++i)
    box.push(command::kind::unreg, reg(i));
  CHECK(box.waits() == 0);
  CHECK(box.unapplied_releases() == bound);
  std::atomic<bool> pushed{false};
  std::thread caller{[&] {
    box.push(command::kind::unreg, reg(bound));
    pushed = true;
  }};
  wait_until([&] { return box.waits() == 1; });
  // Applying down to just above half the bound keeps the caller waiting...
  command cmd;
  for (int i = 0; i < bound / 2 - 1; ++i)
    REQUIRE(box.try_pop(cmd));
  box.applied(bound / 2 - 1);
  CHECK_FALSE(pushed.load());
  // ... half releases it.
  REQUIRE(box.try_pop(cmd));
  box.applied(1);
  caller.join();
  CHECK(pushed.load());
  CHECK(box.unapplied_releases() == bound / 2 + 1);
}

TEST_CASE("registrations and mixed backlogs never wait for releases") {
  constexpr int bound = 4;
  command_inbox box{0, 0, 0, bound};
  for (int i = 0; i < bound; ++i)
    box.push(command::kind::unreg, reg(i));
  // A registration never waits for the release bound...
  box.push(command::kind::reg, reg(bound));
  // ... and with it in the backlog, releases make up less than 7/8 of it:
  // an unregistration goes on as well (churn).
  box.push(command::kind::unreg, reg(bound + 1));
  CHECK(box.waits() == 0);
  CHECK(box.unapplied() == bound + 2);
  CHECK(box.unapplied_releases() == bound + 1);
  CHECK(take_names(box).size() == bound + 2);
}

TEST_CASE("close releases waiting callers and later pushes never wait") {
  constexpr int bound = 4;
  command_inbox box{bound};
  for (int i = 0; i < bound; ++i)
    box.push(command::kind::reg, reg(i));
  std::thread caller{[&] { box.push(command::kind::reg, reg(bound)); }};
  wait_until([&] { return box.waits() == 1; });
  box.close();
  caller.join();
  box.push(command::kind::reg, reg(bound + 1));
  CHECK(box.waits() == 1);
  CHECK(box.unapplied() == bound + 2);
}

TEST_CASE("threads marked never-wait push past the bound") {
  constexpr int bound = 4;
  command_inbox box{bound};
  std::thread worker{[&] {
    command_inbox::never_wait_on_this_thread();
    for (int i = 0; i < 3 * bound; ++i)
      box.push(command::kind::reg, reg(i));
  }};
  worker.join();
  CHECK(box.waits() == 0);
  CHECK(box.unapplied() == 3 * bound);
  CHECK(take_names(box).size() == 3 * bound);
}

TEST_CASE("an unbounded inbox never waits") {
  command_inbox box;
  for (int i = 0; i < 1000; ++i)
    box.push(command::kind::reg, reg(i));
  CHECK(box.waits() == 0);
  CHECK(box.unapplied() == 1000);
}

TEST_CASE("callers on the consumer's core give way while it lags") {
  auto cpus = allowed_cpus();
  REQUIRE_FALSE(cpus.empty());
  constexpr int above = 8;
  command_inbox box{0, 0, above};
  // The consumer applies a (here empty) batch on the core: it ran there.
  REQUIRE(run_on_cpu(cpus[0], [&] { box.applied(0); }));
  REQUIRE(run_on_cpu(cpus[0], [&] {
    // Up to `above` unapplied commands nobody gives way; the 40 pushes
    // past it find the consumer lagging, and every 4th of them yields.
    push_range(box, 0, above + 1);
    CHECK(box.yields() == 0);
    push_range(box, above + 1, above + 41);
  }));
  CHECK(box.yields() == 10);
  CHECK(take_names(box).size() == above + 41);
  // Once it has applied them, it no longer lags.
  REQUIRE(run_on_cpu(cpus[0], [&] {
    box.applied(above + 41);
    push_range(box, 100, 100 + above + 1);
  }));
  CHECK(box.yields() == 10);
}

TEST_CASE("callers on other cores, never-wait or after close never give way") {
  auto cpus = allowed_cpus();
  REQUIRE_FALSE(cpus.empty());
  constexpr int above = 8;
  SECTION("the consumer has not applied anything yet") {
    command_inbox box{0, 0, above};
    REQUIRE(run_on_cpu(cpus[0], [&] { push_range(box, 0, 100); }));
    CHECK(box.yields() == 0);
  }
  SECTION("giving way is off") {
    command_inbox box{0, 0, 0};
    REQUIRE(run_on_cpu(cpus[0], [&] {
      box.applied(0);
      push_range(box, 0, 100);
    }));
    CHECK(box.yields() == 0);
  }
  SECTION("a never-wait thread") {
    command_inbox box{0, 0, above};
    REQUIRE(run_on_cpu(cpus[0], [&] {
      box.applied(0);
      command_inbox::never_wait_on_this_thread();
      push_range(box, 0, 100);
    }));
    CHECK(box.yields() == 0);
  }
  SECTION("a closed inbox") {
    command_inbox box{0, 0, above};
    box.close();
    REQUIRE(run_on_cpu(cpus[0], [&] {
      box.applied(0);
      push_range(box, 0, 100);
    }));
    CHECK(box.yields() == 0);
  }
  SECTION("a caller on another core") {
    if (cpus.size() < 2) {
      WARN("one core only: nothing to check");
      return;
    }
    command_inbox box{0, 0, above};
    REQUIRE(run_on_cpu(cpus[0], [&] { box.applied(0); }));
    REQUIRE(run_on_cpu(cpus[1], [&] { push_range(box, 0, 100); }));
    CHECK(box.yields() == 0);
  }
}
