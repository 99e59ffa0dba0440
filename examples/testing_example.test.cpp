// Testing your own code on podref, deterministically: a copyable example.
//
// The component under test is an image-pull helper of a node agent: it
// reads a pod's registry credentials through a secret_manager and says why
// when it cannot. Its tests run on podref::testing::deterministic_runtime:
// no worker threads, a virtual clock, so a one-minute TTL and the one-second
// sync timeout are tested exactly, in microseconds of real time.
//
// Build: link podref::testing (and Catch2). Only public headers are used.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/testing/deterministic_runtime.hpp"

using namespace std::chrono_literals;

// -- the embedder's component --------------------------------------------------

/// Finds the registry credentials of a pod.
class pull_credentials {
public:
  explicit pull_credentials(podref::secret_manager& secrets)
    : secrets_(secrets) {
    // nop
  }

  /// The `.dockerconfigjson` of the pod's first image pull secret, or a
  /// sentence saying why there is none.
  std::string for_pod(const podref::pod& p) {
    if (p.spec.image_pull_secrets.empty())
      return "no pull secret";
    const auto& name = p.spec.image_pull_secrets.front().name;
    auto s = secrets_.get_secret(p.metadata.ns, name);
    if (!s)
      return "unavailable: " + s.error().message;
    auto i = (*s)->data.find(".dockerconfigjson");
    return i == (*s)->data.end() ? "malformed" : i->second;
  }

private:
  podref::secret_manager& secrets_;
};

// -- its tests ---------------------------------------------------------------

namespace {

podref::pod web_pod() {
  podref::pod p;
  p.metadata.ns = "default";
  p.metadata.name = "web";
  p.metadata.uid = "uid-web";
  p.spec.image_pull_secrets.push_back({"registry"});
  return p;
}

podref::api_object registry_secret(const std::string& config) {
  auto s = std::make_shared<podref::secret>();
  s->metadata.ns = "default";
  s->metadata.name = "registry";
  s->type = "kubernetes.io/dockerconfigjson";
  s->data[".dockerconfigjson"] = config;
  return podref::api_object{std::move(s)};
}

/// A deterministic runtime, its API server and a Cache-strategy manager
/// with upstream's one-minute TTL. Members are destroyed in reverse: the
/// manager, the API server, then the runtime, as podref requires.
struct world {
  podref::testing::deterministic_runtime rt;
  podref::api_server api{rt};
  podref::secret_manager secrets{rt, api, podref::strategy::cache};
  pull_credentials creds{secrets};
};

} // namespace

TEST_CASE("a credential rotated in the API server is used once the TTL "
          "has passed, not before") {
  world w;
  REQUIRE(w.api.create(registry_secret("v1")));
  REQUIRE(w.secrets.register_pod_and_wait(web_pod()));
  CHECK(w.creds.for_pod(web_pod()) == "v1");
  REQUIRE(w.api.apply(registry_secret("v2")));
  w.rt.advance(59s);
  CHECK(w.creds.for_pod(web_pod()) == "v1"); // still fresh: no fetch
  w.rt.advance(1s);
  CHECK(w.creds.for_pod(web_pod()) == "v2"); // the TTL passed: fetched
}

TEST_CASE("an API server that never answers the first list costs a read "
          "exactly the sync timeout") {
  podref::testing::deterministic_runtime rt;
  podref::api_server api{rt};
  podref::secret_manager secrets{rt, api}; // Watch, upstream's default
  pull_credentials creds{secrets};
  REQUIRE(api.create(registry_secret("v1")));
  api.hold_lists();
  REQUIRE(secrets.register_pod_and_wait(web_pod()));
  const auto before = rt.now();
  auto answer = creds.for_pod(web_pod());
  CHECK(answer.rfind("unavailable: failed to sync", 0) == 0);
  CHECK(rt.now() - before == 1s); // virtual: the test took microseconds
  api.release_lists();
  rt.run_until_idle();
  CHECK(creds.for_pod(web_pod()) == "v1");
}
