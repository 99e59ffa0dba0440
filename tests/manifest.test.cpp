// The manifest decoder: JSON and YAML input, every decoded kind and field,
// YAML typing, anchors and Lists, and every error with its exact message.
#include "podref/manifest/manifest.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/messages/pod_references.hpp"
#include "podref/manifest/detail/yaml_scalar.hpp"
#include "support/manifest_decode.hpp"

using namespace podref;
using namespace podref::test;

namespace {

namespace fs = std::filesystem;

template <class T>
std::shared_ptr<const T> as(const manifest_object& object) {
  const auto* ptr = std::get_if<std::shared_ptr<const T>>(&object.object);
  REQUIRE(ptr != nullptr);
  REQUIRE(*ptr != nullptr);
  return *ptr;
}

/// The single object that `text` decodes to, as a T.
template <class T>
std::shared_ptr<const T> only(std::string_view text) {
  auto result = decode(text);
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 1);
  return as<T>(result.objects.front());
}

std::string fixture(const std::string& name) {
  return (fs::path{PODREF_SOURCE_DIR} / "tests/data/manifests" / name)
    .string();
}

using strings = std::vector<std::string>;

strings env_names(const container& c) {
  strings out;
  for (const auto& var : c.env)
    out.push_back(var.name);
  return out;
}

} // namespace

// -- real-world input ---------------------------------------------------------

TEST_CASE("a real-world Pod manifest decodes every modelled field") {
  auto result = load_manifest_file(fixture("pod-everything.yaml"));
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 1);
  CHECK(result.objects[0].kind == "Pod");
  CHECK(result.objects[0].doc == 0);
  auto p = as<pod>(result.objects[0]);

  const auto& meta = p->metadata;
  CHECK(meta.ns == "shop");
  CHECK(meta.name == "web-7d9f8b6c5-x2lqp");
  CHECK(meta.uid == "3f1c2a9e-8b7d-4e6f-9a01-23456789abcd");
  CHECK(meta.resource_version == "482913");
  CHECK(meta.labels == std::map<std::string, std::string>{
                         {"app.kubernetes.io/name", "web"},
                         {"pod-template-hash", "7d9f8b6c5"}});
  CHECK(meta.annotations.at("prometheus.io/scrape") == "true");
  CHECK(meta.annotations.at("kubectl.kubernetes.io/restartedAt")
        == "2024-05-01T08:00:00Z");

  const auto& spec = p->spec;
  REQUIRE(spec.image_pull_secrets.size() == 1);
  CHECK(spec.image_pull_secrets[0].name == "registry-credentials");

  REQUIRE(spec.init_containers.size() == 1);
  const auto& migrate = spec.init_containers[0];
  CHECK(migrate.name == "migrate");
  CHECK(migrate.image == "registry.example.com/web:1.4.2");
  REQUIRE(migrate.env.size() == 1);
  REQUIRE(migrate.env[0].value_from);
  REQUIRE(migrate.env[0].value_from->secret_key_ref);
  CHECK(migrate.env[0].value_from->secret_key_ref->name == "db-credentials");
  CHECK(migrate.env[0].value_from->secret_key_ref->key == "url");
  CHECK_FALSE(migrate.env[0].value_from->secret_key_ref->optional);

  REQUIRE(spec.containers.size() == 1);
  const auto& web = spec.containers[0];
  CHECK(web.name == "web");
  REQUIRE(web.env_from.size() == 2);
  CHECK(web.env_from[0].prefix == "APP_");
  REQUIRE(web.env_from[0].config_map_ref);
  CHECK(web.env_from[0].config_map_ref->name == "web-config");
  CHECK_FALSE(web.env_from[0].config_map_ref->optional);
  CHECK_FALSE(web.env_from[0].secret_ref);
  REQUIRE(web.env_from[1].secret_ref);
  CHECK(web.env_from[1].secret_ref->name == "web-secrets");
  CHECK(web.env_from[1].secret_ref->optional == true);
  CHECK(env_names(web)
        == strings{"LOG_LEVEL", "FEATURE_FLAGS", "POD_IP", "MEMORY_LIMIT"});
  CHECK(web.env[0].value == "info");
  CHECK_FALSE(web.env[0].value_from);
  REQUIRE(web.env[1].value_from);
  REQUIRE(web.env[1].value_from->config_map_key_ref);
  CHECK(web.env[1].value_from->config_map_key_ref->name == "feature-flags");
  CHECK(web.env[1].value_from->config_map_key_ref->key == "flags");
  CHECK(web.env[1].value_from->config_map_key_ref->optional == false);
  CHECK_FALSE(web.env[1].value_from->other_source);
  REQUIRE(web.env[2].value_from);
  CHECK(web.env[2].value_from->other_source);
  CHECK_FALSE(web.env[2].value_from->secret_key_ref);
  REQUIRE(web.env[3].value_from);
  CHECK(web.env[3].value_from->other_source);

  REQUIRE(spec.ephemeral_containers.size() == 1);
  CHECK(spec.ephemeral_containers[0].name == "debugger");
  CHECK(spec.ephemeral_containers[0].image == "busybox:1.36");

  REQUIRE(spec.volumes.size() == 5);
  const auto& tls = spec.volumes[0];
  CHECK(tls.name == "tls");
  REQUIRE(tls.secret);
  CHECK(tls.secret->secret_name == "web-tls");
  REQUIRE(tls.secret->items.size() == 2);
  CHECK(tls.secret->items[1].key == "tls.key");
  CHECK(tls.secret->items[1].path == "key.pem");
  CHECK(tls.secret->optional == false);
  CHECK(tls.other_source.empty());
  REQUIRE(spec.volumes[1].config_map);
  CHECK(spec.volumes[1].config_map->name == "web-files");
  CHECK_FALSE(spec.volumes[1].config_map->optional);
  REQUIRE(spec.volumes[2].projected);
  const auto& sources = spec.volumes[2].projected->sources;
  REQUIRE(sources.size() == 4);
  REQUIRE(sources[0].secret);
  CHECK(sources[0].secret->name == "api-token");
  REQUIRE(sources[0].secret->items.size() == 1);
  CHECK(sources[0].secret->items[0].path == "token");
  REQUIRE(sources[1].config_map);
  CHECK(sources[1].config_map->name == "ca-bundle");
  CHECK(sources[1].config_map->optional == true);
  CHECK_FALSE(sources[1].other_source);
  CHECK(sources[2].other_source);
  CHECK(sources[3].other_source);
  CHECK(spec.volumes[3].other_source == "emptyDir");
  CHECK(spec.volumes[4].other_source == "persistentVolumeClaim");
}

TEST_CASE("the same Pod written as JSON decodes the same way") {
  auto yaml = load_manifest_file(fixture("pod-everything.yaml"));
  auto json = load_manifest_file(fixture("pod-everything.json"));
  INFO(errors_text(json));
  REQUIRE(yaml.ok());
  REQUIRE(json.ok());
  REQUIRE(json.objects.size() == 1);
  auto x = as<pod>(yaml.objects[0]);
  auto y = as<pod>(json.objects[0]);
  CHECK(x->metadata == y->metadata);
  CHECK(y->spec.containers[0].env_from[1].secret_ref->optional == true);
  CHECK(y->spec.volumes[0].secret->items[1].path == "key.pem");
  CHECK(y->spec.volumes[2].projected->sources.size() == 4);
  CHECK(y->spec.volumes[4].other_source == "persistentVolumeClaim");
}

// -- kinds --------------------------------------------------------------------

TEST_CASE("every workload kind yields the pod of spec.template") {
  for (std::string kind : {"Deployment", "StatefulSet", "DaemonSet",
                           "ReplicaSet", "ReplicationController", "Job"}) {
    INFO(kind);
    auto text = "apiVersion: apps/v1\nkind: " + kind + R"(
metadata:
  name: app
  namespace: team
  uid: workload-uid
  resourceVersion: "7"
  labels: {owner: workload}
spec:
  replicas: 3
  template:
    metadata:
      name: ignored
      namespace: ignored
      labels: {app: web}
      annotations: {note: from-template}
    spec:
      containers:
        - name: c
          envFrom:
            - secretRef: {name: s}
)";
    auto result = decode(text);
    INFO(errors_text(result));
    REQUIRE(result.ok());
    REQUIRE(result.objects.size() == 1);
    CHECK(result.objects[0].kind == kind);
    auto p = as<pod>(result.objects[0]);
    CHECK(p->metadata.ns == "team");
    CHECK(p->metadata.name == "app");
    CHECK(p->metadata.uid.empty());
    CHECK(p->metadata.resource_version.empty());
    CHECK(p->metadata.labels
          == std::map<std::string, std::string>{{"app", "web"}});
    CHECK(p->metadata.annotations
          == std::map<std::string, std::string>{{"note", "from-template"}});
    REQUIRE(p->spec.containers.size() == 1);
    CHECK(p->spec.containers[0].env_from[0].secret_ref->name == "s");
  }
}

TEST_CASE("a CronJob yields the pod of spec.jobTemplate.spec.template") {
  auto p = only<pod>(R"(
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  template: {spec: {containers: [{name: wrong-place}]}}
  jobTemplate:
    spec:
      backoffLimit: 2
      template:
        metadata: {labels: {job: nightly}}
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              env:
                - name: KEY
                  valueFrom: {secretKeyRef: {name: backup-key, key: k}}
)");
  CHECK(p->metadata.ns == "default");
  CHECK(p->metadata.name == "nightly");
  CHECK(p->metadata.labels.at("job") == "nightly");
  REQUIRE(p->spec.containers.size() == 1);
  CHECK(p->spec.containers[0].name == "backup");
  CHECK(p->spec.containers[0].env[0].value_from->secret_key_ref->name
        == "backup-key");
}

