// Misuse of the facade: invalid pods, unknown pods, reads of what no pod
// references, repeated registrations and calls after shutdown. Each gets a
// clear result, and afterwards the registered state is what it was: the
// same counts, and the same objects served.
//
// The managers run on podref's runtime with its real scheduler, as in
// facade.test.cpp; waits are bounded (wait_quiescent, sync).
#include "podref/runtime/typed_managers.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "podref/messages/validation.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "support/pod_builders.hpp"

using namespace podref;
using namespace std::chrono_literals;
using podref::test::bare_pod;
using podref::test::make_config_map;
using podref::test::make_secret;
using podref::test::pod_with_config_maps;
using podref::test::pod_with_secrets;

namespace {

const std::string subdomain_rule
  = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const std::string label_rule
  = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
    "characters or '-', and must start and end with an alphanumeric "
    "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// A secret manager over an API server holding Secrets s1 .. s3 in "ns",
/// with pod "web" (uid "uid-1") registered and referencing s1 and s2.
struct registered_fixture {
  runtime rt;
  api_server api{rt};
  secret_manager sm{rt, api};

  registered_fixture() {
    for (auto name : {"s1", "s2", "s3"})
      REQUIRE(api.create(make_secret("ns", name, {{"k", name}})));
    REQUIRE(sm.register_pod(web()));
    REQUIRE(sm.manager().wait_quiescent(5s));
    require_intact();
  }

  static pod web() {
    return pod_with_secrets("ns", "web", "uid-1", {"s1"}, {{{"s2"}, {}}});
  }

  /// The state after the fixture's registration: one pod, s1 and s2
  /// registered and served, s3 not registered.
  void require_intact() {
    REQUIRE(sm.manager().sync());
    auto st = sm.manager().stats();
    CHECK(st.registered_pods == 1);
    CHECK(st.referenced_objects == 2);
    CHECK(st.live_reflectors == 2);
    for (auto name : {"s1", "s2"}) {
      auto s = sm.get_secret("ns", name);
      REQUIRE(s);
      CHECK((*s)->data.at("k") == name);
    }
    auto s3 = sm.get_secret("ns", "s3");
    REQUIRE_FALSE(s3);
    CHECK(s3.error().message == "object \"ns\"/\"s3\" not registered");
  }

  /// Registers `p`, which must fail with invalid_argument; returns the
  /// message.
  std::string rejected(const pod& p) {
    auto reg = sm.register_pod(p);
    REQUIRE_FALSE(reg);
    CHECK(reg.error().code == errc::invalid_argument);
    return reg.error().message;
  }
};

} // namespace

// -- invalid pods -------------------------------------------------------------

