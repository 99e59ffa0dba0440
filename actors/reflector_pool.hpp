// reflector_pool: idle reflector actors of one manager, kept for reuse.
//
// Starting a reflector as a new CAF actor costs a spawn, and stopping it a
// termination (several microseconds each, CAF 0.17); a parked reflector
// costs one message to park and one to activate again. The manager parks a
// reflector whose object lost its last reference instead of stopping it,
// as long as the pool has room, and activates a parked one for the next new
// object. The pool is bounded; drain() stops everything in it (the manager
// drains it when no object is referenced and no command waits, and on
// shutdown), so an idle engine keeps no actor beyond its referenced
// objects'.
//
// Only the manager touches the pool (single-threaded). Entries pair an
// actor with its binding (reflector_binding.hpp): an entry whose actor died
// while parked is skipped by take().
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "podref/actors/reflector_binding.hpp"
#include "podref/messages/actor_types.hpp"

namespace podref {

class reflector_pool {
public:
  /// A parked reflector and its binding.
  struct entry {
    reflector_actor hdl;
    reflector_binding_ptr binding;
  };

  /// Parked reflectors kept at most (about 0.5 KB each: a lean actor).
  static constexpr std::size_t default_capacity = 1024;

  explicit reflector_pool(std::size_t capacity = default_capacity)
    : capacity_(capacity) {
    // nop
  }

  reflector_pool(const reflector_pool&) = delete;
  reflector_pool& operator=(const reflector_pool&) = delete;

  /// Stops the parked reflectors (user_shutdown, as the manager's own).
  ~reflector_pool();

  /// Takes a parked reflector and binds it to `slot`; an empty entry if
  /// none is left alive. The caller then sends the activation.
  entry take(const std::shared_ptr<detail::object_slot>& slot);

  /// Keeps `x` if there is room; false otherwise (the caller stops it).
  /// The caller sends the park message; unbinds `x`.
  bool put(entry x);

  /// Removes every parked reflector and returns their handles, to stop.
  std::vector<reflector_actor> drain();

  std::size_t size() const noexcept {
    return parked_.size();
  }

private:
  std::size_t capacity_;
  std::vector<entry> parked_;
};

} // namespace podref
