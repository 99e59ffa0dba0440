// api_server: podref's embedded in-memory API server, as a blocking facade.
//
// Holds namespaced Secrets and ConfigMaps with one cluster-wide
// resourceVersion; reflectors list and watch it through messages. Embedders
// and tools write through this facade (any thread); tests that need its fault
// hooks talk to actor() with the memory_api_server_actor protocol.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/runtime/manifest.hpp"

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

  /// Applies every Secret and ConfigMap of decoded manifests; returns how
  /// many were stored.
  std::size_t load(const manifest_result& manifests);

  /// The server actor (protocol: memory_api_server_actor).
  caf::actor actor() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace podref
