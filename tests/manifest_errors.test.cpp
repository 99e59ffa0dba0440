// The manifest decoder's error contract: a bad document or List item costs
// only itself, a syntax error the rest of its input; the error list is
// bounded; the per-pod and per-container list limits; and the clearer texts
// for two YAML mistakes libyaml names only by what it found.
#include "podref/manifest/manifest.hpp"

#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "support/manifest_decode.hpp"

using namespace podref;
using namespace podref::test;

namespace {

using strings = std::vector<std::string>;

/// The names of the decoded objects, in order ("" for kinds without one).
strings names_of(const manifest_result& result) {
  strings out;
  for (const auto& obj : result.objects)
    out.push_back(std::visit(
      [](const auto& ptr) { return ptr ? ptr->metadata.name : std::string{}; },
      obj.object));
  return out;
}

/// A Pod named `name` with `n` copies of `entry` in the list `key` of its
/// only container, or of its spec, written in flow style.
std::string pod_with_list(const std::string& name, bool in_container,
                          const std::string& key, std::size_t n,
                          const std::string& entry) {
  std::string list;
  for (std::size_t i = 0; i < n; ++i)
    list += (i == 0 ? "" : ", ") + entry;
  std::string spec = in_container ? "  containers:\n    - name: c\n      "
                                  : "  ";
  return "kind: Pod\nmetadata: {name: " + name + "}\nspec:\n" + spec + key
         + ": [" + list + "]\n";
}

} // namespace

// -- one bad document does not hide the good ones -----------------------------

TEST_CASE("an invalid first document leaves the second one's objects") {
  auto result = decode("kind: Pod\nmetadata: {name: a}\nspec:\n"
                       "  volumes: [{name: v, secret: {}}]\n"
                       "---\nkind: Secret\nmetadata: {name: b}\n");
  CHECK(result.errors
        == strings{"test.yaml: document 0: spec.volumes[0].secret.secretName: "
                   "Required value"});
  CHECK_FALSE(result.ok());
  REQUIRE(result.objects.size() == 1);
  CHECK(result.objects[0].doc == 1);
  CHECK(result.objects[0].kind == "Secret");
  CHECK(names_of(result) == strings{"b"});
}

TEST_CASE("every bad document is an error of its own, in order") {
  auto result = decode("kind: Pod\nmetadata: {name: A}\n"
                       "---\nkind: ConfigMap\nmetadata: {name: ok}\n"
                       "---\nkind: Secret\ndata: {k: \"!\"}\n"
                       "---\nmetadata: {name: x}\n");
  CHECK(result.errors
        == strings{"test.yaml: document 0: metadata.name: Invalid value: "
                   "\"A\": a lowercase RFC 1123 subdomain must consist of "
                   "lower case alphanumeric characters, '-' or '.', and must "
                   "start and end with an alphanumeric character (e.g. "
                   "'example.com', regex used for validation is "
                   "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
                   "[a-z0-9])?)*')",
                   "test.yaml: document 2: data.k: illegal base64 data at "
                   "input byte 0",
                   "test.yaml: document 3: kind: required field is missing"});
  CHECK(names_of(result) == strings{"ok"});
}

TEST_CASE("a bad List item in the middle leaves the other items") {
  auto result = decode(R"({"kind": "List", "items": [
    {"kind": "Secret", "metadata": {"name": "first"}},
    {"kind": "Pod", "metadata": {"name": "bad"},
     "spec": {"volumes": [{"name": "v", "secret": {}}]}},
    {"kind": "ConfigMap", "metadata": {"name": "last"}}]}
{"kind": "Pod", "metadata": {"name": "next"}})");
  CHECK(result.errors
        == strings{"test.yaml: document 0: items[1].spec.volumes[0].secret."
                   "secretName: Required value"});
  CHECK(names_of(result) == strings{"first", "last", "next"});
  REQUIRE(result.objects.size() == 3);
  CHECK(result.objects[1].doc == 0);
  CHECK(result.objects[2].doc == 1);
}

TEST_CASE("a bad List itself costs the whole List, not the next document") {
  auto result = decode("kind: List\nitems: {kind: Pod}\n---\nkind: Node\n"
                       "metadata: {name: n}\n");
  CHECK(result.errors
        == strings{"test.yaml: document 0: items: expected a list, got a "
                   "map"});
  CHECK(names_of(result) == strings{"n"});
}

