// secret_manager and configmap_manager: the typed managers of upstream's
// secret and configmap packages, over the generic object_manager.
#pragma once

#include <string>

#include "podref/messages/config_map.hpp"
#include "podref/messages/secret.hpp"
#include "podref/runtime/object_manager.hpp"

namespace podref {

/// Keeps the Secrets that registered pods reference (Watch strategy).
class secret_manager {
public:
  secret_manager(runtime& rt, api_server& source,
                 const watch_options& opts = {})
    : mgr_(rt, source, resource::secrets, opts) {
    // nop
  }

  secret_manager(runtime& rt, const caf::actor& source,
                 const watch_options& opts = {})
    : mgr_(rt, source, resource::secrets, opts) {
    // nop
  }

  void register_pod(const pod& p) {
    mgr_.register_pod(p);
  }

  void unregister_pod(const pod& p) {
    mgr_.unregister_pod(p);
  }

  /// The secret, or upstream's error (not registered, failed to sync,
  /// `secret "<name>" not found`).
  result<secret_ptr> get_secret(const std::string& ns,
                                const std::string& name);

  object_manager& manager() noexcept {
    return mgr_;
  }

private:
  object_manager mgr_;
};

/// Keeps the ConfigMaps that registered pods reference (Watch strategy).
class configmap_manager {
public:
  configmap_manager(runtime& rt, api_server& source,
                    const watch_options& opts = {})
    : mgr_(rt, source, resource::config_maps, opts) {
    // nop
  }

  configmap_manager(runtime& rt, const caf::actor& source,
                    const watch_options& opts = {})
    : mgr_(rt, source, resource::config_maps, opts) {
    // nop
  }

  void register_pod(const pod& p) {
    mgr_.register_pod(p);
  }

  void unregister_pod(const pod& p) {
    mgr_.unregister_pod(p);
  }

  /// The config map, or upstream's error (not registered, failed to sync,
  /// `configmap "<name>" not found`).
  result<config_map_ptr> get_configmap(const std::string& ns,
                                       const std::string& name);

  object_manager& manager() noexcept {
    return mgr_;
  }

private:
  object_manager mgr_;
};

} // namespace podref
