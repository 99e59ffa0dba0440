#include "podref/manifest/detail/kept_shape.hpp"

#include <limits>
#include <utility>
#include <vector>

#include "podref/manifest/detail/kinds.hpp"
#include "podref/manifest/detail/text_input.hpp"
#include "podref/messages/quoted_part.hpp"

namespace podref::detail {

/// The limit that bounds a list, or none.
using list_bound = std::size_t manifest_limits::*;

struct kept_shape {
  using member_list = std::vector<std::pair<std::string_view, const kept_shape*>>;
  /// The members of a map kept, each with its shape.
  member_list members;
  /// The shape of every member not in `members` (maps of strings).
  const kept_shape* any_member = nullptr;
  /// The shape of a list's elements.
  const kept_shape* element = nullptr;
  list_bound bound = nullptr;
  /// A document or List item: its `kind` decides what it keeps.
  bool document = false;
};

namespace {

/// The shapes of the fields the decoders read, built once.
struct shape_table {
  kept_shape leaf; // a scalar, or a map or list kept empty
  kept_shape strings; // labels, data: every member a leaf
  kept_shape local_ref, key_selector, env_source_ref, env_var_source;
  kept_shape env_var, env_list, env_from, env_from_list, container,
    containers;
  kept_shape key_to_path, key_to_paths, secret_volume, config_map_volume;
  kept_shape projection_ref, projection, projections, projected;
  kept_shape azure_file, secret_ref_volume, csi, volume, volumes;
  kept_shape local_refs, pod_spec, template_meta, pod_template;
  kept_shape job_template, job_template_spec, spec, metadata, items;
  kept_shape document, skipped_document;

  static kept_shape list_of(const kept_shape& element, list_bound bound) {
    kept_shape out;
    out.element = &element;
    out.bound = bound;
    return out;
  }

  void leaves(kept_shape& s, std::initializer_list<std::string_view> keys) {
    for (auto key : keys)
      s.members.emplace_back(key, &leaf);
  }

  shape_table() {
    strings.any_member = &leaf;
    leaves(local_ref, {"name"});
    leaves(key_selector, {"name", "key", "optional"});
    leaves(env_source_ref, {"name", "optional"});
    env_var_source.members = {{"secretKeyRef", &key_selector},
                              {"configMapKeyRef", &key_selector},
                              {"fieldRef", &leaf},
                              {"resourceFieldRef", &leaf}};
    leaves(env_var, {"name", "value"});
    env_var.members.emplace_back("valueFrom", &env_var_source);
    env_list = list_of(env_var, &manifest_limits::max_env);
    leaves(env_from, {"prefix"});
    env_from.members.emplace_back("secretRef", &env_source_ref);
    env_from.members.emplace_back("configMapRef", &env_source_ref);
    env_from_list = list_of(env_from, &manifest_limits::max_env_from);
    leaves(container, {"name", "image"});
    container.members.emplace_back("env", &env_list);
    container.members.emplace_back("envFrom", &env_from_list);
    containers = list_of(container, &manifest_limits::max_containers);
    volume_shapes();
    local_refs = list_of(local_ref, &manifest_limits::max_image_pull_secrets);
    pod_spec.members = {{"imagePullSecrets", &local_refs},
                        {"initContainers", &containers},
                        {"containers", &containers},
                        {"ephemeralContainers", &containers},
                        {"volumes", &volumes}};
    document_shapes();
  }

  void volume_shapes() {
    leaves(key_to_path, {"key", "path"});
    key_to_paths = list_of(key_to_path, nullptr);
    leaves(secret_volume, {"secretName", "optional"});
    secret_volume.members.emplace_back("items", &key_to_paths);
    leaves(config_map_volume, {"name", "optional"});
    config_map_volume.members.emplace_back("items", &key_to_paths);
    projection_ref = config_map_volume;
    leaves(projection, {"serviceAccountToken", "downwardAPI",
                        "clusterTrustBundle", "podCertificate"});
    projection.members.emplace_back("secret", &projection_ref);
    projection.members.emplace_back("configMap", &projection_ref);
    projections = list_of(projection, nullptr);
    projected.members.emplace_back("sources", &projections);
    leaves(azure_file, {"secretName", "shareName"});
    secret_ref_volume.members.emplace_back("secretRef", &local_ref);
    leaves(csi, {"driver"});
    csi.members.emplace_back("nodePublishSecretRef", &local_ref);
    leaves(volume,
           {"name", "awsElasticBlockStore", "azureDisk", "downwardAPI",
            "emptyDir", "ephemeral", "fc", "flocker", "gcePersistentDisk",
            "gitRepo", "glusterfs", "hostPath", "image", "nfs",
            "persistentVolumeClaim", "photonPersistentDisk",
            "portworxVolume", "quobyte", "vsphereVolume"});
    volume.members.insert(
      volume.members.end(),
      {{"azureFile", &azure_file}, {"cephfs", &secret_ref_volume},
       {"cinder", &secret_ref_volume}, {"flexVolume", &secret_ref_volume},
       {"projected", &projected}, {"rbd", &secret_ref_volume},
       {"secret", &secret_volume}, {"scaleIO", &secret_ref_volume},
       {"iscsi", &secret_ref_volume}, {"storageos", &secret_ref_volume},
       {"csi", &csi}, {"configMap", &config_map_volume}});
    volumes = list_of(volume, &manifest_limits::max_volumes);
  }

