#include "podref/runtime/detail/command_inbox.hpp"

#include <cassert>
#include <utility>

namespace podref::detail {

namespace {

/// Drops the inbox's references of a list of waiting registrations.
void free_list(const pod_registration* x) noexcept {
  command_batch drop{x};
}

} // namespace

command_batch& command_batch::operator=(command_batch&& other) noexcept {
  free_list(std::exchange(first_, std::exchange(other.first_, nullptr)));
  return *this;
}

command_batch::~command_batch() {
  while (first_ != nullptr)
    pop();
}

command_inbox::~command_inbox() {
  free_list(head_.load(std::memory_order_acquire));
}

namespace {

thread_local bool never_wait = false;

} // namespace

void command_inbox::never_wait_on_this_thread() noexcept {
  never_wait = true;
}

bool command_inbox::push(command::kind what, pod_registration_ptr reg) {
  // Concurrent callers may all pass the check: the bound is exceeded by at
  // most one command per caller thread.
  if (max_unapplied_ > 0 && !never_wait && unapplied() >= max_unapplied_
      && !closed_.load(std::memory_order_relaxed))
    wait_for_room();
  pushed_.fetch_add(1, std::memory_order_relaxed);
  const auto* x = reg.get();
  auto& link = x->transit_;
  // A registration waits in one inbox at a time: a second push would link
  // it to itself.
  assert(!link.self && "registration already waiting in an inbox");
  link.kind = static_cast<std::uint8_t>(what);
  link.self = std::move(reg);
  auto* head = head_.load(std::memory_order_relaxed);
  do {
    link.next = head;
    // Release: the consumer that takes x sees the registration and link.
  } while (!head_.compare_exchange_weak(head, x, std::memory_order_release,
                                        std::memory_order_relaxed));
  return head == nullptr;
}

void command_inbox::wait_for_room() {
  waits_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> guard{room_lock_};
  // Seq_cst with applied(): either it sees this waiter or the predicate
  // below sees its decrement, so no wake-up is lost.
  waiters_.fetch_add(1);
  room_.wait(guard, [this] {
    return closed_.load()
           || pushed_.load() - applied_.load() <= max_unapplied_ / 2;
  });
  guard.unlock();
  waiters_.fetch_sub(1);
}

void command_inbox::applied(std::size_t n) {
  // Only the consumer writes applied_. Seq_cst with wait_for_room():
  // either it sees this waiter or the waiter's predicate sees the count.
  applied_.store(applied_.load(std::memory_order_relaxed)
                 + static_cast<std::int64_t>(n));
  if (waiters_.load() > 0 && unapplied() <= max_unapplied_ / 2) {
    std::lock_guard<std::mutex> guard{room_lock_};
    room_.notify_all();
  }
}

void command_inbox::close() {
  closed_.store(true);
  if (waiters_.load() > 0) {
    std::lock_guard<std::mutex> guard{room_lock_};
    room_.notify_all();
  }
}

command_batch command_inbox::take() noexcept {
  // Acquire pairs with the pushes' release. Taking the whole stack at once
  // means no node is ever popped alone, so there is no ABA problem.
  auto* newest = head_.exchange(nullptr, std::memory_order_acquire);
  // The stack holds the newest first: reverse it into push order.
  const pod_registration* oldest = nullptr;
  while (newest != nullptr) {
    auto& link = newest->transit_;
    auto* next = link.next;
    link.next = oldest;
    oldest = newest;
    newest = next;
  }
  return command_batch{oldest};
}

} // namespace podref::detail
