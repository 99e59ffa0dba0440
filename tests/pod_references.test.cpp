// Reference extraction against upstream's pkg/api/v1/pod/util_test.go
// (TestPodSecrets, TestPodConfigmaps, TestVisitContainers, TestContainerIter)
// and the reference sets the kubelet manager tests rely on.
#include "podref/messages/pod_references.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

using namespace podref;

namespace {

using strings = std::vector<std::string>;
using string_set = std::set<std::string>;

// -- model tables -------------------------------------------------------------

/// One field of our model, as a path from `pod`, and its upstream Go path.
struct model_field {
  const char* model_path;
  const char* go_path;
};

// Hand-maintained: EVERY path from `pod` to a field of messages/pod.hpp whose
// name contains "secret" (resp. "config_map"). Update these tables whenever
// messages/pod.hpp changes; "the hand-kept model tables list every ..." below
// fails until they match the header again.
//
// Our model omits cephfs.secretFile (a file path on the node, not a
// reference; upstream's only excluded path), every field that names no
// Secret or ConfigMap (securityContext, fieldRef, serviceAccountToken, ...)
// and the ephemeral container's own fields besides the common part.
const model_field secret_fields[] = {
  {"spec.image_pull_secrets", "Spec.ImagePullSecrets"},
  {"spec.init_containers[*].env_from[*].secret_ref",
   "Spec.InitContainers[*].EnvFrom[*].SecretRef"},
  {"spec.init_containers[*].env[*].value_from.secret_key_ref",
   "Spec.InitContainers[*].Env[*].ValueFrom.SecretKeyRef"},
  {"spec.containers[*].env_from[*].secret_ref",
   "Spec.Containers[*].EnvFrom[*].SecretRef"},
  {"spec.containers[*].env[*].value_from.secret_key_ref",
   "Spec.Containers[*].Env[*].ValueFrom.SecretKeyRef"},
  {"spec.ephemeral_containers[*].env_from[*].secret_ref",
   "Spec.EphemeralContainers[*].EphemeralContainerCommon"
   ".EnvFrom[*].SecretRef"},
  {"spec.ephemeral_containers[*].env[*].value_from.secret_key_ref",
   "Spec.EphemeralContainers[*].EphemeralContainerCommon"
   ".Env[*].ValueFrom.SecretKeyRef"},
  {"spec.volumes[*].azure_file.secret_name",
   "Spec.Volumes[*].VolumeSource.AzureFile.SecretName"},
  {"spec.volumes[*].cephfs.secret_ref",
   "Spec.Volumes[*].VolumeSource.CephFS.SecretRef"},
  {"spec.volumes[*].cinder.secret_ref",
   "Spec.Volumes[*].VolumeSource.Cinder.SecretRef"},
  {"spec.volumes[*].flex_volume.secret_ref",
   "Spec.Volumes[*].VolumeSource.FlexVolume.SecretRef"},
  {"spec.volumes[*].projected.sources[*].secret",
   "Spec.Volumes[*].VolumeSource.Projected.Sources[*].Secret"},
  {"spec.volumes[*].rbd.secret_ref",
   "Spec.Volumes[*].VolumeSource.RBD.SecretRef"},
  {"spec.volumes[*].secret", "Spec.Volumes[*].VolumeSource.Secret"},
  {"spec.volumes[*].secret.secret_name",
   "Spec.Volumes[*].VolumeSource.Secret.SecretName"},
  {"spec.volumes[*].scale_io.secret_ref",
   "Spec.Volumes[*].VolumeSource.ScaleIO.SecretRef"},
  {"spec.volumes[*].iscsi.secret_ref",
   "Spec.Volumes[*].VolumeSource.ISCSI.SecretRef"},
  {"spec.volumes[*].storageos.secret_ref",
   "Spec.Volumes[*].VolumeSource.StorageOS.SecretRef"},
  {"spec.volumes[*].csi.node_publish_secret_ref",
   "Spec.Volumes[*].VolumeSource.CSI.NodePublishSecretRef"},
};

const model_field config_map_fields[] = {
  {"spec.init_containers[*].env_from[*].config_map_ref",
   "Spec.InitContainers[*].EnvFrom[*].ConfigMapRef"},
  {"spec.init_containers[*].env[*].value_from.config_map_key_ref",
   "Spec.InitContainers[*].Env[*].ValueFrom.ConfigMapKeyRef"},
  {"spec.containers[*].env_from[*].config_map_ref",
   "Spec.Containers[*].EnvFrom[*].ConfigMapRef"},
  {"spec.containers[*].env[*].value_from.config_map_key_ref",
   "Spec.Containers[*].Env[*].ValueFrom.ConfigMapKeyRef"},
  {"spec.ephemeral_containers[*].env_from[*].config_map_ref",
   "Spec.EphemeralContainers[*].EphemeralContainerCommon"
   ".EnvFrom[*].ConfigMapRef"},
  {"spec.ephemeral_containers[*].env[*].value_from.config_map_key_ref",
   "Spec.EphemeralContainers[*].EphemeralContainerCommon"
   ".Env[*].ValueFrom.ConfigMapKeyRef"},
  {"spec.volumes[*].projected.sources[*].config_map",
   "Spec.Volumes[*].VolumeSource.Projected.Sources[*].ConfigMap"},
  {"spec.volumes[*].config_map", "Spec.Volumes[*].VolumeSource.ConfigMap"},
};

// -- oracle lists (kubelet-manager.md 4.5, upstream util_test.go) -------------

const string_set expected_secret_paths = {
  "Spec.Containers[*].EnvFrom[*].SecretRef",
  "Spec.Containers[*].Env[*].ValueFrom.SecretKeyRef",
  "Spec.EphemeralContainers[*].EphemeralContainerCommon.EnvFrom[*].SecretRef",
  "Spec.EphemeralContainers[*].EphemeralContainerCommon"
  ".Env[*].ValueFrom.SecretKeyRef",
  "Spec.ImagePullSecrets",
  "Spec.InitContainers[*].EnvFrom[*].SecretRef",
  "Spec.InitContainers[*].Env[*].ValueFrom.SecretKeyRef",
  "Spec.Volumes[*].VolumeSource.AzureFile.SecretName",
  "Spec.Volumes[*].VolumeSource.CephFS.SecretRef",
  "Spec.Volumes[*].VolumeSource.Cinder.SecretRef",
  "Spec.Volumes[*].VolumeSource.FlexVolume.SecretRef",
  "Spec.Volumes[*].VolumeSource.Projected.Sources[*].Secret",
  "Spec.Volumes[*].VolumeSource.RBD.SecretRef",
  "Spec.Volumes[*].VolumeSource.Secret",
  "Spec.Volumes[*].VolumeSource.Secret.SecretName",
  "Spec.Volumes[*].VolumeSource.ScaleIO.SecretRef",
  "Spec.Volumes[*].VolumeSource.ISCSI.SecretRef",
  "Spec.Volumes[*].VolumeSource.StorageOS.SecretRef",
  "Spec.Volumes[*].VolumeSource.CSI.NodePublishSecretRef",
};

const string_set excluded_secret_paths = {
  "Spec.Volumes[*].VolumeSource.CephFS.SecretFile",
};

const string_set expected_config_map_paths = {
  "Spec.Containers[*].EnvFrom[*].ConfigMapRef",
  "Spec.Containers[*].Env[*].ValueFrom.ConfigMapKeyRef",
  "Spec.EphemeralContainers[*].EphemeralContainerCommon"
  ".EnvFrom[*].ConfigMapRef",
  "Spec.EphemeralContainers[*].EphemeralContainerCommon"
  ".Env[*].ValueFrom.ConfigMapKeyRef",
  "Spec.InitContainers[*].EnvFrom[*].ConfigMapRef",
  "Spec.InitContainers[*].Env[*].ValueFrom.ConfigMapKeyRef",
  "Spec.Volumes[*].VolumeSource.Projected.Sources[*].ConfigMap",
  "Spec.Volumes[*].VolumeSource.ConfigMap",
};

// -- helpers ------------------------------------------------------------------

template <std::size_t N>
string_set go_paths(const model_field (&table)[N]) {
  string_set result;
  for (const auto& f : table)
    result.emplace(f.go_path);
  return result;
}

template <std::size_t N>
string_set model_paths(const model_field (&table)[N]) {
  string_set result;
  for (const auto& f : table)
    result.emplace(f.model_path);
  return result;
}

/// xs - ys - zs, as a list so that Catch prints the offending paths.
strings minus(const string_set& xs, const string_set& ys,
              const string_set& zs = {}) {
  strings result;
  for (const auto& x : xs)
    if (ys.count(x) == 0 && zs.count(x) == 0)
      result.push_back(x);
  return result;
}

/// Every name the secret visitor offers, in visiting order.
strings visited_secrets(const pod& p) {
  strings result;
  visit_pod_secret_names(p, [&](const std::string& name) {
    result.push_back(name);
    return true;
  });
  return result;
}

/// Every name the config map visitor offers, in visiting order.
strings visited_config_maps(const pod& p) {
  strings result;
  visit_pod_config_map_names(p, [&](const std::string& name) {
    result.push_back(name);
    return true;
  });
  return result;
}

/// A visitor that records names and stops at (after recording) `stop_at`.
struct stopping_visitor {
  std::string stop_at;
  strings* seen;
  bool operator()(const std::string& name) const {
    seen->push_back(name);
    return name != stop_at;
  }
};

env_from_source secret_env_from(std::string name) {
  env_from_source result;
  result.secret_ref = env_source_ref{std::move(name), std::nullopt};
  return result;
}

env_var secret_env(std::string name) {
  env_var result;
  result.name = "VAR";
  result.value_from.emplace();
  result.value_from->secret_key_ref
    = key_selector{std::move(name), "key", std::nullopt};
  return result;
}

env_from_source config_map_env_from(std::string name) {
  env_from_source result;
  result.config_map_ref = env_source_ref{std::move(name), std::nullopt};
  return result;
}

env_var config_map_env(std::string name) {
  env_var result;
  result.name = "VAR";
  result.value_from.emplace();
  result.value_from->config_map_key_ref
    = key_selector{std::move(name), "key", std::nullopt};
  return result;
}

container secret_container(std::string env_from_name, std::string env_name) {
  container result;
  result.name = "c";
  result.env_from.push_back(secret_env_from(std::move(env_from_name)));
  result.env.push_back(secret_env(std::move(env_name)));
  return result;
}

container config_map_container(std::string env_from_name,
                               std::string env_name) {
  container result;
  result.name = "c";
  result.env_from.push_back(config_map_env_from(std::move(env_from_name)));
  result.env.push_back(config_map_env(std::move(env_name)));
  return result;
}

secret_ref_volume_source secret_ref_source(std::string name) {
  return secret_ref_volume_source{local_object_reference{std::move(name)}};
}

volume_projection secret_projection(std::string name) {
  volume_projection result;
  result.secret = projection_ref{std::move(name), {}, std::nullopt};
  return result;
}

volume_projection config_map_projection(std::string name) {
  volume_projection result;
  result.config_map = projection_ref{std::move(name), {}, std::nullopt};
  return result;
}

volume secret_volume(std::string name) {
  volume result;
  result.name = "vol";
  result.secret = secret_volume_source{std::move(name), {}, std::nullopt};
  return result;
}

volume config_map_volume(std::string name) {
  volume result;
  result.name = "vol";
  result.config_map
    = config_map_volume_source{std::move(name), {}, std::nullopt};
  return result;
}

volume projected_volume(std::vector<volume_projection> sources) {
  volume result;
  result.name = "vol";
  result.projected = projected_volume_source{std::move(sources)};
  return result;
}

/// Sets, on `v`, the secret-bearing source at `index` of upstream's else-if
/// chain (0 = azureFile ... 10 = csi), naming `name`.
void set_secret_source(volume& v, std::size_t index, const std::string& name) {
  switch (index) {
    case 0:
      v.azure_file = azure_file_volume_source{name, "share"};
      break;
    case 1:
      v.cephfs = secret_ref_source(name);
      break;
    case 2:
      v.cinder = secret_ref_source(name);
      break;
    case 3:
      v.flex_volume = secret_ref_source(name);
      break;
    case 4:
      v.projected = projected_volume_source{{secret_projection(name)}};
      break;
    case 5:
      v.rbd = secret_ref_source(name);
      break;
    case 6:
      v.secret = secret_volume_source{name, {}, std::nullopt};
      break;
    case 7:
      v.scale_io = secret_ref_source(name);
      break;
    case 8:
      v.iscsi = secret_ref_source(name);
      break;
    case 9:
      v.storageos = secret_ref_source(name);
      break;
    default:
      v.csi = csi_volume_source{"driver", local_object_reference{name}};
      break;
  }
}

constexpr std::size_t secret_source_count = 11;

// Upstream's podWithSecrets / podWithConfigMaps builders.
struct env_names {
  strings env_var_names;
  strings env_from_names;
};

pod pod_with_secrets(const strings& pull, const std::vector<env_names>& cs) {
  pod result;
  result.metadata.ns = "ns";
  result.metadata.name = "pod";
  for (const auto& name : pull)
    result.spec.image_pull_secrets.push_back(local_object_reference{name});
  for (std::size_t i = 0; i < cs.size(); ++i) {
    container c;
    c.name = "container-" + std::to_string(i);
    for (const auto& name : cs[i].env_from_names)
      c.env_from.push_back(secret_env_from(name));
    for (const auto& name : cs[i].env_var_names)
      c.env.push_back(secret_env(name));
    result.spec.containers.push_back(std::move(c));
  }
  return result;
}

pod pod_with_config_maps(const std::vector<env_names>& cs,
                         const strings& volumes) {
  pod result;
  result.metadata.ns = "ns";
  result.metadata.name = "pod";
  for (std::size_t i = 0; i < cs.size(); ++i) {
    container c;
    c.name = "container-" + std::to_string(i);
    for (const auto& name : cs[i].env_from_names)
      c.env_from.push_back(config_map_env_from(name));
    for (const auto& name : cs[i].env_var_names)
      c.env.push_back(config_map_env(name));
    result.spec.containers.push_back(std::move(c));
  }
  for (const auto& name : volumes) {
    auto v = config_map_volume(name);
    v.name = name;
    result.spec.volumes.push_back(std::move(v));
  }
  return result;
}

// -- scanning messages/pod.hpp ------------------------------------------------

/// A data member declared in messages/pod.hpp.
struct declared_member {
  std::string name;
  std::string type; // innermost type name, e.g. key_selector
  bool repeated;    // a std::vector
};

/// The structs of messages/pod.hpp and their data members, read from the
/// header text (it keeps one declaration per line).
std::map<std::string, std::vector<declared_member>> read_pod_model() {
  std::ifstream in{PODREF_SOURCE_DIR "/messages/pod.hpp"};
  REQUIRE(in.good());
  static const std::regex struct_open{R"(^struct (\w+) \{)"};
  static const std::regex member{
    R"(^\s+([A-Za-z_][\w:<>, ]*?)\s+(\w+)\s*(=[^;]*)?;)"};
  static const std::regex innermost{R"((\w+)>*$)"};
  std::map<std::string, std::vector<declared_member>> result;
  std::vector<declared_member>* current = nullptr;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, struct_open)) {
      current = &result[m[1]];
    } else if (line.rfind("};", 0) == 0) {
      current = nullptr;
    } else if (current != nullptr && std::regex_search(line, m, member)) {
      std::string type = m[1];
      std::smatch t;
      REQUIRE(std::regex_search(type, t, innermost));
      current->push_back(declared_member{
        m[2], t[1], type.find("std::vector<") != std::string::npos});
    }
  }
  return result;
}