TEST_CASE("a workload without a template yields a pod with an empty spec") {
  auto p = only<pod>("kind: Deployment\nmetadata: {name: d}\nspec: {}\n");
  CHECK(p->metadata.name == "d");
  CHECK(p->spec.containers.empty());
}

TEST_CASE("namespaced kinds without a namespace get the default namespace") {
  auto result = decode(R"(kind: Pod
metadata: {name: a}
---
kind: Secret
metadata: {name: b}
---
kind: ConfigMap
---
kind: Deployment
metadata: {name: d, namespace: ""}
)");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 4);
  CHECK(as<pod>(result.objects[0])->metadata.ns == "default");
  CHECK(as<secret>(result.objects[1])->metadata.ns == "default");
  CHECK(as<config_map>(result.objects[2])->metadata.ns == "default");
  CHECK(as<pod>(result.objects[3])->metadata.ns == "default");
}

TEST_CASE("a Node keeps an empty namespace and decodes its annotations") {
  auto n = only<node>(R"(
apiVersion: v1
kind: Node
metadata:
  name: node-a
  uid: n-1
  resourceVersion: "99"
  labels: {kubernetes.io/hostname: node-a}
  annotations:
    node.alpha.kubernetes.io/ttl: "15"
status: {capacity: {cpu: "4"}}
)");
  CHECK(n->metadata.ns.empty());
  CHECK(n->metadata.name == "node-a");
  CHECK(n->metadata.uid == "n-1");
  CHECK(n->metadata.resource_version == "99");
  CHECK(n->metadata.labels.at("kubernetes.io/hostname") == "node-a");
  CHECK(n->metadata.annotations.at("node.alpha.kubernetes.io/ttl") == "15");
}

TEST_CASE("a Secret's data is base64-decoded and stringData kept as written") {
  auto s = only<secret>(R"(
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
type: kubernetes.io/basic-auth
immutable: true
data:
  username: YWRtaW4=
  password: cGFzc3dvcmQ=
  empty: ""
  binary: AAH/
  wrapped: "aGVs\nbG8="
  missing:
stringData:
  note: plain text
  spaced: " kept "
)");
  CHECK(s->metadata.ns == "shop");
  CHECK(s->type == "kubernetes.io/basic-auth");
  CHECK(s->immutable == true);
  CHECK(s->is_immutable());
  CHECK(s->data.at("username") == "admin");
  CHECK(s->data.at("password") == "password");
  CHECK(s->data.at("empty").empty());
  CHECK(s->data.at("binary") == std::string("\x00\x01\xff", 3));
  CHECK(s->data.at("wrapped") == "hello");
  CHECK(s->data.at("missing").empty());
  CHECK(s->string_data
        == std::map<std::string, std::string>{{"note", "plain text"},
                                              {"spaced", " kept "}});
}

TEST_CASE("a Secret without immutable leaves it unset") {
  auto s = only<secret>("kind: Secret\nmetadata: {name: s}\n");
  CHECK_FALSE(s->immutable);
  CHECK(s->type.empty());
  CHECK(s->data.empty());
}

TEST_CASE("a ConfigMap keeps data and base64-decodes binaryData") {
  auto c = only<config_map>(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
immutable: false
data:
  app.properties: |
    color=blue
    size=3
  "1": one
binaryData:
  logo.png: iVBORw0KGgo=
)");
  CHECK(c->immutable == false);
  CHECK_FALSE(c->is_immutable());
  CHECK(c->data.at("app.properties") == "color=blue\nsize=3\n");
  CHECK(c->data.at("1") == "one");
  CHECK(c->binary_data.at("logo.png") == "\x89PNG\r\n\x1a\n");
}

TEST_CASE("kinds podref does not model are skipped silently") {
  auto result = decode(R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
kind: ServiceList
items: [{kind: Service}]
---
kind: Pod
metadata: {name: p}
---
apiVersion: example.com/v1
kind: Widget
spec: {containers: "not even a list"}
)");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 1);
  CHECK(result.objects[0].kind == "Pod");
  CHECK(result.objects[0].doc == 3);
}

TEST_CASE("unknown fields are ignored at every level") {
  auto p = only<pod>(R"(
kind: Pod
apiVersion: v1
extra: {deeply: [nested, {values: 1}]}
metadata: {name: p, finalizers: [a], managedFields: [{manager: kubectl}]}
spec:
  hostNetwork: true
  tolerations: [{key: k, operator: Exists}]
  containers:
    - name: c
      securityContext: {runAsUser: 1000}
      env:
        - name: A
          value: x
          somethingNew: 42
  volumes:
    - name: v
      secret: {secretName: s, defaultMode: 420, futureField: [1, 2]}
      futureSourceKind: {x: 1}
)");
  CHECK(p->spec.containers[0].env[0].value == "x");
  REQUIRE(p->spec.volumes[0].secret);
  CHECK(p->spec.volumes[0].secret->secret_name == "s");
  CHECK(p->spec.volumes[0].other_source.empty());
}

TEST_CASE("every volume source decodes into its own field") {
  auto p = only<pod>(pod_with_spec(R"(  volumes:
    - name: azure
      azureFile: {secretName: azure-secret, shareName: share}
    - name: cephfs
      cephfs: {monitors: [m], secretRef: {name: ceph-secret}}
    - name: cinder
      cinder: {volumeID: v, secretRef: {name: cinder-secret}}
    - name: flex
      flexVolume: {driver: d, secretRef: {name: flex-secret}}
    - name: projected
      projected:
        sources:
          - secret: {name: p-secret, optional: true}
          - configMap: {name: p-config, items: [{key: k, path: p}]}
          - serviceAccountToken: {path: t}
          - downwardAPI: {items: []}
          - clusterTrustBundle: {signerName: s, path: b}
    - name: rbd
      rbd: {image: i, secretRef: {name: rbd-secret}}
    - name: secret
      secret: {secretName: plain-secret, optional: true}
    - name: scaleio
      scaleIO: {gateway: g, system: s, secretRef: {name: scaleio-secret}}
    - name: iscsi
      iscsi: {targetPortal: t, iqn: q, lun: 0, secretRef: {name: iscsi-secret}}
    - name: storageos
      storageos: {volumeName: v, secretRef: {name: storageos-secret}}
    - name: csi
      csi: {driver: csi.example.com, nodePublishSecretRef: {name: csi-secret}}
    - name: config
      configMap: {name: plain-config, optional: false}
    - name: cephfs-no-ref
      cephfs: {monitors: [m]}
    - name: csi-no-ref
      csi: {driver: other.example.com}
)"));
  const auto& v = p->spec.volumes;
  REQUIRE(v.size() == 14);
  REQUIRE(v[0].azure_file);
  CHECK(v[0].azure_file->secret_name == "azure-secret");
  CHECK(v[0].azure_file->share_name == "share");
  REQUIRE(v[1].cephfs);
  CHECK(v[1].cephfs->secret_ref->name == "ceph-secret");
  REQUIRE(v[2].cinder);
  CHECK(v[2].cinder->secret_ref->name == "cinder-secret");
  REQUIRE(v[3].flex_volume);
  CHECK(v[3].flex_volume->secret_ref->name == "flex-secret");
  REQUIRE(v[4].projected);
  const auto& sources = v[4].projected->sources;
  REQUIRE(sources.size() == 5);
  CHECK(sources[0].secret->name == "p-secret");
  CHECK(sources[0].secret->optional == true);
  CHECK(sources[1].config_map->name == "p-config");
  CHECK(sources[1].config_map->items[0].key == "k");
  for (std::size_t i = 2; i < 5; ++i) {
    CHECK(sources[i].other_source);
    CHECK_FALSE(sources[i].secret);
    CHECK_FALSE(sources[i].config_map);
  }
  REQUIRE(v[5].rbd);
  CHECK(v[5].rbd->secret_ref->name == "rbd-secret");
  REQUIRE(v[6].secret);
  CHECK(v[6].secret->secret_name == "plain-secret");
  CHECK(v[6].secret->optional == true);
  REQUIRE(v[7].scale_io);
  CHECK(v[7].scale_io->secret_ref->name == "scaleio-secret");
  REQUIRE(v[8].iscsi);
  CHECK(v[8].iscsi->secret_ref->name == "iscsi-secret");
  REQUIRE(v[9].storageos);
  CHECK(v[9].storageos->secret_ref->name == "storageos-secret");
  REQUIRE(v[10].csi);
  CHECK(v[10].csi->driver == "csi.example.com");
  CHECK(v[10].csi->node_publish_secret_ref->name == "csi-secret");
  REQUIRE(v[11].config_map);
  CHECK(v[11].config_map->name == "plain-config");
  CHECK(v[11].config_map->optional == false);
  REQUIRE(v[12].cephfs);
  CHECK_FALSE(v[12].cephfs->secret_ref);
  REQUIRE(v[13].csi);
  CHECK_FALSE(v[13].csi->node_publish_secret_ref);
  for (const auto& vol : v) {
    INFO(vol.name);
    CHECK(vol.other_source.empty());
  }
  // Each volume sets exactly the source it names.
  CHECK_FALSE(v[0].secret);
  CHECK_FALSE(v[6].azure_file);
  CHECK_FALSE(v[10].config_map);
}

TEST_CASE("volume sources without references are recognised by their key") {
  for (std::string key :
       {"awsElasticBlockStore", "azureDisk", "downwardAPI", "emptyDir",
        "ephemeral", "fc", "flocker", "gcePersistentDisk", "gitRepo",
        "glusterfs", "hostPath", "image", "nfs", "persistentVolumeClaim",
        "photonPersistentDisk", "portworxVolume", "quobyte",
        "vsphereVolume"}) {
    INFO(key);
    auto p = only<pod>(pod_with_spec("  volumes:\n    - name: v\n      "
                                     + key + ": {}\n"));
    REQUIRE(p->spec.volumes.size() == 1);
    const auto& v = p->spec.volumes[0];
    CHECK(v.other_source == key);
    CHECK_FALSE(v.secret);
    CHECK_FALSE(v.config_map);
    CHECK_FALSE(v.projected);
    CHECK_FALSE(v.csi);
  }
}

TEST_CASE("resourceVersion accepts a string or an integer") {
  auto a = only<pod>("kind: Pod\nmetadata: {resourceVersion: \"0012\"}\n");
  CHECK(a->metadata.resource_version == "0012");
  auto b = only<pod>("kind: Pod\nmetadata: {resourceVersion: 123}\n");
  CHECK(b->metadata.resource_version == "123");
  auto c = only<pod>(R"({"kind": "Pod", "metadata": {"resourceVersion": 9}})");
  CHECK(c->metadata.resource_version == "9");
  CHECK(error_of("kind: Pod\nmetadata: {resourceVersion: 1.5}\n")
        == "test.yaml: document 0: metadata.resourceVersion: expected a "
           "string or an integer, got a number");
}

// -- documents and lists ------------------------------------------------------

TEST_CASE("multi-document YAML keeps document indices and skips empty ones") {
  auto result = decode(R"(---
kind: Pod
metadata: {name: first}
---
---
# only a comment
---
kind: Secret
metadata: {name: second}
...
---
kind: ConfigMap
metadata: {name: third}
---
)");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 3);
  CHECK(result.objects[0].doc == 0);
  CHECK(result.objects[0].kind == "Pod");
  CHECK(result.objects[1].doc == 3);
  CHECK(result.objects[1].kind == "Secret");
  CHECK(result.objects[2].doc == 4);
  CHECK(as<config_map>(result.objects[2])->metadata.name == "third");
}

TEST_CASE("a YAML List yields its items with the List's document index") {
  auto result = decode(R"(
kind: Secret
metadata: {name: before}
---
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
  - kind: Pod
    metadata: {name: p}
  - apiVersion: v1
    kind: Service
    metadata: {name: skipped}
  - kind: List
    items:
      - kind: ConfigMap
        metadata: {name: nested}
  - kind: Node
    metadata: {name: n}
)");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 4);
  CHECK(result.objects[0].doc == 0);
  for (std::size_t i = 1; i < 4; ++i)
    CHECK(result.objects[i].doc == 1);
  CHECK(result.objects[1].kind == "Pod");
  CHECK(result.objects[2].kind == "ConfigMap");
  CHECK(as<config_map>(result.objects[2])->metadata.name == "nested");
  CHECK(result.objects[3].kind == "Node");
}

TEST_CASE("a JSON List decodes like a YAML one") {
  auto result = decode(R"({
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}},
    {"kind": "Pod", "metadata": {"name": "p", "namespace": "x"},
     "spec": {"containers": [{"name": "c", "envFrom":
       [{"configMapRef": {"name": "c"}}]}]}}
  ]
})");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 2);
  CHECK(as<config_map>(result.objects[0])->data.at("k") == "v");
  auto p = as<pod>(result.objects[1]);
  CHECK(p->metadata.ns == "x");
  CHECK(p->spec.containers[0].env_from[0].config_map_ref->name == "c");
}

