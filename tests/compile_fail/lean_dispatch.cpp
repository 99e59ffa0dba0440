// Compiled, never linked, by the lean_dispatch_* tests (tests/CMakeLists.txt):
// PODREF_CASE selects a handler set. Case 0 implements the interface and
// compiles; every other case breaks it one way and must fail to compile
// with lean_dispatch's static_assert.
#include <cstdint>

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "podref/actors/lean_dispatch.hpp"

namespace {

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;

using toy_actor = caf::typed_actor<
  caf::reacts_to<ping_atom, std::uint64_t>,
  caf::replies_to<caf::get_atom>::with<int>>;

using toy_timers = podref::lean_messages<caf::reacts_to<tick_atom>>;

} // namespace

bool toy_dispatch(podref::lean_actor& self, caf::type_erased_tuple& xs) {
  [[maybe_unused]] auto get = [](caf::get_atom) { return caf::result<int>{42}; };
  auto tick = [](tick_atom) {};
#if PODREF_CASE == 0 // well-typed
  return podref::lean_dispatch<toy_actor, toy_timers>(
    self, xs, [](ping_atom, std::uint64_t) {}, get, tick);
#elif PODREF_CASE == 1 // a signature without handler
  return podref::lean_dispatch<toy_actor, toy_timers>(self, xs, get, tick);
#elif PODREF_CASE == 2 // a mistyped argument
  return podref::lean_dispatch<toy_actor, toy_timers>(
    self, xs, [](ping_atom, int) {}, get, tick);
#elif PODREF_CASE == 3 // a mistyped result
  return podref::lean_dispatch<toy_actor, toy_timers>(
    self, xs, [](ping_atom, std::uint64_t) {},
    [](caf::get_atom) { return caf::result<long>{42}; }, tick);
#elif PODREF_CASE == 4 // a private message handled but not declared
  return podref::lean_dispatch<toy_actor>(
    self, xs, [](ping_atom, std::uint64_t) {}, get, tick);
#elif PODREF_CASE == 5 // two handlers for one signature
  return podref::lean_dispatch<toy_actor, toy_timers>(
    self, xs, [](ping_atom, std::uint64_t) {},
    [](ping_atom, const std::uint64_t&) {}, get, tick);
#endif
}