/// Every path from `pod` to a member whose name contains `needle`, rendered
/// like the table's model paths: the analogue of upstream's reflection walk.
void collect_model_paths(
  const std::map<std::string, std::vector<declared_member>>& model,
  const std::string& type, const std::string& prefix,
  const std::string& needle, int depth, string_set& out) {
  REQUIRE(depth < 16); // the model has no cycles
  auto i = model.find(type);
  if (i == model.end())
    return; // a primitive, std::string or a type from another header
  for (const auto& m : i->second) {
    auto path = prefix + m.name;
    if (m.name.find(needle) != std::string::npos)
      out.insert(path);
    collect_model_paths(model, m.type, path + (m.repeated ? "[*]." : "."),
                        needle, depth + 1, out);
  }
}

string_set model_paths_in_header(const std::string& needle) {
  auto model = read_pod_model();
  REQUIRE(model.count("pod") == 1);
  string_set result;
  collect_model_paths(model, "pod", "", needle, 0, result);
  return result;
}

// -- visit_containers fixture -------------------------------------------------

container named(std::string name) {
  container result;
  result.name = std::move(name);
  result.image = "image-" + result.name;
  return result;
}

pod_spec container_fixture() {
  pod_spec spec;
  spec.containers = {named("c1"), named("c2")};
  spec.init_containers = {named("i1"), named("i2")};
  spec.ephemeral_containers = {named("e1"), named("e2")};
  return spec;
}

