// lean_dispatch: a lean actor's message dispatch, checked at compile time
// against the typed interface its handle is cast to.
//
// A lean actor (lean_actor.hpp) matches messages in place instead of
// through a CAF behavior, so nothing in CAF compares its handlers with the
// caf::typed_actor<...> its handles are actor_cast to. lean_dispatch does
// what typed_actor's behavior_type does for an event-based actor: it takes
// the interface's signatures (caf::reacts_to / caf::replies_to) and a set
// of handlers, and refuses to compile unless every signature has exactly
// one handler with the same argument types and result, and every handler
// implements a signature. Messages an actor handles besides its interface
// (its own timers, a pool's messages) are listed as lean_messages<...> and
// checked the same way.
//
// A handler is a callable with one non-overloaded operator(), e.g. a
// lambda. Its signature is its decayed argument types, and its result:
// void for caf::reacts_to<...>, caf::result<Ts...> for
// caf::replies_to<...>::with<Ts...>. An atom parameter receives its
// constant; a non-const lvalue reference parameter receives the message's
// element to move from, any other parameter a const reference.
//
// Handlers are tried in the order given (put the frequent messages first):
// the interface decides what must be handled, not the order of matching.
// The dispatch is a chain of caf::type_erased_tuple::match_elements tests
// that the compiler inlines; it allocates nothing.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <caf/atom.hpp>
#include <caf/detail/type_list.hpp>
#include <caf/make_message.hpp> // caf/result.hpp needs it first
#include <caf/replies_to.hpp>
#include <caf/result.hpp>
#include <caf/type_erased_tuple.hpp>
#include <caf/typed_actor.hpp>

#include "podref/actors/lean_actor.hpp"