  /// Until its kind is known a document keeps what any decoded kind reads:
  /// a Pod's spec and a workload's spec.template share `spec`.
  void document_shapes() {
    template_meta.members = {{"labels", &strings}, {"annotations", &strings}};
    pod_template.members = {{"metadata", &template_meta},
                            {"spec", &pod_spec}};
    job_template_spec.members = {{"template", &pod_template}};
    job_template.members = {{"spec", &job_template_spec}};
    spec = pod_spec;
    spec.members.emplace_back("template", &pod_template);
    spec.members.emplace_back("jobTemplate", &job_template);
    leaves(metadata, {"namespace", "name", "uid", "resourceVersion"});
    metadata.members.emplace_back("labels", &strings);
    metadata.members.emplace_back("annotations", &strings);
    items = list_of(document, &manifest_limits::max_objects);
    document.document = true;
    leaves(document, {"kind", "type", "immutable"});
    document.members.insert(
      document.members.end(),
      {{"metadata", &metadata}, {"spec", &spec}, {"items", &items},
       {"data", &strings}, {"stringData", &strings},
       {"binaryData", &strings}});
    skipped_document.document = true;
    leaves(skipped_document, {"kind"});
  }
};

const shape_table& shapes() {
  static const shape_table table;
  return table;
}

const kept_shape* member_shape(const kept_shape& s,
                               std::string_view key) noexcept {
  for (const auto& [name, shape] : s.members)
    if (name == key)
      return shape;
  return s.any_member;
}

/// The entries of a list worth keeping: one past its limit.
std::size_t kept_elements(const kept_shape& s,
                          const manifest_limits& limits) noexcept {
  constexpr auto no_limit = std::numeric_limits<std::size_t>::max();
  auto max = s.bound == nullptr ? no_limit : limits.*s.bound;
  return max == no_limit ? max : max + 1;
}

/// The shape of the next value in `parent`, or nullptr when it is not kept.
const kept_shape* next_shape(const keep& parent, bool list,
                             std::string_view key,
                             const manifest_limits& limits) noexcept {
  if (parent.shape == nullptr)
    return nullptr;
  if (parent.elements_alike)
    return parent.shape;
  if (!list)
    return member_shape(*parent.shape, key);
  if (parent.elements >= kept_elements(*parent.shape, limits))
    return nullptr;
  return parent.shape->element;
}

} // namespace

keep keep_document(bool anchored, bool skip_kinds) noexcept {
  keep out;
  out.all = anchored;
  out.skip_kinds = skip_kinds;
  out.shape = &shapes().document;
  return out;
}

bool keeps_next(const keep& parent, bool list, std::string_view key,
                const manifest_limits& limits) noexcept {
  return parent.all || next_shape(parent, list, key, limits) != nullptr;
}

keep keep_child(const keep& parent, bool list, std::string_view key,
                bool anchored, const manifest_limits& limits) noexcept {
  keep out;
  out.all = parent.all || anchored;
  out.shape = next_shape(parent, list, key, limits);
  out.merged = parent.merged || parent.elements_alike;
  // A List item is a document too: parsed again, it keeps all as its List.
  out.skip_kinds = parent.skip_kinds;
  return out;
}

void on_member(keep& k, nlohmann::json& map, std::string_view key,
               const nlohmann::json& value, std::size_t line) {
  if (k.all || k.merged || !k.skip_kinds || k.shape == nullptr
      || !k.shape->document || key != "kind" || !value.is_string())
    return;
  const auto& kind = value.get_ref<const std::string&>();
  if (!is_skipped_kind(kind)) {
    if (k.skipped_kind)
      throw repeated_kind_error(
        line, "kind "
                + nlohmann::json(std::string{quoted_part(kind)})
                    .dump(-1, ' ', false,
                          nlohmann::json::error_handler_t::replace)
                + omitted_note(kind)
                + " repeats the kind key after a kind that is not decoded");
    return;
  }
  k.skipped_kind = true;
  k.shape = &shapes().skipped_document;
  map = nlohmann::json::object();
}

keep keep_merge(const keep& parent, bool list) noexcept {
  keep out;
  out.all = parent.all;
  out.shape = parent.shape;
  out.elements_alike = list;
  out.merged = true;
  return out;
}

std::size_t count_values(const nlohmann::json& value) noexcept {
  std::size_t n = 1;
  if (value.is_structured())
    for (const auto& child : value)
      n += count_values(child);
  return n;
}

} // namespace podref::detail
