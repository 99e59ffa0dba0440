#include "support/pod_builders.hpp"

#include <memory>

namespace podref::test {

namespace {

/// The identity every builder sets.
pod make_pod(const std::string& ns, const std::string& name,
             const std::string& uid) {
  pod result;
  result.metadata.ns = ns;
  result.metadata.name = name;
  result.metadata.uid = uid;
  return result;
}

} // namespace

pod pod_with_secrets(const std::string& ns, const std::string& name,
                     const std::string& uid,
                     const std::vector<std::string>& pull,
                     const std::vector<env_refs>& containers) {
  auto result = make_pod(ns, name, uid);
  for (const auto& x : pull)
    result.spec.image_pull_secrets.push_back(local_object_reference{x});
  for (std::size_t i = 0; i < containers.size(); ++i) {
    container c;
    c.name = "container-" + std::to_string(i);
    for (const auto& x : containers[i].env_from) {
      env_from_source src;
      src.secret_ref = env_source_ref{x, std::nullopt};
      c.env_from.push_back(std::move(src));
    }
    for (const auto& x : containers[i].env) {
      env_var var;
      var.name = "env-" + x;
      var.value_from = env_var_source{};
      var.value_from->secret_key_ref = key_selector{x, "key", std::nullopt};
      c.env.push_back(std::move(var));
    }
    result.spec.containers.push_back(std::move(c));
  }
  return result;
}

pod pod_with_config_maps(const std::string& ns, const std::string& name,
                         const std::string& uid,
                         const std::vector<env_refs>& containers,
                         const std::vector<std::string>& volumes) {
  auto result = make_pod(ns, name, uid);
  for (std::size_t i = 0; i < containers.size(); ++i) {
    container c;
    c.name = "container-" + std::to_string(i);
    for (const auto& x : containers[i].env_from) {
      env_from_source src;
      src.config_map_ref = env_source_ref{x, std::nullopt};
      c.env_from.push_back(std::move(src));
    }
    for (const auto& x : containers[i].env) {
      env_var var;
      var.name = "env-" + x;
      var.value_from = env_var_source{};
      var.value_from->config_map_key_ref
        = key_selector{x, "key", std::nullopt};
      c.env.push_back(std::move(var));
    }
    result.spec.containers.push_back(std::move(c));
  }
  for (const auto& x : volumes) {
    volume v;
    v.name = x;
    v.config_map = config_map_volume_source{x, {}, std::nullopt};
    result.spec.volumes.push_back(std::move(v));
  }
  return result;
}

pod bare_pod(const std::string& ns, const std::string& name,
             const std::string& uid) {
  return make_pod(ns, name, uid);
}

api_object make_secret(const std::string& ns, const std::string& name,
                       const std::map<std::string, std::string>& data,
                       bool immutable) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = ns;
  x->metadata.name = name;
  x->type = "Opaque";
  x->data = data;
  if (immutable)
    x->immutable = true;
  return api_object{secret_ptr{std::move(x)}};
}

api_object make_config_map(const std::string& ns, const std::string& name,
                           const std::map<std::string, std::string>& data,
                           bool immutable) {
  auto x = std::make_shared<config_map>();
  x->metadata.ns = ns;
  x->metadata.name = name;
  x->data = data;
  if (immutable)
    x->immutable = true;
  return api_object{config_map_ptr{std::move(x)}};
}

} // namespace podref::test
