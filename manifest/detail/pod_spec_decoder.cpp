#include "podref/manifest/detail/pod_spec_decoder.hpp"

#include <array>
#include <string>
#include <string_view>

#include "podref/messages/validation.hpp"

namespace podref::detail {

namespace {

// -- references ---------------------------------------------------------------

local_object_reference decode_local_ref(const json& v, const field_path& at) {
  expect_map(v, at);
  local_object_reference out;
  read(v, "name", at, out.name);
  return out;
}

key_selector decode_key_selector(const json& v, const field_path& at) {
  expect_map(v, at);
  key_selector out;
  read(v, "name", at, out.name);
  read(v, "key", at, out.key);
  read(v, "optional", at, out.optional);
  return out;
}

env_source_ref decode_env_source_ref(const json& v, const field_path& at) {
  expect_map(v, at);
  env_source_ref out;
  read(v, "name", at, out.name);
  read(v, "optional", at, out.optional);
  return out;
}

// -- containers ---------------------------------------------------------------

env_var_source decode_env_var_source(const json& v, const field_path& at) {
  expect_map(v, at);
  env_var_source out;
  read_struct(v, "secretKeyRef", at, out.secret_key_ref, decode_key_selector);
  read_struct(v, "configMapKeyRef", at, out.config_map_key_ref,
              decode_key_selector);
  bool field_ref = has_map(v, "fieldRef", at);
  bool resource_field_ref = has_map(v, "resourceFieldRef", at);
  out.other_source = field_ref || resource_field_ref;
  return out;
}

env_var decode_env_var(const json& v, const field_path& at) {
  expect_map(v, at);
  env_var out;
  read(v, "name", at, out.name);
  read(v, "value", at, out.value);
  read_struct(v, "valueFrom", at, out.value_from, decode_env_var_source);
  return out;
}

env_from_source decode_env_from(const json& v, const field_path& at) {
  expect_map(v, at);
  env_from_source out;
  read(v, "prefix", at, out.prefix);
  read_struct(v, "secretRef", at, out.secret_ref, decode_env_source_ref);
  read_struct(v, "configMapRef", at, out.config_map_ref,
              decode_env_source_ref);
  return out;
}

container decode_container(const json& v, const field_path& at,
                           const manifest_limits& limits) {
  expect_map(v, at);
  container out;
  read(v, "name", at, out.name);
  read(v, "image", at, out.image);
  read_list(v, "envFrom", at, out.env_from, decode_env_from,
            {limits.max_env_from, "envFrom entries", "container"});
  read_list(v, "env", at, out.env, decode_env_var,
            {limits.max_env, "env entries", "container"});
  return out;
}

// -- volume sources -----------------------------------------------------------

key_to_path decode_key_to_path(const json& v, const field_path& at) {
  expect_map(v, at);
  key_to_path out;
  read(v, "key", at, out.key);
  read(v, "path", at, out.path);
  return out;
}

secret_volume_source decode_secret_volume(const json& v,
                                          const field_path& at) {
  expect_map(v, at);
  secret_volume_source out;
  read(v, "secretName", at, out.secret_name);
  read_list(v, "items", at, out.items, decode_key_to_path);
  read(v, "optional", at, out.optional);
  return out;
}

config_map_volume_source decode_config_map_volume(const json& v,
                                                  const field_path& at) {
  expect_map(v, at);
  config_map_volume_source out;
  read(v, "name", at, out.name);
  read_list(v, "items", at, out.items, decode_key_to_path);
  read(v, "optional", at, out.optional);
  return out;
}

projection_ref decode_projection_ref(const json& v, const field_path& at) {
  expect_map(v, at);
  projection_ref out;
  read(v, "name", at, out.name);
  read_list(v, "items", at, out.items, decode_key_to_path);
  read(v, "optional", at, out.optional);
  return out;
}

volume_projection decode_projection(const json& v, const field_path& at) {
  expect_map(v, at);
  volume_projection out;
  read_struct(v, "secret", at, out.secret, decode_projection_ref);
  read_struct(v, "configMap", at, out.config_map, decode_projection_ref);
  // Projections that reference no Secret or ConfigMap.
  for (std::string_view key : {"serviceAccountToken", "downwardAPI",
                               "clusterTrustBundle", "podCertificate"})
    if (has_map(v, key, at))
      out.other_source = true;
  return out;
}

projected_volume_source decode_projected(const json& v,
                                         const field_path& at) {
  expect_map(v, at);
  projected_volume_source out;
  read_list(v, "sources", at, out.sources, decode_projection);
  return out;
}

azure_file_volume_source decode_azure_file(const json& v,
                                           const field_path& at) {
  expect_map(v, at);
  azure_file_volume_source out;
  read(v, "secretName", at, out.secret_name);
  read(v, "shareName", at, out.share_name);
  return out;
}

secret_ref_volume_source decode_secret_ref_volume(const json& v,
                                                  const field_path& at) {
  expect_map(v, at);
  secret_ref_volume_source out;
  read_struct(v, "secretRef", at, out.secret_ref, decode_local_ref);
  return out;
}

csi_volume_source decode_csi(const json& v, const field_path& at) {
  expect_map(v, at);
  csi_volume_source out;
  read(v, "driver", at, out.driver);
  read_struct(v, "nodePublishSecretRef", at, out.node_publish_secret_ref,
              decode_local_ref);
  return out;
}

/// The VolumeSource keys that reference no Secret or ConfigMap.
constexpr std::array<std::string_view, 18> other_volume_sources = {
  "awsElasticBlockStore", "azureDisk", "downwardAPI", "emptyDir", "ephemeral",
  "fc", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath",
  "image", "nfs", "persistentVolumeClaim", "photonPersistentDisk",
  "portworxVolume", "quobyte", "vsphereVolume",
};

volume decode_volume(const json& v, const field_path& at) {
  expect_map(v, at);
  volume out;
  read(v, "name", at, out.name);
  read_struct(v, "azureFile", at, out.azure_file, decode_azure_file);
  read_struct(v, "cephfs", at, out.cephfs, decode_secret_ref_volume);
  read_struct(v, "cinder", at, out.cinder, decode_secret_ref_volume);
  read_struct(v, "flexVolume", at, out.flex_volume, decode_secret_ref_volume);
  read_struct(v, "projected", at, out.projected, decode_projected);
  read_struct(v, "rbd", at, out.rbd, decode_secret_ref_volume);
  read_struct(v, "secret", at, out.secret, decode_secret_volume);
  read_struct(v, "scaleIO", at, out.scale_io, decode_secret_ref_volume);
  read_struct(v, "iscsi", at, out.iscsi, decode_secret_ref_volume);
  read_struct(v, "storageos", at, out.storageos, decode_secret_ref_volume);
  read_struct(v, "csi", at, out.csi, decode_csi);
  read_struct(v, "configMap", at, out.config_map, decode_config_map_volume);
  // A valid volume has exactly one source; with several, the first in
  // alphabetical order is kept.
  for (auto key : other_volume_sources)
    if (has_map(v, key, at) && out.other_source.empty())
      out.other_source = std::string{key};
  return out;
}

} // namespace

pod_spec decode_pod_spec(const json& value, const field_path& at,
                         const manifest_limits& limits) {
  expect_map(value, at);
  // The container lists are counted before any is decoded.
  std::size_t containers = 0;
  for (std::string_view key :
       {"initContainers", "containers", "ephemeralContainers"}) {
    const auto* list = member(value, key);
    if (list == nullptr || !list->is_array())
      continue; // absent, or a type error that read_list reports
    containers += list->size();
    if (containers > limits.max_containers)
      fail(at.field(key), "more containers than the limit of "
                            + std::to_string(limits.max_containers)
                            + " per pod");
  }
  pod_spec out;
  read_list(value, "imagePullSecrets", at, out.image_pull_secrets,
            decode_local_ref,
            {limits.max_image_pull_secrets, "imagePullSecrets entries",
             "pod"});
  auto decode = [&limits](const json& v, const field_path& path) {
    return decode_container(v, path, limits);
  };
  read_list(value, "initContainers", at, out.init_containers, decode);
  read_list(value, "containers", at, out.containers, decode);
  read_list(value, "ephemeralContainers", at, out.ephemeral_containers,
            decode);
  read_list(value, "volumes", at, out.volumes, decode_volume,
            {limits.max_volumes, "volumes", "pod"});
  if (auto bad = find_reference_problem(out, limits.max_references)) {
    // The decoded lists keep the manifest's indices, so the path from the
    // spec is the manifest's path too.
    const auto path = at.str() + "." + bad->path;
    fail(field_path{path}, bad->problem);
  }
  return out;
}

} // namespace podref::detail
