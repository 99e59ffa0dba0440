// The manifest front ends keep only what the decoders read: skipped kinds,
// unknown fields and list entries past their limit are not stored. Checked
// on the trees the front ends hand to the decoder (their count of values),
// never by timing.
#include <cstddef>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "podref/manifest/detail/json_documents.hpp"
#include "podref/manifest/detail/kept_shape.hpp"
#include "podref/manifest/detail/yaml_json.hpp"
#include "support/manifest_decode.hpp"

using namespace podref;
using podref::test::decode;
using podref::test::error_of;
using podref::test::errors_text;

namespace {

/// The values of each document's kept tree, as handed to the decoder.
std::vector<std::size_t> kept_values(const std::string& text, bool json,
                                     const manifest_limits& limits = {}) {
  std::vector<std::size_t> out;
  detail::document_handler count = [&out](std::size_t,
                                          nlohmann::json&& document) {
    out.push_back(detail::count_values(document));
  };
  if (json)
    detail::for_each_json_document(text, limits, count);
  else
    detail::for_each_yaml_document(text, limits, count);
  return out;
}

std::string repeated(const std::string& line, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += line;
  return out;
}

const pod& first_pod(const manifest_result& result) {
  REQUIRE(result.objects.size() >= 1);
  return *std::get<pod_ptr>(result.objects.front().object);
}

} // namespace

TEST_CASE("a document of a skipped kind keeps only its kind") {
  auto body = "x:\n" + repeated("  - {a: 1}\n", 10000);
  SECTION("kind first") {
    CHECK(kept_values("kind: Deployment2\n" + body, false)
          == std::vector<std::size_t>{2});
  }
  SECTION("kind last: what was kept before it is dropped") {
    auto spec = "spec:\n  containers:\n" + repeated("  - {name: c}\n", 500);
    CHECK(kept_values(spec + body + "kind: Service\n", false)
          == std::vector<std::size_t>{2});
  }
  SECTION("JSON") {
    std::string text = R"({"spec":{"volumes":[)";
    for (int i = 0; i < 500; ++i)
      text += R"({"name":"v"},)";
    text += R"({}]},"kind":"Service"})";
    CHECK(kept_values(text, true) == std::vector<std::size_t>{2});
  }
  SECTION("and decodes to nothing, with no error") {
    auto result = decode(body + "kind: Service\n---\nkind: Node\n"
                                "metadata: {name: n}\n");
    INFO(errors_text(result));
    CHECK(result.ok());
    CHECK(result.objects.size() == 1);
  }
}

TEST_CASE("unknown fields are not kept") {
  auto text = podref::test::pod_with_spec(
                "  containers:\n  - name: c\n    ports:\n"
                + repeated("    - {containerPort: 80}\n", 5000))
              + "status:\n" + repeated("  k: [1, 2, 3]\n", 1);
  // The root, its kind, metadata and name, spec, containers, the container
  // and its name.
  CHECK(kept_values(text, false) == std::vector<std::size_t>{8});
  CHECK(first_pod(decode(text)).spec.containers.at(0).name == "c");
}

TEST_CASE("a list over its limit keeps one entry past the limit") {
  manifest_limits limits;
  limits.max_env = 100;
  auto text = podref::test::pod_with_spec(
    "  containers:\n  - name: c\n    env:\n"
    + repeated("    - {name: A, value: b}\n", 5000));
  // 8 values around the env list, the list, 3 per kept entry.
  CHECK(kept_values(text, false, limits)
        == std::vector<std::size_t>{8 + 1 + 3 * 101});
  CHECK(error_of(text, limits)
        == "test.yaml: document 0: spec.containers[0].env: more env "
           "entries than the limit of 100 per container");
}

TEST_CASE("List items past the object limit are not kept") {
  manifest_limits limits;
  limits.max_objects = 10;
  auto text = "kind: List\nitems:\n" + repeated("- {kind: Node}\n", 1000);
  CHECK(kept_values(text, false, limits)
        == std::vector<std::size_t>{2 + 1 + 11 * 2});
  auto result = decode(text, limits);
  CHECK(result.objects.size() == 9);
  CHECK(errors_text(result)
        == "test.yaml: document 0: items[9]: more objects than the limit "
           "of 10\n");
}

TEST_CASE("List items of a skipped kind keep only their kind") {
  auto text = "kind: List\nitems:\n- kind: Service\n  spec: {containers: "
              "[{name: c}]}\n- kind: Node\n  metadata: {name: n}\n";
  // The root and its kind, items, item 0 and its kind, item 1 with its
  // kind, metadata and name.
  CHECK(kept_values(text, false) == std::vector<std::size_t>{2 + 1 + 2 + 4});
  CHECK(decode(text).objects.size() == 1);
}

TEST_CASE("anchors defined in unknown fields still serve kept fields") {
  auto text = podref::test::pod_with_spec(
    "  x-env: &env [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n"
    "  x-base: &base {name: c, image: i}\n"
    "  containers:\n"
    "  - <<: *base\n"
    "    env: *env\n"
    "  - <<: {name: d}\n");
  auto result = decode(text);
  INFO(errors_text(result));
  REQUIRE(result.ok());
  const auto& spec = first_pod(result).spec;
  REQUIRE(spec.containers.size() == 2);
  CHECK(spec.containers[0].name == "c");
  CHECK(spec.containers[0].image == "i");
  REQUIRE(spec.containers[0].env.size() == 1);
  CHECK(spec.containers[0].env[0].value_from->secret_key_ref->name == "s");
  CHECK(spec.containers[1].name == "d");
}