TEST_CASE("a typed list such as PodList gives kind-less items its item kind") {
  auto result = decode(R"({"kind": "PodList", "apiVersion": "v1",
    "items": [{"metadata": {"name": "a"}},
              {"kind": "Secret", "metadata": {"name": "b"}}]})");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 2);
  CHECK(result.objects[0].kind == "Pod");
  CHECK(as<pod>(result.objects[0])->metadata.name == "a");
  CHECK(result.objects[1].kind == "Secret");
}

TEST_CASE("a List with null or missing items yields no objects") {
  auto a = decode("kind: List\nitems:\n");
  auto b = decode(R"({"kind": "List"})");
  CHECK(a.ok());
  CHECK(a.objects.empty());
  CHECK(b.ok());
  CHECK(b.objects.empty());
}

TEST_CASE("JSON values written one after another are separate documents") {
  auto result = decode(R"({"kind": "Pod", "metadata": {"name": "a"}}
{"kind": "Secret", "stringData": {"b": "}{"}}
  [] {"kind": "ConfigMap"})");
  // The list in the middle is document 2 and not a map; the documents
  // around it still decode.
  CHECK(result.errors
        == strings{"test.yaml: document 2: expected a map, got a list"});
  REQUIRE(result.objects.size() == 3);
  CHECK(result.objects[2].doc == 3);
  CHECK(result.objects[2].kind == "ConfigMap");
  auto ok = decode("{\"kind\": \"Pod\"}\n{\"kind\": \"Secret\"}\n");
  INFO(errors_text(ok));
  REQUIRE(ok.objects.size() == 2);
  CHECK(ok.objects[1].doc == 1);
  CHECK(ok.objects[1].kind == "Secret");
}

TEST_CASE("empty input yields no objects and no error") {
  for (std::string text : {"", "   \n\n  \n", "# nothing here\n", "---\n",
                           "---\n...\n---\n", "\xEF\xBB\xBF", "null\n",
                           "~\n"}) {
    INFO(text);
    auto result = decode(text);
    CHECK(result.ok());
    CHECK(result.objects.empty());
  }
}

TEST_CASE("a UTF-8 byte order mark is accepted before YAML and JSON") {
  auto yaml = decode("\xEF\xBB\xBFkind: Pod\n");
  auto json = decode("\xEF\xBB\xBF  {\"kind\": \"Pod\"}");
  INFO(errors_text(yaml) << errors_text(json));
  CHECK(yaml.objects.size() == 1);
  CHECK(json.objects.size() == 1);
}

// -- YAML specifics -----------------------------------------------------------

TEST_CASE("anchors and aliases share an env list between containers") {
  auto p = only<pod>(R"(
kind: Deployment
metadata:
  name: api
  labels: &labels {app: api}
spec:
  template:
    metadata: {labels: *labels}
    spec:
      containers:
        - name: api
          image: &image registry.example.com/api:1
          env: &env
            - name: DB_PASSWORD
              valueFrom: {secretKeyRef: {name: db, key: password}}
            - name: MODE
              value: server
        - name: worker
          image: *image
          env: *env
      initContainers:
        - name: init
          env: *env
)");
  CHECK(p->metadata.labels.at("app") == "api");
  REQUIRE(p->spec.containers.size() == 2);
  CHECK(p->spec.containers[1].image == "registry.example.com/api:1");
  for (const auto* c : {&p->spec.containers[0], &p->spec.containers[1],
                        &p->spec.init_containers[0]}) {
    INFO(c->name);
    CHECK(env_names(*c) == strings{"DB_PASSWORD", "MODE"});
    CHECK(c->env[0].value_from->secret_key_ref->name == "db");
  }
}

TEST_CASE("the merge key << merges anchored maps under the keys present") {
  auto p = only<pod>(R"(
kind: Pod
metadata:
  name: p
  labels:
    <<: [{team: a, tier: web}, {tier: ignored, zone: z}]
    tier: own
spec:
  containers:
    - &base
      name: base
      image: img
      envFrom: [{secretRef: {name: shared}}]
    - <<: *base
      name: derived
)");
  CHECK(p->metadata.labels
        == std::map<std::string, std::string>{
          {"team", "a"}, {"tier", "own"}, {"zone", "z"}});
  REQUIRE(p->spec.containers.size() == 2);
  CHECK(p->spec.containers[1].name == "derived");
  CHECK(p->spec.containers[1].image == "img");
  CHECK(p->spec.containers[1].env_from[0].secret_ref->name == "shared");
}

