#include "hollow/workload.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "hollow/requests.hpp"
#include "podref/manifest/manifest.hpp"
#include "podref/messages/base64.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/wire/detail/request_rules.hpp"

namespace podref::cli::hollow {

namespace {

using json = nlohmann::json;

/// The pod specs of a document: a Pod's, a workload's template's, a
/// CronJob's job template's, a List's items'.
void collect_specs(const json& doc, std::vector<std::pair<std::string, json>>& out) {
  if (!doc.is_object())
    return;
  auto kind = doc.value("kind", std::string{});
  auto ns = doc.contains("metadata") && doc["metadata"].is_object()
              ? doc["metadata"].value("namespace", std::string{})
              : std::string{};
  if (ns.empty())
    ns = "default";
  auto spec_at = [&](std::initializer_list<const char*> path) {
    const json* at = &doc;
    for (const char* step : path) {
      if (!at->is_object() || !at->contains(step))
        return;
      at = &(*at)[step];
    }
    if (at->is_object())
      out.emplace_back(ns, *at);
  };
  if (kind == "Pod")
    spec_at({"spec"});
  else if (kind == "CronJob")
    spec_at({"spec", "jobTemplate", "spec", "template", "spec"});
  else if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet"
           || kind == "ReplicaSet" || kind == "ReplicationController"
           || kind == "Job")
    spec_at({"spec", "template", "spec"});
  else if (kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0
           && doc.contains("items") && doc["items"].is_array())
    for (const auto& item : doc["items"])
      collect_specs(item, out);
}

void collect_objects(const json& doc, std::vector<planned_object>& out) {
  if (!doc.is_object())
    return;
  auto kind = doc.value("kind", std::string{});
  if (kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0
      && doc.contains("items") && doc["items"].is_array()) {
    for (const auto& item : doc["items"])
      collect_objects(item, out);
    return;
  }
  if (kind != "Secret" && kind != "ConfigMap")
    return;
  planned_object o;
  o.res = kind == "Secret" ? resource::secrets : resource::config_maps;
  if (!doc.contains("metadata") || !doc["metadata"].is_object())
    return;
  auto body = doc;
  auto& meta = body["metadata"];
  o.name = meta.value("name", std::string{});
  o.ns = meta.value("namespace", std::string{});
  if (o.ns.empty())
    o.ns = "default";
  meta["namespace"] = o.ns;
  o.immutable = body.value("immutable", false);
  o.body = body.dump();
  out.push_back(std::move(o));
}

void note_error(write_counts& c, std::mutex& mtx, const std::string& what,
                const wire::http_response& r) {
  std::lock_guard<std::mutex> guard{mtx};
  ++c.failed;
  if (c.errors.size() < 5)
    c.errors.push_back(wire::detail::error_of(r, what).message);
}

std::string collection(resource res, const std::string& ns) {
  return "/api/v1/namespaces/" + wire::detail::escape(ns)
         + (res == resource::secrets ? "/secrets" : "/configmaps");
}

} // namespace

std::string object_key(resource res, const std::string& ns,
                       const std::string& name) {
  return std::string{res == resource::secrets ? "s/" : "c/"} + ns + "/" + name;
}

std::string planned_object::key() const {
  return object_key(res, ns, name);
}