TEST_CASE("a syntax error after two good documents keeps those two") {
  SECTION("YAML") {
    CHECK(error_keeping("kind: Secret\nmetadata: {name: a}\n---\nkind: Pod\n"
                        "metadata: {name: b}\n---\nkind: Pod\nmetadata: "
                        "{name: [x\n---\nkind: Secret\n",
                        2)
          == "test.yaml: line 9: did not find expected ',' or ']'");
    auto result = decode("kind: Secret\nmetadata: {name: a}\n---\nkind: Pod\n"
                         "metadata: {name: b}\n---\n  , x\n");
    CHECK(names_of(result) == strings{"a", "b"});
  }
  SECTION("JSON") {
    auto result = decode("{\"kind\": \"Secret\", \"metadata\": {\"name\": "
                         "\"a\"}}\n{\"kind\": \"Pod\", \"metadata\": "
                         "{\"name\": \"b\"}}\n{\"kind\": }\n{\"kind\": "
                         "\"Pod\"}\n");
    REQUIRE(result.errors.size() == 1);
    CHECK(result.errors[0].rfind("test.yaml: line 3: syntax error", 0) == 0);
    CHECK(names_of(result) == strings{"a", "b"});
  }
  SECTION("field errors before the syntax error are kept too") {
    auto result = decode("kind: Pod\nspec: 1\n---\nkind: Secret\n"
                         "metadata: {name: s}\n---\n{\n");
    CHECK(result.errors
          == strings{"test.yaml: document 0: spec: expected a map, got a "
                     "number",
                     "test.yaml: line 8: did not find expected node "
                     "content, found the end of the input"});
    CHECK(names_of(result) == strings{"s"});
  }
}

TEST_CASE("checks of the whole text come before any document") {
  // Invalid UTF-8 in the last document: nothing is decoded at all.
  CHECK(error_of("kind: Secret\n---\nkind: Pod\nmetadata: {name: \xC3}\n")
        == "test.yaml: line 4: invalid UTF-8");
}

// -- the bound on the error list ----------------------------------------------

TEST_CASE("the errors kept are bounded and the rest counted") {
  std::string text;
  for (int i = 0; i < 250; ++i)
    text += "kind: Pod\nspec: 1\n---\n";
  text += "kind: Secret\nmetadata: {name: last}\n";
  auto result = decode(text);
  REQUIRE(result.errors.size() == 101);
  CHECK(result.errors[0]
        == "test.yaml: document 0: spec: expected a map, got a number");
  CHECK(result.errors[99]
        == "test.yaml: document 99: spec: expected a map, got a number");
  CHECK(result.errors[100] == "test.yaml: ... and 150 more errors");
  CHECK(names_of(result) == strings{"last"});
  CHECK(manifest_limits{}.max_errors == 100);

  manifest_limits limits;
  limits.max_errors = 2;
  auto three = decode("kind: Pod\nspec: 1\n---\nkind: Pod\nspec: 2\n---\n"
                      "kind: Pod\nspec: 3\n---\n[\n",
                      limits);
  // The syntax error at the end is one more, and counted too.
  CHECK(three.errors
        == strings{"test.yaml: document 0: spec: expected a map, got a number",
                   "test.yaml: document 1: spec: expected a map, got a number",
                   "test.yaml: ... and 2 more errors"});
  limits.max_errors = 0;
  // Even with none kept, a failed input is never ok().
  auto none = decode("kind: Pod\nspec: 1\n", limits);
  CHECK_FALSE(none.ok());
  CHECK(none.errors == strings{"test.yaml: ... and 1 more error"});
  CHECK(decode("kind: Pod\n", limits).ok());
}

// -- per-pod and per-container list limits ------------------------------------

TEST_CASE("each list limit passes a pod at it and fails one over it") {
  struct case_t {
    const char* desc;
    std::size_t manifest_limits::*limit;
    std::size_t default_value;
    bool in_container;
    const char* key;
    const char* entry;
    const char* error;
  };
  const case_t cases[] = {
    {"env entries per container", &manifest_limits::max_env, 10000, true,
     "env", "{name: A}",
     "spec.containers[0].env: more env entries than the limit of 2 per "
     "container"},
    {"envFrom entries per container", &manifest_limits::max_env_from, 1000,
     true, "envFrom", "{configMapRef: {name: c}}",
     "spec.containers[0].envFrom: more envFrom entries than the limit of 2 "
     "per container"},
    {"volumes per pod", &manifest_limits::max_volumes, 1000, false,
     "volumes", "{name: v, emptyDir: {}}",
     "spec.volumes: more volumes than the limit of 2 per pod"},
    {"imagePullSecrets entries per pod",
     &manifest_limits::max_image_pull_secrets, 1000, false,
     "imagePullSecrets", "{name: reg}",
     "spec.imagePullSecrets: more imagePullSecrets entries than the limit of "
     "2 per pod"},
  };
  for (const auto& c : cases) {
    SECTION(c.desc) {
      CHECK(manifest_limits{}.*c.limit == c.default_value);
      manifest_limits limits;
      limits.*c.limit = 2;
      auto pod = [&c](const std::string& name, std::size_t n) {
        return pod_with_list(name, c.in_container, c.key, n, c.entry);
      };
      CHECK(decode(pod("p", 2), limits).ok());
      // The next document still decodes.
      auto result = decode(pod("p", 3) + "---\n" + pod("q", 2), limits);
      CHECK(result.errors
            == strings{std::string{"test.yaml: document 0: "} + c.error});
      CHECK(names_of(result) == strings{"q"});
    }
  }
}

