// The namespace multiplexer's steps, shared by its two files:
// namespace_mux.cpp (the reflectors' side: their lists, watches and
// cancels, and the cache's version rules) and namespace_mux_upstream.cpp
// (the namespace list and watch at the upstream, and how a broken stream is
// mended). The design is in docs/multiplexing.md. Private to actors/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/error.hpp>
#include <caf/typed_response_promise.hpp>

#include "podref/actors/namespace_mux.hpp"

namespace podref::detail::mux {

using mux_pointer
  = namespace_mux_actor::stateful_pointer<namespace_mux_state>;
using state_type = namespace_mux_state;

// -- the cache and the reflectors' side (namespace_mux.cpp) -------------------

/// A reflector's resourceVersion: "" is none (a live read), else a decimal.
std::optional<std::uint64_t> parse_rv(const std::string& text);

/// Brings cfg.counters up to date with the sub-watches served and the
/// namespace watch held.
void recount(mux_pointer self);

/// Takes `obj` (empty: absent) as `n`'s state at `version` if that is newer
/// than what is known, and tells the name's sub-watches if it changed.
void set_state(mux_pointer self, state_type::name_entry& n, api_object obj,
               std::uint64_t version);

/// Sends `ev` to sub-watch `id` if it is newer than what that watch saw.
void deliver(mux_pointer self, watch_id id, state_type::sub_watch& w,
             const watch_event& ev);

/// Answers a waiting list from the cache, or passes it on per object.
void answer_list(mux_pointer self, state_type::waiting_list& x);

/// Opens a sub-watch (the namespace watch is open) and sends its name's
/// state if it changed after `from`.
void open_sub(mux_pointer self, caf::typed_response_promise<watch_id>& p,
              const std::string& name, std::uint64_t from,
              const watcher_actor& watcher);

/// Ends sub-watch `id` with `err`; its reflector reacts as to its own
/// watch's end.
void end_sub(mux_pointer self, watch_id id, const caf::error& err);

/// Ends every sub-watch with `err`.
void end_subs(mux_pointer self, const caf::error& err);

/// Fails every waiting watch with `err`.
void fail_watches(mux_pointer self, const caf::error& err);

// -- the upstream (namespace_mux_upstream.cpp) ----------------------------------

/// A per-object list at the upstream for `name` at `rv`; its answer
/// updates the cache.
void list_object(mux_pointer self,
                 caf::typed_response_promise<list_result> promise,
                 const std::string& name, std::string rv);

/// Takes a namespace list (unless one is in flight or the upstream
/// refused); its answer validates the cache, tells the sub-watches what
/// changed, answers the waiting lists and opens the namespace watch for the
/// sub-watches and waiting watches.
void start_ns_list(mux_pointer self);

/// Opens the namespace watch from the cache's version (unless it is open
/// or opening); its id opens the waiting watches.
void open_ns_watch(mux_pointer self);

/// Cancels the namespace watch.
void close_ns_watch(mux_pointer self);

/// Drops the cache: replies of the current generation become stale.
void invalidate(mux_pointer self);

/// The upstream's w_event and w_end of the namespace watch.
void on_event(mux_pointer self, watch_id id, const watch_event& ev);
void on_end(mux_pointer self, watch_id id, const caf::error& err);

/// new_src: the upstream was replaced.
void on_new_upstream(mux_pointer self, const object_source_actor& src);

} // namespace podref::detail::mux