strings visited_containers(pod_spec& spec, container_type mask) {
  strings result;
  auto all_done = visit_containers(spec, mask,
                                   [&](container& c, container_type kind) {
    auto expected = c.name[0] == 'i'   ? container_type::init_containers
                    : c.name[0] == 'c' ? container_type::containers
                                       : container_type::ephemeral_containers;
    CHECK(kind == expected);
    result.push_back(c.name);
    return true;
  });
  CHECK(all_done);
  return result;
}

} // namespace

// -- TestPodSecrets / TestPodConfigmaps ---------------------------------------

TEST_CASE("the hand-kept model tables list every secret and config map field "
          "of messages/pod.hpp",
          "[pod_references]") {
  // Fails when messages/pod.hpp gains, loses or reroutes such a field: then
  // update secret_fields / config_map_fields above.
  auto secrets = model_paths_in_header("secret");
  auto config_maps = model_paths_in_header("config_map");
  CHECK(std::size(secret_fields) == secrets.size());
  CHECK(std::size(config_map_fields) == config_maps.size());
  CHECK(minus(secrets, model_paths(secret_fields)) == strings{});
  CHECK(minus(model_paths(secret_fields), secrets) == strings{});
  CHECK(minus(config_maps, model_paths(config_map_fields)) == strings{});
  CHECK(minus(model_paths(config_map_fields), config_maps) == strings{});
  // One Go path per model path: no row is listed twice.
  CHECK(go_paths(secret_fields).size() == std::size(secret_fields));
  CHECK(go_paths(config_map_fields).size() == std::size(config_map_fields));
}

