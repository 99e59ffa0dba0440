// The Pod kind (core/v1), reduced to what decides which Secrets and
// ConfigMaps a pod references.
//
// Every volume source that names a Secret or ConfigMap is modelled field by
// field; the other source kinds (emptyDir, hostPath, nfs, ...) are recognised
// by name only, so they decode without error. Optional Go pointers are
// std::optional, or boxed (messages/boxed.hpp) for a volume's sources, of
// which at most one is set: "set" and "set but empty" differ for the
// reference rules.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "podref/messages/boxed.hpp"
#include "podref/messages/object_meta.hpp"

namespace podref {

// -- references ---------------------------------------------------------------

/// LocalObjectReference: a name in the pod's own namespace.
struct local_object_reference {
  std::string name;
};

/// secretKeyRef / configMapKeyRef of an env var.
struct key_selector {
  std::string name;
  std::string key;
  std::optional<bool> optional;
};

/// secretRef / configMapRef of an envFrom entry.
struct env_source_ref {
  std::string name;
  std::optional<bool> optional;
};

// -- containers ---------------------------------------------------------------

struct env_var_source {
  std::optional<key_selector> secret_key_ref;
  std::optional<key_selector> config_map_key_ref;
  /// fieldRef / resourceFieldRef are recognised but not modelled.
  bool other_source = false;
};

struct env_var {
  std::string name;
  std::string value;
  std::optional<env_var_source> value_from;
};

struct env_from_source {
  std::string prefix;
  std::optional<env_source_ref> secret_ref;
  std::optional<env_source_ref> config_map_ref;
};

/// The part of Container that init, regular and ephemeral containers share
/// (upstream's EphemeralContainerCommon).
struct container {
  std::string name;
  std::string image;
  std::vector<env_from_source> env_from;
  std::vector<env_var> env;
};

// -- volume sources -----------------------------------------------------------

/// A key-to-path projection of a secret / configMap volume.
struct key_to_path {
  std::string key;
  std::string path;
};

struct secret_volume_source {
  std::string secret_name;
  std::vector<key_to_path> items;
  std::optional<bool> optional;
};

struct config_map_volume_source {
  std::string name;
  std::vector<key_to_path> items;
  std::optional<bool> optional;
};

/// secret / configMap entries of a projected volume's sources.
struct projection_ref {
  std::string name;
  std::vector<key_to_path> items;
  std::optional<bool> optional;
};

struct volume_projection {
  std::optional<projection_ref> secret;
  std::optional<projection_ref> config_map;
  /// serviceAccountToken, downwardAPI, clusterTrustBundle: no reference.
  bool other_source = false;
};

struct projected_volume_source {
  std::vector<volume_projection> sources;
};

struct azure_file_volume_source {
  std::string secret_name;
  std::string share_name;
};

/// The volume kinds whose only reference is an optional `secretRef`
/// (cephfs, cinder, flexVolume, rbd, scaleIO, iscsi, storageos).
struct secret_ref_volume_source {
  std::optional<local_object_reference> secret_ref;
};

struct csi_volume_source {
  std::string driver;
  std::optional<local_object_reference> node_publish_secret_ref;
};

struct volume {
  std::string name;
  boxed<azure_file_volume_source> azure_file;
  boxed<secret_ref_volume_source> cephfs;
  boxed<secret_ref_volume_source> cinder;
  boxed<secret_ref_volume_source> flex_volume;
  boxed<projected_volume_source> projected;
  boxed<secret_ref_volume_source> rbd;
  boxed<secret_volume_source> secret;
  boxed<secret_ref_volume_source> scale_io;
  boxed<secret_ref_volume_source> iscsi;
  boxed<secret_ref_volume_source> storageos;
  boxed<csi_volume_source> csi;
  boxed<config_map_volume_source> config_map;
  /// The manifest key of a recognised source that references nothing
  /// (emptyDir, hostPath, persistentVolumeClaim, ...); empty otherwise.
  std::string other_source;
};

// -- pod ----------------------------------------------------------------------

struct pod_spec {
  std::vector<local_object_reference> image_pull_secrets;
  std::vector<container> init_containers;
  std::vector<container> containers;
  std::vector<container> ephemeral_containers;
  std::vector<volume> volumes;
};

struct pod {
  object_meta metadata;
  pod_spec spec;
};

using pod_ptr = std::shared_ptr<const pod>;

} // namespace podref
