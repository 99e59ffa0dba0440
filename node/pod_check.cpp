// The kubelet's complaints about a pod's objects (pod_check.hpp).
#include "podref/node/pod_check.hpp"

#include <map>
#include <optional>

namespace podref {

namespace {

bool is_optional(const std::optional<bool>& x) {
  return x.value_or(false);
}

/// Reads of one pod check; each object is read once per check.
class object_reader {
public:
  object_reader(const pod& p, secret_manager& secrets,
                configmap_manager& config_maps, std::uint64_t& reads,
                std::uint64_t& failed)
    : ns_(p.metadata.ns),
      secrets_(secrets),
      config_maps_(config_maps),
      reads_(reads),
      failed_(failed) {
    // nop
  }

  /// The secret, or the manager's error text.
  const result<secret_ptr>& secret(const std::string& name) {
    auto i = secret_cache_.find(name);
    if (i == secret_cache_.end()) {
      ++reads_;
      i = secret_cache_.emplace(name, secrets_.get_secret(ns_, name)).first;
      if (!i->second)
        ++failed_;
    }
    return i->second;
  }

  const result<config_map_ptr>& config_map(const std::string& name) {
    auto i = cm_cache_.find(name);
    if (i == cm_cache_.end()) {
      ++reads_;
      i = cm_cache_.emplace(name, config_maps_.get_configmap(ns_, name)).first;
      if (!i->second)
        ++failed_;
    }
    return i->second;
  }

private:
  const std::string& ns_;
  secret_manager& secrets_;
  configmap_manager& config_maps_;
  std::uint64_t& reads_;
  std::uint64_t& failed_;
  std::map<std::string, result<secret_ptr>> secret_cache_;
  std::map<std::string, result<config_map_ptr>> cm_cache_;
};

bool has_key(const secret_ptr& s, const std::string& key) {
  return s->data.count(key) != 0 || s->string_data.count(key) != 0;
}

bool has_key(const config_map_ptr& c, const std::string& key) {
  return c->data.count(key) != 0 || c->binary_data.count(key) != 0;
}

/// A container's envFrom and env, as the kubelet builds its environment
/// (CreateContainerConfigError texts).
void check_container(const container& c, const std::string& ns,
                     object_reader& read, std::vector<std::string>& out) {
  auto where = "container \"" + c.name + "\": ";
  for (const auto& from : c.env_from) {
    if (from.config_map_ref && !from.config_map_ref->name.empty()) {
      const auto& got = read.config_map(from.config_map_ref->name);
      if (!got && !is_optional(from.config_map_ref->optional))
        out.push_back(where + got.error().message);
    }
    if (from.secret_ref && !from.secret_ref->name.empty()) {
      const auto& got = read.secret(from.secret_ref->name);
      if (!got && !is_optional(from.secret_ref->optional))
        out.push_back(where + got.error().message);
    }
  }
  for (const auto& env : c.env) {
    if (!env.value_from)
      continue;
    if (const auto& ref = env.value_from->config_map_key_ref) {
      const auto& got = read.config_map(ref->name);
      if (!got) {
        if (!is_optional(ref->optional))
          out.push_back(where + got.error().message);
      } else if (!has_key(*got, ref->key) && !is_optional(ref->optional)) {
        out.push_back(where + "couldn't find key " + ref->key
                      + " in ConfigMap " + ns + "/" + ref->name);
      }
    }
    if (const auto& ref = env.value_from->secret_key_ref) {
      const auto& got = read.secret(ref->name);
      if (!got) {
        if (!is_optional(ref->optional))
          out.push_back(where + got.error().message);
      } else if (!has_key(*got, ref->key) && !is_optional(ref->optional)) {
        out.push_back(where + "couldn't find key " + ref->key + " in Secret "
                      + ns + "/" + ref->name);
      }
    }
  }
}

std::string mount_failed(const volume& v, const std::string& why) {
  return "MountVolume.SetUp failed for volume \"" + v.name + "\" : " + why;
}

/// A secret-like volume source (secret volume, projected secret): a
/// missing object is fine only when optional (and then its items are not
/// checked), a missing item key likewise.
template <class Ptr, class Items>
void check_volume_object(const volume& v, const result<Ptr>& got,
                         const Items& items, bool optional,
                         const char* missing_key,
                         std::vector<std::string>& out) {
  if (!got) {
    if (!(optional && got.error().code == errc::not_found))
      out.push_back(mount_failed(v, got.error().message));
    return;
  }
  for (const auto& item : items)
    if (!has_key(*got, item.key) && !optional)
      out.push_back(mount_failed(v, missing_key + item.key));
}

void check_volume(const volume& v, object_reader& read,
                  std::vector<std::string>& out) {
  if (v.secret && !v.secret->secret_name.empty())
    check_volume_object(v, read.secret(v.secret->secret_name), v.secret->items,
                        is_optional(v.secret->optional),
                        "references non-existent secret key: ", out);
  if (v.config_map && !v.config_map->name.empty())
    check_volume_object(v, read.config_map(v.config_map->name),
                        v.config_map->items,
                        is_optional(v.config_map->optional),
                        "configmap references non-existent config key: ", out);
  if (v.projected)
    for (const auto& src : v.projected->sources) {
      if (src.secret && !src.secret->name.empty())
        check_volume_object(v, read.secret(src.secret->name),
                            src.secret->items, is_optional(src.secret->optional),
                            "references non-existent secret key: ", out);
      if (src.config_map && !src.config_map->name.empty())
        check_volume_object(v, read.config_map(src.config_map->name),
                            src.config_map->items,
                            is_optional(src.config_map->optional),
                            "configmap references non-existent config key: ",
                            out);
    }
  // The drivers' own secrets: their plugins fail the mount when absent.
  auto plain = [&](const std::string& name) {
    if (name.empty())
      return;
    const auto& got = read.secret(name);
    if (!got)
      out.push_back(mount_failed(v, got.error().message));
  };
  if (v.azure_file)
    plain(v.azure_file->secret_name);
  if (v.csi && v.csi->node_publish_secret_ref)
    plain(v.csi->node_publish_secret_ref->name);
  for (const auto* src : {&v.cephfs, &v.cinder, &v.flex_volume, &v.rbd,
                          &v.scale_io, &v.iscsi, &v.storageos})
    if (*src && (*src)->secret_ref)
      plain((*src)->secret_ref->name);
}

} // namespace

std::vector<std::string> check_pod_objects(const pod& p,
                                           secret_manager& secrets,
                                           configmap_manager& config_maps,
                                           std::uint64_t& reads,
                                           std::uint64_t& failed) {
  std::vector<std::string> out;
  object_reader read{p, secrets, config_maps, reads, failed};
  const auto& ns = p.metadata.ns;
  // The kubelet only warns about a pull secret it cannot read.
  for (const auto& ref : p.spec.image_pull_secrets) {
    if (ref.name.empty())
      continue;
    const auto& got = read.secret(ref.name);
    if (!got)
      out.push_back("Unable to retrieve pull secret " + ns + "/" + ref.name
                    + " for " + ns + "/" + p.metadata.name + " due to "
                    + got.error().message
                    + ".  The image pull may not succeed.");
  }
  for (const auto& v : p.spec.volumes)
    check_volume(v, read, out);
  for (const auto* list : {&p.spec.init_containers, &p.spec.containers,
                           &p.spec.ephemeral_containers})
    for (const auto& c : *list)
      check_container(c, ns, read, out);
  return out;
}

} // namespace podref
