// api_server: podref's embedded in-memory API server, as a blocking facade.
//
// Holds namespaced Secrets and ConfigMaps with one cluster-wide
// resourceVersion; reflectors list and watch it through messages. Embedders
// and tools write through this facade (any thread). Its test hooks (the
// action log, held lists, open watches, injected faults) need no CAF: each
// is applied by the server before it returns, so it is ordered before every
// later call of any thread.
//
// restart() replaces the server actor as a restarted API server would come
// back: same objects and resourceVersion, but new watches and an empty event
// history. Managers built on this facade find the new actor through
// current_actor() and move their reflectors over to it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/source_protocol.hpp"
#include "podref/manifest/manifest.hpp"

namespace caf {
class actor;
} // namespace caf

namespace podref {

class runtime;

class api_server {
public:
  /// Spawns the server on `rt`; `history_capacity` bounds the event history
  /// that lets watches resume from older versions.
  explicit api_server(runtime& rt, std::size_t history_capacity = 1000);

  /// Stops the server actor.
  ~api_server();

  api_server(const api_server&) = delete;
  api_server& operator=(const api_server&) = delete;

  /// Creates `x`; fails if it exists. Returns the stored object (with its
  /// new resourceVersion).
  result<api_object> create(const api_object& x);

  /// Replaces `x`; fails with errc::not_found if it does not exist.
  result<api_object> update(const api_object& x);

  /// Creates or replaces `x`.
  result<api_object> apply(const api_object& x);

  /// Deletes an object; fails with errc::not_found if it does not exist.
  result<bool> remove(resource res, const std::string& ns,
                      const std::string& name);

  /// A live read, as the API's GET with no resourceVersion (counted in the
  /// action log).
  result<api_object> get(resource res, const std::string& ns,
                         const std::string& name);

  /// The gets, lists and watches the current server actor answered (its
  /// action log's verbs, failed calls included, never cleared; a restart
  /// starts from zero).
  result<source_action_counts> action_counts() const;

  /// Applies every Secret and ConfigMap of decoded manifests; returns how
  /// many were stored.
  std::size_t load(const manifest_result& manifests);

  /// Replaces the server actor: kills the current one with an error reason
  /// (its watches end, held lists fail) and, once it has terminated, spawns
  /// a new one over the same objects and resourceVersion. Event history,
  /// watches, fault hooks and the action log start afresh, so watches from
  /// older versions answer expired. Blocks until the old actor is gone (at
  /// most 10 s: errc::unavailable, and the old actor stays current).
  result<bool> restart();

  // -- test hooks; each is applied before it returns -------------------------

  /// The gets, lists and watches answered since the log was last cleared
  /// (failed calls included), oldest first, each with the resourceVersion
  /// it asked for.
  result<std::vector<source_action>> actions() const;

  /// Empties the action log (action_counts() keeps counting).
  void clear_actions();

  /// Lists that arrive from now on stay unanswered until release_lists():
  /// their reflectors stay unsynced, and reads wait for them at most the
  /// sync timeout.
  void hold_lists();

  /// Lists that arrive from now on are answered `d` after they arrive, on
  /// the runtime's clock (virtual on a deterministic runtime).
  void delay_lists(std::chrono::nanoseconds d);

  /// Answers the held lists now, in arrival order; later ones at once.
  void release_lists();

  /// Open watches, in all and of one object.
  result<std::size_t> open_watches() const;
  result<std::size_t> open_watches(resource res, const std::string& ns,
                                   const std::string& name) const;

  /// The next `n` calls of `verb` fail with `err` (a failed call is still
  /// logged and counted).
  void fail_next(source_verb verb, std::uint32_t n, const error_info& err);

  /// Ends every open watch normally (watchers resume from their last
  /// version).
  void close_watches();

  /// Drops the event history: watches from older versions answer expired.
  void expire_history();

  /// The current server actor (protocol: memory_api_server_actor); changes
  /// with restart().
  caf::actor actor() const;

  /// A thread-safe getter of the current server actor, valid also after
  /// this facade is destroyed (it then returns a null handle). Managers use
  /// it to find the server after a restart.
  std::function<caf::actor()> current_actor() const;

private:
  struct holder;
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace podref
