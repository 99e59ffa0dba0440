// simdjson on-demand decoding of Pods and Nodes (pod_decode.hpp has the
// contract). The field names and the kept shape follow the manifest
// decoder's (manifest/detail/pod_spec_decoder.cpp), which decodes the same
// model from parsed YAML/JSON.
#include "podref/wire/pod_decode.hpp"

#include <array>
#include <memory>
#include <utility>

#include "podref/messages/validation.hpp"
#include "podref/wire/detail/ondemand.hpp"

namespace podref::wire {

using namespace detail; // NOLINT: the on-demand helpers

namespace {

/// Walks the elements of the array `v` (null: none) at `path`, failing
/// once there are more than `max` (`more <what> than the limit of <max>
/// per <owner>`, as the manifest decoder says it).
template <class F>
void elements(od::value v, const std::string& path, std::size_t max,
              std::string_view what, std::string_view owner, F&& on_element) {
  if (is_null(v))
    return;
  if (v.type() != od::json_type::array)
    fail(path, "expected a list");
  std::size_t i = 0;
  for (auto element : v.get_array()) {
    if (i == max)
      fail(path, "more " + std::string{what} + " than the limit of "
                   + std::to_string(max) + " per " + std::string{owner});
    on_element(element.value(), path + "[" + std::to_string(i) + "]");
    ++i;
  }
}

constexpr std::size_t unbounded = static_cast<std::size_t>(-1);

/// True when `v` is set (not null); fails unless it is an object. For the
/// fields recognised but not modelled.
bool has_object(od::value v, const std::string& path) {
  if (is_null(v))
    return false;
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  return true;
}

// -- references ---------------------------------------------------------------

local_object_reference local_ref(od::value v, const std::string& path) {
  local_object_reference out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "name")
      out.name = text(x, path + ".name");
  });
  return out;
}

key_selector key_ref(od::value v, const std::string& path) {
  key_selector out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "name")
      out.name = text(x, path + ".name");
    else if (key == "key")
      out.key = text(x, path + ".key");
    else if (key == "optional")
      out.optional = boolean(x, path + ".optional");
  });
  return out;
}

env_source_ref source_ref(od::value v, const std::string& path) {
  env_source_ref out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "name")
      out.name = text(x, path + ".name");
    else if (key == "optional")
      out.optional = boolean(x, path + ".optional");
  });
  return out;
}

std::vector<key_to_path> items(od::value v, const std::string& path) {
  std::vector<key_to_path> out;
  elements(v, path, unbounded, "", "", [&](od::value e, const std::string& at) {
    key_to_path k;
    members(e, at, [&](std::string_view key, od::value& x) {
      if (key == "key")
        k.key = text(x, at + ".key");
      else if (key == "path")
        k.path = text(x, at + ".path");
    });
    out.push_back(std::move(k));
  });
  return out;
}

// -- containers ---------------------------------------------------------------

container decode_container(od::value v, const std::string& path,
                           const manifest_limits& limits) {
  container out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "name") {
      out.name = text(x, path + ".name");
    } else if (key == "image") {
      out.image = text(x, path + ".image");
    } else if (key == "envFrom") {
      elements(x, path + ".envFrom", limits.max_env_from, "envFrom entries",
               "container", [&](od::value e, const std::string& at) {
                 env_from_source f;
                 members(e, at, [&](std::string_view k, od::value& y) {
                   if (k == "prefix")
                     f.prefix = text(y, at + ".prefix");
                   else if (k == "secretRef")
                     f.secret_ref = source_ref(y, at + ".secretRef");
                   else if (k == "configMapRef")
                     f.config_map_ref = source_ref(y, at + ".configMapRef");
                 });
                 out.env_from.push_back(std::move(f));
               });
    } else if (key == "env") {
      elements(x, path + ".env", limits.max_env, "env entries", "container",
               [&](od::value e, const std::string& at) {
                 env_var ev;
                 members(e, at, [&](std::string_view k, od::value& y) {
                   if (k == "name") {
                     ev.name = text(y, at + ".name");
                   } else if (k == "value") {
                     ev.value = text(y, at + ".value");
                   } else if (k == "valueFrom") {
                     auto from = at + ".valueFrom";
                     env_var_source s;
                     members(y, from, [&](std::string_view k2, od::value& z) {
                       if (k2 == "secretKeyRef")
                         s.secret_key_ref = key_ref(z, from + ".secretKeyRef");
                       else if (k2 == "configMapKeyRef")
                         s.config_map_key_ref
                           = key_ref(z, from + ".configMapKeyRef");
                       else if (k2 == "fieldRef" || k2 == "resourceFieldRef")
                         s.other_source |= has_object(z, from + "."
                                                           + std::string{k2});
                     });
                     ev.value_from = std::move(s);
                   }
                 });
                 out.env.push_back(std::move(ev));
               });
    }
  });
  return out;
}

// -- volumes ------------------------------------------------------------------

projection_ref projection(od::value v, const std::string& path) {
  projection_ref out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "name")
      out.name = text(x, path + ".name");
    else if (key == "items")
      out.items = items(x, path + ".items");
    else if (key == "optional")
      out.optional = boolean(x, path + ".optional");
  });
  return out;
}

