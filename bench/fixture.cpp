// Builders of the workloads' secrets and pods.
#include "bench/fixture.hpp"

#include <memory>
#include <optional>

#include "podref/messages/secret.hpp"

namespace podref::bench {

std::string secret_name(std::size_t i) {
  return "s-" + std::to_string(i);
}

api_object make_pool_secret(std::size_t i, const std::string& value) {
  auto x = std::make_shared<secret>();
  x->metadata.ns = bench_namespace;
  x->metadata.name = secret_name(i);
  x->type = "Opaque";
  x->data["key"] = value.empty() ? "value-" + secret_name(i) : value;
  return api_object{secret_ptr{std::move(x)}};
}

pod make_bench_pod(const std::string& prefix, std::size_t i,
                   const std::string& pull, const std::string& env,
                   const std::string& vol) {
  pod p;
  auto id = prefix + "-" + std::to_string(i);
  p.metadata.ns = bench_namespace;
  p.metadata.name = id;
  p.metadata.uid = "uid-" + id;
  p.spec.image_pull_secrets.push_back(local_object_reference{pull});
  container c;
  c.name = "app";
  c.image = "app:1";
  env_var var;
  var.name = "KEY";
  var.value_from = env_var_source{};
  var.value_from->secret_key_ref = key_selector{env, "key", std::nullopt};
  c.env.push_back(std::move(var));
  p.spec.containers.push_back(std::move(c));
  volume v;
  v.name = "secret-volume";
  v.secret = secret_volume_source{vol, {}, std::nullopt};
  p.spec.volumes.push_back(std::move(v));
  return p;
}

std::vector<pod> pool_pods(const std::string& prefix, std::size_t first,
                           std::size_t count, std::size_t pool) {
  std::vector<pod> res;
  res.reserve(count);
  for (auto i = first; i < first + count; ++i)
    res.push_back(make_bench_pod(prefix, i, secret_name(i % pool),
                                 secret_name((i + 1) % pool),
                                 secret_name((i + 2) % pool)));
  return res;
}

std::vector<pod> disjoint_pods(const std::string& prefix, std::size_t count,
                               std::size_t pool) {
  std::vector<pod> res;
  res.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    res.push_back(make_bench_pod(prefix, i, secret_name(3 * i % pool),
                                 secret_name((3 * i + 1) % pool),
                                 secret_name((3 * i + 2) % pool)));
  return res;
}

std::vector<pod> distinct_pods(const std::string& prefix, std::size_t count) {
  std::vector<pod> res;
  res.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    auto name = secret_name(i);
    res.push_back(make_bench_pod(prefix, i, name, name, name));
  }
  return res;
}

} // namespace podref::bench