TEST_CASE("YAML scalars are typed by the YAML 1.2 core schema") {
  using nlohmann::json;
  using detail::resolve_plain_scalar;
  for (std::string text : {"true", "True", "TRUE"})
    CHECK(resolve_plain_scalar(text) == json(true));
  for (std::string text : {"false", "False", "FALSE"})
    CHECK(resolve_plain_scalar(text) == json(false));
  for (std::string text : {"", "~", "null", "Null", "NULL"})
    CHECK(resolve_plain_scalar(text).is_null());
  CHECK(resolve_plain_scalar("42") == json(42));
  CHECK(resolve_plain_scalar("-17") == json(-17));
  CHECK(resolve_plain_scalar("+5") == json(5));
  CHECK(resolve_plain_scalar("0400") == json(400));
  CHECK(resolve_plain_scalar("0o17") == json(15));
  CHECK(resolve_plain_scalar("0x1F") == json(31));
  CHECK(resolve_plain_scalar("18446744073709551615")
        == json(std::uint64_t{18446744073709551615u}));
  CHECK(resolve_plain_scalar("-9223372036854775808")
        == json(INT64_MIN));
  CHECK(resolve_plain_scalar("99999999999999999999").is_number_float());
  CHECK(resolve_plain_scalar("1.5") == json(1.5));
  CHECK(resolve_plain_scalar("-.5") == json(-0.5));
  CHECK(resolve_plain_scalar("1.") == json(1.0));
  CHECK(resolve_plain_scalar("6.02e23") == json(6.02e23));
  CHECK(resolve_plain_scalar("1E-3") == json(0.001));
  CHECK(resolve_plain_scalar("1e999").get<double>() == INFINITY);
  CHECK(resolve_plain_scalar("-.inf").get<double>() == -INFINITY);
  CHECK(std::isnan(resolve_plain_scalar(".NaN").get<double>()));
  CHECK(detail::resolve_tagged_scalar("tag:yaml.org,2002:int", "0x10")
        == json(16));
  CHECK(detail::resolve_tagged_scalar("tag:yaml.org,2002:float", "2")
        == json(2.0));
  CHECK(detail::resolve_tagged_scalar("tag:yaml.org,2002:str", "2")
        == json("2"));
  CHECK(detail::resolve_tagged_scalar("!", "true") == json("true"));
  CHECK_FALSE(detail::resolve_tagged_scalar("tag:yaml.org,2002:bool", "yes"));
  // YAML 1.1 spellings and near misses stay strings.
  for (std::string text : {"yes", "no", "on", "off", "y", "tRUE", "nil",
                           "0x", "0o8", "1_000", "1.2.3", ".", "e5", "0b101",
                           "+.nan", "12:30", "1e", "- 1"})
    CHECK(resolve_plain_scalar(text) == json(text));
}

TEST_CASE("a reference's optional takes YAML 1.1's no, as kubectl does") {
  auto p = only<pod>(R"(
kind: Pod
spec:
  volumes:
    - name: v
      secret: {secretName: s, optional: no}
  containers:
    - name: c
      envFrom: [{configMapRef: {name: m, optional: yes}}]
)");
  REQUIRE(p->spec.volumes.size() == 1);
  REQUIRE(p->spec.volumes[0].secret);
  CHECK(p->spec.volumes[0].secret->optional == false);
  REQUIRE(p->spec.containers.size() == 1);
  CHECK(p->spec.containers[0].env_from[0].config_map_ref->optional == true);
}

TEST_CASE("booleans must be YAML booleans, not quoted text") {
  auto s = only<secret>("kind: Secret\nimmutable: TRUE\n");
  CHECK(s->immutable == true);
  CHECK(error_of("kind: Secret\nimmutable: \"true\"\n")
        == "test.yaml: document 0: immutable: expected a boolean, got a "
           "string");
  CHECK(error_of(R"({"kind": "Secret", "immutable": "TRUE"})")
        == "test.yaml: document 0: immutable: expected a boolean, got a "
           "string");
  CHECK(error_of("kind: Secret\nimmutable: sure\n")
        == "test.yaml: document 0: immutable: expected a boolean, got a "
           "string");
  // YAML 1.1's words where a boolean belongs, as kubectl reads them.
  CHECK(only<secret>("kind: Secret\nimmutable: yes\n")->immutable == true);
  CHECK(only<secret>("kind: Secret\nimmutable: Off\n")->immutable == false);
  CHECK(only<secret>("kind: Secret\nimmutable: N\n")->immutable == false);
  // Elsewhere they are the text they look like.
  auto m = only<config_map>("kind: ConfigMap\nmetadata: {name: n}\n"
                            "data: {enabled: yes}\n");
  CHECK(m->metadata.name == "n");
  CHECK(m->data.at("enabled") == "yes");
  CHECK(error_of("kind: ConfigMap\nimmutable: 1\n")
        == "test.yaml: document 0: immutable: expected a boolean, got a "
           "number");
}

TEST_CASE("explicit core tags force a type, others are ignored") {
  auto s = only<secret>(R"(
kind: !!str Secret
metadata: {name: !custom s}
immutable: !!bool "true"
stringData: {n: !!str 12, t: !!str true, e: !!str , x: !foo 7}
)");
  CHECK(s->immutable == true);
  CHECK(s->metadata.name == "s");
  CHECK(s->string_data
        == std::map<std::string, std::string>{
          {"n", "12"}, {"t", "true"}, {"e", ""}, {"x", "7"}});
  CHECK(error_of("kind: Pod\nmetadata:\n  name: !!int abc\n")
        == "test.yaml: line 3: \"abc\" is not a valid !!int");
  CHECK(error_of("kind: Pod\nx: !!null 0\n")
        == "test.yaml: line 2: \"0\" is not a valid !!null");
  CHECK(error_of("kind: Secret\nimmutable: !!float 1\n")
        == "test.yaml: document 0: immutable: expected a boolean, got a "
           "number");
}

TEST_CASE("quoted and block scalars are always strings") {
  auto c = only<config_map>(R"(
kind: ConfigMap
data:
  a: "123"
  b: 'true'
  c: "null"
  d: ""
  e: |
    42
  f: >-
    false
)");
  CHECK(c->data
        == std::map<std::string, std::string>{{"a", "123"}, {"b", "true"},
                                              {"c", "null"}, {"d", ""},
                                              {"e", "42\n"}, {"f", "false"}});
}

TEST_CASE("null fields count as absent and null map values as empty") {
  auto p = only<pod>(R"(
kind: Pod
metadata:
  name: p
  namespace:
  labels: {a: , b: ~}
  annotations:
spec:
  imagePullSecrets:
  containers:
    - name: c
      env:
      envFrom: ~
    - null
  volumes:
    - name: v
      secret:
      emptyDir: {}
)");
  CHECK(p->metadata.ns == "default");
  CHECK(p->metadata.labels
        == std::map<std::string, std::string>{{"a", ""}, {"b", ""}});
  REQUIRE(p->spec.containers.size() == 2);
  CHECK(p->spec.containers[0].env.empty());
  CHECK(p->spec.containers[1].name.empty());
  CHECK_FALSE(p->spec.volumes[0].secret);
  CHECK(p->spec.volumes[0].other_source == "emptyDir");
}

TEST_CASE("a repeated key keeps its last value in YAML and JSON") {
  auto a = only<pod>("kind: Pod\nmetadata: {name: one, name: two}\n");
  CHECK(a->metadata.name == "two");
  auto b = only<pod>(R"({"kind": "Pod", "metadata": {"name": "one",
    "name": "two"}})");
  CHECK(b->metadata.name == "two");
}

// -- errors -------------------------------------------------------------------

TEST_CASE("a value of the wrong type is reported with its full path") {
  // The Pod of document 0 is kept.
  CHECK(error_keeping(R"(kind: Pod
metadata: {name: p}
---
kind: Service
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
        - name: c
          env: "FOO=bar"
)", 1) == "test.yaml: document 2: spec.template.spec.containers[0].env: "
       "expected a list, got a string");
  CHECK(error_of(pod_with_spec("  containers: {name: c}\n"))
        == "test.yaml: document 0: spec.containers: expected a list, got a "
           "map");
  CHECK(error_of(pod_with_spec("  volumes:\n    - name: v\n      secret:\n"
                               "        items: [{key: 5}]\n"))
        == "test.yaml: document 0: spec.volumes[0].secret.items[0].key: "
           "expected a string, got a number");
  CHECK(error_of(pod_with_spec("  containers:\n    - env:\n        - name: X"
                               "\n          valueFrom: {fieldRef: x}\n"))
        == "test.yaml: document 0: spec.containers[0].env[0].valueFrom."
           "fieldRef: expected a map, got a string");
  CHECK(error_of(pod_with_spec("  volumes: [{name: v, emptyDir: []}]\n"))
        == "test.yaml: document 0: spec.volumes[0].emptyDir: expected a map, "
           "got a list");
  CHECK(error_of(pod_with_spec(
          "  volumes:\n    - projected:\n        sources:\n"
          "          - {serviceAccountToken: true}\n"))
        == "test.yaml: document 0: spec.volumes[0].projected.sources[0]."
           "serviceAccountToken: expected a map, got a boolean");
  CHECK(error_of(pod_with_spec("  imagePullSecrets: [[name]]\n"))
        == "test.yaml: document 0: spec.imagePullSecrets[0]: expected a map, "
           "got a list");
  CHECK(error_of(pod_with_spec("  containers: [{envFrom: [{secretRef: "
                               "{name: s, optional: \"nope\"}}]}]\n"))
        == "test.yaml: document 0: spec.containers[0].envFrom[0].secretRef."
           "optional: expected a boolean, got a string");
  CHECK(error_of("kind: CronJob\nspec:\n  jobTemplate:\n    spec: [1]\n")
        == "test.yaml: document 0: spec.jobTemplate.spec: expected a map, got "
           "a list");
  CHECK(error_of("kind: Pod\nspec: 3\n")
        == "test.yaml: document 0: spec: expected a map, got a number");
  CHECK(error_of("kind: Pod\nmetadata: [a]\n")
        == "test.yaml: document 0: metadata: expected a map, got a list");
  CHECK(error_of("kind: Secret\nstringData: {a: [x]}\n")
        == "test.yaml: document 0: stringData.a: expected a string, got a "
           "list");
  CHECK(error_of("kind: 3\n")
        == "test.yaml: document 0: kind: expected a string, got a number");
  CHECK(error_of("just a string\n")
        == "test.yaml: document 0: expected a map, got a string");
  CHECK(error_of("- kind: Pod\n")
        == "test.yaml: document 0: expected a map, got a list");
}