TEST_CASE("every secret reference of the model is visited, as in upstream's "
          "TestPodSecrets",
          "[pod_references]") {
  const std::string vs = "Spec.Volumes[*].VolumeSource.";
  const std::string ec = "Spec.EphemeralContainers[*].EphemeralContainerCommon";
  pod p;
  p.spec.containers.push_back(
    secret_container("Spec.Containers[*].EnvFrom[*].SecretRef",
                     "Spec.Containers[*].Env[*].ValueFrom.SecretKeyRef"));
  p.spec.image_pull_secrets.push_back(
    local_object_reference{"Spec.ImagePullSecrets"});
  p.spec.init_containers.push_back(
    secret_container("Spec.InitContainers[*].EnvFrom[*].SecretRef",
                     "Spec.InitContainers[*].Env[*].ValueFrom.SecretKeyRef"));
  auto add_volume = [&](auto set) {
    volume v;
    v.name = "vol-" + std::to_string(p.spec.volumes.size());
    set(v);
    p.spec.volumes.push_back(std::move(v));
  };
  add_volume([&](volume& v) {
    v.azure_file = azure_file_volume_source{vs + "AzureFile.SecretName", ""};
  });
  add_volume([&](volume& v) {
    v.cephfs = secret_ref_source(vs + "CephFS.SecretRef");
  });
  add_volume([&](volume& v) {
    v.cinder = secret_ref_source(vs + "Cinder.SecretRef");
  });
  add_volume([&](volume& v) {
    v.flex_volume = secret_ref_source(vs + "FlexVolume.SecretRef");
  });
  add_volume([&](volume& v) {
    v.projected = projected_volume_source{
      {secret_projection(vs + "Projected.Sources[*].Secret")}};
  });
  add_volume([&](volume& v) {
    v.rbd = secret_ref_source(vs + "RBD.SecretRef");
  });
  add_volume([&](volume& v) {
    v.secret = secret_volume_source{vs + "Secret.SecretName", {}, {}};
  });
  add_volume([&](volume& v) {
    v.secret = secret_volume_source{vs + "Secret", {}, {}};
  });
  add_volume([&](volume& v) {
    v.scale_io = secret_ref_source(vs + "ScaleIO.SecretRef");
  });
  add_volume([&](volume& v) {
    v.iscsi = secret_ref_source(vs + "ISCSI.SecretRef");
  });
  add_volume([&](volume& v) {
    v.storageos = secret_ref_source(vs + "StorageOS.SecretRef");
  });
  add_volume([&](volume& v) {
    v.csi = csi_volume_source{
      "driver", local_object_reference{vs + "CSI.NodePublishSecretRef"}};
  });
  REQUIRE(p.spec.volumes.size() == 12);
  p.spec.ephemeral_containers.push_back(
    secret_container(ec + ".EnvFrom[*].SecretRef",
                     ec + ".Env[*].ValueFrom.SecretKeyRef"));
  auto visited = visited_secrets(p);
  string_set extracted{visited.begin(), visited.end()};
  auto table = go_paths(secret_fields);
  REQUIRE(expected_secret_paths.size() == 19);
  CHECK(visited.size() == 19);
  {
    INFO("missing expected secret paths");
    CHECK(minus(expected_secret_paths, table) == strings{});
  }
  {
    INFO("extra fields with 'secret' in the name found");
    CHECK(minus(table, expected_secret_paths, excluded_secret_paths)
          == strings{});
  }
  {
    INFO("expected secret paths not extracted");
    CHECK(minus(expected_secret_paths, extracted) == strings{});
  }
  {
    INFO("extracted names that are no expected secret path");
    CHECK(minus(extracted, expected_secret_paths) == strings{});
  }
}

