// fixture: the objects and pods of the workloads, as in the Go anchors:
// Secrets `ns/s-<i>` with data {"key": "value-s-<i>"}, and pods with three
// Secret references (imagePullSecrets[0], one env secretKeyRef, one secret
// volume), built before any timing starts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/pod.hpp"

namespace podref::bench {

/// The namespace of every object and pod.
inline const std::string bench_namespace = "ns";

/// "s-<i>".
std::string secret_name(std::size_t i);

/// Secret s-<i> with data {"key": `value`} ("value-s-<i>" when empty).
api_object make_pool_secret(std::size_t i, const std::string& value = {});

/// Pod `<prefix>-<i>` with uid `uid-<prefix>-<i>` referencing `pull` as
/// image pull secret, `env` through an env secretKeyRef and `vol` as a
/// secret volume.
pod make_bench_pod(const std::string& prefix, std::size_t i,
                   const std::string& pull, const std::string& env,
                   const std::string& vol);

/// Pods i in [first, first + count) referencing s-(i%pool), s-((i+1)%pool),
/// s-((i+2)%pool): the Go anchors' pool pods.
std::vector<pod> pool_pods(const std::string& prefix, std::size_t first,
                           std::size_t count, std::size_t pool);

/// Pods whose consecutive indices reference disjoint objects:
/// s-(3i%pool), s-((3i+1)%pool), s-((3i+2)%pool).
std::vector<pod> disjoint_pods(const std::string& prefix, std::size_t count,
                               std::size_t pool);

/// Pods i < count, each referencing only s-<i> (all three kinds).
std::vector<pod> distinct_pods(const std::string& prefix, std::size_t count);

} // namespace podref::bench