TEST_CASE("errors inside Lists name the item") {
  // The other items are kept.
  CHECK(error_keeping(R"(
kind: List
items:
  - kind: Pod
  - kind: Secret
  - kind: Pod
    spec:
      volumes:
        - name: v
          csi: {driver: d, nodePublishSecretRef: {name: [x]}}
)", 2) == "test.yaml: document 0: items[2].spec.volumes[0].csi."
       "nodePublishSecretRef.name: expected a string, got a list");
  CHECK(error_keeping(R"({"kind": "List", "items": [{"kind": "Pod"}, {}]})", 1)
        == "test.yaml: document 0: items[1].kind: required field is missing");
  // Each bad item is an error of its own.
  auto nested
    = decode("kind: List\nitems:\n  - kind: List\n    items: [{}, 7]\n");
  CHECK(nested.objects.empty());
  CHECK(nested.errors
        == strings{"test.yaml: document 0: items[0].items[0].kind: required "
                   "field is missing",
                   "test.yaml: document 0: items[0].items[1]: expected a map, "
                   "got a number"});
  CHECK(error_keeping("kind: NodeList\nitems: [{}, 7]\n", 1)
        == "test.yaml: document 0: items[1]: expected a map, got a number");
  CHECK(error_of("kind: List\nitems: {a: b}\n")
        == "test.yaml: document 0: items: expected a list, got a map");
}

TEST_CASE("labels and annotations must be strings, numbers included") {
  CHECK(error_of("kind: Pod\nmetadata:\n  labels: {a: 1}\n")
        == "test.yaml: document 0: metadata.labels.a: expected a string, got "
           "a number");
  CHECK(error_of("kind: Node\nmetadata:\n  annotations:\n"
                 "    node.alpha.kubernetes.io/ttl: 15\n")
        == "test.yaml: document 0: metadata.annotations[\"node.alpha."
           "kubernetes.io/ttl\"]: expected a string, got a number");
  CHECK(error_of("kind: Deployment\nspec:\n  template:\n    metadata:\n"
                 "      labels: {on: true}\n")
        == "test.yaml: document 0: spec.template.metadata.labels.on: "
           "expected a string, got a boolean (quote it: YAML reads true and "
           "false as booleans)");
  // Quoting makes them strings.
  auto p = only<pod>("kind: Pod\nmetadata:\n  labels: {a: \"1\"}\n");
  CHECK(p->metadata.labels.at("a") == "1");
}

TEST_CASE("a document without kind is an error") {
  CHECK(error_of("apiVersion: v1\nmetadata: {name: x}\n")
        == "test.yaml: document 0: kind: required field is missing");
  CHECK(error_keeping("kind: Pod\n---\nkind: \"\"\n", 1)
        == "test.yaml: document 1: kind: required field is missing");
  CHECK(error_of(R"({"apiVersion": "v1"})")
        == "test.yaml: document 0: kind: required field is missing");
}

TEST_CASE("invalid base64 names the data key and Go's offset") {
  CHECK(error_of("kind: Secret\ndata:\n  password: not*base64\n")
        == "test.yaml: document 0: data.password: illegal base64 data at "
           "input byte 3");
  // A short last quantum: Go names its start.
  CHECK(error_of("kind: Secret\ndata:\n  .dockerconfigjson: abc\n")
        == "test.yaml: document 0: data[\".dockerconfigjson\"]: illegal "
           "base64 data at input byte 0");
  CHECK(error_of("kind: ConfigMap\nbinaryData:\n  tls.crt: \"a===\"\n")
        == "test.yaml: document 0: binaryData[\"tls.crt\"]: illegal base64 "
           "data at input byte 1");
  CHECK(error_of("kind: Secret\ndata: {k: \"ab=c\"}\n")
        == "test.yaml: document 0: data.k: illegal base64 data at input byte "
           "2");
  CHECK(error_of("kind: Secret\ndata: {k: \"YQ==YQ==\"}\n")
        == "test.yaml: document 0: data.k: illegal base64 data at input byte "
           "4");
  CHECK(error_of("kind: Secret\ndata: {k: 12}\n")
        == "test.yaml: document 0: data.k: expected a string, got a number");
}

TEST_CASE("YAML syntax errors name the line") {
  // libyaml's texts, which are kubectl's (go-yaml v2 is a port of libyaml).
  CHECK(error_of("kind: Pod\nmetadata:\n  name: a: b\n")
        == "test.yaml: line 3: mapping values are not allowed in this "
           "context");
  CHECK(error_of("kind: Pod\nmetadata: {name: x\n")
        == "test.yaml: line 3: did not find expected ',' or '}', found the "
           "end of the input");
  CHECK(error_of("kind: Pod\nspec: *missing\n")
        == "test.yaml: line 2: unknown anchor 'missing' referenced");
  CHECK(error_of("kind: Pod\nmetadata:\n\t- b\n")
        == "test.yaml: line 3: a tab indents this line; YAML indents with "
           "spaces");
  CHECK(error_of("kind: Pod\nx: [a, b\n")
        == "test.yaml: line 3: did not find expected ',' or ']', found the "
           "end of the input");
  // A parser error names the indicator it found.
  CHECK(error_of(",")
        == "test.yaml: line 1: did not find expected node content, found "
           "','");
  CHECK(error_keeping("kind: Pod\n---\n  , x\n", 1)
        == "test.yaml: line 3: did not find expected node content, found "
           "','");
  CHECK(error_of("\xEF\xBB\xBF# comment\n--- &a ,\n")
        == "test.yaml: line 2: did not find expected <document start>, found "
           "','");
  // The error of a later document keeps the objects before it.
  CHECK(error_keeping("kind: Pod\n---\nkind: Pod\n  bad: indent\n", 1)
        == "test.yaml: line 4: mapping values are not allowed in this "
           "context");
  // An anchor name is quoted by its prefix only.
  auto long_alias = error_of("kind: Pod\nspec: *" + std::string(1000, 'a')
                             + "\n");
  CHECK(long_alias.find("'... (1000 bytes) referenced") != std::string::npos);
  CHECK(long_alias.size() < 400);
}

TEST_CASE("a lone carriage return breaks lines in YAML as LF and CR LF do") {
  // Found by fuzzing: yaml-cpp 0.7 reads a lone CR as an ordinary
  // character, so the JSON text below lost "configMapRef" when decoded as
  // YAML (JSON is YAML's flow style, and CR is JSON whitespace). The
  // decoder picks JSON or YAML by the text's first character.
  std::string json = "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"},"
                     " \"spec\": {\"containers\": [{\"name\": \"c\","
                     " \"envFrom\": [{\"prefix\": \"A_\",\r"
                     "   \"configMapRef\": {\"name\": \"cm\"}}]}]}}";
  // A leading comment sends the same text down the YAML path.
  for (const auto& text : {json, "# as YAML\n" + json}) {
    INFO(text.substr(0, 9));
    CHECK(config_map_names(*only<pod>(text)) == strings{"cm"});
  }
  auto block = [](const std::string& eol) {
    return "kind: Pod" + eol + "metadata:" + eol + "  name: p" + eol
           + "spec:" + eol + "  volumes:" + eol + "  - name: v" + eol
           + "    configMap:" + eol + "      name: cm" + eol;
  };
  for (auto [label, eol] : {std::pair{"LF", "\n"}, std::pair{"CR LF", "\r\n"},
                            std::pair{"CR", "\r"}}) {
    INFO(label);
    auto p = only<pod>(block(eol));
    CHECK(p->metadata.name == "p");
    CHECK(config_map_names(*p) == strings{"cm"});
  }
  CHECK(error_of("kind: Pod\rmetadata:\r  name: a: b\r")
        == "test.yaml: line 3: mapping values are not allowed in this "
           "context");
}

TEST_CASE("JSON syntax errors name the line") {
  CHECK(error_of("{\n  \"kind\": \"Pod\",\n  \"metadata\": {\n"
                 "    \"name\": x\n  }\n}\n")
        == "test.yaml: line 4: syntax error while parsing value - invalid "
           "literal; last read: '\"name\": x'");
  CHECK(error_keeping("{\"kind\": \"Pod\"}\n\n{\"kind\": \"Pod\",}\n", 1)
        == "test.yaml: line 3: syntax error while parsing object key - "
           "unexpected '}'; expected string literal");
  CHECK(error_of("{\"kind\": \"Pod\"\n")
        == "test.yaml: line 2: syntax error while parsing object - "
           "unexpected end of input; expected '}'");
  CHECK(error_of("[1,\n2,\n1e999]")
        == "test.yaml: line 3: number overflow parsing '1e999'");
  CHECK(error_keeping("{\"kind\": \"Pod\"} trailing", 1)
        == "test.yaml: line 1: syntax error while parsing value - invalid "
           "literal; last read: 'tra'");
}

TEST_CASE("non-string map keys are errors") {
  CHECK(error_of("kind: Pod\nmetadata:\n  labels:\n    1: a\n")
        == "test.yaml: line 4: map key must be a string, got a number");
  CHECK(error_of("kind: Pod\ntrue: x\n")
        == "test.yaml: line 2: map key must be a string, got a boolean");
  CHECK(error_of("kind: Pod\n? [a, b]\n: c\n")
        == "test.yaml: line 2: map key must be a string, got a list");
  CHECK(error_of("kind: Pod\n~: x\n")
        == "test.yaml: line 2: map key must be a string, got null");
  CHECK(error_of("kind: Pod\nmetadata:\n  labels: {<<: 5}\n")
        == "test.yaml: line 3: the merge key << needs a map or a list of "
           "maps, got a number");
  // Quoted, they are strings.
  auto c = only<config_map>("kind: ConfigMap\ndata: {\"1\": a, \"true\": b}\n");
  CHECK(c->data.size() == 2);
}

