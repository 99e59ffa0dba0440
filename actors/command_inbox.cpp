#include "podref/actors/command_inbox.hpp"

#include <algorithm>
#include <cassert>
#include <thread>
#include <utility>

#include <sched.h>


namespace podref::detail {

namespace {

thread_local bool never_wait = false;

/// Pushes of this thread that found a consumer lagging; every 4th checks
/// whether to yield to it (a check that yields for nothing costs a system
/// call).
thread_local unsigned lagging_pushes = 0;

/// Ring slots by default: room for the whole bounded backlog (at least 1k
/// slots, 16 KB), so only the few pushes past the bound (one per caller
/// thread) and never-waiting threads far ahead may spill; 64k slots (1 MB)
/// for an unbounded inbox.
std::size_t ring_size(std::size_t max_unapplied, std::size_t asked) {
  std::size_t want = asked != 0          ? asked
                     : max_unapplied > 0 ? std::max(max_unapplied,
                                                    std::size_t{1024})
                                         : std::size_t{1} << 16;
  std::size_t n = 1;
  while (n < want)
    n <<= 1;
  return n;
}

/// The link's tag: ticket and kind in one word.
std::uint64_t tag_of(std::uint64_t ticket, command::kind what) noexcept {
  return ticket << 1 | static_cast<std::uint64_t>(what);
}

std::uint64_t ticket_of(std::uint64_t tag) noexcept {
  return tag >> 1;
}

} // namespace

command_inbox::command_inbox(std::size_t max_unapplied, std::size_t ring_slots,
                             std::size_t yield_above,
                             std::size_t max_unapplied_releases)
  : max_unapplied_(static_cast<std::int64_t>(max_unapplied)),
    yield_above_(static_cast<std::int64_t>(yield_above)),
    max_releases_(static_cast<std::int64_t>(max_unapplied_releases)),
    mask_(ring_size(max_unapplied, ring_slots) - 1),
    ring_(new slot[mask_ + 1]) {
  for (std::uint64_t i = 0; i <= mask_; ++i) {
    ring_[i].stamp.store(0, std::memory_order_relaxed);
    ring_[i].reg.store(nullptr, std::memory_order_relaxed);
  }
}

command_inbox::~command_inbox() {
  // Nobody pushes or pops any more: drop what waits, wherever it waits.
  command cmd;
  for (auto end = tickets_.load(std::memory_order_acquire); next_ != end;)
    if (!try_pop(cmd))
      ++next_; // drawn but never stored: its push did not complete
}

void command_inbox::never_wait_on_this_thread() noexcept {
  never_wait = true;
}

bool command_inbox::push(command::kind what, pod_registration_ptr reg) {
  if (!never_wait) {
    // Concurrent callers may all pass the check: the bound is exceeded by
    // at most one command per caller thread.
    auto backlog = unapplied();
    if (max_unapplied_ > 0 && backlog >= max_unapplied_
        && !closed_.load(std::memory_order_relaxed))
      wait_for_room();
    else if (what == command::kind::unreg && release_heavy(backlog)
             && !closed_.load(std::memory_order_relaxed))
      wait_for_releases();
    else if (yield_above_ > 0 && backlog > yield_above_)
      yield_to_consumer();
  }
  if (what == command::kind::unreg)
    releases_.fetch_add(1, std::memory_order_relaxed);
  const auto* x = reg.get();
  auto& link = x->transit();
  // A registration waits in one inbox at a time: a second push would
  // overwrite the link of the first.
  assert(!link.self && "registration already waiting in an inbox");
  link.self = std::move(reg);
  auto ticket = tickets_.fetch_add(1, std::memory_order_relaxed);
  link.tag = tag_of(ticket, what);
  // The slot's previous command (one lap back) is gone once it is applied.
  // Seq_cst stores: against park(), whose store and load are in the other
  // order, either this push sees the consumer parked or it sees the command.
  if (ticket - applied_.load(std::memory_order_acquire) <= mask_) {
    auto& s = ring_[ticket & mask_];
    s.reg.store(x, std::memory_order_relaxed);
    s.stamp.store(ticket + 1);
  } else {
    spills_.fetch_add(1, std::memory_order_relaxed);
    auto* head = spill_.load(std::memory_order_relaxed);
    do {
      link.next = head;
    } while (!spill_.compare_exchange_weak(head, x));
  }
  auto parked = ticket;
  return waiting_for_.load() == ticket
         && waiting_for_.compare_exchange_strong(parked, nobody);
}

void command_inbox::wait_for_room() {
  waits_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> guard{room_lock_};
  // Seq_cst with applied(): either it sees this waiter or the predicate
  // below sees its decrement, so no wake-up is lost.
  waiters_.fetch_add(1);
  room_.wait(guard, [this] {
    return closed_.load()
           || static_cast<std::int64_t>(tickets_.load() - applied_.load())
                <= max_unapplied_ / 2;
  });
  guard.unlock();
  waiters_.fetch_sub(1);
}

bool command_inbox::release_heavy(std::int64_t backlog) const noexcept {
  if (max_releases_ <= 0)
    return false;
  auto releases = unapplied_releases();
  return releases >= max_releases_ && releases * 8 >= backlog * 7;
}

void command_inbox::wait_for_releases() {
  waits_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> guard{room_lock_};
  waiters_.fetch_add(1); // seq_cst with applied(), as in wait_for_room()
  room_.wait(guard, [this] {
    if (closed_.load())
      return true;
    auto releases = static_cast<std::int64_t>(releases_.load()
                                              - releases_applied_.load());
    auto backlog = static_cast<std::int64_t>(tickets_.load()
                                             - applied_.load());
    return releases <= max_releases_ / 2 || releases * 8 < backlog * 7;
  });
  guard.unlock();
  waiters_.fetch_sub(1);
}

bool command_inbox::room() const noexcept {
  auto backlog = unapplied();
  if (max_unapplied_ > 0 && backlog <= max_unapplied_ / 2)
    return true;
  auto releases = unapplied_releases();
  return max_releases_ > 0
         && (releases <= max_releases_ / 2 || releases * 8 < backlog * 7);
}

void command_inbox::yield_to_consumer() noexcept {
  if (++lagging_pushes % 4 != 0 || closed_.load(std::memory_order_relaxed))
    return;
  auto cpu = sched_getcpu();
  if (cpu < 0 || cpu != consumer_cpu_.load(std::memory_order_relaxed))
    return;
  yields_.fetch_add(1, std::memory_order_relaxed);
  sched_yield();
}

void command_inbox::close() {
  closed_.store(true);
  if (waiters_.load() > 0) {
    std::lock_guard<std::mutex> guard{room_lock_};
    room_.notify_all();
  }
}

void command_inbox::take(const pod_registration* x, command& out) noexcept {
  auto& link = x->transit();
  out.what = static_cast<command::kind>(link.tag & 1);
  out.reg = std::move(link.self);
  if (out.what == command::kind::unreg)
    ++releases_popped_;
  ++next_;
}

bool command_inbox::spilled_next() noexcept {
  auto is_next = [this] {
    return !spilled_taken_.empty()
           && ticket_of(spilled_taken_.back()->transit().tag) == next_;
  };
  if (is_next())
    return true;
  auto* x = spill_.exchange(nullptr);
  if (x == nullptr)
    return false;
  for (; x != nullptr; x = std::exchange(x->transit().next, nullptr))
    spilled_taken_.push_back(x);
  std::sort(spilled_taken_.begin(), spilled_taken_.end(),
            [](const pod_registration* a, const pod_registration* b) {
              return a->transit().tag > b->transit().tag;
            });
  return is_next();
}

bool command_inbox::try_pop_spilled(command& out) noexcept {
  if (!spilled_next())
    return false;
  auto* x = spilled_taken_.back();
  spilled_taken_.pop_back();
  take(x, out);
  return true;
}

bool command_inbox::next_stored() noexcept {
  return ring_[next_ & mask_].stamp.load() == next_ + 1 || spilled_next();
}

void command_inbox::wait_for_next() noexcept {
  assert(!idle());
  while (!next_stored())
    std::this_thread::yield();
}

bool command_inbox::park() noexcept {
  // Seq_cst: against push(), whose store and load are in the other order,
  // either it sees the consumer parked or this sees its command.
  waiting_for_.store(next_);
  if (!next_stored())
    return true;
  // It came meanwhile: take the wake-up back unless its push already did.
  auto parked = next_;
  return !waiting_for_.compare_exchange_strong(parked, nobody);
}

void command_inbox::applied(std::size_t n) {
  // Only the consumer writes applied_. Seq_cst with wait_for_room():
  // either it sees this waiter or the waiter's predicate sees the count.
  if (yield_above_ > 0)
    consumer_cpu_.store(sched_getcpu(), std::memory_order_relaxed);
  releases_applied_.store(releases_popped_, std::memory_order_relaxed);
  applied_.store(applied_.load(std::memory_order_relaxed) + n);
  if (waiters_.load() > 0 && room()) {
    std::lock_guard<std::mutex> guard{room_lock_};
    room_.notify_all();
  }
}

} // namespace podref::detail
