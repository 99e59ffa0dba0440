// Embedding podref in a node agent: the embedded API server holds the
// cluster's Secrets, a secret manager keeps the ones a pod references fresh,
// and the agent reads them without waiting on the network.
//
//   podref_embedding_example [objects.yaml]
//
// The objects default to examples/manifests/objects-default.yaml. Exits with
// 0 when every Secret the pod references could be read.
#include <chrono>
#include <iostream>
#include <string>
#include <variant>

#include "podref/messages/pod_references.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/manifest/manifest.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/runtime/typed_managers.hpp"

namespace {

// The pod as the agent receives it from its control plane.
constexpr const char* pod_manifest = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
  uid: 0b7c5d4e-1f2a-4b3c-9d8e-7f6a5b4c3d2e
spec:
  imagePullSecrets:
    - name: registry-credentials
  containers:
    - name: app
      image: registry.example.com/web:1.0
      env:
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef:
              name: db-credentials
              key: password
      envFrom:
        - secretRef:
            name: api-tokens
)";

} // namespace

int main(int argc, char** argv) {
  std::string objects_file = argc > 1 ? argv[1] : PODREF_EXAMPLE_OBJECTS;
  // Destroyed in reverse: the manager, then the API server, then the actor
  // system the runtime owns.
  // [readme]
  podref::runtime rt;          // owns an actor system (or borrows yours)
  podref::api_server api{rt};  // the embedded in-memory API server
  // [/readme]
  // A bad document costs only itself: the valid ones are still loaded.
  auto objects = podref::load_manifest_file(objects_file);
  for (const auto& error : objects.errors)
    std::cerr << error << '\n';
  std::cout << "loaded " << api.load(objects) << " objects from "
            << objects_file << '\n';

  auto decoded = podref::decode_manifest(pod_manifest, "pod.yaml");
  const podref::pod_ptr* pod = nullptr;
  if (decoded.ok() && !decoded.objects.empty())
    pod = std::get_if<podref::pod_ptr>(&decoded.objects.front().object);
  if (pod == nullptr) {
    std::cerr << "cannot decode the pod\n";
    for (const auto& error : decoded.errors)
      std::cerr << error << '\n';
    return 1;
  }
  const auto& p = **pod;

  // [readme]
  podref::secret_manager secrets{rt, api};  // Watch strategy by default
  auto reg = secrets.register_pod(p);  // returns at once; watches start
  if (!reg) {  // an invalid name or reference, or a shut-down manager
    std::cerr << reg.error().message << '\n';
    return 1;
  }
  // [/readme]
  if (!secrets.manager().wait_quiescent(std::chrono::seconds(5))) {
    std::cerr << "the secrets did not sync within 5 s\n";
    return 1;
  }
  for (const auto& name : podref::secret_names(p)) {
    // [readme]
    auto s = secrets.get_secret(p.metadata.ns, name);  // lock-free once synced
    if (!s) {
      std::cerr << s.error().message << '\n';  // upstream's error texts
      return 1;
    }
    // [/readme]
    std::cout << p.metadata.ns << '/' << name << " (resourceVersion "
              << (*s)->metadata.resource_version << "):";
    for (const auto& kvp : (*s)->data)
      std::cout << ' ' << kvp.first;
    for (const auto& kvp : (*s)->string_data)
      std::cout << ' ' << kvp.first;
    std::cout << '\n';
  }
  // Only what registered pods reference is served.
  auto other = secrets.get_secret(p.metadata.ns, "web-tls");
  std::cout << (other ? "web-tls was served" : other.error().message)
            << '\n';
  // [readme]
  secrets.unregister_pod(p);  // the last reference stops the reflector
  // [/readme]
  return other ? 1 : 0;
}
