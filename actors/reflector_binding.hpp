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
#pragma once

#include <atomic>
#include <memory>
#include <utility>

#include "podref/runtime/detail/object_slot.hpp"

namespace podref {

class reflector_binding {
public:
  /// Binds the actor to `slot`; false if the actor is dead.
  bool assign(const std::shared_ptr<detail::object_slot>& slot) noexcept {
    guard g{lock_};
    if (dead_)
      return false;
    slot_ = slot;
    return true;
  }

  /// Unbinds the actor (parked: its failure concerns no object).
  void clear() noexcept {
    guard g{lock_};
    slot_.reset();
  }

  /// Marks the actor dead and returns the object it served, if any and if
  /// that object is still referenced (its slot alive).
  std::shared_ptr<detail::object_slot> bury() noexcept {
    std::weak_ptr<detail::object_slot> slot;
    {
      guard g{lock_};
      dead_ = true;
      slot = std::move(slot_);
    }
    return slot.lock();
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
  std::weak_ptr<detail::object_slot> slot_;
};

using reflector_binding_ptr = std::shared_ptr<reflector_binding>;

} // namespace podref