TEST_CASE("errors quote at most a prefix of a long key or value") {
  std::string key(1000, 'k');
  // A data key is quoted in the field path; a long one by its prefix.
  CHECK(error_of("{\"kind\": \"Secret\", \"metadata\": {\"name\": \"s\"}, "
                 "\"data\": {\"" + key + "\": 1}}")
        == "test.yaml: document 0: data[\"" + std::string(256, 'k')
             + "\"... (1000 bytes)]: expected a string, got a number");
  // A metadata.name far over the limit is quoted by its prefix.
  std::string name(100000, 'n');
  auto text = error_of("kind: Secret\nmetadata:\n  name: " + name + "\n");
  CHECK(text.size() < 1000);
  CHECK(text.find("... (100000 bytes)") != std::string::npos);
}

TEST_CASE("UTF-16 input is named as such") {
  auto utf16 = [](std::string_view ascii, bool little, bool bom) {
    std::string out;
    if (bom)
      out += little ? "\xFF\xFE" : "\xFE\xFF";
    for (char c : ascii) {
      out += little ? c : '\0';
      out += little ? '\0' : c;
    }
    return out;
  };
  const std::string little = "test.yaml: line 1: the input is UTF-16 "
                             "(little-endian), which is not supported: "
                             "convert it to UTF-8";
  const std::string big = "test.yaml: line 1: the input is UTF-16 "
                          "(big-endian), which is not supported: convert it "
                          "to UTF-8";
  CHECK(error_of(utf16("kind: Pod\n", true, true)) == little);
  CHECK(error_of(utf16("kind: Pod\n", true, false)) == little);
  CHECK(error_of(utf16("kind: Pod\n", false, true)) == big);
  CHECK(error_of(utf16("{\"kind\": \"Pod\"}", false, false)) == big);
  // A UTF-8 manifest with a NUL later on is not UTF-16.
  CHECK(error_of(std::string("ki\0d: Pod\n", 10))
        == "test.yaml: line 1: control character U+0000 is not allowed");
}

TEST_CASE("invalid UTF-8 and binary junk are errors, not crashes") {
  CHECK(error_of("kind: Pod\nmetadata:\n  name: caf\xC3\n")
        == "test.yaml: line 3: invalid UTF-8");
  CHECK(error_of("{\"kind\": \"\xED\xA0\x80\"}")
        == "test.yaml: line 1: invalid UTF-8");
  CHECK(error_of("kind: Pod\n\xC0\xAF: overlong\n")
        == "test.yaml: line 2: invalid UTF-8");
  CHECK(error_of(std::string("kind: Pod\nx: \0\n", 14))
        == "test.yaml: line 2: control character U+0000 is not allowed");
  CHECK(error_of("{\"kind\":\n\"P\x1bod\"}")
        == "test.yaml: line 2: control character U+001B is not allowed");
  CHECK(decode("kind: Pod\nmetadata: {annotations: {a: \"\xE2\x9C\x93 "
               "\xF0\x9F\x90\xB3\"}}\n")
          .ok());
  std::mt19937 random{42};
  for (int round = 0; round < 200; ++round) {
    std::string junk(static_cast<std::size_t>(random() % 512), '\0');
    for (auto& c : junk)
      c = static_cast<char>(random() % 256);
    if (round % 2 == 0)
      junk.insert(0, round % 4 == 0 ? "{" : "kind: Pod\n");
    auto result = decode(junk);
    if (!result.ok())
      CHECK(result.objects.empty());
  }
  // Printable junk that is valid UTF-8 reaches the parsers.
  for (const auto& text : strings{"\x01\x02\x03", "{\x7f}", "%%%\n:::\n", "]]]",
                                 "\t- [\n", std::string("kind: Pod\0x", 11)}) {
    auto result = decode(text);
    INFO(text << " -> " << errors_text(result));
    CHECK_FALSE(result.ok());
    CHECK(result.objects.empty());
  }
}

// -- names and references -----------------------------------------------------

namespace {

constexpr const char* subdomain_rule
  = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

constexpr const char* label_rule
  = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric "
    "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

} // namespace

TEST_CASE("object names must be DNS-1123 subdomains, whatever the kind") {
  for (std::string kind : {"Pod", "Secret", "ConfigMap", "Node", "Deployment",
                           "StatefulSet", "Job", "CronJob"}) {
    INFO(kind);
    CHECK(error_of("kind: " + kind + "\nmetadata: {name: Web_1}\n")
          == "test.yaml: document 0: metadata.name: Invalid value: \"Web_1\": "
               + std::string{subdomain_rule});
    CHECK(decode("kind: " + kind + "\nmetadata: {name: web-1.example}\n")
            .ok());
  }
  auto longest = std::string(253, 'a');
  CHECK(decode("kind: Secret\nmetadata: {name: " + longest + "}\n").ok());
  CHECK(error_of("kind: Secret\nmetadata: {name: " + longest + "a}\n")
        == "test.yaml: document 0: metadata.name: Invalid value: \"" + longest
             + "a\": must be no more than 253 characters");
  CHECK(error_of("kind: ConfigMap\nmetadata: {name: -cm.}\n")
        == "test.yaml: document 0: metadata.name: Invalid value: \"-cm.\": "
             + std::string{subdomain_rule});
  // Go's %q: printable Unicode stays, control characters are escaped.
  CHECK(error_of("kind: Pod\nmetadata: {name: \"caf\xC3\xA9\\t\"}\n")
        == "test.yaml: document 0: metadata.name: Invalid value: "
           "\"caf\xC3\xA9\\t\": "
             + std::string{subdomain_rule});
}

TEST_CASE("an empty name passes: the manifest may rely on generateName") {
  auto p = only<pod>("kind: Pod\nmetadata: {generateName: web-}\n");
  CHECK(p->metadata.name.empty());
  CHECK(decode("kind: Secret\nmetadata: {name: \"\"}\n").ok());
}

TEST_CASE("namespaces must be DNS-1123 labels") {
  CHECK(error_of("kind: Pod\nmetadata: {name: p, namespace: Team-A}\n")
        == "test.yaml: document 0: metadata.namespace: Invalid value: "
           "\"Team-A\": "
             + std::string{label_rule});
  CHECK(error_of("kind: Secret\nmetadata: {name: s, namespace: team.a}\n")
        == "test.yaml: document 0: metadata.namespace: Invalid value: "
           "\"team.a\": must not contain dots");
  auto longest = std::string(63, 'n');
  CHECK(decode("kind: ConfigMap\nmetadata: {namespace: " + longest + "}\n")
          .ok());
  CHECK(error_of("kind: ConfigMap\nmetadata: {namespace: " + longest + "n}\n")
        == "test.yaml: document 0: metadata.namespace: Invalid value: \""
             + longest + "n\": must be no more than 63 characters");
  CHECK(error_of("kind: Deployment\nmetadata: {name: d, namespace: _x}\n")
        == "test.yaml: document 0: metadata.namespace: Invalid value: "
           "\"_x\": "
             + std::string{label_rule});
  // A Node has no namespace: whatever it says is not checked.
  CHECK(decode("kind: Node\nmetadata: {name: n, namespace: Not_Checked}\n")
          .ok());
}

TEST_CASE("name errors inside Lists name the item") {
  CHECK(error_keeping("kind: List\nitems:\n  - {kind: Pod, metadata: {name: "
                      "a}}\n  - {kind: Secret, metadata: {name: B}}\n",
                      1)
        == "test.yaml: document 0: items[1].metadata.name: Invalid value: "
           "\"B\": "
             + std::string{subdomain_rule});
  CHECK(error_of("kind: PodList\nitems:\n  - spec:\n      volumes:\n"
                 "        - {name: v, secret: {}}\n")
        == "test.yaml: document 0: items[0].spec.volumes[0].secret."
           "secretName: Required value");
}

