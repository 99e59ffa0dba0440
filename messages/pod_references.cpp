#include "podref/messages/pod_references.hpp"

#include <algorithm>

namespace podref {

namespace {

// The walks below are templates over the visitor so that secret_names and
// config_map_names (hot: one call per pod registration) pass a plain lambda
// and pay no std::function dispatch per name.

/// Walks the containers of `spec` (const or mutable) in upstream's order:
/// init, regular, ephemeral, each in spec order and filtered by `mask`.
/// Returns false iff `f` returned false.
template <class Spec, class F>
bool for_each_container(Spec& spec, container_type mask, F& f) {
  auto walk = [&](auto& list, container_type kind) {
    if (!has(mask, kind))
      return true;
    for (auto& c : list)
      if (!f(c, kind))
        return false;
    return true;
  };
  return walk(spec.init_containers, container_type::init_containers)
         && walk(spec.containers, container_type::containers)
         && walk(spec.ephemeral_containers,
                 container_type::ephemeral_containers);
}

/// Upstream's skipEmptyNames: an empty name counts as "continue" and never
/// reaches the caller's visitor.
template <class V>
bool offer(const std::string& name, V& visitor) {
  return name.empty() || visitor(name);
}

template <class V>
bool offer(const std::optional<local_object_reference>& ref, V& visitor) {
  return !ref || offer(ref->name, visitor);
}

template <class V>
bool visit_container_secret_names(const container& c, V& visitor) {
  for (const auto& from : c.env_from)
    if (from.secret_ref && !offer(from.secret_ref->name, visitor))
      return false;
  for (const auto& var : c.env)
    if (var.value_from && var.value_from->secret_key_ref
        && !offer(var.value_from->secret_key_ref->name, visitor))
      return false;
  return true;
}

template <class V>
bool visit_container_config_map_names(const container& c, V& visitor) {
  for (const auto& from : c.env_from)
    if (from.config_map_ref && !offer(from.config_map_ref->name, visitor))
      return false;
  for (const auto& var : c.env)
    if (var.value_from && var.value_from->config_map_key_ref
        && !offer(var.value_from->config_map_key_ref->name, visitor))
      return false;
  return true;
}

/// Upstream's else-if chain: only the first set source, in this order,
/// contributes, even when a (malformed) volume sets several.
template <class V>
bool visit_volume_secret_names(const volume& v, V& visitor) {
  if (v.azure_file)
    return offer(v.azure_file->secret_name, visitor);
  if (v.cephfs)
    return offer(v.cephfs->secret_ref, visitor);
  if (v.cinder)
    return offer(v.cinder->secret_ref, visitor);
  if (v.flex_volume)
    return offer(v.flex_volume->secret_ref, visitor);
  if (v.projected) {
    for (const auto& src : v.projected->sources)
      if (src.secret && !offer(src.secret->name, visitor))
        return false;
    return true;
  }
  if (v.rbd)
    return offer(v.rbd->secret_ref, visitor);
  if (v.secret)
    return offer(v.secret->secret_name, visitor);
  if (v.scale_io)
    return offer(v.scale_io->secret_ref, visitor);
  if (v.iscsi)
    return offer(v.iscsi->secret_ref, visitor);
  if (v.storageos)
    return offer(v.storageos->secret_ref, visitor);
  if (v.csi)
    return offer(v.csi->node_publish_secret_ref, visitor);
  return true;
}

/// Projected takes precedence over configMap, as upstream's if / else-if.
template <class V>
bool visit_volume_config_map_names(const volume& v, V& visitor) {
  if (v.projected) {
    for (const auto& src : v.projected->sources)
      if (src.config_map && !offer(src.config_map->name, visitor))
        return false;
    return true;
  }
  if (v.config_map)
    return offer(v.config_map->name, visitor);
  return true;
}

template <class V>
bool visit_secret_names(const pod& p, V& visitor) {
  for (const auto& ref : p.spec.image_pull_secrets)
    if (!offer(ref.name, visitor))
      return false;
  // Upstream quirk reproduced on purpose: a stop here only ends the container
  // pass; the volumes are visited regardless and decide the result.
  auto per_container = [&](const container& c, container_type) {
    return visit_container_secret_names(c, visitor);
  };
  for_each_container(p.spec, container_type::all, per_container);
  for (const auto& v : p.spec.volumes)
    if (!visit_volume_secret_names(v, visitor))
      return false;
  return true;
}

template <class V>
bool visit_config_map_names(const pod& p, V& visitor) {
  // Same upstream quirk as for secrets: the container pass result is ignored.
  auto per_container = [&](const container& c, container_type) {
    return visit_container_config_map_names(c, visitor);
  };
  for_each_container(p.spec, container_type::all, per_container);
  for (const auto& v : p.spec.volumes)
    if (!visit_volume_config_map_names(v, visitor))
      return false;
  return true;
}

/// Stores views into a caller's buffer and counts past its end.
struct view_collector {
  std::string_view* out;
  std::size_t capacity;
  std::size_t count = 0;

  bool operator()(const std::string& name) noexcept {
    if (count < capacity)
      out[count] = name;
    ++count;
    return true;
  }
};

void sort_unique(std::vector<std::string>& xs) {
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
}

} // namespace

bool visit_containers(pod_spec& spec, container_type mask,
                      const container_visitor& visitor) {
  return for_each_container(spec, mask, visitor);
}

bool visit_pod_secret_names(const pod& p, const name_visitor& visitor) {
  return visit_secret_names(p, visitor);
}

bool visit_pod_config_map_names(const pod& p, const name_visitor& visitor) {
  return visit_config_map_names(p, visitor);
}

std::vector<std::string> secret_names(const pod& p) {
  std::vector<std::string> result;
  auto collect = [&result](const std::string& name) {
    result.push_back(name);
    return true;
  };
  visit_secret_names(p, collect);
  sort_unique(result);
  return result;
}

std::vector<std::string> config_map_names(const pod& p) {
  std::vector<std::string> result;
  auto collect = [&result](const std::string& name) {
    result.push_back(name);
    return true;
  };
  visit_config_map_names(p, collect);
  sort_unique(result);
  return result;
}

std::size_t secret_name_views(const pod& p, std::string_view* out,
                              std::size_t capacity) {
  view_collector collect{out, capacity};
  visit_secret_names(p, collect);
  return collect.count;
}

std::size_t config_map_name_views(const pod& p, std::string_view* out,
                                  std::size_t capacity) {
  view_collector collect{out, capacity};
  visit_config_map_names(p, collect);
  return collect.count;
}

} // namespace podref