TEST_CASE("every config map reference of the model is visited, as in "
          "upstream's TestPodConfigmaps",
          "[pod_references]") {
  const std::string ec = "Spec.EphemeralContainers[*].EphemeralContainerCommon";
  pod p;
  p.spec.containers.push_back(config_map_container(
    "Spec.Containers[*].EnvFrom[*].ConfigMapRef",
    "Spec.Containers[*].Env[*].ValueFrom.ConfigMapKeyRef"));
  p.spec.ephemeral_containers.push_back(
    config_map_container(ec + ".EnvFrom[*].ConfigMapRef",
                         ec + ".Env[*].ValueFrom.ConfigMapKeyRef"));
  p.spec.init_containers.push_back(config_map_container(
    "Spec.InitContainers[*].EnvFrom[*].ConfigMapRef",
    "Spec.InitContainers[*].Env[*].ValueFrom.ConfigMapKeyRef"));
  p.spec.volumes.push_back(projected_volume({config_map_projection(
    "Spec.Volumes[*].VolumeSource.Projected.Sources[*].ConfigMap")}));
  p.spec.volumes.push_back(
    config_map_volume("Spec.Volumes[*].VolumeSource.ConfigMap"));
  auto visited = visited_config_maps(p);
  string_set extracted{visited.begin(), visited.end()};
  auto table = go_paths(config_map_fields);
  REQUIRE(expected_config_map_paths.size() == 8);
  CHECK(visited.size() == 8);
  {
    INFO("missing expected config map paths");
    CHECK(minus(expected_config_map_paths, table) == strings{});
  }
  {
    INFO("extra fields with 'config_map' in the name found");
    CHECK(minus(table, expected_config_map_paths) == strings{});
  }
  {
    INFO("expected config map paths not extracted");
    CHECK(minus(expected_config_map_paths, extracted) == strings{});
  }
  {
    INFO("extracted names that are no expected config map path");
    CHECK(minus(extracted, expected_config_map_paths) == strings{});
  }
}

// -- empty names (4.6) --------------------------------------------------------

TEST_CASE("empty names never reach the visitor", "[pod_references]") {
  auto must_not_be_called = [](const std::string& name) {
    FAIL("visitor called with \"" << name << "\"");
    return true;
  };
  SECTION("an envFrom secretRef with an empty name") {
    pod p;
    container c;
    c.env_from.push_back(secret_env_from(""));
    p.spec.containers.push_back(std::move(c));
    CHECK(visit_pod_secret_names(p, must_not_be_called));
    CHECK(secret_names(p).empty());
  }
  SECTION("an envFrom configMapRef with an empty name") {
    pod p;
    container c;
    c.env_from.push_back(config_map_env_from(""));
    p.spec.containers.push_back(std::move(c));
    CHECK(visit_pod_config_map_names(p, must_not_be_called));
    CHECK(config_map_names(p).empty());
  }
  SECTION("env key refs with empty names") {
    pod p;
    container c;
    c.env.push_back(secret_env(""));
    c.env.push_back(config_map_env(""));
    p.spec.init_containers.push_back(c);
    p.spec.ephemeral_containers.push_back(c);
    CHECK(visit_pod_secret_names(p, must_not_be_called));
    CHECK(visit_pod_config_map_names(p, must_not_be_called));
  }
  SECTION("an imagePullSecret with an empty name") {
    pod p;
    p.spec.image_pull_secrets.push_back(local_object_reference{""});
    CHECK(visit_pod_secret_names(p, must_not_be_called));
    CHECK(secret_names(p).empty());
  }
  SECTION("secret volume sources with empty names") {
    pod p;
    for (std::size_t i = 0; i < secret_source_count; ++i) {
      volume v;
      set_secret_source(v, i, "");
      p.spec.volumes.push_back(std::move(v));
    }
    p.spec.volumes.push_back(
      projected_volume({secret_projection(""), secret_projection("")}));
    CHECK(visit_pod_secret_names(p, must_not_be_called));
    CHECK(secret_names(p).empty());
  }
  SECTION("config map volume sources with empty names") {
    pod p;
    p.spec.volumes.push_back(config_map_volume(""));
    p.spec.volumes.push_back(projected_volume({config_map_projection("")}));
    CHECK(visit_pod_config_map_names(p, must_not_be_called));
    CHECK(config_map_names(p).empty());
  }
  SECTION("an empty name does not stop the walk") {
    pod p;
    p.spec.image_pull_secrets = {local_object_reference{""},
                                 local_object_reference{"s1"}};
    p.spec.volumes.push_back(secret_volume(""));
    p.spec.volumes.push_back(secret_volume("s2"));
    CHECK(visited_secrets(p) == strings{"s1", "s2"});
  }
}

