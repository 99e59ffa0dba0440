// reflector_binding: which object a reflector actor serves, for the report
// of its failure.
//
// Problem: a pooled reflector actor serves one object after another, but the
// functor that reports its failure to the manager is attached once, when the
// actor is spawned. The manager (re)assigns the actor on its own thread; the
// functor runs on the actor's thread when it dies. The binding is what both
// share: the manager assigns the object's slot when it activates the actor
// and clears it when it parks it; the functor takes it at death.
//
// Guarantees: a failure is reported for the object assigned last before the
// death, or not at all when the actor was parked; once dead, the binding
// refuses new assignments, so the manager never hands an object to a dead
// pooled actor. The lock is per binding and held for a pointer copy.
//
// The binding also counts the objects assigned to the actor that it has
// not taken up yet (activated()): an actor that dies with an activation
// still queued never counted it as started, and whoever buries the actor
// must account for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "podref/read_side/object_slot.hpp"

namespace podref {

class reflector_binding {
public:
  /// Binds the actor to `slot`; false if the actor is dead.
  bool assign(const std::shared_ptr<detail::object_slot>& slot) noexcept {
    guard g{lock_};
    if (dead_)
      return false;
    slot_ = slot;
    ++pending_;
    return true;
  }

  /// The actor took up one assigned object (counted itself as started).
  void activated() noexcept {
    guard g{lock_};
    if (pending_ > 0)
      --pending_;
  }

  /// Unbinds the actor (parked: its failure concerns no object).
  void clear() noexcept {
    guard g{lock_};
    slot_.reset();
  }

  /// What bury() found.
  struct remains {
    /// The object served, if any and if still referenced (its slot alive).
    std::shared_ptr<detail::object_slot> slot;
    /// Objects assigned to the actor that it never took up: activations
    /// counted as spawned but never as started.
    std::uint32_t lost_activations = 0;
  };

  /// Marks the actor dead and returns what it was bound to.
  remains bury() noexcept {
    std::weak_ptr<detail::object_slot> slot;
    std::uint32_t lost;
    {
      guard g{lock_};
      dead_ = true;
      lost = std::exchange(pending_, 0);
      slot = std::move(slot_);
    }
    return {slot.lock(), lost};
  }

private:
  struct guard {
    explicit guard(std::atomic_flag& f) noexcept : flag(f) {
      while (flag.test_and_set(std::memory_order_acquire)) {
        // Held for a pointer copy by the manager or the dying actor.
      }
    }
    ~guard() {
      flag.clear(std::memory_order_release);
    }
    std::atomic_flag& flag;
  };

  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  bool dead_ = false;
  std::uint32_t pending_ = 0;
  std::weak_ptr<detail::object_slot> slot_;
};

using reflector_binding_ptr = std::shared_ptr<reflector_binding>;

} // namespace podref