namespace podref {

/// Signatures (caf::reacts_to / caf::replies_to entries) a lean actor
/// handles besides its typed interface.
template <class... Sigs>
struct lean_messages {};

namespace detail {

// -- signature lists ----------------------------------------------------------

/// The signatures of a typed interface or of lean_messages, as a
/// caf::detail::type_list.
template <class T>
struct lean_signatures;

template <class... Sigs>
struct lean_signatures<caf::typed_actor<Sigs...>> {
  using type = caf::detail::type_list<Sigs...>;
};

template <class... Sigs>
struct lean_signatures<lean_messages<Sigs...>> {
  using type = caf::detail::type_list<Sigs...>;
};

template <class... Lists>
struct lean_concat;

template <>
struct lean_concat<> {
  using type = caf::detail::type_list<>;
};

template <class... Xs>
struct lean_concat<caf::detail::type_list<Xs...>> {
  using type = caf::detail::type_list<Xs...>;
};

template <class... Xs, class... Ys, class... Lists>
struct lean_concat<caf::detail::type_list<Xs...>, caf::detail::type_list<Ys...>,
                   Lists...> {
  using type =
    typename lean_concat<caf::detail::type_list<Xs..., Ys...>, Lists...>::type;
};

// -- the signature of a handler -----------------------------------------------

/// The output of a handler's result type.
template <class R>
struct lean_output {
  static_assert(std::is_void<R>::value,
                "lean_dispatch: a handler returns void or caf::result<...>");
  using type = caf::output_tuple<void>;
};

template <class... Ts>
struct lean_output<caf::result<Ts...>> {
  using type = caf::output_tuple<Ts...>;
};

template <class F>
struct lean_handler_trait : lean_handler_trait<decltype(&F::operator())> {};

template <class C, class R, class... Args>
struct lean_handler_trait<R (C::*)(Args...) const> {
  /// The parameters as declared (references kept).
  using params = caf::detail::type_list<Args...>;
  using signature =
    caf::typed_mpi<caf::detail::type_list<std::decay_t<Args>...>,
                   typename lean_output<R>::type>;
};

template <class C, class R, class... Args>
struct lean_handler_trait<R (C::*)(Args...)>
  : lean_handler_trait<R (C::*)(Args...) const> {};

template <class F>
using lean_signature_t = typename lean_handler_trait<F>::signature;

// -- the checks ---------------------------------------------------------------

template <class Sig, class... Fs>
constexpr std::size_t lean_handler_count
  = (std::size_t{0} + ... + std::is_same<Sig, lean_signature_t<Fs>>::value);

template <class Sig, class... Sigs>
constexpr bool lean_declared(caf::detail::type_list<Sigs...>) {
  return (false || ... || std::is_same<Sig, Sigs>::value);
}

/// Instantiated per signature, so that a failure names the signature.
template <class Sig, std::size_t Handlers>
struct lean_check_handled {
  static_assert(Handlers != 0,
                "lean_dispatch: a signature of the interface has no handler "
                "(missing, or its arguments or result differ)");
  static_assert(Handlers < 2,
                "lean_dispatch: a signature of the interface has two handlers");
  static constexpr bool value = true;
};

/// Instantiated per handler, so that a failure names its signature.
template <class Sig, bool Declared>
struct lean_check_declared {
  static_assert(Declared,
                "lean_dispatch: a handler implements no signature of the "
                "interface (nor of its lean_messages)");
  static constexpr bool value = true;
};

template <class Sigs, class... Fs>
struct lean_check;

template <class... Sigs, class... Fs>
struct lean_check<caf::detail::type_list<Sigs...>, Fs...> {
  using all = caf::detail::type_list<Sigs...>;
  static constexpr bool handled
    = (true && ...
       && lean_check_handled<Sigs, lean_handler_count<Sigs, Fs...>>::value);
  static constexpr bool declared
    = (true && ...
       && lean_check_declared<lean_signature_t<Fs>,
                              lean_declared<lean_signature_t<Fs>>(
                                all{})>::value);
  static constexpr bool value = handled && declared;
};

// -- the dispatch -------------------------------------------------------------

/// The argument for parameter `T` at position `I` of `xs`.
template <class T>
decltype(auto) lean_arg(caf::type_erased_tuple& xs, std::size_t i) {
  using value_type = std::decay_t<T>;
  if constexpr (caf::is_atom_constant<value_type>::value) {
    static_cast<void>(xs);
    static_cast<void>(i);
    return value_type{};
  } else if constexpr (std::is_lvalue_reference<T>::value
                       && !std::is_const<std::remove_reference_t<T>>::value) {
    return xs.get_mutable_as<value_type>(i);
  } else {
    return xs.get_as<value_type>(i);
  }
}

/// Answers the request being handled with `res` (a delegated result has
/// its promise elsewhere).
template <class... Ts>
void lean_reply(lean_actor& self, caf::result<Ts...>& res) {
  if (res.flag == caf::rt_value)
    self.reply(std::move(res.value));
  else if (res.flag == caf::rt_error)
    self.reply(caf::make_message(std::move(res.err)));
}

template <class F, class... Params, std::size_t... Is>
bool lean_try(lean_actor& self, caf::type_erased_tuple& xs, F& f,
              caf::detail::type_list<Params...>, std::index_sequence<Is...>) {
  if (!xs.match_elements<std::decay_t<Params>...>())
    return false;
  using result_type = decltype(f(lean_arg<Params>(xs, Is)...));
  if constexpr (std::is_void<result_type>::value) {
    static_cast<void>(self);
    f(lean_arg<Params>(xs, Is)...);
  } else {
    auto res = f(lean_arg<Params>(xs, Is)...);
    lean_reply(self, res);
  }
  return true;
}

template <class F, class... Params>
bool lean_try(lean_actor& self, caf::type_erased_tuple& xs, F& f,
              caf::detail::type_list<Params...> params) {
  return lean_try(self, xs, f, params, std::index_sequence_for<Params...>{});
}

template <class F>
bool lean_try(lean_actor& self, caf::type_erased_tuple& xs, F& f) {
  return lean_try(self, xs, f, typename lean_handler_trait<F>::params{});
}

} // namespace detail

/// Runs the first of `fs` whose signature matches `xs` and answers a
/// request with its result; false if none matches (lean_actor::handle's
/// contract). Compiles only if `fs` implement exactly the signatures of
/// `Interface` (a caf::typed_actor) and of `Extra` (lean_messages), one
/// handler each.
template <class Interface, class... Extra, class... Fs>
bool lean_dispatch(lean_actor& self, caf::type_erased_tuple& xs, Fs&&... fs) {
  using sigs = typename detail::lean_concat<
    typename detail::lean_signatures<Interface>::type,
    typename detail::lean_signatures<Extra>::type...>::type;
  static_assert(detail::lean_check<sigs, std::decay_t<Fs>...>::value);
  return (false || ... || detail::lean_try(self, xs, fs));
}

} // namespace podref