// -- TestVisitContainers / TestContainerIter ----------------------------------

TEST_CASE("visit_containers walks init, regular, then ephemeral containers "
          "filtered by the mask",
          "[pod_references]") {
  using ct = container_type;
  SECTION("an empty pod spec yields nothing") {
    pod_spec empty;
    CHECK(visited_containers(empty, ct::all) == strings{});
  }
  auto spec = container_fixture();
  SECTION("regular containers") {
    CHECK(visited_containers(spec, ct::containers) == strings{"c1", "c2"});
  }
  SECTION("init containers") {
    CHECK(visited_containers(spec, ct::init_containers)
          == strings{"i1", "i2"});
  }
  SECTION("ephemeral containers") {
    CHECK(visited_containers(spec, ct::ephemeral_containers)
          == strings{"e1", "e2"});
  }
  SECTION("init and regular containers") {
    CHECK(visited_containers(spec, ct::init_containers | ct::containers)
          == strings{"i1", "i2", "c1", "c2"});
  }
  SECTION("regular and ephemeral containers, in the fixed order") {
    CHECK(visited_containers(spec, ct::ephemeral_containers | ct::containers)
          == strings{"c1", "c2", "e1", "e2"});
  }
  SECTION("all container types") {
    CHECK(visited_containers(spec, ct::all)
          == strings{"i1", "i2", "c1", "c2", "e1", "e2"});
    CHECK(visited_containers(spec, ct::init_containers | ct::containers
                                     | ct::ephemeral_containers)
          == strings{"i1", "i2", "c1", "c2", "e1", "e2"});
  }
}

TEST_CASE("visit_containers hands out the containers of the spec itself",
          "[pod_references]") {
  // The analogue of upstream's "dropping fields" case.
  auto spec = container_fixture();
  strings seen;
  auto all_done = visit_containers(spec, container_type::all,
                                   [&](container& c, container_type) {
    seen.push_back(c.name);
    c.image.clear();
    return true;
  });
  CHECK(all_done);
  CHECK(seen == strings{"i1", "i2", "c1", "c2", "e1", "e2"});
  for (const auto* list :
       {&spec.init_containers, &spec.containers, &spec.ephemeral_containers})
    for (const auto& c : *list)
      CHECK(c.image.empty());
}

TEST_CASE("visit_containers stops and returns false when the visitor does",
          "[pod_references]") {
  auto spec = container_fixture();
  strings seen;
  auto all_done = visit_containers(spec, container_type::all,
                                   [&](container& c, container_type) {
    seen.push_back(c.name);
    return c.name != "c1";
  });
  CHECK_FALSE(all_done);
  CHECK(seen == strings{"i1", "i2", "c1"});
}

// -- order and short-circuit rules --------------------------------------------

TEST_CASE("secret names are visited in upstream's order", "[pod_references]") {
  pod p;
  p.spec.image_pull_secrets = {local_object_reference{"pull-1"},
                               local_object_reference{"pull-2"}};
  container regular;
  regular.env.push_back(secret_env("c-env"));
  regular.env_from.push_back(secret_env_from("c-from-1"));
  regular.env_from.push_back(secret_env_from("c-from-2"));
  regular.env.push_back(config_map_env("not-a-secret"));
  p.spec.containers.push_back(std::move(regular));
  p.spec.ephemeral_containers.push_back(secret_container("e-from", "e-env"));
  p.spec.init_containers.push_back(secret_container("i-from", "i-env"));
  p.spec.volumes.push_back(secret_volume("vol-1"));
  p.spec.volumes.push_back(config_map_volume("not-a-secret"));
  p.spec.volumes.push_back(projected_volume(
    {secret_projection("proj-1"), config_map_projection("not-a-secret"),
     volume_projection{}, secret_projection("proj-2")}));
  CHECK(visited_secrets(p)
        == strings{"pull-1", "pull-2", "i-from", "i-env", "c-from-1",
                   "c-from-2", "c-env", "e-from", "e-env", "vol-1",
                   "proj-1", "proj-2"});
}