TEST_CASE("each reference field is checked as the API server checks it") {
  struct case_t {
    const char* desc;
    std::string spec;
    /// Empty: the pod decodes.
    std::string error;
  };
  const std::string sub = subdomain_rule;
  const case_t cases[] = {
    {"a secret volume needs a secretName", "  volumes: [{name: v, secret: {}}]\n",
     "spec.volumes[0].secret.secretName: Required value"},
    {"any secretName text is accepted",
     "  volumes: [{name: v, secret: {secretName: Not_A_Name}}]\n", ""},
    {"a configMap volume needs a name",
     "  volumes:\n    - {name: a, emptyDir: {}}\n"
     "    - {name: b, configMap: {name: \"\", optional: true}}\n",
     "spec.volumes[1].configMap.name: Required value"},
    {"projected secret and configMap sources need names",
     "  volumes:\n    - name: p\n      projected:\n        sources:\n"
     "          - secret: {name: s}\n          - configMap: {items: []}\n",
     "spec.volumes[0].projected.sources[1].configMap.name: Required value"},
    {"azureFile needs a secretName",
     "  volumes: [{name: v, azureFile: {shareName: s}}]\n",
     "spec.volumes[0].azureFile.secretName: Required value"},
    {"a cinder secretRef needs a name",
     "  volumes: [{name: v, cinder: {volumeID: x, secretRef: {}}}]\n",
     "spec.volumes[0].cinder.secretRef.name: Required value"},
    {"a storageos secretRef needs a name",
     "  volumes: [{name: v, storageos: {volumeName: x, secretRef: {}}}]\n",
     "spec.volumes[0].storageos.secretRef.name: Required value"},
    {"a csi nodePublishSecretRef needs a name",
     "  volumes: [{name: v, csi: {driver: d, nodePublishSecretRef: {}}}]\n",
     "spec.volumes[0].csi.nodePublishSecretRef.name: Required value"},
    {"a csi nodePublishSecretRef needs a valid name",
     "  volumes: [{name: v, csi: {driver: d, nodePublishSecretRef: "
     "{name: S}}}]\n",
     "spec.volumes[0].csi.nodePublishSecretRef.name: Invalid value: \"S\": "
       + sub},
    {"cephfs, flexVolume, rbd, scaleIO and iscsi secretRefs are not checked",
     "  volumes:\n    - {name: a, cephfs: {monitors: [m], secretRef: {}}}\n"
     "    - {name: b, flexVolume: {driver: d, secretRef: {name: X_}}}\n"
     "    - {name: c, rbd: {image: i, secretRef: {}}}\n"
     "    - {name: d, scaleIO: {gateway: g, secretRef: {}}}\n"
     "    - {name: e, iscsi: {iqn: q, secretRef: {}}}\n",
     ""},
    {"imagePullSecrets names are not checked",
     "  imagePullSecrets: [{}, {name: \"\"}, {name: Not_A_Name}]\n", ""},
    {"a secretKeyRef needs a valid name, so not an empty one",
     "  containers:\n    - name: c\n      env:\n        - name: A\n"
     "          valueFrom: {secretKeyRef: {key: k}}\n",
     "spec.containers[0].env[0].valueFrom.secretKeyRef.name: Invalid value: "
     "\"\": "
       + sub},
    {"a configMapKeyRef needs a valid name",
     "  initContainers:\n    - name: c\n      env:\n        - {name: A, value: "
     "x}\n        - name: B\n          valueFrom: {configMapKeyRef: {name: "
     "a..b, key: k}}\n",
     "spec.initContainers[0].env[1].valueFrom.configMapKeyRef.name: Invalid "
     "value: \"a..b\": "
       + sub},
    {"an envFrom secretRef needs a name",
     "  ephemeralContainers:\n    - name: c\n      envFrom: [{secretRef: "
     "{optional: true}}]\n",
     "spec.ephemeralContainers[0].envFrom[0].secretRef.name: Required value"},
    {"an envFrom name may end in '-', as upstream's prefix check allows",
     "  containers:\n    - name: c\n      envFrom:\n"
     "        - {configMapRef: {name: app-}}\n"
     "        - {secretRef: {name: a-}}\n",
     ""},
    {"an envFrom name must otherwise be a subdomain",
     "  containers:\n    - name: c\n      envFrom:\n"
     "        - {configMapRef: {name: App}}\n",
     "spec.containers[0].envFrom[0].configMapRef.name: Invalid value: "
     "\"App\": "
       + sub},
  };
  for (const auto& c : cases) {
    SECTION(c.desc) {
      auto result = decode(pod_with_spec(c.spec));
      if (c.error.empty()) {
        INFO(errors_text(result));
        CHECK(result.ok());
      } else {
        CHECK(result.objects.empty());
        CHECK(result.errors == strings{"test.yaml: document 0: " + c.error});
      }
    }
  }
}

TEST_CASE("reference errors in pod templates name the template's path") {
  CHECK(error_of("kind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
                 "    spec:\n      volumes: [{name: v, configMap: {}}]\n")
        == "test.yaml: document 0: spec.template.spec.volumes[0].configMap."
           "name: Required value");
  CHECK(error_of("kind: CronJob\nspec:\n  jobTemplate:\n    spec:\n"
                 "      template:\n        spec:\n          containers:\n"
                 "            - envFrom: [{secretRef: {name: \"\"}}]\n")
        == "test.yaml: document 0: spec.jobTemplate.spec.template.spec."
           "containers[0].envFrom[0].secretRef.name: Required value");
}

TEST_CASE("the decoded references still skip what the API server accepts "
          "empty") {
  auto p = only<pod>(pod_with_spec("  imagePullSecrets: [{}, {name: reg}]\n"
                                   "  volumes:\n"
                                   "    - {name: a, rbd: {secretRef: {}}}\n"));
  REQUIRE(p->spec.image_pull_secrets.size() == 2);
  CHECK(p->spec.image_pull_secrets[0].name.empty());
  REQUIRE(p->spec.volumes[0].rbd);
  CHECK(p->spec.volumes[0].rbd->secret_ref->name.empty());
}

// -- limits -------------------------------------------------------------------

TEST_CASE("input over max_bytes is rejected before parsing") {
  manifest_limits limits;
  limits.max_bytes = 16;
  CHECK(error_of("kind: Pod\nmetadata: {}\n", limits)
        == "test.yaml: input is 23 bytes, over the limit of 16");
  CHECK(decode("kind: Pod\n", limits).ok());
}

TEST_CASE("more objects than max_objects are rejected") {
  manifest_limits limits;
  limits.max_objects = 2;
  CHECK(decode("kind: Pod\n---\nkind: Service\n", limits).ok());
  // An empty document counts like any other. The limit ends the input; the
  // objects before it are kept.
  CHECK(error_keeping("kind: Pod\n---\n---\nkind: Service\n---\nkind: Node\n",
                      1, limits)
        == "test.yaml: document 2: more objects than the limit of 2");
  CHECK(error_of("---\n---\n---\nkind: Pod\n", limits)
        == "test.yaml: document 2: more objects than the limit of 2");
  CHECK(error_of("null\n---\nnull\n---\nnull\n", limits)
        == "test.yaml: document 2: more objects than the limit of 2");
  // The List and its items count.
  CHECK(error_keeping("kind: List\nitems: [{kind: Pod}, {kind: Pod}]\n", 1,
                      limits)
        == "test.yaml: document 0: items[1]: more objects than the limit of 2");
}

TEST_CASE("nesting deeper than max_depth is rejected with its line") {
  manifest_limits limits;
  limits.max_depth = 3;
  // Depth 3: the document, metadata and labels.
  CHECK(decode("kind: Pod\nmetadata:\n  labels: {a: b}\n", limits).ok());
  CHECK(error_of("kind: Pod\nmetadata:\n  labels:\n    a:\n      b: c\n",
                 limits)
        == "test.yaml: line 5: nesting deeper than the limit of 3 levels");
  CHECK(error_of("kind: Pod\nx: [[[1]]]\n", limits)
        == "test.yaml: line 2: nesting deeper than the limit of 3 levels");
  CHECK(error_of("{\"kind\": \"Pod\",\n \"x\": [\"[[[[\", [[1]]]}", limits)
        == "test.yaml: line 2: nesting deeper than the limit of 3 levels");
  CHECK(decode("{\"kind\": \"Pod\", \"x\": [\"[[[[\", [1]]}", limits).ok());
  // An alias counts with the depth of what it copies.
  CHECK(error_of("a: &x [[1]]\nb: [*x]\n", limits)
        == "test.yaml: line 2: nesting deeper than the limit of 3 levels");
}

TEST_CASE("100000 levels of nesting fail cleanly instead of overflowing") {
  const std::size_t n = 100000;
  auto check_deep = [](const std::string& text) {
    auto result = decode(text);
    CHECK_FALSE(result.ok());
    CHECK(result.objects.empty());
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].find("nesting deeper than the limit of 64 levels")
          != std::string::npos);
  };
  check_deep(std::string(n, '['));
  check_deep(std::string(n, '[') + std::string(n, ']'));
  std::string objects;
  for (std::size_t i = 0; i < n; ++i)
    objects += "{\"a\":";
  check_deep(objects);
  check_deep("kind: Pod\nx: " + std::string(n, '['));
  check_deep("kind: Pod\nx: " + objects);
  std::string dashes;
  for (std::size_t i = 0; i < n; ++i)
    dashes += "- ";
  check_deep(dashes + "x\n");
  std::string indented;
  for (std::size_t i = 0; i < 2000; ++i)
    indented += std::string(i, ' ') + "a:\n";
  check_deep(indented);
  // With the depth limit out of the way the parse goes on to its end:
  // libyaml does not recurse, nor does the builder. (libyaml's scanner
  // takes time in proportion to the depth for each token of a flow
  // collection, so 10000 levels here, which take 0.1 s.)
  const std::size_t deep = 10000;
  manifest_limits unlimited;
  unlimited.max_depth = deep * 2;
  auto result = decode("x: " + std::string(deep, '['), unlimited);
  CHECK(result.errors
        == strings{"test.yaml: line 2: did not find expected node content, "
                   "found the end of the input"});
  CHECK(decode("kind: Pod\nx: " + std::string(deep, '[')
                 + std::string(deep, ']'),
               unlimited)
          .ok());
  unlimited.max_depth = n * 2;
  auto json = decode(std::string(n, '[') + std::string(n, ']'), unlimited);
  CHECK(json.errors
        == strings{"test.yaml: document 0: expected a map, got a list"});
}

