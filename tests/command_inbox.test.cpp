// The command inbox between caller threads and the manager: push order,
// batches, and back-pressure (bounded backlog, waiting callers released by
// the consumer or by close, worker threads that never wait).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "podref/runtime/detail/command_inbox.hpp"

using namespace podref;
using detail::command;
using detail::command_inbox;

namespace {

pod_registration_ptr reg(int i) {
  return make_registration("ns", "pod-" + std::to_string(i), "uid", {});
}

/// Takes everything and returns the pod names in batch order, each with
/// "-" appended for an unregistration.
std::vector<std::string> take_names(command_inbox& box) {
  std::vector<std::string> res;
  auto batch = box.take();
  while (!batch.empty()) {
    auto cmd = batch.pop();
    res.emplace_back(cmd.reg->name());
    if (cmd.what == command::kind::unreg)
      res.back() += '-';
  }
  return res;
}

/// Waits until `cond` holds; the condition is another thread's progress.
template <class Cond>
void wait_until(Cond cond) {
  while (!cond())
    std::this_thread::yield();
}

} // namespace

TEST_CASE("commands come out in push order; only the first push wakes") {
  command_inbox box;
  CHECK(box.idle());
  CHECK(box.push(command::kind::reg, reg(0)));
  CHECK_FALSE(box.push(command::kind::unreg, reg(1)));
  CHECK_FALSE(box.push(command::kind::reg, reg(2)));
  CHECK(box.unapplied() == 3);
  CHECK(take_names(box)
        == std::vector<std::string>{"pod-0", "pod-1-", "pod-2"});
  CHECK(box.idle());
  // Taken is not applied: the backlog shrinks only when the consumer says.
  CHECK(box.unapplied() == 3);
  box.applied(3);
  CHECK(box.unapplied() == 0);
  CHECK(box.push(command::kind::reg, reg(3)));
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
      auto batch = box.take();
      auto cmd = batch.pop();
      CHECK(cmd.reg.use_count() == 1); // the inbox's reference, handed over
      CHECK_FALSE(second.expired());   // still waiting in the batch
    }
    CHECK(first.expired());
    CHECK(second.expired()); // the batch dropped what nobody took
    auto z = reg(2);
    first = z;
    box.push(command::kind::reg, std::move(z));
  }
  CHECK(first.expired()); // the inbox dropped what nobody took
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