secret_ref_volume_source secret_ref_volume(od::value v,
                                           const std::string& path) {
  secret_ref_volume_source out;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "secretRef")
      out.secret_ref = local_ref(x, path + ".secretRef");
  });
  return out;
}

/// The VolumeSource keys that reference no Secret or ConfigMap (the
/// manifest decoder's list).
constexpr std::array<std::string_view, 18> other_volume_sources = {
  "awsElasticBlockStore", "azureDisk", "downwardAPI", "emptyDir", "ephemeral",
  "fc", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath",
  "image", "nfs", "persistentVolumeClaim", "photonPersistentDisk",
  "portworxVolume", "quobyte", "vsphereVolume",
};

volume decode_volume(od::value v, const std::string& path) {
  volume out;
  std::string other; // the first other source in alphabetical order
  members(v, path, [&](std::string_view key, od::value& x) {
    auto at = path + "." + std::string{key};
    if (key == "name") {
      out.name = text(x, at);
    } else if (key == "secret") {
      secret_volume_source s;
      members(x, at, [&](std::string_view k, od::value& y) {
        if (k == "secretName")
          s.secret_name = text(y, at + ".secretName");
        else if (k == "items")
          s.items = items(y, at + ".items");
        else if (k == "optional")
          s.optional = boolean(y, at + ".optional");
      });
      out.secret = std::move(s);
    } else if (key == "configMap") {
      config_map_volume_source s;
      members(x, at, [&](std::string_view k, od::value& y) {
        if (k == "name")
          s.name = text(y, at + ".name");
        else if (k == "items")
          s.items = items(y, at + ".items");
        else if (k == "optional")
          s.optional = boolean(y, at + ".optional");
      });
      out.config_map = std::move(s);
    } else if (key == "projected") {
      projected_volume_source s;
      members(x, at, [&](std::string_view k, od::value& y) {
        if (k != "sources")
          return;
        elements(y, at + ".sources", unbounded, "", "",
                 [&](od::value e, const std::string& src) {
                   volume_projection p;
                   members(e, src, [&](std::string_view k2, od::value& z) {
                     if (k2 == "secret")
                       p.secret = projection(z, src + ".secret");
                     else if (k2 == "configMap")
                       p.config_map = projection(z, src + ".configMap");
                     else if (k2 == "serviceAccountToken"
                              || k2 == "downwardAPI"
                              || k2 == "clusterTrustBundle"
                              || k2 == "podCertificate")
                       p.other_source |= has_object(z, src + "."
                                                         + std::string{k2});
                   });
                   s.sources.push_back(std::move(p));
                 });
      });
      out.projected = std::move(s);
    } else if (key == "azureFile") {
      azure_file_volume_source s;
      members(x, at, [&](std::string_view k, od::value& y) {
        if (k == "secretName")
          s.secret_name = text(y, at + ".secretName");
        else if (k == "shareName")
          s.share_name = text(y, at + ".shareName");
      });
      out.azure_file = std::move(s);
    } else if (key == "csi") {
      csi_volume_source s;
      members(x, at, [&](std::string_view k, od::value& y) {
        if (k == "driver")
          s.driver = text(y, at + ".driver");
        else if (k == "nodePublishSecretRef")
          s.node_publish_secret_ref = local_ref(y, at + ".nodePublishSecretRef");
      });
      out.csi = std::move(s);
    } else if (key == "cephfs") {
      out.cephfs = secret_ref_volume(x, at);
    } else if (key == "cinder") {
      out.cinder = secret_ref_volume(x, at);
    } else if (key == "flexVolume") {
      out.flex_volume = secret_ref_volume(x, at);
    } else if (key == "rbd") {
      out.rbd = secret_ref_volume(x, at);
    } else if (key == "scaleIO") {
      out.scale_io = secret_ref_volume(x, at);
    } else if (key == "iscsi") {
      out.iscsi = secret_ref_volume(x, at);
    } else if (key == "storageos") {
      out.storageos = secret_ref_volume(x, at);
    } else {
      for (auto o : other_volume_sources)
        if (key == o && has_object(x, at) && (other.empty() || key < other))
          other = std::string{key};
    }
  });
  out.other_source = std::move(other);
  return out;
}

// -- pods ---------------------------------------------------------------------

