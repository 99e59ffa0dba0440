// command_inbox: registrations travel from caller threads to the manager
// actor in batches.
//
// An actor message per registration costs the manager's thread more than
// applying the registration does (CAF 0.17: ~0.5 us of mailbox, dispatch and
// scheduling per message against ~0.2 us of bookkeeping), and that thread
// serves the whole node. Callers push commands onto this lock-free stack
// instead; only the push that finds it empty wakes the manager with one
// message, and the manager takes everything pushed so far at once.
//
// Contract:
// - push() from any number of threads; it returns true iff the inbox was
//   empty, and then the caller must wake the consumer;
// - take() on the consumer only: every command pushed before it (happens
//   before it), in push order per producer and in one linearised order
//   overall; anything the consumer must order after a caller's pushes (a
//   sync, a read) takes first.
#pragma once

#include <atomic>
#include <cstdint>

#include "podref/messages/pod_registration.hpp"

namespace podref::detail {

struct command {
  enum class kind : std::uint8_t { reg, unreg };

  kind what = kind::reg;
  pod_registration_ptr reg;
  command* next = nullptr;
};

/// A FIFO list of commands owned by the consumer.
class command_batch {
public:
  command_batch() = default;

  explicit command_batch(command* first) noexcept : first_(first) {
    // nop
  }

  command_batch(command_batch&& other) noexcept : first_(other.first_) {
    other.first_ = nullptr;
  }

  command_batch& operator=(command_batch&& other) noexcept;

  command_batch(const command_batch&) = delete;
  command_batch& operator=(const command_batch&) = delete;

  ~command_batch();

  bool empty() const noexcept {
    return first_ == nullptr;
  }

  /// Removes the oldest command and hands it to the caller; requires
  /// !empty().
  command* pop() noexcept {
    auto* x = first_;
    first_ = x->next;
    x->next = nullptr;
    return x;
  }

private:
  command* first_ = nullptr;
};

class command_inbox {
public:
  command_inbox() = default;

  command_inbox(const command_inbox&) = delete;
  command_inbox& operator=(const command_inbox&) = delete;

  /// Frees commands nobody took.
  ~command_inbox();

  /// Pushes a command; true iff the inbox was empty.
  bool push(command::kind what, pod_registration_ptr reg);

  /// Everything pushed so far, oldest first.
  command_batch take() noexcept;

  /// True if nothing is waiting (a hint for the consumer).
  bool idle() const noexcept {
    return head_.load(std::memory_order_acquire) == nullptr;
  }

private:
  /// The newest command; each links to the one pushed before it.
  std::atomic<command*> head_{nullptr};
};

} // namespace podref::detail
