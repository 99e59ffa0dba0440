// One walk over the fields of a pod spec that name a Secret or ConfigMap.
//
// Which fields those are, which resource each names, what the API server
// accepts in each (reference_rule) and which of them upstream's visitors
// (pkg/api/v1/pod/util.go) read are written down here once. The name
// visitors (pod_references.hpp) and the pod validation (validation.hpp) are
// filters over this walk; they differ only in the order they walk in
// (reference_order).
//
// The walk is a template over its callback so that both run on the
// registration path without a std::function call or an allocation per
// field: a field's path is a few scalars, rendered to text only when asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/pod.hpp"

namespace podref {

/// How the API server checks one reference field.
enum class reference_rule : std::uint8_t {
  /// Anything, empty included.
  any,
  /// Not empty; any text.
  required,
  /// Not empty; a DNS-1123 subdomain.
  required_subdomain,
  /// Not empty; a DNS-1123 subdomain after masking a trailing '-'.
  required_subdomain_prefix,
  /// A DNS-1123 subdomain (so not empty either).
  subdomain,
};

/// Where a reference field sits, from the root of the pod spec:
/// `list[i].rest`, or, inside a nested list, `list[i].nested[j].rest`.
/// Plain scalars, so that the good path passes them in registers.
struct field_path {
  const char* list;
  std::size_t i;
  const char* rest;
  const char* nested = nullptr;
  std::size_t j = 0;

