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
// Back-pressure: an inbox may be bounded. Callers that push while more than
// `max_unapplied` commands are pushed and not yet applied wait until the
// consumer has brought the backlog down to half of it, so a node whose
// callers outrun the manager holds a bounded backlog instead of growing
// without limit. Threads marked with never_wait_on_this_thread() (the
// scheduler's workers, which run the consumer) never wait: a worker waiting
// for the manager could be the thread the manager needs.
//
// Contract:
// - push() from any number of threads; it returns true iff the inbox was
//   empty, and then the caller must wake the consumer;
// - take() on the consumer only: every command pushed before it (happens
//   before it), in push order per producer and in one linearised order
//   overall; anything the consumer must order after a caller's pushes (a
//   sync, a read) takes first;
// - applied(n) on the consumer after applying n taken commands;
// - close() releases every waiting caller for good (shutdown, or the
//   consumer is gone); later pushes never wait.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "podref/messages/pod_registration.hpp"

namespace podref::detail {

/// What a caller asks of the manager. In the inbox a command is its
/// registration (see pod_registration's transit link): no node per call.
struct command {
  enum class kind : std::uint8_t { reg, unreg };

  kind what = kind::reg;
  pod_registration_ptr reg;
};

/// A FIFO list of commands owned by the consumer.
class command_batch {
public:
  command_batch() = default;

  explicit command_batch(const pod_registration* first) noexcept
    : first_(first) {
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
  command pop() noexcept {
    auto& link = first_->transit_;
    first_ = link.next;
    link.next = nullptr;
    return {static_cast<command::kind>(link.kind), std::move(link.self)};
  }

private:
  const pod_registration* first_ = nullptr;
};

class command_inbox {
public:
  /// An inbox whose callers wait above `max_unapplied` commands (0: never).
  explicit command_inbox(std::size_t max_unapplied = 0) noexcept
    : max_unapplied_(static_cast<std::int64_t>(max_unapplied)) {
    // nop
  }

  command_inbox(const command_inbox&) = delete;
  command_inbox& operator=(const command_inbox&) = delete;

  /// Frees commands nobody took.
  ~command_inbox();

  /// Pushes a command, first waiting while the backlog is over the bound
  /// (see above); true iff the inbox was empty. `reg` must not be waiting
  /// in an inbox already (make a registration per call, as the facade
  /// does).
  bool push(command::kind what, pod_registration_ptr reg);

  /// The consumer applied `n` commands it took.
  void applied(std::size_t n);

  /// Releases waiting callers; no push waits any more.
  void close();

  /// Pushed and not yet applied.
  std::int64_t unapplied() const noexcept {
    return pushed_.load(std::memory_order_relaxed)
           - applied_.load(std::memory_order_relaxed);
  }

  /// Callers that waited for room (for stats and tests).
  std::uint64_t waits() const noexcept {
    return waits_.load(std::memory_order_relaxed);
  }

  /// Marks the calling thread as one that must never wait in push().
  static void never_wait_on_this_thread() noexcept;

  /// Everything pushed so far, oldest first.
  command_batch take() noexcept;

  /// True if nothing is waiting (a hint for the consumer).
  bool idle() const noexcept {
    return head_.load(std::memory_order_acquire) == nullptr;
  }

private:
  void wait_for_room();

  // Callers and the consumer write different cache lines: a consumer that
  // keeps up takes batches of one or two commands, and every line both
  // sides write moves between their cores once per command.

  /// The newest command; each links to the one pushed before it.
  alignas(64) std::atomic<const pod_registration*> head_{nullptr};
  /// Commands pushed (written by callers only).
  alignas(64) std::atomic<std::int64_t> pushed_{0};
  /// Commands applied (written by the consumer only, once per batch).
  alignas(64) std::atomic<std::int64_t> applied_{0};
  /// Callers inside wait_for_room(); the consumer locks only when nonzero.
  alignas(64) std::atomic<int> waiters_{0};
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> waits_{0};
  const std::int64_t max_unapplied_;
  std::mutex room_lock_;
  std::condition_variable room_;
};

} // namespace podref::detail
