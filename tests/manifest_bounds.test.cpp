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

TEST_CASE("a decoded kind after a skipped one in the same document fails") {
  CHECK(error_of("kind: Service\nmetadata: {name: a}\nkind: Pod\n")
        == "test.yaml: line 3: kind \"Pod\" repeats the kind key after a "
           "kind that is not decoded");
  // A repeated skipped kind, or a repeated decoded one, is no error.
  CHECK(decode("kind: Service\nkind: Ingress\n").ok());
  CHECK(decode("kind: Secret\nkind: Node\nmetadata: {name: n}\n")
          .objects.size()
        == 1);
}
