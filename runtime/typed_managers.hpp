// secret_manager and configmap_manager: the typed managers of upstream's
// secret and configmap packages, over the generic object_manager.
//
// The strategy comes from the options (default Watch) or from a constructor
// argument; upstream's NewSimple*Manager, NewCaching*Manager and
// NewWatching*Manager are strategy::get, strategy::cache and
// strategy::watch. To select one by its configuration name, call
// parse_strategy() and report its error before constructing.
#pragma once

#include <string>
#include <utility>

#include "podref/messages/config_map.hpp"
#include "podref/messages/secret.hpp"
#include "podref/runtime/object_manager.hpp"

namespace podref {

class cluster; // runtime/cluster.hpp (linked from podref::wire)

namespace detail {

/// The source actor of a cluster (defined with it, in podref::wire).
const caf::actor& source_of(cluster& c);

/// What secret_manager and configmap_manager share: an object_manager of
/// one resource, with or without an explicit strategy, over an api_server,
/// a cluster (a real API server) or a bare source actor.
template <resource Res>
class typed_manager {
public:
  typed_manager(runtime& rt, api_server& source,
                const manager_options& opts = {})
    : mgr_(rt, source, Res, opts) {
    // nop
  }

  typed_manager(runtime& rt, const caf::actor& source,
                const manager_options& opts = {})
    : mgr_(rt, source, Res, opts) {
    // nop
  }

  typed_manager(runtime& rt, cluster& source,
                const manager_options& opts = {})
    : mgr_(rt, source_of(source), Res, opts) {
    // nop
  }

  typed_manager(runtime& rt, cluster& source, podref::strategy s,
                const manager_options& opts = {})
    : mgr_(rt, source_of(source), Res, s, opts) {
    // nop
  }

  typed_manager(runtime& rt, api_server& source, podref::strategy s,
                const manager_options& opts = {})
    : mgr_(rt, source, Res, s, opts) {
    // nop
  }

  typed_manager(runtime& rt, const caf::actor& source, podref::strategy s,
                const manager_options& opts = {})
    : mgr_(rt, source, Res, s, opts) {
    // nop
  }

  /// See object_manager::register_pod: the pod is checked, then enqueued.
  result<void> register_pod(const pod& p) {
    return mgr_.register_pod(p);
  }

  /// See object_manager::unregister_pod: unknown pods are a no-op.
  result<void> unregister_pod(const pod& p) {
    return mgr_.unregister_pod(p);
  }

  /// See object_manager::register_pod_and_wait.
  result<void> register_pod_and_wait(const pod& p) {
    return mgr_.register_pod_and_wait(p);
  }

  /// See object_manager::unregister_pod_and_wait.
  result<void> unregister_pod_and_wait(const pod& p) {
    return mgr_.unregister_pod_and_wait(p);
  }

  /// See object_manager::sync.
  bool sync() {
    return mgr_.sync();
  }

  /// See object_manager::status.
  result<object_status> status(const std::string& ns,
                               const std::string& name) const {
    return mgr_.status(ns, name);
  }

  /// See object_manager::subscribe (Watch).
  result<subscription_id> subscribe(const std::string& ns,
                                    const std::string& name,
                                    change_callback cb) {
    return mgr_.subscribe(ns, name, std::move(cb));
  }

  /// See object_manager::unsubscribe: no call after it returns.
  void unsubscribe(subscription_id id) {
    mgr_.unsubscribe(id);
  }

  object_manager& manager() noexcept {
    return mgr_;
  }

protected:
  object_manager mgr_;
};

} // namespace detail

/// Keeps the Secrets that registered pods reference.
class secret_manager : public detail::typed_manager<resource::secrets> {
public:
  using typed_manager::typed_manager;

  /// The secret, or upstream's error (not registered, failed to sync,
  /// `secret "<name>" not found` under Watch, the API's
  /// `secrets "<name>" not found` under Get and Cache).
  result<secret_ptr> get_secret(const std::string& ns,
                                const std::string& name);
};

/// Keeps the ConfigMaps that registered pods reference.
class configmap_manager : public detail::typed_manager<resource::config_maps> {
public:
  using typed_manager::typed_manager;

  /// The config map, or upstream's error (not registered, failed to sync,
  /// `configmap "<name>" not found` under Watch, the API's
  /// `configmaps "<name>" not found` under Get and Cache).
  result<config_map_ptr> get_configmap(const std::string& ns,
                                       const std::string& name);
};

} // namespace podref