void decode_spec(od::value v, const std::string& path, pod_spec& spec,
                 std::string& node_name, const manifest_limits& limits) {
  std::size_t containers = 0;
  auto container_list = [&](od::value& x, const std::string& at,
                            std::vector<container>& out) {
    // One limit over the three lists, as the manifest decoder counts them.
    elements(x, at, unbounded, "", "",
             [&](od::value e, const std::string& c) {
               if (containers == limits.max_containers)
                 fail(at, "more containers than the limit of "
                            + std::to_string(limits.max_containers)
                            + " per pod");
               ++containers;
               out.push_back(decode_container(e, c, limits));
             });
  };
  members(v, path, [&](std::string_view key, od::value& x) {
    auto at = path + "." + std::string{key};
    if (key == "nodeName") {
      node_name = text(x, at);
    } else if (key == "imagePullSecrets") {
      elements(x, at, limits.max_image_pull_secrets,
               "imagePullSecrets entries", "pod",
               [&](od::value e, const std::string& s) {
                 spec.image_pull_secrets.push_back(local_ref(e, s));
               });
    } else if (key == "initContainers") {
      container_list(x, at, spec.init_containers);
    } else if (key == "containers") {
      container_list(x, at, spec.containers);
    } else if (key == "ephemeralContainers") {
      container_list(x, at, spec.ephemeral_containers);
    } else if (key == "volumes") {
      elements(x, at, limits.max_volumes, "volumes", "pod",
               [&](od::value e, const std::string& s) {
                 spec.volumes.push_back(decode_volume(e, s));
               });
    }
  });
  if (auto bad = find_reference_problem(spec, limits.max_references))
    fail(path + "." + bad->path, bad->problem);
}

/// One pod; a bad field (or a pod find_pod_problem refuses) comes back
/// rejected. The pod's metadata is written first by the API server, so a
/// rejection names the pod.
pod_item pod_of(od::value v, const std::string& path,
                const manifest_limits& limits) {
  pod_item out;
  auto p = std::make_shared<pod>();
  try {
    if (v.type() != od::json_type::object)
      fail(path, "expected an object");
    members(v, path, [&](std::string_view key, od::value& x) {
      if (key == "metadata") {
        decode_meta(x, p->metadata, "metadata",
                    [&](std::string_view k, od::value& y) {
                      if (k == "deletionTimestamp")
                        out.pod.deletion_timestamp
                          = text(y, "metadata.deletionTimestamp");
                    });
      } else if (key == "spec") {
        decode_spec(x, "spec", p->spec, out.pod.node_name, limits);
      } else if (key == "status") {
        members(x, "status", [&](std::string_view k, od::value& y) {
          if (k == "phase")
            out.pod.phase = text(y, "status.phase");
        });
      }
    });
    if (auto bad = find_pod_problem(*p))
      fail(bad->path, bad->problem);
  } catch (const bad_field& e) {
    const auto& m = p->metadata;
    out.rejected = rejected_pod{m.ns, m.name, m.uid, m.resource_version,
                                e.path, e.problem};
    return out;
  }
  out.ok = true;
  out.pod.pod = std::move(p);
  return out;
}

} // namespace

result<pod_item> decode_pod(std::string_view json,
                            const manifest_limits& limits) {
  // A rejected pod leaves the rest of its object unread; as an array's
  // element the parser skips that rest and still checks it, so the pod is
  // decoded as the one element of `[json]`.
  std::string wrapped;
  wrapped.reserve(json.size() + 2);
  wrapped.append("[").append(json).append("]");
  return decode("pod", wrapped, [&](od::value v) {
    pod_item out;
    std::size_t n = 0;
    for (auto element : v.get_array()) {
      if (n++ > 0)
        fail("", "trailing characters");
      out = pod_of(element.value(), "", limits);
    }
    if (n == 0)
      fail("", "expected an object");
    return out;
  });
}

result<wire_pod_list> decode_pod_list(std::string_view json,
                                      const manifest_limits& limits) {
  return decode("pod list", json, [&](od::value v) {
    wire_pod_list out;
    members(v, "list", [&](std::string_view key, od::value& x) {
      if (key == "metadata") {
        members(x, "metadata", [&](std::string_view k, od::value& y) {
          if (k == "resourceVersion")
            out.resource_version = text(y, "metadata.resourceVersion");
          else if (k == "continue")
            out.continue_token = text(y, "metadata.continue");
        });
      } else if (key == "items") {
        elements(x, "items", unbounded, "", "",
                 [&](od::value e, const std::string& at) {
                   out.items.push_back(pod_of(e, at, limits));
                 });
      }
    });
    return out;
  });
}

result<wire_pod_watch_line>
decode_pod_watch_line(std::string_view line, const manifest_limits& limits) {
  return decode("pod watch event", line, [&](od::value v) {
    wire_pod_watch_line out;
    out.is_error = watch_envelope(
      v, out.status, [&](watch_event_type type, od::value& object) {
        out.type = type;
        if (type == watch_event_type::bookmark) {
          object_meta meta;
          members(object, "object", [&](std::string_view k, od::value& y) {
            if (k == "metadata")
              decode_meta(y, meta, "object.metadata");
          });
          out.resource_version
            = parse_resource_version(meta.resource_version);
          return;
        }
        out.item = pod_of(object, "", limits);
        out.resource_version
          = parse_resource_version(out.item.resource_version());
      });
    return out;
  });
}

result<node_ptr> decode_node(std::string_view json) {
  return decode("node", json, [](od::value v) {
    auto n = std::make_shared<node>();
    members(v, "node", [&](std::string_view key, od::value& x) {
      if (key == "metadata")
        decode_meta(x, n->metadata, "metadata");
    });
    return node_ptr{std::move(n)};
  });
}

} // namespace podref::wire