TEST_CASE("a stop among the image pull secrets ends the secret walk",
          "[pod_references]") {
  pod p;
  p.spec.image_pull_secrets = {local_object_reference{"pull-1"},
                               local_object_reference{"pull-2"}};
  p.spec.containers.push_back(secret_container("from", "env"));
  p.spec.volumes.push_back(secret_volume("vol"));
  strings seen;
  CHECK_FALSE(visit_pod_secret_names(p, stopping_visitor{"pull-1", &seen}));
  CHECK(seen == strings{"pull-1"});
}

TEST_CASE("a stop in the container pass still visits the volumes",
          "[pod_references]") {
  // Upstream quirk: VisitPodSecretNames ignores the container pass result.
  pod p;
  p.spec.init_containers.push_back(secret_container("i-from", "i-env"));
  p.spec.containers.push_back(secret_container("c-from", "c-env"));
  p.spec.volumes.push_back(secret_volume("vol-1"));
  p.spec.volumes.push_back(secret_volume("vol-2"));
  strings seen;
  CHECK(visit_pod_secret_names(p, stopping_visitor{"i-from", &seen}));
  CHECK(seen == strings{"i-from", "vol-1", "vol-2"});
}

TEST_CASE("a stop in the volume pass makes the secret walk return false",
          "[pod_references]") {
  pod p;
  p.spec.volumes.push_back(secret_volume("vol-1"));
  p.spec.volumes.push_back(secret_volume("vol-2"));
  p.spec.volumes.push_back(secret_volume("vol-3"));
  strings seen;
  CHECK_FALSE(visit_pod_secret_names(p, stopping_visitor{"vol-2", &seen}));
  CHECK(seen == strings{"vol-1", "vol-2"});
}

TEST_CASE("a volume with several secret sources yields only the first in "
          "upstream's order",
          "[pod_references]") {
  SECTION("secret before csi") {
    pod p;
    volume v = secret_volume("from-secret");
    v.csi = csi_volume_source{"driver", local_object_reference{"from-csi"}};
    p.spec.volumes.push_back(std::move(v));
    CHECK(visited_secrets(p) == strings{"from-secret"});
  }
  SECTION("each source shadows every later one") {
    for (std::size_t first = 0; first < secret_source_count; ++first) {
      pod p;
      volume v;
      for (std::size_t i = first; i < secret_source_count; ++i)
        set_secret_source(v, i, "source-" + std::to_string(i));
      p.spec.volumes.push_back(std::move(v));
      INFO("first set source: " << first);
      CHECK(visited_secrets(p)
            == strings{"source-" + std::to_string(first)});
    }
  }
  SECTION("azureFile with an empty secretName still takes the branch") {
    pod p;
    volume v = secret_volume("shadowed");
    v.azure_file = azure_file_volume_source{"", "share"};
    p.spec.volumes.push_back(std::move(v));
    CHECK(visited_secrets(p) == strings{});
  }
  SECTION("a secretRef volume without secretRef still takes the branch") {
    pod p;
    volume v = secret_volume("shadowed");
    v.cephfs = secret_ref_volume_source{};
    p.spec.volumes.push_back(std::move(v));
    CHECK(visited_secrets(p) == strings{});
  }
}

TEST_CASE("a projected volume yields all its secret sources in order",
          "[pod_references]") {
  pod p;
  p.spec.volumes.push_back(projected_volume(
    {secret_projection("a"), secret_projection("b"), secret_projection("c")}));
  p.spec.volumes.push_back(secret_volume("d"));
  CHECK(visited_secrets(p) == strings{"a", "b", "c", "d"});
  strings seen;
  CHECK_FALSE(visit_pod_secret_names(p, stopping_visitor{"b", &seen}));
  CHECK(seen == strings{"a", "b"});
}

TEST_CASE("config map names are visited in upstream's order",
          "[pod_references]") {
  pod p;
  p.spec.image_pull_secrets.push_back(local_object_reference{"not-a-cm"});
  p.spec.containers.push_back(config_map_container("c-from", "c-env"));
  p.spec.ephemeral_containers.push_back(
    config_map_container("e-from", "e-env"));
  p.spec.init_containers.push_back(config_map_container("i-from", "i-env"));
  p.spec.init_containers[0].env.push_back(secret_env("not-a-cm"));
  p.spec.volumes.push_back(config_map_volume("vol-1"));
  p.spec.volumes.push_back(secret_volume("not-a-cm"));
  p.spec.volumes.push_back(projected_volume(
    {config_map_projection("proj-1"), secret_projection("not-a-cm"),
     config_map_projection("proj-2")}));
  CHECK(visited_config_maps(p)
        == strings{"i-from", "i-env", "c-from", "c-env", "e-from", "e-env",
                   "vol-1", "proj-1", "proj-2"});
}