TEST_CASE("aliases that expand past max_alias_values are rejected") {
  std::string laughs = "kind: Pod\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'j'; ++level) {
    std::string prev(1, static_cast<char>(level - 1));
    laughs += std::string(1, level) + ": &" + level + " [*" + prev + ", *"
              + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *"
              + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *"
              + prev + "]\n";
  }
  CHECK(error_of(laughs)
        == "test.yaml: line 7: anchors and aliases copy more values than the "
           "limit of 1048576");
  // The anchored list is three values: copied once for the anchor and once
  // for each alias.
  manifest_limits limits;
  limits.max_alias_values = 6;
  CHECK(decode("kind: Pod\na: &a [1, 2]\nb: *a\n", limits).ok());
  CHECK(error_of("kind: Pod\na: &a [1, 2]\nb: *a\nc: *a\n", limits)
        == "test.yaml: line 4: anchors and aliases copy more values than the "
           "limit of 6");
  limits.max_alias_values = 2;
  CHECK(error_of("kind: Pod\na: &a [1, 2]\n", limits)
        == "test.yaml: line 2: anchors and aliases copy more values than the "
           "limit of 2");
}

TEST_CASE("a recursive alias is an error, not a loop") {
  CHECK(error_of("kind: Pod\na: &a [1, *a]\n")
        == "test.yaml: line 2: alias of an anchor that is not complete yet "
           "(a recursive alias)");
  CHECK(error_of("kind: Pod\na: &a {b: *a}\n")
        == "test.yaml: line 2: alias of an anchor that is not complete yet "
           "(a recursive alias)");
}

TEST_CASE("anchors do not reach into the next document") {
  CHECK(error_keeping("kind: Pod\nx: &a 1\n---\nkind: Pod\ny: *a\n", 1)
        == "test.yaml: line 5: unknown anchor 'a' referenced");
}

// -- files --------------------------------------------------------------------

TEST_CASE("load_manifest_file labels errors with the path") {
  auto missing = fixture("does-not-exist.yaml");
  auto result = load_manifest_file(missing);
  CHECK(result.errors
        == strings{missing + ": cannot read: No such file or directory"});
  CHECK(result.objects.empty());
  auto dir = fixture("");
  auto dir_result = load_manifest_file(dir);
  CHECK(dir_result.errors == strings{dir + ": cannot read: Is a directory"});
  manifest_limits limits;
  limits.max_bytes = 100;
  auto path = fixture("pod-everything.yaml");
  auto big = load_manifest_file(path, limits);
  auto size = fs::file_size(path);
  CHECK(big.errors
        == strings{path + ": input is " + std::to_string(size)
                   + " bytes, over the limit of 100"});
}

TEST_CASE("load_manifest_file reads standard input for \"-\"") {
  auto path = fixture("pod-everything.yaml");
  REQUIRE(std::freopen(path.c_str(), "rb", stdin) != nullptr);
  auto result = load_manifest_file("-");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  REQUIRE(result.objects.size() == 1);
  CHECK(as<pod>(result.objects[0])->metadata.ns == "shop");
  // Errors are labelled <stdin>.
  REQUIRE(std::freopen(path.c_str(), "rb", stdin) != nullptr);
  manifest_limits limits;
  limits.max_bytes = 100;
  CHECK(load_manifest_file("-", limits).errors
        == strings{"<stdin>: input is " + std::to_string(fs::file_size(path))
                   + " bytes, over the limit of 100"});
}

TEST_CASE("more containers than max_containers in one pod are rejected") {
  manifest_limits limits;
  limits.max_containers = 2;
  auto spec = [](int init, int regular, int ephemeral) {
    std::string out;
    auto list = [&](const char* key, int n) {
      if (n == 0)
        return;
      out += std::string{"  "} + key + ":\n";
      for (int i = 0; i < n; ++i)
        out += "    - {name: c" + std::to_string(i) + "}\n";
    };
    list("initContainers", init);
    list("containers", regular);
    list("ephemeralContainers", ephemeral);
    return out;
  };
  CHECK(decode(pod_with_spec(spec(1, 1, 0)), limits).ok());
  CHECK(decode(pod_with_spec(spec(0, 2, 0)), limits).ok());
  CHECK(error_of(pod_with_spec(spec(1, 2, 0)), limits)
        == "test.yaml: document 0: spec.containers: more containers than the "
           "limit of 2 per pod");
  CHECK(error_of(pod_with_spec(spec(0, 2, 1)), limits)
        == "test.yaml: document 0: spec.ephemeralContainers: more containers "
           "than the limit of 2 per pod");
  CHECK(error_of("kind: Job\nspec:\n  template:\n    spec:\n      "
                 "initContainers: [{}, {}, {}]\n",
                 limits)
        == "test.yaml: document 0: spec.template.spec.initContainers: more "
           "containers than the limit of 2 per pod");
  // The limit is per pod: two pods of two containers each pass.
  CHECK(decode(pod_with_spec(spec(0, 2, 0)) + "---\n"
                 + pod_with_spec(spec(2, 0, 0)),
               limits)
          .ok());
  CHECK(manifest_limits{}.max_containers == 1000);
}

TEST_CASE("more references than max_references in one pod are rejected") {
  manifest_limits limits;
  limits.max_references = 2;
  // Counted in upstream's validation order: volumes, containers,
  // imagePullSecrets; empty names count too.
  auto three = "  imagePullSecrets: [{}]\n"
               "  containers:\n    - envFrom: [{secretRef: {name: a}}]\n"
               "  volumes: [{name: v, secret: {secretName: b}}]\n";
  CHECK(error_of(pod_with_spec(three), limits)
        == "test.yaml: document 0: spec.imagePullSecrets[0].name: more Secret "
           "and ConfigMap references than the limit of 2 per pod");
  limits.max_references = 3;
  CHECK(decode(pod_with_spec(three), limits).ok());
  CHECK(manifest_limits{}.max_references == 10000);
}

TEST_CASE("documents over max_document_bytes are rejected at their line") {
  manifest_limits limits;
  limits.max_document_bytes = 15;
  // {"kind": "Pod"} is 15 bytes.
  CHECK(decode("{\"kind\": \"Pod\"}\n{\"kind\": \"Pod\"}", limits).ok());
  CHECK(error_keeping("{\"kind\": \"Pod\"}\n\n {\"kind\": \"Pods\"}", 1,
                      limits)
        == "test.yaml: line 3: document is over the limit of 15 bytes");
  limits.max_document_bytes = 30;
  CHECK(decode("kind: Pod\n---\nkind: Secret\n---\nkind: ConfigMap\n", limits)
          .ok());
  // A YAML document starts at its `---`.
  CHECK(error_keeping("kind: Pod\n---\nkind: Secret\nstringData:\n  a: b\n"
                      "  long: \"0123456789abcdef\"\n",
                      1, limits)
        == "test.yaml: line 2: document is over the limit of 30 bytes");
  // The length of a scalar counts, not only where it starts.
  CHECK(error_of("kind: Secret\nstringData: {a: \"0123456789abcdef\"}\n",
                 limits)
        == "test.yaml: line 1: document is over the limit of 30 bytes");
  // Bytes, not characters: each é is two.
  auto secret = [](std::size_t n) {
    std::string text = "kind: Secret\nstringData: {a: ";
    for (std::size_t i = 0; i < n; ++i)
      text += "\xC3\xA9";
    return text + "}\n";
  };
  limits.max_document_bytes = 40;
  CHECK(decode(secret(5), limits).ok()); // 40 bytes to the '}'
  CHECK(error_of(secret(6), limits)
        == "test.yaml: line 1: document is over the limit of 40 bytes");
  CHECK(decode(secret(5) + "---\n" + secret(3), limits).ok());
  CHECK(error_keeping(secret(5) + "---\n" + secret(4), 1, limits)
        == "test.yaml: line 3: document is over the limit of 40 bytes");
  // The input limit is checked first and independently.
  limits.max_bytes = 10;
  CHECK(error_of("kind: Secret\n", limits)
        == "test.yaml: input is 13 bytes, over the limit of 10");
  CHECK(manifest_limits{}.max_document_bytes == manifest_limits{}.max_bytes);
}

TEST_CASE("decode_manifest never throws, whatever the limits") {
  manifest_limits zero{0, 0, 0, 0, 0, 0, 0};
  CHECK(decode("", zero).ok());
  CHECK(error_of("kind: Pod\n", zero)
        == "test.yaml: input is 10 bytes, over the limit of 0");
  manifest_limits no_objects;
  no_objects.max_objects = 0;
  CHECK(error_of("kind: Pod\n", no_objects)
        == "test.yaml: document 0: more objects than the limit of 0");
  // An empty document is a document: it counts too.
  CHECK(error_of("---\n", no_objects)
        == "test.yaml: document 0: more objects than the limit of 0");
  manifest_limits flat;
  flat.max_depth = 0;
  CHECK(error_of("kind: Pod\n", flat)
        == "test.yaml: line 1: nesting deeper than the limit of 0 levels");
  manifest_limits tiny;
  tiny.max_document_bytes = 0;
  CHECK(error_of("kind: Pod\n", tiny)
        == "test.yaml: line 1: document is over the limit of 0 bytes");
  CHECK(error_of("{}", tiny)
        == "test.yaml: line 1: document is over the limit of 0 bytes");
  manifest_limits no_pods;
  no_pods.max_containers = 0;
  no_pods.max_references = 0;
  CHECK(decode("kind: Pod\nspec: {containers: []}\n", no_pods).ok());
  CHECK(error_of("kind: Pod\nspec: {containers: [{}]}\n", no_pods)
        == "test.yaml: document 0: spec.containers: more containers than the "
           "limit of 0 per pod");
  CHECK(error_of("kind: Pod\nspec: {imagePullSecrets: [{}]}\n", no_pods)
        == "test.yaml: document 0: spec.imagePullSecrets[0].name: more Secret "
           "and ConfigMap references than the limit of 0 per pod");
}
