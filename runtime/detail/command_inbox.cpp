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

bool command_inbox::push(command::kind what, pod_registration_ptr reg) {
  auto* x = new command{what, std::move(reg), nullptr};
  auto* head = head_.load(std::memory_order_relaxed);
  do {
    x->next = head;
    // Release: the consumer that takes x sees the registration it carries.
  } while (!head_.compare_exchange_weak(head, x, std::memory_order_release,
                                        std::memory_order_relaxed));
  return head == nullptr;
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
