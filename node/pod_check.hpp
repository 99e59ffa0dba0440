// check_pod_objects: what the kubelet would leave a pod in ContainerCreating
// for, read through the two managers, with the kubelet's wording
// (docs/node.md lists the texts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "podref/messages/pod.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace podref {

/// The kubelet's complaints about `p`'s objects as read through the two
/// managers (empty: every object and key it needs is there). Each object is
/// read once; `reads` and `failed` count the reads.
std::vector<std::string> check_pod_objects(const pod& p,
                                           secret_manager& secrets,
                                           configmap_manager& config_maps,
                                           std::uint64_t& reads,
                                           std::uint64_t& failed);

} // namespace podref