// A Service and a Pod without the `---` between them: kubectl (1.32,
// `kubectl annotate --local -f`) reads one map in which each key keeps its
// last value, a Pod with the Pod's metadata and spec. The document is
// parsed again keeping what the skipped kind dropped, and decodes so too.
TEST_CASE("a decoded kind after a skipped one decodes with the last keys") {
  const std::string service
    = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n"
      "spec:\n  ports: [{port: 80}]\n";
  const std::string pod_part
    = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
      "  containers:\n  - name: c\n    image: i\n"
      "    envFrom: [{secretRef: {name: s}}]\n";
  SECTION("YAML") {
    auto result = decode(service + pod_part);
    INFO(errors_text(result));
    REQUIRE(result.ok());
    REQUIRE(result.objects.size() == 1);
    const auto& p = first_pod(result);
    CHECK(p.metadata.name == "p");
    REQUIRE(p.spec.containers.size() == 1);
    CHECK(p.spec.containers[0].env_from.size() == 1);
  }
  SECTION("JSON") {
    auto result = decode(
      R"({"kind": "Service", "metadata": {"name": "svc"},
          "spec": {"ports": [{"port": 80}]},
          "kind": "Pod", "metadata": {"name": "p"},
          "spec": {"containers": [{"name": "c", "image": "i"}]}})");
    INFO(errors_text(result));
    REQUIRE(result.ok());
    REQUIRE(result.objects.size() == 1);
    CHECK(first_pod(result).metadata.name == "p");
  }
  SECTION("the documents around it decode as before, with their lines") {
    auto text = "kind: Secret\nmetadata: {name: a}\n---\n" + service
                + pod_part + "---\nkind: Service\n"
                + repeated("x: [1]\n", 1) + "---\nkind: Pod\n"
                + "metadata: {name: q}\nspec: {containers: [{name: c, "
                  "image: i}]}\n---\nkind: Pod\nmetadata: {name: [}\n";
    auto result = decode(text);
    REQUIRE(result.errors.size() == 1);
    INFO(errors_text(result));
    // The syntax error sits on the last line, line 28 of the whole text.
    CHECK(result.errors.front().rfind("test.yaml: line 28:", 0) == 0);
    std::vector<std::string> pods;
    for (const auto& x : result.objects)
      if (const auto* p = std::get_if<pod_ptr>(&x.object))
        pods.push_back((*p)->metadata.name);
    CHECK(pods == std::vector<std::string>{"p", "q"});
  }
  SECTION("in a List item, YAML and JSON") {
    // A skipped kind then a decoded one in an item: the document was
    // parsed again and the item threw again, without end (fuzzing found it).
    auto pods_of = [](const manifest_result& result) {
      std::vector<std::string> out;
      for (const auto& x : result.objects)
        if (const auto* p = std::get_if<pod_ptr>(&x.object))
          out.push_back((*p)->metadata.name);
      return out;
    };
    const std::vector<std::string> both{"p", "q"};
    auto yaml = decode("apiVersion: v1\nkind: List\nitems:\n"
                       "- kind: Service\n  metadata: {name: svc}\n"
                       "  kind: Pod\n  metadata: {name: p}\n"
                       "  spec: {containers: [{name: c, image: i}]}\n"
                       "- kind: Pod\n  metadata: {name: q}\n"
                       "  spec: {containers: [{name: c, image: i}]}\n");
    INFO(errors_text(yaml));
    CHECK(yaml.ok());
    CHECK(pods_of(yaml) == both);
    auto json = decode(
      R"({"kind": "List", "items": [
          {"kind": "Service", "metadata": {"name": "svc"}, "kind": "Pod",
           "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}},
          {"kind": "Pod", "metadata": {"name": "q"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}]})");
    INFO(errors_text(json));
    CHECK(json.ok());
    CHECK(pods_of(json) == both);
  }
  SECTION("a later skipped kind still keeps only its kind") {
    auto text = service + pod_part + "---\nkind: Deployment2\nx:\n"
                + repeated("  - {a: 1}\n", 1000);
    CHECK(kept_values(text, false).back() == 2);
  }
  SECTION("the alias limit counts the document once") {
    manifest_limits limits;
    limits.max_alias_values = 6;
    // The anchor and its alias copy 3 values each (the map, its key and
    // its value): 6 in all, 12 if the document parsed again counted twice.
    auto text = "kind: Service\nmetadata: &m {name: p}\nkind: Pod\n"
                "x: *m\n";
    CHECK(kept_values(text, false, limits).size() == 1);
  }
  SECTION("a repeated skipped kind, or a repeated decoded one, as before") {
    CHECK(decode("kind: Service\nkind: Ingress\n").ok());
    CHECK(decode("kind: Secret\nkind: Node\nmetadata: {name: n}\n")
            .objects.size()
          == 1);
  }
}
