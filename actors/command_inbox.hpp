// command_inbox: registrations travel from caller threads to the manager
// actor through a ring of tickets.
//
// An actor message per registration costs the manager's thread more than
// applying the registration does (CAF 0.17: ~0.5 us of mailbox, dispatch and
// scheduling per message against ~0.2 us of bookkeeping), and that thread
// serves the whole node. Callers push commands here instead; the manager is
// woken by one message when it waits for the next command and reads the
// commands in ticket order.
//
// Why a ring: a push draws a ticket (one fetch_add) and stores its
// registration in the ring's slot for that ticket, so the consumer finds
// the next commands at known addresses and loads several at once. A linked
// list (a lock-free stack) makes it follow one pointer per command, each a
// cache miss on a line the caller's core just wrote: measured with perf,
// 27% of the manager's time when it registered pods for one caller thread.
//
// A ticket's slot is free once the consumer has applied the ticket one lap
// before. A push that finds it taken (an unbounded inbox, or threads that
// never wait, far ahead of the consumer) goes to a spill list instead, with
// its ticket; the consumer merges both by ticket, so order never depends
// on where a command waited.
//
// Back-pressure: an inbox may be bounded. Callers that push while more than
// `max_unapplied` commands are pushed and not yet applied wait until the
// consumer has brought the backlog down to half of it, so a node whose
// callers outrun the manager holds a bounded backlog instead of growing
// without limit. Threads marked with never_wait_on_this_thread() (the
// scheduler's workers, which run the consumer) never wait: a worker waiting
// for the manager could be the thread the manager needs.
//
// Release back-pressure: stopping an object's actor costs the engine
// several times what the caller's unregister_pod costs, so callers that
// release many pods in a row (a node draining) leave the manager and the
// reflectors far behind, and the objects' actors keep running well after
// the last call returned. An inbox may therefore also bound the
// unregistrations waiting: an unregister pushed while at least
// `max_unapplied_releases` of them are unapplied and they make up 7/8 of
// the backlog or more waits until they are down to half the bound (or no
// longer most of the backlog). Registrations never wait for it, nor do
// unregistrations mixed with registrations (churn), whose work the
// manager catches up with cheaply; a release-heavy backlog is what drains
// slowly.
//
// Giving way: with more busy threads than cores, the kernel shares each core
// evenly between the threads on it, and the manager, one thread applying
// the commands of every caller, gets no more than each caller: at two
// callers on two cores about 2/3 of a core, while it needs ~0.8 of one to
// keep up (measured: register at two callers was limited by it, at ~2.2 M
// pods/s whatever the callers saved). So while more than `yield_above`
// commands are unapplied, every 4th push checks whether its thread runs on
// the core the consumer last applied on (published once per batch), and
// if so yields it (sched_yield): the consumer, waiting in that core's run
// queue, runs instead. A caller on another core does not yield (it would
// not help the consumer, only cost the caller a system call), so one
// caller beside an idle core never slows down. Threads marked never-wait
// never yield, nor does anyone once the inbox is closed.
//
// Contract:
// - push() from any number of threads. Ticket order is one linearised
//   order of all pushes: a push that returned before another began has the
//   smaller ticket. It returns true iff the consumer parked waiting for
//   this ticket; the caller must then wake the consumer.
// - The consumer reads in ticket order: try_pop() gives the next command
//   once its push has stored it. A ticket is drawn before its registration
//   is stored, so for an instant the next command may be missing while
//   later ones are there: catching up with pushes that happened before
//   (a sync, a read) waits for it (wait_for_next()), a drain parks.
// - park() when the next command is missing: the push of its ticket wakes
//   the consumer, unless park() returns false (it arrived meanwhile).
// - applied(n) on the consumer after applying n commands.
// - close() releases every waiting caller for good (shutdown, or the
//   consumer is gone); later pushes never wait.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "podref/messages/pod_registration.hpp"

