// Builders of pods and API objects for the manager tests, shaped after the
// helpers of upstream's manager tests (podWithSecrets, podWithConfigMaps).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/pod.hpp"

namespace podref::test {

/// What one container references through its environment: env entries
/// (secretKeyRef / configMapKeyRef) and envFrom entries (secretRef /
/// configMapRef).
struct env_refs {
  std::vector<std::string> env;
  std::vector<std::string> env_from;
};

/// A pod in `ns` named `name` with uid `uid`, pulling images with `pull`
/// and one container `container-<i>` per entry of `containers`, whose
/// envFrom secretRefs come before its env secretKeyRefs.
pod pod_with_secrets(const std::string& ns, const std::string& name,
                     const std::string& uid,
                     const std::vector<std::string>& pull,
                     const std::vector<env_refs>& containers);

/// A pod with one container `container-<i>` per entry of `containers`
/// (envFrom configMapRefs, then env configMapKeyRefs) and one ConfigMap
/// volume per name of `volumes` (the volume is named after its ConfigMap).
pod pod_with_config_maps(const std::string& ns, const std::string& name,
                         const std::string& uid,
                         const std::vector<env_refs>& containers,
                         const std::vector<std::string>& volumes = {});

/// A pod with an empty spec: unregistering only reads the identity.
pod bare_pod(const std::string& ns, const std::string& name,
             const std::string& uid);

/// A Secret with `data`, optionally immutable.
api_object make_secret(const std::string& ns, const std::string& name,
                       const std::map<std::string, std::string>& data = {},
                       bool immutable = false);

/// A ConfigMap with `data`, optionally immutable.
api_object make_config_map(const std::string& ns, const std::string& name,
                           const std::map<std::string, std::string>& data
                           = {},
                           bool immutable = false);

} // namespace podref::test