TEST_CASE_METHOD(registered_fixture,
                 "an invalid pod is rejected with the field it fails on and "
                 "changes nothing",
                 "[misuse]") {
  struct case_t {
    const char* desc;
    pod p;
    std::string message;
  };
  auto with_secret_volume = [](std::string secret_name) {
    auto p = pod_with_secrets("ns", "db", "uid-2", {"s3"}, {});
    for (int i = 0; i < 3; ++i) {
      volume v;
      v.name = "v" + std::to_string(i);
      v.secret = secret_volume_source{i == 2 ? secret_name : "s3", {}, {}};
      p.spec.volumes.push_back(std::move(v));
    }
    return p;
  };
  auto with_pull_secrets = [](std::size_t count) {
    auto p = pod_with_secrets("ns", "db", "uid-2", {}, {});
    p.spec.image_pull_secrets.assign(count, local_object_reference{"s3"});
    return p;
  };
  const case_t cases[] = {
    {"more references than a pod may carry",
     with_pull_secrets(max_references_per_pod + 1),
     "pod \"ns\"/\"db\": spec.imagePullSecrets["
       + std::to_string(max_references_per_pod)
       + "].name: more Secret and ConfigMap references than the limit of "
       + std::to_string(max_references_per_pod) + " per pod"},
    {"an empty namespace", pod_with_secrets("", "db", "uid-2", {"s3"}, {}),
     "pod \"\"/\"db\": metadata.namespace: Required value"},
    {"a namespace that is not a label",
     pod_with_secrets("Team.A", "db", "uid-2", {"s3"}, {}),
     "pod \"Team.A\"/\"db\": metadata.namespace: Invalid value: \"Team.A\": "
       + label_rule},
    {"an empty name", pod_with_secrets("ns", "", "uid-2", {"s3"}, {}),
     "pod \"ns\"/\"\": metadata.name: Required value: name or generateName "
     "is required"},
    {"a name that is not a subdomain",
     pod_with_secrets("ns", "db_1", "uid-2", {"s3"}, {}),
     "pod \"ns\"/\"db_1\": metadata.name: Invalid value: \"db_1\": "
       + subdomain_rule},
    {"a name over 253 characters",
     pod_with_secrets("ns", std::string(254, 'd'), "uid-2", {"s3"}, {}),
     "pod \"ns\"/\"" + std::string(254, 'd')
       + "\": metadata.name: Invalid value: \"" + std::string(254, 'd')
       + "\": must be no more than 253 characters"},
    {"an empty uid", pod_with_secrets("ns", "db", "", {"s3"}, {}),
     "pod \"ns\"/\"db\": metadata.uid: Required value"},
    {"a secret volume without a secretName", with_secret_volume(""),
     "pod \"ns\"/\"db\": spec.volumes[2].secret.secretName: Required value"},
    {"a secretKeyRef name that is not a subdomain",
     pod_with_secrets("ns", "db", "uid-2", {"s3"}, {{{"S3"}, {}}}),
     "pod \"ns\"/\"db\": spec.containers[0].env[0].valueFrom.secretKeyRef."
     "name: Invalid value: \"S3\": "
       + subdomain_rule},
  };
  for (const auto& c : cases) {
    SECTION(c.desc) {
      CHECK(rejected(c.p) == c.message);
      require_intact();
    }
  }
}

TEST_CASE("a pod with as many references as the limit allows registers",
          "[misuse]") {
  runtime rt;
  api_server api{rt};
  secret_manager sm{rt, api};
  REQUIRE(api.create(make_secret("ns", "s3", {{"k", "s3"}})));
  auto p = pod_with_secrets("ns", "db", "uid-2", {}, {});
  p.spec.image_pull_secrets.assign(max_references_per_pod,
                                   local_object_reference{"s3"});
  REQUIRE(sm.register_pod(p));
  REQUIRE(sm.manager().wait_quiescent(5s));
  CHECK(sm.manager().stats().registered_pods == 1);
  CHECK(sm.get_secret("ns", "s3"));
}

TEST_CASE_METHOD(registered_fixture,
                 "an invalid new version of a registered pod keeps the old "
                 "one",
                 "[misuse]") {
  // The same pod, now also referencing s3, but with an envFrom ref that has
  // no name: rejected as a whole, so s3 is not referenced either.
  auto p = web();
  p.spec.image_pull_secrets.push_back(local_object_reference{"s3"});
  p.spec.containers[0].env_from.push_back(
    env_from_source{"", env_source_ref{"", std::nullopt}, std::nullopt});
  CHECK(rejected(p)
        == "pod \"ns\"/\"web\": spec.containers[0].envFrom[0].secretRef.name: "
           "Required value");
  require_intact();
  // Unregistering the invalid version drops the registered one: the key is
  // what counts.
  REQUIRE(sm.unregister_pod(p));
  REQUIRE(sm.manager().wait_quiescent(5s));
  CHECK(sm.manager().stats().registered_pods == 0);
  CHECK(sm.get_secret("ns", "s1").error().code == errc::not_registered);
}

