#include "podref/runtime/detail/command_inbox.hpp"

#include <utility>

namespace podref::detail {

namespace {

void free_list(command* x) noexcept {
  while (x != nullptr)
    delete std::exchange(x, x->next);
}

} // namespace

command_batch& command_batch::operator=(command_batch&& other) noexcept {
  free_list(first_);
  first_ = std::exchange(other.first_, nullptr);
  return *this;
}

command_batch::~command_batch() {
  free_list(first_);
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
  auto* x = new command{what, std::move(reg), nullptr};
  auto* head = head_.load(std::memory_order_relaxed);
  do {
    x->next = head;
    // Release: the consumer that takes x sees the registration it carries.
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
  command* oldest = nullptr;
  while (newest != nullptr) {
    auto* next = newest->next;
    newest->next = oldest;
    oldest = newest;
    newest = next;
  }
  return command_batch{oldest};
}

} // namespace podref::detail