TEST_CASE("the env limit is per container, in pod templates too") {
  manifest_limits limits;
  limits.max_env = 3;
  CHECK(error_of("kind: Deployment\nspec:\n  template:\n    spec:\n"
                 "      initContainers:\n        - env: [{}, {}]\n"
                 "        - env: [{}, {}, {}, {}]\n",
                 limits)
        == "test.yaml: document 0: spec.template.spec.initContainers[1].env: "
           "more env entries than the limit of 3 per container");
}

TEST_CASE("a list over its limit is refused before its entries are decoded") {
  // The bad entry past the limit is never looked at: the limit is the error.
  manifest_limits limits;
  limits.max_env = 1;
  CHECK(error_of(pod_with_spec("  containers:\n    - env: [{}, 7]\n"), limits)
        == "test.yaml: document 0: spec.containers[0].env: more env entries "
           "than the limit of 1 per container");
}

// -- clearer texts for two of libyaml's errors ---------------------------------

TEST_CASE("a tab in the indentation is named as such") {
  const std::string tab = "a tab indents this line; YAML indents with spaces";
  CHECK(error_of("kind: Pod\nmetadata:\n\tname: x\n")
        == "test.yaml: line 3: " + tab);
  CHECK(error_of("kind: Pod\nmetadata:\n  name: x\n \tlabels: {}\n")
        == "test.yaml: line 4: " + tab);
  CHECK(error_of("\xEF\xBB\xBF\tkind: Pod\n") == "test.yaml: line 1: " + tab);
  CHECK(error_keeping("kind: Pod\n---\nspec:\n  containers:\n  - name: a\n"
                      "\t- name: b\n",
                      1)
        == "test.yaml: line 6: " + tab);
  // libyaml (and kubectl) take a tab where a token may start in a block
  // for indentation, on a blank line too.
  CHECK(error_of("kind: Pod\n\t\nmetadata: {name: x}\n")
        == "test.yaml: line 2: " + tab);
  CHECK(error_of("- {kind: Pod}\n  \t\n") == "test.yaml: line 2: " + tab);
  // Tabs elsewhere are fine: after a key's colon, and inside flow
  // collections, which they may indent.
  CHECK(decode("kind:\tPod\nmetadata: {\n\tname: x}\n").ok());
  // An error in a flow collection keeps libyaml's text.
  CHECK(error_of("kind: Pod\nx: [\n\ta,\n")
        == "test.yaml: line 4: did not find expected node content, found the "
           "end of the input");
}

TEST_CASE("a plain key longer than 1024 characters is named as such") {
  const std::string hint = "a key longer than 1024 characters must be "
                           "written as an explicit key (\"? key\")";
  const std::string at_limit(1024, 'k');
  const std::string over(1025, 'k');
  // (Under a field podref ignores: no label or annotation key is this long.)
  CHECK(decode("kind: Pod\nx:\n  " + at_limit + ": v\n").ok());
  CHECK(error_of("kind: Pod\nmetadata:\n  labels:\n    " + over + ": v\n")
        == "test.yaml: line 4: " + hint);
  CHECK(error_of("kind: Pod\n\"" + over + "\": v\n")
        == "test.yaml: line 2: " + hint);
  CHECK(error_of("- a: b\n  " + over + ": v\n")
        == "test.yaml: line 2: " + hint);
  CHECK(error_of("- " + over + ": v\n") == "test.yaml: line 1: " + hint);
  // Counted in characters, as YAML counts: 1024 two-byte characters pass,
  // 1025 do not (the passing key under an ignored field: no annotation key
  // may hold a non-ASCII character).
  auto wide = [](std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
      out += "\xC3\xA9";
    return out;
  };
  CHECK(decode("kind: Pod\nx:\n  y:\n    " + wide(1024) + ": v\n").ok());
  CHECK(error_of("kind: Pod\nmetadata:\n  annotations:\n    " + wide(1025)
                 + ": v\n")
        == "test.yaml: line 4: " + hint);
  // Written as an explicit key it is accepted.
  auto result = decode("kind: Pod\nx:\n  ? " + over + "\n  : v\n");
  INFO(errors_text(result));
  REQUIRE(result.ok());
  // A long value with a second ':' is another mistake and keeps its text.
  CHECK(error_of("kind: Pod\nx: " + over + ": v\n")
        == "test.yaml: line 2: mapping values are not allowed in this "
           "context");
}