TEST_CASE("a configmap manager rejects a configMap volume without a name",
          "[misuse]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_config_map("ns", "c1", {{"k", "v"}})));
  configmap_manager cm{rt, api};
  REQUIRE(cm.register_pod(
    pod_with_config_maps("ns", "web", "uid-1", {}, {"c1"})));
  auto bad = pod_with_config_maps("ns", "db", "uid-2", {}, {"c1", ""});
  auto reg = cm.register_pod(bad);
  REQUIRE_FALSE(reg);
  CHECK(reg.error().code == errc::invalid_argument);
  CHECK(reg.error().message
        == "pod \"ns\"/\"db\": spec.volumes[1].configMap.name: Required "
           "value");
  REQUIRE(cm.manager().wait_quiescent(5s));
  auto st = cm.manager().stats();
  CHECK(st.registered_pods == 1);
  CHECK(st.referenced_objects == 1);
  auto c1 = cm.get_configmap("ns", "c1");
  REQUIRE(c1);
  CHECK((*c1)->data.at("k") == "v");
}

TEST_CASE("Get keeps nothing but still rejects an invalid pod", "[misuse]") {
  runtime rt;
  api_server api{rt};
  REQUIRE(api.create(make_secret("ns", "s1", {{"k", "v"}})));
  secret_manager sm{rt, api, strategy::get};
  CHECK(sm.register_pod(pod_with_secrets("ns", "web", "uid", {"s1"}, {})));
  auto reg = sm.register_pod(pod_with_secrets("ns", "Web", "uid", {}, {}));
  REQUIRE_FALSE(reg);
  CHECK(reg.error().message
        == "pod \"ns\"/\"Web\": metadata.name: Invalid value: \"Web\": "
             + subdomain_rule);
  CHECK(sm.unregister_pod(pod_with_secrets("ns", "web", "uid", {}, {})));
  CHECK(sm.manager().stats().registered_pods == 0);
  // Reads are live GETs, registered or not.
  CHECK(sm.get_secret("ns", "s1"));
}

// -- unknown pods and objects ---------------------------------------------------

TEST_CASE_METHOD(registered_fixture,
                 "unregistering an unknown pod is a no-op, as upstream",
                 "[misuse]") {
  SECTION("a pod never registered") {
    CHECK(sm.unregister_pod(bare_pod("ns", "other", "uid-9")));
  }
  SECTION("the registered pod's name with another uid") {
    CHECK(sm.unregister_pod(bare_pod("ns", "web", "uid-9")));
  }
  SECTION("the registered pod's uid in another namespace") {
    CHECK(sm.unregister_pod(bare_pod("other", "web", "uid-1")));
  }
  SECTION("a pod that failed to register") {
    auto bad = pod_with_secrets("ns", "Bad", "uid-2", {"s3"}, {});
    REQUIRE_FALSE(sm.register_pod(bad));
    CHECK(sm.unregister_pod(bad));
  }
  SECTION("the registered pod twice") {
    REQUIRE(sm.unregister_pod(web()));
    REQUIRE(sm.register_pod(web()));
    REQUIRE(sm.unregister_pod(web()));
    REQUIRE(sm.unregister_pod(web()));
    REQUIRE(sm.register_pod(web()));
    REQUIRE(sm.manager().wait_quiescent(5s));
  }
  require_intact();
}

TEST_CASE_METHOD(registered_fixture,
                 "reads of objects no pod references fail with upstream's "
                 "text",
                 "[misuse]") {
  struct case_t {
    const char* desc;
    const char* ns;
    const char* name;
  };
  const case_t cases[] = {
    {"an object that exists but is not referenced", "ns", "s3"},
    {"an object that does not exist", "ns", "missing"},
    {"a referenced name in another namespace", "other", "s1"},
    {"an empty name", "ns", ""},
    {"an invalid name", "ns", "Not/Valid"},
  };
  for (const auto& c : cases) {
    SECTION(c.desc) {
      auto s = sm.get_secret(c.ns, c.name);
      REQUIRE_FALSE(s);
      CHECK(s.error().code == errc::not_registered);
      CHECK(s.error().message
            == "object \"" + std::string{c.ns} + "\"/\"" + c.name
                 + "\" not registered");
      require_intact();
    }
  }
}

