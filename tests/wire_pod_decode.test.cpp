// The client-side Pod and Node decoder (wire/pod_decode.hpp): real API
// server bodies (tests/data/wire_pods/, recorded from kube-apiserver), every
// reference field the walk reads, lifecycle fields, rejected pods, limits.
#include "podref/wire/pod_decode.hpp"

#include "podref/messages/node_ttl.hpp"
#include "podref/messages/pod_references.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace podref;
using namespace podref::wire;

namespace {

std::string data_file(const std::string& name) {
  std::ifstream in{std::string{PODREF_SOURCE_DIR} + "/tests/data/wire_pods/"
                   + name};
  REQUIRE(in);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

/// A pod with every reference field, as an API server returns one.
const char* full_pod = R"({"kind":"Pod","apiVersion":"v1",
 "metadata":{"name":"web","namespace":"ns1","uid":"u-1","resourceVersion":"42",
  "deletionTimestamp":"2026-12-02T01:57:15Z","deletionGracePeriodSeconds":30,
  "labels":{"app":"web"},"managedFields":[{"manager":"x","fieldsV1":{"f:a":{}}}]},
 "spec":{"nodeName":"node1","imagePullSecrets":[{"name":"pull"}],
  "initContainers":[{"name":"init","image":"i",
    "envFrom":[{"prefix":"P_","secretRef":{"name":"init-env","optional":true}}]}],
  "containers":[{"name":"c","image":"x","resources":{},
    "envFrom":[{"configMapRef":{"name":"cm-env"}}],
    "env":[{"name":"A","value":"1"},
      {"name":"B","valueFrom":{"secretKeyRef":{"name":"s1","key":"k1","optional":false}}},
      {"name":"C","valueFrom":{"configMapKeyRef":{"name":"cm1","key":"k2"}}},
      {"name":"D","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}],
  "ephemeralContainers":[{"name":"dbg","image":"busybox",
    "env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"eph","key":"k"}}}]}],
  "volumes":[
   {"name":"v1","secret":{"secretName":"vol-secret","items":[{"key":"a","path":"a"}],"optional":true}},
   {"name":"v2","configMap":{"name":"vol-cm","defaultMode":420}},
   {"name":"v3","projected":{"sources":[{"serviceAccountToken":{"path":"t"}},
     {"secret":{"name":"proj-secret"}},{"configMap":{"name":"proj-cm","optional":true}}]}},
   {"name":"v4","csi":{"driver":"d","nodePublishSecretRef":{"name":"csi-secret"}}},
   {"name":"v5","emptyDir":{}},
   {"name":"v6","azureFile":{"secretName":"az","shareName":"s"}},
   {"name":"v7","rbd":{"image":"i","secretRef":{"name":"rbd-secret"}}}]},
 "status":{"phase":"Running","qosClass":"BestEffort"}})";

} // namespace

TEST_CASE("a pod decodes every field the reference walk reads") {
  auto item = decode_pod(full_pod);
  REQUIRE(item);
  REQUIRE(item->ok);
  const auto& wp = item->pod;
  const auto& p = *wp.pod;
  CHECK(p.metadata.ns == "ns1");
  CHECK(p.metadata.name == "web");
  CHECK(p.metadata.uid == "u-1");
  CHECK(p.metadata.resource_version == "42");
  CHECK(p.metadata.labels.at("app") == "web");
  CHECK(wp.node_name == "node1");
  CHECK(wp.phase == "Running");
  CHECK(wp.is_deleting());
  CHECK_FALSE(wp.is_terminal());
  REQUIRE(p.spec.init_containers.size() == 1);
  CHECK(p.spec.init_containers[0].env_from[0].prefix == "P_");
  CHECK(p.spec.init_containers[0].env_from[0].secret_ref->optional == true);
  REQUIRE(p.spec.containers[0].env.size() == 4);
  CHECK(p.spec.containers[0].env[0].value == "1");
  CHECK(p.spec.containers[0].env[1].value_from->secret_key_ref->key == "k1");
  CHECK(p.spec.containers[0].env[1].value_from->secret_key_ref->optional
        == false);
  CHECK_FALSE(p.spec.containers[0].env[2].value_from->config_map_key_ref
                ->optional.has_value());
  CHECK(p.spec.containers[0].env[3].value_from->other_source);
  CHECK(p.spec.ephemeral_containers[0].name == "dbg");
  REQUIRE(p.spec.volumes.size() == 7);
  CHECK(p.spec.volumes[0].secret->items[0].key == "a");
  CHECK(p.spec.volumes[4].other_source == "emptyDir");
  CHECK(p.spec.volumes[2].projected->sources[0].other_source);
  CHECK(secret_names(p)
        == std::vector<std::string>{"az", "csi-secret", "eph", "init-env",
                                    "proj-secret", "pull", "rbd-secret", "s1",
                                    "vol-secret"});
  CHECK(config_map_names(p)
        == std::vector<std::string>{"cm-env", "cm1", "proj-cm", "vol-cm"});
}

TEST_CASE("the kubelet's pod list from a real API server decodes") {
  auto list = decode_pod_list(data_file("list-kubelet-nodename.json"));
  REQUIRE(list);
  CHECK(list->resource_version == "358");
  REQUIRE(list->items.size() == 2);
  for (const auto& item : list->items) {
    REQUIRE(item.ok);
    CHECK(item.pod.node_name == "node1");
    // The service account's projected volume references kube-root-ca.crt.
    CHECK(config_map_names(*item.pod.pod)
          == std::vector<std::string>{"kube-root-ca.crt"});
  }
}

TEST_CASE("the kubelet's pod watch from a real API server decodes") {
  auto lines = lines_of(data_file("watch-kubelet-nodename.jsonl"));
  REQUIRE(lines.size() == 8);
  std::vector<std::string> seen;
  for (const auto& line : lines) {
    auto ev = decode_pod_watch_line(line);
    REQUIRE(ev);
    REQUIRE_FALSE(ev->is_error);
    CHECK(ev->resource_version > 0);
    if (ev->type == watch_event_type::bookmark) {
      seen.push_back("BOOKMARK");
      continue;
    }
    REQUIRE(ev->item.ok);
    const auto& wp = ev->item.pod;
    seen.push_back(wp.pod->metadata.name + (wp.is_deleting() ? " deleting" : "")
                   + " " + wp.phase);
  }
  CHECK(seen
        == std::vector<std::string>{"p1 Pending", "p1 Running",
                                    "p1 deleting Running",
                                    "p1 deleting Running",
                                    "p1 deleting Running", "p5 Pending",
                                    "BOOKMARK", "BOOKMARK"});
}

TEST_CASE("a watch ERROR line carries its Status") {
  auto ev = decode_pod_watch_line(
    R"x({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",)x"
    R"x("metadata":{},"status":"Failure",)x"
    R"x("message":"too old resource version: 1 (358)",)x"
    R"x("reason":"Expired","code":410}})x");
  REQUIRE(ev);
  CHECK(ev->is_error);
  CHECK(ev->status.code == 410);
  CHECK(ev->status.reason == "Expired");
}

TEST_CASE("a node's TTL annotation decodes") {
  auto n = decode_node(data_file("node-with-ttl.json"));
  REQUIRE(n);
  CHECK((*n)->metadata.name == "node1");
  CHECK(ttl_from_node(n->get()) == std::chrono::seconds{0});
}

TEST_CASE("a bad pod in a list is rejected by name and field; the others stay") {
  std::string list = R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[
    {"metadata":{"name":"bad","namespace":"ns","uid":"u1","resourceVersion":"7"},
     "spec":{"containers":[{"name":"c","env":"not-a-list"}]},"status":{"phase":"Pending"}},
    {"metadata":{"name":"noname-ref","namespace":"ns","uid":"u2"},
     "spec":{"volumes":[{"name":"v","secret":{"secretName":""}}]}},
    {"metadata":{"name":"nouid","namespace":"ns"},"spec":{}},
    {"metadata":{"name":"good","namespace":"ns","uid":"u3"},
     "spec":{"containers":[{"name":"c","env":[{"name":"X","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}]}}]})";
  auto out = decode_pod_list(list);
  REQUIRE(out);
  REQUIRE(out->items.size() == 4);
  CHECK_FALSE(out->items[0].ok);
  CHECK(out->items[0].rejected.name == "bad");
  CHECK(out->items[0].rejected.resource_version == "7");
  CHECK(out->items[0].rejected.path == "spec.containers[0].env");
  CHECK(out->items[0].rejected.problem == "expected a list");
  CHECK_FALSE(out->items[1].ok);
  CHECK(out->items[1].rejected.path == "spec.volumes[0].secret.secretName");
  CHECK(out->items[1].rejected.problem == "Required value");
  CHECK_FALSE(out->items[2].ok);
  CHECK(out->items[2].rejected.path == "metadata.uid");
  REQUIRE(out->items[3].ok);
  CHECK(secret_names(*out->items[3].pod.pod) == std::vector<std::string>{"s"});
}

TEST_CASE("per-pod limits bound a pod before it is built") {
  manifest_limits limits;
  limits.max_env = 2;
  limits.max_containers = 2;
  limits.max_volumes = 1;
  auto env = decode_pod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},
    "spec":{"containers":[{"name":"c","env":[{"name":"a"},{"name":"b"},{"name":"c"}]}]}})",
                        limits);
  REQUIRE(env);
  REQUIRE_FALSE(env->ok);
  CHECK(env->rejected.path == "spec.containers[0].env");
  CHECK(env->rejected.problem
        == "more env entries than the limit of 2 per container");
  auto containers = decode_pod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},
    "spec":{"initContainers":[{"name":"a"}],"containers":[{"name":"b"},{"name":"c"}]}})",
                               limits);
  REQUIRE(containers);
  REQUIRE_FALSE(containers->ok);
  CHECK(containers->rejected.path == "spec.containers");
  CHECK(containers->rejected.problem
        == "more containers than the limit of 2 per pod");
  auto volumes = decode_pod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},
    "spec":{"volumes":[{"name":"a","emptyDir":{}},{"name":"b","emptyDir":{}}]}})",
                            limits);
  REQUIRE(volumes);
  CHECK_FALSE(volumes->ok);
  CHECK(volumes->rejected.problem == "more volumes than the limit of 1 per pod");
}