namespace podref::detail {

/// What a caller asks of the manager. In the inbox a command is its
/// registration (see pod_registration's transit link): no node per call.
struct command {
  enum class kind : std::uint8_t { reg, unreg };

  kind what = kind::reg;
  pod_registration_ptr reg;
};

class command_inbox {
public:
  /// An inbox whose callers wait above `max_unapplied` commands (0: never),
  /// with a ring of `ring_slots` (rounded up to a power of two; 0: enough
  /// for the bound, 64k for an unbounded inbox), whose callers give way to
  /// the consumer above `yield_above` commands (0: never), and whose
  /// unregistrations wait above `max_unapplied_releases` unapplied ones
  /// making up most of the backlog (0: never; see above).
  explicit command_inbox(std::size_t max_unapplied = 0,
                         std::size_t ring_slots = 0,
                         std::size_t yield_above = 0,
                         std::size_t max_unapplied_releases = 0);

  command_inbox(const command_inbox&) = delete;
  command_inbox& operator=(const command_inbox&) = delete;

  /// Frees commands nobody took.
  ~command_inbox();

  // -- callers ------------------------------------------------------------------

  /// Pushes a command, first waiting while the backlog is over the bound
  /// (see above); true iff the consumer waits for it. `reg` must not be
  /// waiting in an inbox already (make a registration per call, as the
  /// facade does).
  bool push(command::kind what, pod_registration_ptr reg);

  /// Releases waiting callers; no push waits any more.
  void close();

  /// Pushed and not yet applied.
  std::int64_t unapplied() const noexcept {
    return static_cast<std::int64_t>(tickets_.load(std::memory_order_relaxed)
                                     - applied_.load(
                                       std::memory_order_relaxed));
  }

  /// Unregistrations pushed and not yet applied (an estimate while pushes
  /// and applies go on).
  std::int64_t unapplied_releases() const noexcept {
    return static_cast<std::int64_t>(
      releases_.load(std::memory_order_relaxed)
      - releases_applied_.load(std::memory_order_relaxed));
  }

  /// Callers that waited for room (for stats and tests).
  std::uint64_t waits() const noexcept {
    return waits_.load(std::memory_order_relaxed);
  }

  /// Pushes that gave way to the consumer (for stats and tests).
  std::uint64_t yields() const noexcept {
    return yields_.load(std::memory_order_relaxed);
  }

  /// Pushes that found their ring slot taken (for stats and tests).
  std::uint64_t spills() const noexcept {
    return spills_.load(std::memory_order_relaxed);
  }

  /// Marks the calling thread as one that must never wait in push().
  static void never_wait_on_this_thread() noexcept;

  // -- the consumer -------------------------------------------------------------

  /// Moves the next command into `out`; false if its push has not stored
  /// it yet (or nothing is pushed).
  bool try_pop(command& out) noexcept {
    auto& s = ring_[next_ & mask_];
    if (s.stamp.load(std::memory_order_acquire) != next_ + 1)
      return try_pop_spilled(out);
    take(s.reg.load(std::memory_order_relaxed), out);
    return true;
  }

  /// The registration of the command `k` places after the next one if it
  /// is in the ring already, else null: a hint, for loading ahead.
  const pod_registration* peek(std::size_t k) const noexcept {
    auto ticket = next_ + k;
    const auto& s = ring_[ticket & mask_];
    return s.stamp.load(std::memory_order_acquire) == ticket + 1
             ? s.reg.load(std::memory_order_relaxed)
             : nullptr;
  }

  /// Tickets drawn so far: pushes that began (a snapshot: pushes go on).
  std::uint64_t drawn() const noexcept {
    return tickets_.load(std::memory_order_acquire);
  }

  /// Tickets popped so far; the next command's ticket.
  std::uint64_t popped() const noexcept {
    return next_;
  }

  /// True if every ticket drawn so far was popped (a hint: pushes go on).
  bool idle() const noexcept {
    return next_ == drawn();
  }

