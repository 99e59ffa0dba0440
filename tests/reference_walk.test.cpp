// The one walk over a pod's reference fields: every field, its resource,
// rule and whether upstream's visitors read it, in both orders. The name
// visitors and the validation are filters over this walk, so this table is
// what both of them see.
#include "podref/messages/reference_walk.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using namespace podref;

namespace {

/// One offered field, flattened for comparison.
struct seen {
  std::string path;
  std::string name;
  resource of;
  reference_rule rule;
  bool visited;

  bool operator==(const seen& x) const {
    return path == x.path && name == x.name && of == x.of && rule == x.rule
           && visited == x.visited;
  }
};

std::ostream& operator<<(std::ostream& os, const seen& x) {
  return os << x.path << " \"" << x.name << "\" of "
            << static_cast<int>(x.of) << " rule "
            << static_cast<int>(x.rule) << (x.visited ? " visited" : "");
}

template <reference_order Order>
std::vector<seen> walk(const pod_spec& spec) {
  std::vector<seen> out;
  walk_references<Order>(spec, [&](const reference_field& f) {
    out.push_back({f.path.render(), f.name, f.of, f.rule, f.visited});
    return true;
  });
  return out;
}

container one_container(const std::string& tag) {
  container c;
  env_var var;
  var.value_from = env_var_source{};
  var.value_from->secret_key_ref = key_selector{tag + "-sk", "k", {}};
  var.value_from->config_map_key_ref = key_selector{tag + "-ck", "k", {}};
  c.env.push_back(var);
  env_from_source from;
  from.secret_ref = env_source_ref{tag + "-sf", {}};
  from.config_map_ref = env_source_ref{tag + "-cf", {}};
  c.env_from.push_back(from);
  return c;
}

/// A volume setting every source (malformed on purpose: the visitors'
/// else-if chain then decides what they read).
volume every_source() {
  volume v;
  auto ref = [](const char* name) {
    return secret_ref_volume_source{local_object_reference{name}};
  };
  v.azure_file = azure_file_volume_source{"azure", "share"};
  v.cephfs = ref("cephfs");
  v.cinder = ref("cinder");
  v.flex_volume = ref("flex");
  v.projected = projected_volume_source{};
  volume_projection src;
  src.secret = projection_ref{"p-secret", {}, {}};
  src.config_map = projection_ref{"p-cm", {}, {}};
  v.projected->sources.push_back(src);
  v.rbd = ref("rbd");
  v.secret = secret_volume_source{"secret", {}, {}};
  v.scale_io = ref("scaleio");
  v.iscsi = ref("iscsi");
  v.storageos = ref("storageos");
  v.csi = csi_volume_source{"driver", local_object_reference{"csi"}};
  v.config_map = config_map_volume_source{"cm", {}, {}};
  return v;
}

pod_spec every_field() {
  pod_spec spec;
  spec.image_pull_secrets = {{"pull"}};
  spec.init_containers = {one_container("i")};
  spec.containers = {one_container("c")};
  spec.ephemeral_containers = {one_container("e")};
  spec.volumes = {every_source()};
  return spec;
}

constexpr auto secrets = resource::secrets;
constexpr auto config_maps = resource::config_maps;
using r = reference_rule;

std::vector<seen> volume_fields() {
  const std::string v = "volumes[0].";
  const std::string p = v + "projected.sources[0].";
  return {
    {v + "azureFile.secretName", "azure", secrets, r::required, true},
    {v + "cephfs.secretRef.name", "cephfs", secrets, r::any, false},
    {v + "cinder.secretRef.name", "cinder", secrets, r::required, false},
    {v + "flexVolume.secretRef.name", "flex", secrets, r::any, false},
    {p + "secret.name", "p-secret", secrets, r::required, false},
    {p + "configMap.name", "p-cm", config_maps, r::required, true},
    {v + "rbd.secretRef.name", "rbd", secrets, r::any, false},
    {v + "secret.secretName", "secret", secrets, r::required, false},
    {v + "scaleIO.secretRef.name", "scaleio", secrets, r::any, false},
    {v + "iscsi.secretRef.name", "iscsi", secrets, r::any, false},
    {v + "storageos.secretRef.name", "storageos", secrets, r::required,
     false},
    {v + "csi.nodePublishSecretRef.name", "csi", secrets,
     r::required_subdomain, false},
    {v + "configMap.name", "cm", config_maps, r::required, false},
  };
}

std::vector<seen> env_fields(const std::string& list, const std::string& tag) {
  auto at = list + "[0].env[0].valueFrom.";
  return {
    {at + "secretKeyRef.name", tag + "-sk", secrets, r::subdomain, true},
    {at + "configMapKeyRef.name", tag + "-ck", config_maps, r::subdomain,
     true},
  };
}

std::vector<seen> env_from_fields(const std::string& list,
                                  const std::string& tag) {
  auto at = list + "[0].envFrom[0].";
  return {
    {at + "configMapRef.name", tag + "-cf", config_maps,
     r::required_subdomain_prefix, true},
    {at + "secretRef.name", tag + "-sf", secrets,
     r::required_subdomain_prefix, true},
  };
}

std::vector<seen> pull_fields() {
  return {{"imagePullSecrets[0].name", "pull", secrets, r::any, true}};
}

std::vector<seen> concat(std::initializer_list<std::vector<seen>> parts) {
  std::vector<seen> out;
  for (const auto& part : parts)
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

} // namespace

TEST_CASE("the validation order: volumes, containers env first, pull secrets",
          "[reference_walk]") {
  auto expected = concat({volume_fields(),
                          env_fields("containers", "c"),
                          env_from_fields("containers", "c"),
                          env_fields("initContainers", "i"),
                          env_from_fields("initContainers", "i"),
                          env_fields("ephemeralContainers", "e"),
                          env_from_fields("ephemeralContainers", "e"),
                          pull_fields()});
  CHECK(walk<reference_order::validation>(every_field()) == expected);
}

TEST_CASE("the visitors' order: pull secrets, containers envFrom first, "
          "volumes",
          "[reference_walk]") {
  auto expected = concat({pull_fields(),
                          env_from_fields("initContainers", "i"),
                          env_fields("initContainers", "i"),
                          env_from_fields("containers", "c"),
                          env_fields("containers", "c"),
                          env_from_fields("ephemeralContainers", "e"),
                          env_fields("ephemeralContainers", "e"),
                          volume_fields()});
  CHECK(walk<reference_order::visitors>(every_field()) == expected);
}

TEST_CASE("the visitors read the first secret source of a volume only",
          "[reference_walk]") {
  pod_spec spec;
  volume v;
  v.cephfs = secret_ref_volume_source{std::nullopt}; // takes the branch
  v.secret = secret_volume_source{"secret", {}, {}};
  spec.volumes = {v, v};
  spec.volumes[1].cephfs.reset();
  auto fields = walk<reference_order::validation>(spec);
  REQUIRE(fields.size() == 2);
  CHECK_FALSE(fields[0].visited);
  CHECK(fields[1].visited);
}

TEST_CASE("a stop ends the walk, but not the visitors' volume pass",
          "[reference_walk]") {
  auto spec = every_field();
  auto stopped = [&](auto order, std::size_t after) {
    std::size_t calls = 0;
    bool done = walk_references<decltype(order)::value>(
      spec, [&](const reference_field&) { return ++calls != after; });
    return std::make_pair(done, calls);
  };
  using validation
    = std::integral_constant<reference_order, reference_order::validation>;
  using visitors
    = std::integral_constant<reference_order, reference_order::visitors>;
  CHECK(stopped(validation{}, 3) == std::make_pair(false, std::size_t{3}));
  // A stop at the pull secret ends the visitors' walk.
  CHECK(stopped(visitors{}, 1) == std::make_pair(false, std::size_t{1}));
  // A stop in the container pass: the 13 volume fields still follow, and
  // the volumes decide the result.
  auto volumes = volume_fields().size();
  CHECK(stopped(visitors{}, 2) == std::make_pair(true, 2 + volumes));
}
