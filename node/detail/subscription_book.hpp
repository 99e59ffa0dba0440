// subscription_book: a node agent's change subscriptions in observer mode
// (node_agent_options::observer): one per object its registered pods
// reference, counted by pods, made after the managers applied the
// registrations, dropped with the object's last pod, made again when the
// manager ended one the agent still needs. Used by the agent's strand only.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "podref/messages/object_change.hpp"
#include "podref/messages/pod.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace podref::detail {

class subscription_book {
public:
  /// What a subscription delivers, with the object's key and the id of the
  /// subscription (0 when the delivery came before subscribe returned).
  using delivery = std::function<void(resource res, const std::string& key,
                                      const object_change& change,
                                      subscription_id sub)>;

  subscription_book(secret_manager& secrets, configmap_manager& config_maps);

  /// Counts the objects `p` references.
  void add_refs(const pod& p);

  /// Uncounts them; an object's last reference unsubscribes it.
  void drop_refs(const pod& p);

  /// Subscribes every counted object without a subscription (call after
  /// the managers applied the registrations).
  void subscribe_new(const delivery& deliver);

  /// A delivery reached the strand. True when it is an object's first
  /// version; an end of the current subscription of an object still
  /// counted is subscribed again.
  bool on_delivery(const std::string& key, change_kind kind,
                   subscription_id sub, const delivery& deliver);

  /// Whether every object `p` references delivered a version.
  bool all_seen(const pod& p) const;

private:
  struct key_parts {
    resource res;
    std::string ns;
    std::string name;
  };

  struct watched {
    key_parts key;
    std::size_t refs = 0;
    subscription_id sub = 0;
    bool seen = false;
  };

  static std::vector<std::pair<std::string, key_parts>> objects_of(const pod& p);

  secret_manager& secrets_;
  configmap_manager& config_maps_;
  std::unordered_map<std::string, watched> objects_;
};

} // namespace podref::detail