  /// Waits until the next command is stored; requires it to be pushed
  /// (e.g. !idle()). Its push is a few instructions from storing it,
  /// unless its thread was preempted there.
  void wait_for_next() noexcept;

  /// Asks the push of the next ticket to wake the consumer: that push
  /// returns true. False if the next command arrived meanwhile: then nobody
  /// wakes the consumer, go on.
  bool park() noexcept;

  /// The consumer applied `n` commands it popped; the unregistrations
  /// among all it popped so far count as applied from now on.
  void applied(std::size_t n);

private:
  struct slot {
    /// Ticket + 1 of the command in reg; 0 for none yet.
    std::atomic<std::uint64_t> stamp;
    /// Written before stamp, read after it (relaxed: the stamp orders it).
    std::atomic<const pod_registration*> reg;
  };

  static constexpr std::uint64_t nobody = ~std::uint64_t{0};

  void wait_for_room();

  /// Whether an unregistration pushed now waits (release back-pressure).
  bool release_heavy(std::int64_t backlog) const noexcept;

  /// Waits until release_heavy() no longer holds at half the bound.
  void wait_for_releases();

  /// Whether a waiting caller may go on (either kind of wait).
  bool room() const noexcept;

  /// Yields the core if the consumer lags and last ran on it ("Giving
  /// way" above; the readers' give_way.hpp yields by another signal).
  void yield_to_consumer() noexcept;

  /// Hands the registration's own reference to `out`.
  void take(const pod_registration* x, command& out) noexcept;

  /// The next command from the spill list, if it waits there.
  bool try_pop_spilled(command& out) noexcept;

  /// Whether the next command waits in the spill list (moving the list
  /// into spilled_taken_ to find out).
  bool spilled_next() noexcept;

  /// Whether the next command's push has stored it (ring or spill list).
  bool next_stored() noexcept;

  // Callers and the consumer write different lines, but for the ticket
  // the consumer parks on (once per batch, next to the tickets it reads
  // once per batch).

  /// Tickets drawn (written by callers only).
  alignas(64) std::atomic<std::uint64_t> tickets_{0};
  /// Unregistrations pushed (by callers, next to the tickets they draw).
  std::atomic<std::uint64_t> releases_{0};
  /// The ticket the parked consumer waits for, or nobody.
  std::atomic<std::uint64_t> waiting_for_{0};
  /// Registrations whose slot was taken, newest first, linked through
  /// their transit links (written by callers; taken by the consumer).
  alignas(64) std::atomic<const pod_registration*> spill_{nullptr};
  /// Commands applied, and the core the consumer applied the last batch
  /// on (-1: none yet). Written by the consumer only, once per batch; on
  /// the line a push reads anyway.
  alignas(64) std::atomic<std::uint64_t> applied_{0};
  std::atomic<std::uint64_t> releases_applied_{0};
  std::atomic<int> consumer_cpu_{-1};
  /// Callers inside wait_for_room(); the consumer locks only when nonzero.
  alignas(64) std::atomic<int> waiters_{0};
  std::atomic<bool> closed_{false};
  std::atomic<std::uint64_t> waits_{0};
  std::atomic<std::uint64_t> spills_{0};
  std::atomic<std::uint64_t> yields_{0};
  const std::int64_t max_unapplied_;
  const std::int64_t yield_above_;
  const std::int64_t max_releases_;
  const std::uint64_t mask_;
  std::unique_ptr<slot[]> ring_;
  std::mutex room_lock_;
  std::condition_variable room_;
  /// The consumer's: the next ticket, and the spilled commands it took
  /// from spill_, the smallest ticket last.
  alignas(64) std::uint64_t next_ = 0;
  /// Unregistrations popped (published by applied()).
  std::uint64_t releases_popped_ = 0;
  std::vector<const pod_registration*> spilled_taken_;
};

} // namespace podref::detail