  /// The path as the API server spells it (`volumes[2].secret.secretName`).
  std::string render() const {
    auto out = std::string{list} + "[" + std::to_string(i) + "].";
    if (nested != nullptr)
      out.append(nested).append("[").append(std::to_string(j)).append("].");
    return out.append(rest);
  }
};

/// One reference field as the walk offers it.
struct reference_field {
  /// The referenced name, possibly empty (the visitors skip empty names).
  const std::string& name;
  /// The resource the name refers to.
  resource of;
  /// What the API server accepts in this field.
  reference_rule rule;
  /// True iff upstream's visitors read this field: false for a secret
  /// source behind an earlier one of the same volume (their else-if chain)
  /// and for the configMap source of a volume that is also projected.
  bool visited;
  field_path path;
};

/// The order of a walk; within one volume, container entry or list the
/// order is the spec's, and a volume's sources come in the visitors' chain
/// order (azureFile, cephfs, cinder, flexVolume, projected, rbd, secret,
/// scaleIO, iscsi, storageos, csi, then configMap).
enum class reference_order {
  /// Upstream's visitors: imagePullSecrets; the init, regular, then
  /// ephemeral containers, each envFrom before env; the volumes. A stop
  /// during the container pass ends only that pass (upstream's quirk).
  visitors,
  /// Upstream's pod validation: the volumes; the regular, init, then
  /// ephemeral containers, each env before envFrom; imagePullSecrets. A
  /// stop ends the walk.
  validation,
};

namespace detail {

/// Offers the reference fields of volume `i`. Returns false iff `f` did.
template <class F>
bool walk_volume_references(const volume& v, std::size_t i, F& f) {
  auto at = [i](const char* rest) { return field_path{"volumes", i, rest}; };
  // The visitors' else-if chain: only the first source set is read, even
  // when a (malformed) volume sets several; validation checks them all.
  bool open = true;
  // A set source: offers its secret name, if it has one, and closes the
  // chain.
  auto link = [&](const std::string* name, reference_rule r,
                  const char* rest) {
    bool ok = name == nullptr
              || f(reference_field{*name, resource::secrets, r, open,
                                   at(rest)});
    open = false;
    return ok;
  };
  auto secret_ref = [&](const boxed<secret_ref_volume_source>& src,
                        reference_rule r, const char* rest) {
    return !src
           || link(src->secret_ref ? &src->secret_ref->name : nullptr, r,
                   rest);
  };
  if ((v.azure_file
       && !link(&v.azure_file->secret_name, reference_rule::required,
                "azureFile.secretName"))
      || !secret_ref(v.cephfs, reference_rule::any, "cephfs.secretRef.name")
      || !secret_ref(v.cinder, reference_rule::required,
                     "cinder.secretRef.name")
      || !secret_ref(v.flex_volume, reference_rule::any,
                     "flexVolume.secretRef.name"))
    return false;
  if (v.projected) {
    std::size_t j = 0;
    for (const auto& source : v.projected->sources) {
      auto src = [&](const char* rest) {
        return field_path{"volumes", i, rest, "projected.sources", j};
      };
      if (source.secret
          && !f(reference_field{source.secret->name, resource::secrets,
                                reference_rule::required, open,
                                src("secret.name")}))
        return false;
      if (source.config_map
          && !f(reference_field{source.config_map->name,
                                resource::config_maps,
                                reference_rule::required, true,
                                src("configMap.name")}))
        return false;
      ++j;
    }
    open = false;
  }
  if (!secret_ref(v.rbd, reference_rule::any, "rbd.secretRef.name")
      || (v.secret
          && !link(&v.secret->secret_name, reference_rule::required,
                   "secret.secretName"))
      || !secret_ref(v.scale_io, reference_rule::any, "scaleIO.secretRef.name")
      || !secret_ref(v.iscsi, reference_rule::any, "iscsi.secretRef.name")
      || !secret_ref(v.storageos, reference_rule::required,
                     "storageos.secretRef.name"))
    return false;
  // Upstream reports an invalid name at csi.name; the field is named here.
  // The last link of the chain: `open` needs no update.
  if (v.csi && v.csi->node_publish_secret_ref
      && !f(reference_field{v.csi->node_publish_secret_ref->name,
                            resource::secrets,
                            reference_rule::required_subdomain, open,
                            at("csi.nodePublishSecretRef.name")}))
    return false;
  // A projected volume shadows the configMap source.
  return !v.config_map
         || f(reference_field{v.config_map->name, resource::config_maps,
                              reference_rule::required, !v.projected,
                              at("configMap.name")});
}

/// Offers the reference fields of container `i` of the list `key`, env
/// before envFrom when `env_first`. Returns false iff `f` did.
template <bool env_first, class F>
bool walk_container_references(const container& c, const char* key,
                               std::size_t i, F& f) {
  auto env = [&] {
    std::size_t j = 0;
    for (const auto& var : c.env) {
      if (const auto& from = var.value_from) {
        auto at = [&](const char* rest) {
          return field_path{key, i, rest, "env", j};
        };
        if (from->secret_key_ref
            && !f(reference_field{from->secret_key_ref->name,
                                  resource::secrets, reference_rule::subdomain,
                                  true, at("valueFrom.secretKeyRef.name")}))
          return false;
        if (from->config_map_key_ref
            && !f(reference_field{from->config_map_key_ref->name,
                                  resource::config_maps,
                                  reference_rule::subdomain, true,
                                  at("valueFrom.configMapKeyRef.name")}))
          return false;
      }
      ++j;
    }
    return true;
  };
  // Upstream validates envFrom names as name prefixes.
  auto env_from = [&] {
    std::size_t j = 0;
    for (const auto& from : c.env_from) {
      auto at = [&](const char* rest) {
        return field_path{key, i, rest, "envFrom", j};
      };
      if (from.config_map_ref
          && !f(reference_field{from.config_map_ref->name,
                                resource::config_maps,
                                reference_rule::required_subdomain_prefix,
                                true, at("configMapRef.name")}))
        return false;
      if (from.secret_ref
          && !f(reference_field{from.secret_ref->name, resource::secrets,
                                reference_rule::required_subdomain_prefix,
                                true, at("secretRef.name")}))
        return false;
      ++j;
    }
    return true;
  };
  return env_first ? env() && env_from() : env_from() && env();
}

/// Offers the fields of every container of `list`. Returns false iff `f`
/// did.
template <bool env_first, class F>
bool walk_container_list(const std::vector<container>& list, const char* key,
                         F& f) {
  // Range loops with their own counters: an index loop re-reads the
  // vector's size (a division) after every opaque call.
  std::size_t i = 0;
  for (const auto& c : list)
    if (!walk_container_references<env_first>(c, key, i++, f))
      return false;
  return true;
}

/// walk_container_list, inline for an empty list: most pods have no init
/// or ephemeral containers, and the call would cost more than the check.
template <bool env_first, class F>
[[gnu::always_inline]] inline bool
walk_containers_references(const std::vector<container>& list,
                           const char* key, F& f) {
  return list.empty() || walk_container_list<env_first>(list, key, f);
}

/// Offers the imagePullSecrets names. Returns false iff `f` did.
template <class F>
[[gnu::always_inline]] inline bool
walk_pull_secret_references(const pod_spec& spec, F& f) {
  std::size_t i = 0;
  for (const auto& ref : spec.image_pull_secrets)
    if (!f(reference_field{ref.name, resource::secrets, reference_rule::any,
                           true, field_path{"imagePullSecrets", i++, "name"}}))
      return false;
  return true;
}

/// Offers the fields of every volume. Returns false iff `f` did.
template <class F>
[[gnu::always_inline]] inline bool
walk_volumes_references(const pod_spec& spec, F& f) {
  std::size_t i = 0;
  for (const auto& v : spec.volumes)
    if (!walk_volume_references(v, i++, f))
      return false;
  return true;
}

} // namespace detail

/// Calls `f(const reference_field&)` for every reference field of `spec`
/// in `Order`; `f` returns false to stop. Returns false iff `f` stopped the
/// walk (for reference_order::visitors, a stop in the container pass does
/// not count: the volumes decide). Forced inline, so that the caller's `f`
/// keeps its state in registers across the list loops.
template <reference_order Order, class F>
[[gnu::always_inline]] inline bool walk_references(const pod_spec& spec,
                                                   F&& f) {
  using namespace detail;
  if constexpr (Order == reference_order::visitors) {
    if (!walk_pull_secret_references(spec, f))
      return false;
    // Upstream's quirk reproduced on purpose: a stop here only ends the
    // container pass; the volumes are walked regardless.
    walk_containers_references<false>(spec.init_containers, "initContainers",
                                      f)
      && walk_containers_references<false>(spec.containers, "containers", f)
      && walk_containers_references<false>(spec.ephemeral_containers,
                                           "ephemeralContainers", f);
    return walk_volumes_references(spec, f);
  } else {
    return walk_volumes_references(spec, f)
           && walk_containers_references<true>(spec.containers, "containers",
                                               f)
           && walk_containers_references<true>(spec.init_containers,
                                               "initContainers", f)
           && walk_containers_references<true>(spec.ephemeral_containers,
                                               "ephemeralContainers", f)
           && walk_pull_secret_references(spec, f);
  }
}

} // namespace podref