// -- repeated registrations ---------------------------------------------------

TEST_CASE_METHOD(registered_fixture,
                 "registering the same pod again applies the difference",
                 "[misuse]") {
  auto before = sm.manager().stats();
  SECTION("unchanged: nothing happens") {
    for (int i = 0; i < 3; ++i)
      REQUIRE(sm.register_pod(web()));
    REQUIRE(sm.manager().wait_quiescent(5s));
    auto after = sm.manager().stats();
    CHECK(after.reflectors_started == before.reflectors_started);
    CHECK(after.lists == before.lists);
    require_intact();
  }
  SECTION("changed: s2 is replaced by s3") {
    REQUIRE(sm.register_pod(
      pod_with_secrets("ns", "web", "uid-1", {"s1"}, {{{"s3"}, {}}})));
    REQUIRE(sm.manager().wait_quiescent(5s));
    auto after = sm.manager().stats();
    CHECK(after.registered_pods == 1);
    CHECK(after.referenced_objects == 2);
    CHECK(after.reflectors_started == before.reflectors_started + 1);
    CHECK(after.reflectors_stopped == before.reflectors_stopped + 1);
    CHECK(sm.get_secret("ns", "s3"));
    CHECK(sm.get_secret("ns", "s2").error().code == errc::not_registered);
    // And back again.
    REQUIRE(sm.register_pod(web()));
    REQUIRE(sm.manager().wait_quiescent(5s));
    require_intact();
  }
}

TEST_CASE_METHOD(registered_fixture,
                 "the same namespace and name with another uid is another pod",
                 "[misuse]") {
  // Upstream keys pods by namespace, name and uid: a pod recreated under
  // the same name is a new pod until the old one is unregistered.
  auto again = pod_with_secrets("ns", "web", "uid-2", {"s3"}, {{{"s2"}, {}}});
  REQUIRE(sm.register_pod(again));
  REQUIRE(sm.manager().wait_quiescent(5s));
  auto st = sm.manager().stats();
  CHECK(st.registered_pods == 2);
  CHECK(st.referenced_objects == 3);
  for (auto name : {"s1", "s2", "s3"})
    CHECK(sm.get_secret("ns", name));
  // The old pod goes; s2 stays, still referenced by the new one.
  REQUIRE(sm.unregister_pod(bare_pod("ns", "web", "uid-1")));
  REQUIRE(sm.manager().wait_quiescent(5s));
  st = sm.manager().stats();
  CHECK(st.registered_pods == 1);
  CHECK(st.referenced_objects == 2);
  CHECK(sm.get_secret("ns", "s1").error().code == errc::not_registered);
  CHECK(sm.get_secret("ns", "s2"));
  CHECK(sm.get_secret("ns", "s3"));
}

// -- after shutdown -------------------------------------------------------------

TEST_CASE_METHOD(registered_fixture,
                 "after shutdown registrations and reads fail with shut_down",
                 "[misuse]") {
  sm.manager().shutdown();
  auto expect_shut_down = [](const auto& x) {
    REQUIRE_FALSE(x);
    CHECK(x.error().code == errc::shut_down);
    CHECK(x.error().message == "podref manager is shut down");
  };
  expect_shut_down(sm.register_pod(web()));
  // Checked before the pod: even an invalid pod gets shut_down.
  expect_shut_down(sm.register_pod(bare_pod("", "", "")));
  expect_shut_down(sm.unregister_pod(web()));
  expect_shut_down(sm.unregister_pod(bare_pod("ns", "unknown", "uid")));
  expect_shut_down(sm.get_secret("ns", "s1"));
  expect_shut_down(sm.get_secret("ns", "s3"));
  CHECK_FALSE(sm.manager().sync());
  CHECK_FALSE(sm.manager().wait_quiescent(100ms));
  // Idempotent, and still no different.
  sm.manager().shutdown();
  expect_shut_down(sm.register_pod(web()));
}
