// Which changes of a Pod's spec an update may make, as upstream's
// ValidatePodUpdate decides (the API server's texts; object_validation.hpp
// calls it for every Pod update).
//
// A pod's spec is fixed once created, but for the images of its containers
// and init containers, activeDeadlineSeconds (set, or lowered; never
// removed), tolerations (only added to; an existing one may change its
// tolerationSeconds) and terminationGracePeriodSeconds (to 1 once
// negative). Containers may not be added or removed, nor left without an
// image.
//
// podref keeps a Pod as JSON (messages/opaque_object.hpp), so specs are
// compared as JSON where upstream compares Go structs: a null, an empty
// list and an empty string count as absent (Go's zero values), other
// defaults do not exist (podref does not default). Where upstream appends
// go-cmp's diff of the two internal PodSpecs to its message, podref lists
// the changed fields as JSON paths, old and new values, at most
// max_listed_changes of them, each value cut to 64 characters.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "podref/messages/field_problem.hpp"

namespace podref {

/// Most changed fields one forbidden-update message lists.
inline constexpr std::size_t max_listed_changes = 10;

/// The problems of changing a pod whose kept fields (opaque_object::body,
/// a JSON object with "spec") are `old_body` into one with `new_body`;
/// empty when allowed. Paths start at the pod (`spec`,
/// `spec.containers[0].image`). A body that is not a JSON object counts as
/// an empty one.
std::vector<field_problem> find_pod_spec_update_problems(
  std::string_view old_body, std::string_view new_body);

} // namespace podref
