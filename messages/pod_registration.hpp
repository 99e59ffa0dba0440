// pod_registration: a pod together with the object names it references for
// one resource, computed once by the caller (off the manager's thread, as
// upstream computes them outside its lock) and kept by the manager, so that
// unregistering and re-registering never recompute the old names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/pod.hpp"

namespace podref {

struct pod_registration {
  /// Identity of the registration: (namespace, name, uid).
  std::string ns;
  std::string name;
  std::string uid;
  /// Distinct, sorted names of the referenced objects of one resource.
  std::vector<std::string> names;
};

using pod_registration_ptr = std::shared_ptr<const pod_registration>;

/// The registration of `p` for resource `r` (Secret or ConfigMap names).
pod_registration_ptr make_registration(const pod& p, resource r);

/// A registration with explicit names (tests, generic resources).
pod_registration_ptr make_registration(std::string ns, std::string name,
                                       std::string uid,
                                       std::vector<std::string> names);

} // namespace podref