TEST_CASE("config map stops follow the secret rules", "[pod_references]") {
  pod p;
  p.spec.containers.push_back(config_map_container("from-1", "env-1"));
  p.spec.containers.push_back(config_map_container("from-2", "env-2"));
  p.spec.volumes.push_back(config_map_volume("vol-1"));
  p.spec.volumes.push_back(config_map_volume("vol-2"));
  SECTION("a stop in the container pass still visits the volumes") {
    strings seen;
    CHECK(visit_pod_config_map_names(p, stopping_visitor{"from-1", &seen}));
    CHECK(seen == strings{"from-1", "vol-1", "vol-2"});
  }
  SECTION("a stop in the volume pass returns false") {
    strings seen;
    CHECK_FALSE(
      visit_pod_config_map_names(p, stopping_visitor{"vol-1", &seen}));
    CHECK(seen == strings{"from-1", "env-1", "from-2", "env-2", "vol-1"});
  }
}

TEST_CASE("a projected volume takes precedence over a configMap source",
          "[pod_references]") {
  SECTION("projected config maps are visited, the configMap is not") {
    pod p;
    volume v = config_map_volume("shadowed");
    v.projected = projected_volume_source{
      {config_map_projection("p1"), config_map_projection("p2")}};
    p.spec.volumes.push_back(std::move(v));
    CHECK(visited_config_maps(p) == strings{"p1", "p2"});
  }
  SECTION("even a projected volume without config maps shadows it") {
    pod p;
    volume v = config_map_volume("shadowed");
    v.projected = projected_volume_source{{secret_projection("s")}};
    p.spec.volumes.push_back(std::move(v));
    CHECK(visited_config_maps(p) == strings{});
  }
}

// -- secret_names / config_map_names ------------------------------------------

TEST_CASE("secret_names and config_map_names are sorted and distinct",
          "[pod_references]") {
  pod p;
  p.spec.image_pull_secrets = {local_object_reference{"b"},
                               local_object_reference{"a"}};
  p.spec.containers.push_back(secret_container("b", "c"));
  p.spec.init_containers.push_back(secret_container("c", "a"));
  p.spec.containers.push_back(config_map_container("y", "x"));
  p.spec.volumes.push_back(secret_volume("a"));
  p.spec.volumes.push_back(config_map_volume("x"));
  p.spec.volumes.push_back(
    projected_volume({config_map_projection("z"), config_map_projection("y"),
                      secret_projection("d")}));
  CHECK(secret_names(p) == strings{"a", "b", "c", "d"});
  CHECK(config_map_names(p) == strings{"x", "y", "z"});
  CHECK(secret_names(pod{}) == strings{});
  CHECK(config_map_names(pod{}) == strings{});
}

TEST_CASE("secret_names matches the kubelet manager test pods",
          "[pod_references]") {
  // TestCacheBasedSecretManager
  CHECK(secret_names(pod_with_secrets({"s1"}, {{{"s1"}, {}},
                                               {{"s2"}, {"s20"}}}))
        == strings{"s1", "s2", "s20"});
  CHECK(secret_names(pod_with_secrets({"s1"}, {{{"s3"}, {}},
                                               {{"s4"}, {"s40"}}}))
        == strings{"s1", "s3", "s4", "s40"});
  CHECK(secret_names(pod_with_secrets({"s5"}, {{{"s6"}, {"s60"}}}))
        == strings{"s5", "s6", "s60"});
  // TestCacheInvalidation
  CHECK(secret_names(pod_with_secrets({"s1"}, {{{"s1"}, {"s10"}},
                                               {{"s2"}, {}}}))
        == strings{"s1", "s10", "s2"});
  CHECK(secret_names(pod_with_secrets(
          {"s1"}, {{{"s1"}, {}}, {{"s2"}, {"s20"}}, {{"s3"}, {}}}))
        == strings{"s1", "s2", "s20", "s3"});
  // TestCacheRefcounts
  CHECK(secret_names(pod_with_secrets(
          {"s1"}, {{{"s1"}, {"s10"}}, {{"s2"}, {}}, {{"s3"}, {}}}))
        == strings{"s1", "s10", "s2", "s3"});
  CHECK(secret_names(pod_with_secrets({"s2"}, {{{"s4"}, {}},
                                               {{"s5"}, {"s50"}}}))
        == strings{"s2", "s4", "s5", "s50"});
  CHECK(secret_names(pod_with_secrets({"s1"}, {{{"s3"}, {"s30"}},
                                               {{"s5"}, {}}}))
        == strings{"s1", "s3", "s30", "s5"});
  CHECK(secret_names(pod_with_secrets({"s3"}, {{{"s6"}, {}},
                                               {{}, {"s60"}}}))
        == strings{"s3", "s6", "s60"});
  CHECK(secret_names(pod_with_secrets({}, {{{"s7"}, {}}, {{}, {"s70"}}}))
        == strings{"s7", "s70"});
}

TEST_CASE("config_map_names matches the kubelet manager test pods",
          "[pod_references]") {
  // TestCacheBasedConfigMapManager
  CHECK(config_map_names(
          pod_with_config_maps({{{"s1"}, {}}, {{}, {"s20"}}}, {"s2"}))
        == strings{"s1", "s2", "s20"});
  CHECK(config_map_names(
          pod_with_config_maps({{{"s3"}, {}}, {{"s4"}, {"s40"}}}, {}))
        == strings{"s3", "s4", "s40"});
  CHECK(config_map_names(pod_with_config_maps({{{"s6"}, {"s60"}}}, {}))
        == strings{"s6", "s60"});
}
