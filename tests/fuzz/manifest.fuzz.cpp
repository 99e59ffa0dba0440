// libFuzzer target: manifest decoding plus reference extraction.
//
// Each input is decoded as it is (YAML, or JSON when it starts with '{' or
// '['). When it is JSON, a second round decodes the same text as YAML (a
// comment line in front makes the decoder take the YAML path): JSON is a
// subset of YAML 1.2, so when both rounds succeed every pod must reference
// the same names in both. For every decoded pod the sorted name lists and
// the visitors must agree. Any violated invariant aborts, which libFuzzer
// reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "podref/messages/pod_references.hpp"
#include "podref/manifest/manifest.hpp"

namespace {

using strings = std::vector<std::string>;

[[noreturn]] void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "manifest fuzz: invariant violated: %s%s%.*s\n", what,
               detail.empty() ? "" : ": ", static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

/// Sorted, distinct and without empty names.
void check_name_list(const strings& xs, const char* what) {
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].empty())
      fail(what, "empty name");
    if (i > 0 && !(xs[i - 1] < xs[i]))
      fail(what, "not sorted and distinct");
  }
}

using visit_fn = bool (*)(const podref::pod&, const podref::name_visitor&);

/// The visitor offers exactly the names of `xs`, never an empty one, and a
/// visitor that never stops leaves the walk unstopped. A visitor that stops
/// at once is offered only names of `xs`; if it is never offered a name,
/// nothing stopped the walk.
void check_visitor(const podref::pod& p, visit_fn visit, const strings& xs,
                   const char* what) {
  std::set<std::string> seen;
  auto collect = [&](const std::string& name) {
    if (name.empty())
      fail(what, "visitor offered an empty name");
    seen.insert(name);
    return true;
  };
  if (!visit(p, collect))
    fail(what, "a visitor that never stops stopped the walk");
  if (seen != std::set<std::string>(xs.begin(), xs.end()))
    fail(what, "visitor names differ from the sorted list");
  std::size_t offered = 0;
  auto stop = [&](const std::string& name) {
    if (name.empty() || seen.count(name) == 0)
      fail(what, "stopping visitor offered an unknown name");
    ++offered;
    return false;
  };
  auto completed = visit(p, stop);
  if (offered == 0 && !completed)
    fail(what, "walk stopped without offering a name");
  if (xs.empty() && offered != 0)
    fail(what, "names offered to a pod without references");
}

/// The references of one decoded pod: its identity and both name lists.
struct pod_refs {
  std::string ns;
  std::string name;
  strings secrets;
  strings config_maps;

  bool operator==(const pod_refs& other) const {
    return ns == other.ns && name == other.name && secrets == other.secrets
           && config_maps == other.config_maps;
  }
};

/// Decodes `text` and checks every invariant; returns whether it decoded
/// without error and the references of every pod in decoding order (the
/// pods of the valid documents when there were errors).
std::pair<bool, std::vector<pod_refs>> decode_and_check(std::string_view text,
                                                        std::string_view file) {
  auto result = podref::decode_manifest(text, file);
  std::vector<pod_refs> pods;
  if (result.ok() != result.errors.empty())
    fail("ok() disagrees with the error list");
  // The kept errors plus the line that counts the rest.
  if (result.errors.size() > podref::manifest_limits{}.max_errors + 1)
    fail("more errors than the limit");
  const auto prefix = std::string{file} + ": ";
  for (const auto& error : result.errors)
    if (error.compare(0, prefix.size(), prefix) != 0)
      fail("error does not start with the file name", error);
  std::size_t last_doc = 0;
  for (const auto& obj : result.objects) {
    if (obj.doc < last_doc)
      fail("document indices go backwards", obj.kind);
    last_doc = obj.doc;
    if (obj.kind.empty())
      fail("object without a kind");
    auto null_object = std::visit([](const auto& x) { return x == nullptr; },
                                  obj.object);
    if (null_object)
      fail("null object", obj.kind);
    auto* pp = std::get_if<podref::pod_ptr>(&obj.object);
    if (pp == nullptr)
      continue;
    const auto& p = **pp;
    if (p.metadata.ns.empty())
      fail("pod without a namespace", obj.kind);
    pod_refs refs{p.metadata.ns, p.metadata.name, podref::secret_names(p),
                  podref::config_map_names(p)};
    check_name_list(refs.secrets, "secret_names");
    check_name_list(refs.config_maps, "config_map_names");
    check_visitor(p, podref::visit_pod_secret_names, refs.secrets,
                  "visit_pod_secret_names");
    check_visitor(p, podref::visit_pod_config_map_names, refs.config_maps,
                  "visit_pod_config_map_names");
    pods.push_back(std::move(refs));
  }
  return {result.ok(), std::move(pods)};
}

/// True when the decoder takes the JSON path for `text`.
bool looks_like_json(std::string_view text) {
  auto i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (text[i] == '{' || text[i] == '[');
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  if (!looks_like_json(text)) {
    decode_and_check(text, "fuzz.yaml");
    return 0;
  }
  auto [json_ok, json_pods] = decode_and_check(text, "fuzz.json");
  std::string as_yaml = "# json round\n";
  as_yaml += text;
  auto [yaml_ok, yaml_pods] = decode_and_check(as_yaml, "fuzz.yaml");
  if (json_ok && yaml_ok && json_pods != yaml_pods)
    fail("JSON and YAML decoding of one JSON text reference different names");
  return 0;
}