TEST_CASE("errors name the field, never the value") {
  auto out = decode_pod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},
    "spec":{"containers":[{"name":"c","env":[{"name":"A","valueFrom":
      {"secretKeyRef":{"name":"Hunter2-SECRET","key":"k"}}}]}]}})");
  REQUIRE(out);
  REQUIRE_FALSE(out->ok);
  CHECK(out->rejected.path
        == "spec.containers[0].env[0].valueFrom.secretKeyRef.name");
  // The API server's message quotes the name (not a secret value); the
  // decoder's own type errors quote nothing.
  auto typed = decode_pod(R"({"metadata":{"name":"p","namespace":"n","uid":"u"},
    "spec":{"containers":[{"name":"c","env":[{"name":"A","value":7}]}]}})");
  REQUIRE(typed);
  CHECK(typed->rejected.path == "spec.containers[0].env[0].value");
  CHECK(typed->rejected.problem == "expected a string");
}

TEST_CASE("malformed bodies fail as a whole") {
  CHECK_FALSE(decode_pod_list(R"({"items":[{"metadata":)"));
  CHECK_FALSE(decode_pod_list(R"({"metadata":{"resourceVersion":5},"items":[]})"));
  CHECK_FALSE(decode_pod_watch_line(R"({"object":{},"type":"ADDED"})"));
  CHECK_FALSE(decode_pod_watch_line(R"({"type":"SOMETHING","object":{}})"));
  CHECK_FALSE(decode_pod(R"({} trailing)"));
}