result<workload>
plan_workload(const std::vector<std::pair<std::string, std::string>>& manifests,
              const std::vector<std::string>& nodes, std::size_t pods_per_node) {
  std::vector<std::pair<std::string, json>> specs;
  workload w;
  manifest_limits limits;
  limits.keep_documents = true;
  for (const auto& [file, text] : manifests) {
    auto decoded = decode_manifest(text, file, limits);
    if (!decoded.ok())
      return error_info{errc::invalid_argument,
                        decoded.errors.empty() ? file : decoded.errors.front()};
    for (const auto& doc_text : decoded.documents) {
      auto doc = json::parse(doc_text, nullptr, false);
      collect_specs(doc, specs);
      collect_objects(doc, w.objects);
    }
  }
  if (specs.empty())
    return error_info{errc::invalid_argument,
                      "the manifests hold no pod or pod template"};
  std::set<std::string> existing;
  std::map<std::string, bool> immutable;
  std::set<std::string> namespaces{"default"};
  for (const auto& o : w.objects) {
    existing.insert(o.key());
    immutable[o.key()] = o.immutable;
    namespaces.insert(o.ns);
  }
  w.pods_of_node.assign(nodes.size(), 0);
  std::map<std::string, std::set<std::uint32_t>> watchers;
  std::size_t drawn = 0;
  for (std::uint32_t n = 0; n < nodes.size(); ++n) {
    for (std::size_t j = 0; j < pods_per_node; ++j, ++drawn) {
      const auto& [ns, spec] = specs[drawn % specs.size()];
      planned_pod p;
      p.ns = ns;
      p.name = nodes[n] + "-" + std::to_string(j);
      p.node = n;
      json body = {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata",
                    {{"name", p.name},
                     {"namespace", ns},
                     {"labels", {{"podref.io/hollow", "true"}}}}},
                   {"spec", spec}};
      body["spec"]["nodeName"] = nodes[n];
      p.body = body.dump();
      // The references, through the engine's own decoder and walk.
      auto decoded = decode_manifest(p.body, "pod " + p.name);
      for (const auto& obj : decoded.objects)
        if (auto pod = std::get_if<pod_ptr>(&obj.object)) {
          for (const auto& s : secret_names(**pod))
            p.keys.push_back(object_key(resource::secrets, ns, s));
          for (const auto& c : config_map_names(**pod))
            p.keys.push_back(object_key(resource::config_maps, ns, c));
        }
      for (const auto& k : p.keys)
        watchers[k].insert(n);
      namespaces.insert(ns);
      ++w.pods_of_node[n];
      w.pods.push_back(std::move(p));
    }
  }
  for (auto& [key, set] : watchers) {
    w.watchers[key].assign(set.begin(), set.end());
    if (existing.count(key) != 0 && !immutable[key])
      w.updatable.push_back(key);
  }
  w.namespaces.assign(namespaces.begin(), namespaces.end());
  return w;
}

write_counts create_workload(wire::http_client& client, const workload& w) {
  write_counts out;
  std::mutex mtx;
  auto counted = [&out, &mtx](std::string what) {
    return [&out, &mtx, what](const wire::http_response& r) {
      if (r.error.empty() && (r.status == 200 || r.status == 201)) {
        std::lock_guard<std::mutex> guard{mtx};
        ++out.created;
      } else if (r.error.empty() && r.status == 409) {
        std::lock_guard<std::mutex> guard{mtx};
        ++out.existed;
      } else {
        note_error(out, mtx, what, r);
      }
    };
  };
  request_window window{client, 64};
  for (const auto& ns : w.namespaces)
    window.send("POST", "/api/v1/namespaces",
                json{{"apiVersion", "v1"},
                     {"kind", "Namespace"},
                     {"metadata", {{"name", ns}}}}
                  .dump(),
                counted("create namespace " + ns));
  window.wait(); // objects need their namespaces
  for (const auto& o : w.objects)
    window.send("POST", collection(o.res, o.ns), o.body,
                counted("create " + o.key()));
  window.wait(); // pods after their objects, as a deployment would
  for (const auto& p : w.pods)
    window.send("POST",
                "/api/v1/namespaces/" + wire::detail::escape(p.ns) + "/pods",
                p.body, counted("create pod " + p.ns + "/" + p.name));
  window.wait();
  return out;
}

write_counts delete_pods(wire::http_client& client, const workload& w) {
  write_counts out;
  std::mutex mtx;
  request_window window{client, 64};
  for (const auto& p : w.pods) {
    auto what = "delete pod " + p.ns + "/" + p.name;
    window.send("DELETE",
                "/api/v1/namespaces/" + wire::detail::escape(p.ns) + "/pods/"
                  + wire::detail::escape(p.name),
                R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})",
                [&out, &mtx, what](const wire::http_response& r) {
                  if (r.error.empty()
                      && (r.status == 200 || r.status == 202 || r.status == 404)) {
                    std::lock_guard<std::mutex> guard{mtx};
                    ++out.created;
                  } else {
                    note_error(out, mtx, what, r);
                  }
                });
  }
  window.wait();
  return out;
}

std::pair<std::string, std::string> update_request(const planned_object& o,
                                                   std::uint64_t serial) {
  auto value = std::to_string(serial);
  json data = {{"podref-hollow-update",
                o.res == resource::secrets ? encode_base64(value) : value}};
  return {collection(o.res, o.ns) + "/" + wire::detail::escape(o.name),
          json{{"data", data}}.dump()};
}

std::uint64_t resource_version_of(const std::string& text) {
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("metadata")
      || !doc["metadata"].is_object())
    return 0;
  auto rv = doc["metadata"].value("resourceVersion", std::string{});
  try {
    return rv.empty() ? 0 : std::stoull(rv);
  } catch (const std::exception&) {
    return 0;
  }
}

} // namespace podref::cli::hollow
